//! The bytes on disk: a file header, then records, each framed with its
//! length and a CRC-32C. Everything here is pure (bytes in, verdict out), so
//! the reader can be fuzzed and tested without a file system.
//!
//! ```text
//! header (24 bytes)
//!   0..8    magic  b"SLABWAL\0"
//!   8..10   version, u16 little-endian (1)
//!   10      kind: b'L' a log segment, b'S' a snapshot
//!   11      0 (reserved)
//!   12..20  generation, u64 little-endian (the number in the file's name)
//!   20..24  CRC-32C of bytes 0..20, u32 little-endian
//! record (8 + n bytes), repeated to the end of the file
//!   0..4    n, the payload's length, u32 little-endian, at most MAX_RECORD
//!   4..8    CRC-32C of bytes 0..4 and the payload, u32 little-endian
//!   8..8+n  the payload: opaque to this crate
//! ```
//!
//! A record is *bad* when fewer than 8 bytes remain, its length exceeds
//! [`MAX_RECORD`], its payload runs past the end of the file, or its
//! checksum does not match. The first bad record ends the good prefix; it is
//! the file's *tail* when no byte offset after it starts a valid record, and
//! *middle* corruption otherwise (see [`scan`]).

use std::fmt;
use std::ops::Range;

/// The first eight bytes of every file this crate writes.
pub const MAGIC: [u8; 8] = *b"SLABWAL\0";
/// The format version written, and the only one read.
pub const VERSION: u16 = 1;
/// The header's length in bytes.
pub const HEADER_LEN: usize = 24;
/// A record's frame (length and checksum) in bytes, before its payload.
pub const FRAME_LEN: usize = 8;
/// The longest payload a writer may append (64 MiB). A length over it is one
/// no writer could have written: corruption wherever it stands.
pub const MAX_RECORD: u32 = 64 << 20;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Records appended as the writes happened.
    Log,
    /// The live state at a compaction's cut, written in one go.
    Snapshot,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Log => b'L',
            Kind::Snapshot => b'S',
        }
    }
}

/// A decoded file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub generation: u64,
}

/// Why a header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than [`HEADER_LEN`] bytes: a file cut while it was created.
    Short,
    /// Not this crate's magic.
    Magic,
    /// A version this build does not read.
    Version(u16),
    /// Neither `L` nor `S`.
    Kind(u8),
    /// The header's own checksum does not match.
    Checksum,
    /// A valid header whose kind or generation is not the one the file's
    /// name says.
    Misnamed(Kind, u64),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Short => write!(f, "shorter than the {HEADER_LEN}-byte header"),
            HeaderError::Magic => write!(f, "no log magic"),
            HeaderError::Version(v) => write!(f, "format version {v}, this build reads {VERSION}"),
            HeaderError::Kind(k) => write!(f, "unknown file kind byte {k:#04x}"),
            HeaderError::Checksum => write!(f, "header checksum mismatch"),
            HeaderError::Misnamed(k, g) => {
                write!(
                    f,
                    "the header says {k:?} generation {g}, not what the name says"
                )
            }
        }
    }
}

/// The header of a new file.
pub fn encode_header(kind: Kind, generation: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10] = kind.byte();
    h[12..20].copy_from_slice(&generation.to_le_bytes());
    let crc = crc32c::crc32c(&h[..20]);
    h[20..24].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The header at the start of `file`.
pub fn decode_header(file: &[u8]) -> Result<Header, HeaderError> {
    let h = file.get(..HEADER_LEN).ok_or(HeaderError::Short)?;
    if h[..8] != MAGIC {
        return Err(HeaderError::Magic);
    }
    if crc32c::crc32c(&h[..20]) != u32_at(h, 20) {
        return Err(HeaderError::Checksum);
    }
    let version = u16::from_le_bytes([h[8], h[9]]);
    if version != VERSION {
        return Err(HeaderError::Version(version));
    }
    let kind = match h[10] {
        b'L' => Kind::Log,
        b'S' => Kind::Snapshot,
        other => return Err(HeaderError::Kind(other)),
    };
    let generation = u64::from_le_bytes(h[12..20].try_into().expect("8 bytes"));
    Ok(Header { kind, generation })
}

/// Appends `payload`'s framed record to `out`.
///
/// # Panics
/// When the payload is longer than [`MAX_RECORD`]; writers check first.
pub fn encode_record(payload: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&n| n <= MAX_RECORD)
        .expect("payload longer than MAX_RECORD");
    let len_bytes = len.to_le_bytes();
    let crc = crc32c::crc32c_append(crc32c::crc32c(&len_bytes), payload);
    out.reserve(FRAME_LEN + payload.len());
    out.extend_from_slice(&len_bytes);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(payload);
}

/// The framed size of a payload of `len` bytes.
pub fn framed_len(len: usize) -> usize {
    FRAME_LEN + len
}

/// Why a record is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// Fewer than [`FRAME_LEN`] bytes remain, or the payload runs past the
    /// end of the file: a write cut short.
    Torn,
    /// A length over [`MAX_RECORD`].
    Length(u32),
    /// The checksum does not match the length and payload.
    Checksum,
}

impl fmt::Display for Bad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bad::Torn => write!(f, "record cut short by the end of the file"),
            Bad::Length(n) => write!(f, "length {n} over the {MAX_RECORD}-byte limit"),
            Bad::Checksum => write!(f, "checksum mismatch"),
        }
    }
}

/// The record starting at `at`: its payload's range, or why it is bad.
pub fn record_at(file: &[u8], at: usize) -> Result<Range<usize>, Bad> {
    let frame = file
        .get(at..at.saturating_add(FRAME_LEN))
        .ok_or(Bad::Torn)?;
    let len = u32_at(frame, 0);
    if len > MAX_RECORD {
        return Err(Bad::Length(len));
    }
    let start = at + FRAME_LEN;
    let end = start + len as usize;
    let payload = file.get(start..end).ok_or(Bad::Torn)?;
    let crc = crc32c::crc32c_append(crc32c::crc32c(&frame[..4]), payload);
    if crc != u32_at(frame, 4) {
        return Err(Bad::Checksum);
    }
    Ok(start..end)
}

/// Where the good prefix of a file ends, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Every byte belongs to a good record.
    Clean,
    /// A bad record at `offset` with no valid record anywhere after it: a
    /// torn or corrupt tail, cut at `offset`. (A length over
    /// [`MAX_RECORD`] is never a tail: see [`Bad::Length`].)
    Tail { offset: usize, bad: Bad },
    /// A bad record at `offset` followed by a valid record at `next_good`,
    /// or a length no writer could have written.
    Middle {
        offset: usize,
        bad: Bad,
        next_good: Option<usize>,
    },
}

/// A file's records read in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// Each good record's payload, as a range of the file's bytes.
    pub records: Vec<Range<usize>>,
    /// The end of the last good record (the header's end when none).
    pub good_end: usize,
    /// How the good prefix ended.
    pub end: End,
}

/// Reads the records of `file` from byte `start` (normally [`HEADER_LEN`]).
///
/// The tail rule: reading stops at the first bad record, at offset `b`. If
/// some offset `q > b` starts a valid record (its length within the limit
/// and the file, its checksum right), the bad record has good data after it
/// and is [`End::Middle`]; if none does, everything from `b` on is a torn or
/// corrupt tail, [`End::Tail`]. A length over [`MAX_RECORD`] is middle
/// corruption wherever it stands. Never panics, whatever the bytes; the
/// search after a bad record reads each later offset's frame and checks the
/// checksum only of candidates that fit, so its cost is bounded by the bytes
/// after the bad record times the candidates' lengths.
pub fn scan(file: &[u8], start: usize) -> Scan {
    let mut records = Vec::new();
    let mut at = start.min(file.len());
    while at < file.len() {
        match record_at(file, at) {
            Ok(payload) => {
                at = payload.end;
                records.push(payload);
            }
            Err(bad) => {
                let end = classify(file, at, bad);
                return Scan {
                    records,
                    good_end: at,
                    end,
                };
            }
        }
    }
    Scan {
        records,
        good_end: at,
        end: End::Clean,
    }
}

fn classify(file: &[u8], offset: usize, bad: Bad) -> End {
    let next_good = (offset + 1..file.len()).find(|&q| record_at(file, q).is_ok());
    match (bad, next_good) {
        (Bad::Length(_), _) | (_, Some(_)) => End::Middle {
            offset,
            bad,
            next_good,
        },
        (_, None) => End::Tail { offset, bad },
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(payloads: &[&[u8]]) -> Vec<u8> {
        let mut f = encode_header(Kind::Log, 7).to_vec();
        for p in payloads {
            encode_record(p, &mut f);
        }
        f
    }

    #[test]
    fn header_round_trip_and_refusals() {
        let h = encode_header(Kind::Snapshot, 42);
        assert_eq!(
            decode_header(&h),
            Ok(Header {
                kind: Kind::Snapshot,
                generation: 42
            })
        );
        assert_eq!(decode_header(&h[..23]), Err(HeaderError::Short));
        let mut bad = h;
        bad[0] = b'X';
        assert_eq!(decode_header(&bad), Err(HeaderError::Magic));
        let mut bad = h;
        bad[13] ^= 1;
        assert_eq!(decode_header(&bad), Err(HeaderError::Checksum));
    }

    #[test]
    fn clean_file_reads_every_record() {
        let f = file(&[b"one", b"", b"three"]);
        let s = scan(&f, HEADER_LEN);
        assert_eq!(s.end, End::Clean);
        assert_eq!(s.good_end, f.len());
        let got: Vec<&[u8]> = s.records.iter().map(|r| &f[r.clone()]).collect();
        assert_eq!(got, [&b"one"[..], b"", b"three"]);
    }

    #[test]
    fn zeroes_are_not_a_record() {
        // A file extended with zeroes after a crash must read as a tail.
        let mut f = file(&[b"a"]);
        let good = f.len();
        f.extend_from_slice(&[0; 64]);
        let s = scan(&f, HEADER_LEN);
        assert_eq!(s.good_end, good);
        assert_eq!(
            s.end,
            End::Tail {
                offset: good,
                bad: Bad::Checksum
            }
        );
    }

    #[test]
    fn impossible_length_is_middle_even_last() {
        let mut f = file(&[b"a"]);
        let good = f.len();
        f.extend_from_slice(&u32::MAX.to_le_bytes());
        f.extend_from_slice(&[0; 4]);
        let s = scan(&f, HEADER_LEN);
        assert!(
            matches!(s.end, End::Middle { offset, bad: Bad::Length(_), next_good: None } if offset == good)
        );
    }
}
