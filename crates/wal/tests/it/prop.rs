use std::fs;

use proptest::prelude::*;
use serverlab_wal::format::{FRAME_LEN, HEADER_LEN};
use serverlab_wal::{Durability, Error};

use crate::{open, opts, truncating, write_log};

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any appends, then the file cut anywhere: replay gives back exactly
    /// the records wholly before the cut, and drops the rest.
    #[test]
    fn any_cut_recovers_a_prefix(
        records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..48), 0..24),
        cut in any::<proptest::sample::Index>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let log = write_log(dir.path(), &records);
        let whole = fs::read(&log).unwrap();
        let cut = cut.index(whole.len() + 1);
        fs::write(&log, &whole[..cut]).unwrap();
        if cut < HEADER_LEN {
            // The manifest records the segment, so its header was synced:
            // a header cut short is damage, not a crash.
            let refused = open(dir.path(), opts(Durability::Os));
            let torn = matches!(refused, Err(Error::TornHeader { .. }));
            prop_assert!(torn, "a header cut at {} is refused", cut);
            let (wal, got) = open(dir.path(), truncating(Durability::Os)).unwrap();
            prop_assert!(got.is_empty());
            prop_assert_eq!(wal.recovery().dropped_bytes, cut as u64);
            return Ok(());
        }
        let (wal, got) = open(dir.path(), opts(Durability::Os)).unwrap();
        let mut end = HEADER_LEN;
        let mut whole_records = 0;
        for r in &records {
            if end + FRAME_LEN + r.len() > cut {
                break;
            }
            end += FRAME_LEN + r.len();
            whole_records += 1;
        }
        prop_assert_eq!(&got[..], &records[..whole_records]);
        prop_assert_eq!(wal.recovery().dropped_bytes, (cut - end) as u64);
    }
}
