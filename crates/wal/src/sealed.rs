//! A log segment's file, which seals each record as it is written: the
//! appenders frame records without knowing where they will land
//! ([`format::encode_record`]); the segment knows its header and its end,
//! so it binds each record to its file and offset ([`format::seal`]) on
//! the way to the disk.

use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard};

use crate::format::{self, Header};
use crate::vfs::FsFile;

/// A scratch buffer grown past this is let go after the write.
const KEEP_SCRATCH: usize = 1 << 20;

/// A segment file open for appending sealed records.
pub(crate) struct SealedFile {
    file: Box<dyn FsFile>,
    header: Header,
    state: Mutex<State>,
}

struct State {
    /// The offset the next write lands at.
    end: u64,
    scratch: Vec<u8>,
    /// A write failed part way: where the file ends is no longer known.
    failed: bool,
}

impl SealedFile {
    /// `file`, headed by `header`, whose next write lands at byte `end`.
    pub(crate) fn new(file: Box<dyn FsFile>, header: Header, end: u64) -> SealedFile {
        SealedFile {
            file,
            header,
            state: Mutex::new(State {
                end,
                scratch: Vec::new(),
                failed: false,
            }),
        }
    }

    pub(crate) fn header(&self) -> &Header {
        &self.header
    }

    pub(crate) fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Each write is a run of whole records from [`format::encode_record`],
/// written whole (a write that returns has written every byte).
impl Write for &SealedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut guard = self.state();
        let st = &mut *guard;
        if st.failed {
            return Err(io::Error::other(
                "an earlier write to this segment failed part way",
            ));
        }
        st.scratch.clear();
        st.scratch.extend_from_slice(buf);
        format::seal(&mut st.scratch, &self.header, st.end)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let written = self.file.write_all(&st.scratch);
        match written {
            Ok(()) => st.end += buf.len() as u64,
            Err(_) => st.failed = true,
        }
        if st.scratch.capacity() > KEEP_SCRATCH {
            st.scratch = Vec::new();
        }
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{encode_header, encode_record, scan, End, Kind, HEADER_LEN};

    #[test]
    fn records_written_in_runs_read_back_sealed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        let header = Header {
            kind: Kind::Log,
            generation: 3,
            salt: 77,
        };
        let file = std::fs::File::create(&path).unwrap();
        file.write_all(&encode_header(Kind::Log, 3, 77)).unwrap();
        let sealed = SealedFile::new(Box::new(file), header, HEADER_LEN as u64);
        let mut run = Vec::new();
        encode_record(b"one", &mut run);
        encode_record(b"two", &mut run);
        (&sealed).write_all(&run).unwrap();
        let mut one = Vec::new();
        encode_record(b"three", &mut one);
        (&sealed).write_all(&one).unwrap();
        let err = (&sealed).write_all(&one[..5]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let bytes = std::fs::read(&path).unwrap();
        let s = scan(&bytes, &header, HEADER_LEN);
        assert_eq!(s.end, End::Clean);
        let got: Vec<&[u8]> = s.records.iter().map(|r| &bytes[r.clone()]).collect();
        assert_eq!(got, [&b"one"[..], b"two", b"three"]);
    }
}
