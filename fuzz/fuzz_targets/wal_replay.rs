#![no_main]
//! The write-ahead log's reader (`wal::format::scan`, `decode_header`,
//! `record_at`, `check_trailer`) on any bytes: it never panics, and its
//! verdict is the one the tail rule gives, written here a second way.
//! Input: [mode, rest…]. An even mode reads `rest` as a file as it is,
//! header and all (its records sealed for its own header when it decodes,
//! else for a fixed one); an odd mode builds a log from `rest` (each
//! record's length from one byte, mod 40, its payload the bytes after it),
//! cuts it at a point the last two bytes choose, and expects exactly the
//! records wholly before the cut with a clean end or a torn tail.

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_wal::format::{
    check_trailer, decode_header, encode_header, encode_sealed, record_at, scan, Bad, End, Header,
    Kind, FRAME_LEN, HEADER_LEN,
};

/// The header a file that does not decode is read with.
const FIXED: Header = Header {
    kind: Kind::Log,
    generation: 1,
    salt: 0x5eed,
};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.byte();
    let rest = input.rest();
    if mode % 2 == 0 {
        let header = decode_header(rest).unwrap_or(FIXED);
        check_scan(rest, &header, HEADER_LEN);
        check_scan(rest, &header, 0);
    } else {
        check_cut(rest);
    }
});

/// The scan's records tile the file from `start`, each re-encodes (sealed
/// for its offset) to the bytes it was read from, and the end is judged by
/// the tail rule.
fn check_scan(file: &[u8], header: &Header, start: usize) {
    let s = scan(file, header, start);
    let _ = check_trailer(file, header, &s);
    let mut at = start.min(file.len());
    for r in &s.records {
        assert_eq!(r.start, at + FRAME_LEN, "records are contiguous");
        let mut again = Vec::new();
        encode_sealed(&file[r.clone()], header, at as u64, &mut again);
        assert_eq!(
            &file[at..r.end],
            &again[..],
            "a record re-encodes to its bytes"
        );
        at = r.end;
    }
    assert_eq!(s.good_end, at);
    // Eight zero bytes never count as the valid record after a bad one.
    let valid_after = |offset: usize| {
        (offset + 1..file.len()).find(|&q| {
            let zero = file.get(q..q + FRAME_LEN) == Some(&[0u8; FRAME_LEN][..]);
            !zero && record_at(file, header, q).is_ok()
        })
    };
    match s.end {
        End::Clean => assert_eq!(at, file.len()),
        End::Tail { offset, bad } => {
            assert_eq!(offset, at);
            assert!(at < file.len());
            assert!(
                !matches!(bad, Bad::Length(_)),
                "an impossible length is never a tail"
            );
            assert_eq!(
                valid_after(offset),
                None,
                "a tail has no valid record after it"
            );
        }
        End::Middle {
            offset,
            bad,
            next_good,
        } => {
            assert_eq!(offset, at);
            assert_eq!(next_good, valid_after(offset));
            assert!(next_good.is_some() || matches!(bad, Bad::Length(_)));
        }
    }
}

/// A log built from the input and cut: the records before the cut, whole.
fn check_cut(rest: &[u8]) {
    let (body, cut_bytes) = rest.split_at(rest.len().saturating_sub(2));
    let mut file = encode_header(FIXED.kind, FIXED.generation, FIXED.salt).to_vec();
    let mut payloads = Vec::new();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let len = usize::from(body[i]) % 40;
        let p = &body[(i + 1).min(body.len())..(i + 1 + len).min(body.len())];
        encode_sealed(p, &FIXED, file.len() as u64, &mut file);
        payloads.push(p);
        ends.push(file.len());
        i += 1 + len;
    }
    let cut_at = cut_bytes
        .iter()
        .fold(0usize, |a, &b| a * 256 + usize::from(b))
        % (file.len() + 1);
    let file = &file[..cut_at.max(HEADER_LEN)];
    let whole = ends.iter().take_while(|&&e| e <= file.len()).count();
    let s = scan(file, &FIXED, HEADER_LEN);
    let got: Vec<&[u8]> = s.records.iter().map(|r| &file[r.clone()]).collect();
    assert_eq!(got, payloads[..whole]);
    let good_end = if whole == 0 {
        HEADER_LEN
    } else {
        ends[whole - 1]
    };
    assert_eq!(s.good_end, good_end);
    match s.end {
        End::Clean => assert_eq!(good_end, file.len()),
        // Cut inside a record: a tail, or middle corruption only when a
        // payload holds a record sealed for this salt, generation and its
        // very offset (the fuzzer knows the fixed salt; a client does not).
        End::Tail { offset, .. } | End::Middle { offset, .. } => assert_eq!(offset, good_end),
    }
}
