//! The bytes on disk: a file header, then records, each framed with its
//! length and a CRC-32C bound to the file and the record's place in it;
//! a snapshot ends with a trailer. Everything here is pure (bytes in,
//! verdict out), so the reader can be fuzzed and tested without a file
//! system.
//!
//! ```text
//! header (32 bytes)
//!   0..8    magic  b"SLABWAL\0"
//!   8..10   version, u16 little-endian (2)
//!   10      kind: b'L' a log segment, b'S' a snapshot, b'M' the manifest
//!   11      0 (reserved)
//!   12..20  generation, u64 little-endian (the number in the file's name;
//!           the manifest's: the newest log segment created)
//!   20..28  salt, u64 little-endian: random, one per data directory
//!   28..32  CRC-32C of bytes 0..28, u32 little-endian
//! record (8 + n bytes), repeated
//!   0..4    n, the payload's length, u32 little-endian, at most MAX_RECORD
//!   4..8    CRC-32C of the seed, bytes 0..4 and the payload, u32 LE
//!   8..8+n  the payload: opaque to this crate
//! seed (25 bytes, never stored): the file's salt (u64 LE), generation
//!   (u64 LE), kind byte, and the record's byte offset in the file (u64 LE)
//! snapshot trailer (16 bytes), after its last record, ending the file
//!   0..4    END_MARK (u32::MAX: a length no record has)
//!   4..8    CRC-32C of the seed (at the trailer's offset), bytes 0..4
//!           and 8..16
//!   8..16   the snapshot's record count, u64 LE
//! ```
//!
//! The seed binds each record to its directory, file and position, as the
//! log number in RocksDB's record format does: a payload that holds the
//! bytes of a record (of an older format, of another file, or of this file
//! at another offset) is not a valid record where it stands, and a client,
//! who chooses payloads but never sees the salt, cannot build one that is.
//!
//! Appenders frame a record with [`encode_record`], whose checksum covers
//! only the length and payload; the segment seals it ([`seal`]) as it
//! writes it, once the offset is known. A snapshot writer frames and seals
//! at once ([`encode_sealed`]).
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
pub const VERSION: u16 = 2;
/// The header's length in bytes.
pub const HEADER_LEN: usize = 32;
/// A record's frame (length and checksum) in bytes, before its payload.
pub const FRAME_LEN: usize = 8;
/// The longest payload a writer may append (64 MiB). A length over it is one
/// no writer could have written: corruption wherever it stands.
pub const MAX_RECORD: u32 = 64 << 20;
/// The length field of a snapshot's trailer.
pub const END_MARK: u32 = u32::MAX;
/// A snapshot trailer's length in bytes.
pub const TRAILER_LEN: usize = 16;
/// The length of a format 1 header (for recognising an old file).
const V1_HEADER_LEN: usize = 24;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Records appended as the writes happened.
    Log,
    /// The live state at a compaction's cut, written in one go.
    Snapshot,
    /// The directory's manifest (`CURRENT`): a header and nothing else.
    Manifest,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Log => b'L',
            Kind::Snapshot => b'S',
            Kind::Manifest => b'M',
        }
    }
}

/// A decoded file header: what the file is, and what its records are
/// bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub generation: u64,
    /// The data directory's salt.
    pub salt: u64,
}

impl Header {
    /// The CRC-32C of the seed of the record at byte `at` of this file.
    fn seed(&self, at: u64) -> u32 {
        let mut b = [0u8; 25];
        b[..8].copy_from_slice(&self.salt.to_le_bytes());
        b[8..16].copy_from_slice(&self.generation.to_le_bytes());
        b[16] = self.kind.byte();
        b[17..25].copy_from_slice(&at.to_le_bytes());
        crc32c::crc32c(&b)
    }
}

/// Why a header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than [`HEADER_LEN`] bytes: a file cut while it was created.
    Short,
    /// Not this crate's magic.
    Magic,
    /// A version this build does not read (its header's checksum right,
    /// for format 1).
    Version(u16),
    /// Neither `L`, `S` nor `M`.
    Kind(u8),
    /// The header's own checksum does not match.
    Checksum,
    /// A valid header whose kind or generation is not the one the file's
    /// name says.
    Misnamed(Kind, u64),
    /// A valid header with another data directory's salt.
    Foreign(u64),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Short => write!(f, "shorter than the {HEADER_LEN}-byte header"),
            HeaderError::Magic => write!(f, "no log magic"),
            HeaderError::Version(v) if *v > VERSION => write!(
                f,
                "format version {v}, from a newer serverlab; this build reads {VERSION}"
            ),
            HeaderError::Version(v) => write!(f, "format version {v}, this build reads {VERSION}"),
            HeaderError::Kind(k) => write!(f, "unknown file kind byte {k:#04x}"),
            HeaderError::Checksum => write!(f, "header checksum mismatch"),
            HeaderError::Misnamed(k, g) => {
                write!(
                    f,
                    "the header says {k:?} generation {g}, not what the name says"
                )
            }
            HeaderError::Foreign(salt) => write!(
                f,
                "it belongs to another data directory (salt {salt:#018x}); move it out of this one"
            ),
        }
    }
}

/// The header of a new file.
pub fn encode_header(kind: Kind, generation: u64, salt: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10] = kind.byte();
    h[12..20].copy_from_slice(&generation.to_le_bytes());
    h[20..28].copy_from_slice(&salt.to_le_bytes());
    let crc = crc32c::crc32c(&h[..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The header at the start of `file`. A format 1 header (24 bytes, its
/// checksum at 20..24) is recognised as [`HeaderError::Version`]`(1)`.
pub fn decode_header(file: &[u8]) -> Result<Header, HeaderError> {
    let start = file.get(..10).ok_or(HeaderError::Short)?;
    if start[..8] != MAGIC {
        return Err(HeaderError::Magic);
    }
    let version = u16::from_le_bytes([start[8], start[9]]);
    if version == 1 {
        let h = file.get(..V1_HEADER_LEN).ok_or(HeaderError::Short)?;
        return Err(if crc32c::crc32c(&h[..20]) == u32_at(h, 20) {
            HeaderError::Version(1)
        } else {
            HeaderError::Checksum
        });
    }
    if version != VERSION {
        return Err(HeaderError::Version(version));
    }
    let h = file.get(..HEADER_LEN).ok_or(HeaderError::Short)?;
    if crc32c::crc32c(&h[..28]) != u32_at(h, 28) {
        return Err(HeaderError::Checksum);
    }
    let kind = match h[10] {
        b'L' => Kind::Log,
        b'S' => Kind::Snapshot,
        b'M' => Kind::Manifest,
        other => return Err(HeaderError::Kind(other)),
    };
    Ok(Header {
        kind,
        generation: u64_at(h, 12),
        salt: u64_at(h, 20),
    })
}

/// Appends `payload`'s framed record to `out`, not yet sealed: its
/// checksum covers the length and payload only. [`seal`] binds it to its
/// file and offset before it is written.
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

/// Appends `payload`'s record, sealed for byte `at` of the file `header`
/// heads, to `out`.
///
/// # Panics
/// When the payload is longer than [`MAX_RECORD`]; writers check first.
pub fn encode_sealed(payload: &[u8], header: &Header, at: u64, out: &mut Vec<u8>) {
    let start = out.len();
    encode_record(payload, out);
    seal(&mut out[start..], header, at).expect("one whole record");
}

/// `frames` is not a run of whole records, so it cannot be sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unframed {
    /// Where in the buffer the frame that does not fit starts.
    pub at: usize,
}

impl fmt::Display for Unframed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a write of records holds a partial record at byte {}",
            self.at
        )
    }
}

/// Payloads up to this long are hashed again when sealed; longer ones have
/// the seed's checksum combined with their own. CRC-32C in hardware
/// hashes 64 KiB in a few microseconds, about what one combine costs (the
/// crate's combine is a matrix product per bit of the length: measured
/// here at 47% of a server's CPU under `--durability os` with 64-byte
/// values, when every record was combined).
const REHASH_UP_TO: usize = 64 << 10;

/// Seals every record of `frames` (whole records from [`encode_record`],
/// back to back, the first to be written at byte `at` of the file `header`
/// heads): each checksum becomes the CRC-32C of the record's seed followed
/// by its length and payload. A short payload is hashed again from the
/// seed; a long one is not read again: the seed's checksum is combined
/// with the record's own.
pub fn seal(frames: &mut [u8], header: &Header, at: u64) -> Result<(), Unframed> {
    let mut i = 0;
    while i < frames.len() {
        let frame = frames.get(i..i + FRAME_LEN).ok_or(Unframed { at: i })?;
        let len = u32_at(frame, 0) as usize;
        let end = i + FRAME_LEN + len;
        if len > MAX_RECORD as usize || end > frames.len() {
            return Err(Unframed { at: i });
        }
        let seed = header.seed(at + i as u64);
        let sealed = if len <= REHASH_UP_TO {
            let with_len = crc32c::crc32c_append(seed, &frames[i..i + 4]);
            crc32c::crc32c_append(with_len, &frames[i + FRAME_LEN..end])
        } else {
            crc32c::crc32c_combine(seed, u32_at(frame, 4), 4 + len)
        };
        frames[i + 4..i + 8].copy_from_slice(&sealed.to_le_bytes());
        i = end;
    }
    Ok(())
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
    /// The checksum does not match the seed, length and payload.
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

/// The record starting at `at` of the file `header` heads: its payload's
/// range, or why it is bad.
pub fn record_at(file: &[u8], header: &Header, at: usize) -> Result<Range<usize>, Bad> {
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
    let crc = crc32c::crc32c_append(header.seed(at as u64), &frame[..4]);
    if crc32c::crc32c_append(crc, payload) != u32_at(frame, 4) {
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

/// Reads the records of `file`, headed by `header`, from byte `start`
/// (normally [`HEADER_LEN`]).
///
/// The tail rule: reading stops at the first bad record, at offset `b`. If
/// some offset `q > b` starts a valid record (its length within the limit
/// and the file, its checksum right for offset `q`), the bad record has
/// good data after it and is [`End::Middle`]; if none does, everything from
/// `b` on is a torn or corrupt tail, [`End::Tail`]. Eight zero bytes are
/// never taken for a valid record in this search (a file a crash extended
/// with zeroes ends where its data ends, whatever the salt). A length over
/// [`MAX_RECORD`] is middle corruption wherever it stands (a snapshot's
/// trailer reads as one: see [`check_trailer`]). Never panics, whatever the
/// bytes; the search after a bad record reads each later offset's frame and
/// checks the checksum only of candidates that fit, so its cost is bounded
/// by the bytes after the bad record times the candidates' lengths.
pub fn scan(file: &[u8], header: &Header, start: usize) -> Scan {
    let mut records = Vec::new();
    let mut at = start.min(file.len());
    while at < file.len() {
        match record_at(file, header, at) {
            Ok(payload) => {
                at = payload.end;
                records.push(payload);
            }
            Err(bad) => {
                let end = classify(file, header, at, bad);
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

/// The first offset after `offset` where a valid record starts, not
/// counting all-zero frames.
pub fn next_valid(file: &[u8], header: &Header, offset: usize) -> Option<usize> {
    (offset + 1..file.len()).find(|&q| {
        let zero = file
            .get(q..q + FRAME_LEN)
            .is_some_and(|f| f.iter().all(|&b| b == 0));
        !zero && record_at(file, header, q).is_ok()
    })
}

fn classify(file: &[u8], header: &Header, offset: usize, bad: Bad) -> End {
    let next_good = next_valid(file, header, offset);
    match (bad, next_good) {
        (Bad::Length(_), _) | (_, Some(_)) => End::Middle {
            offset,
            bad,
            next_good,
        },
        (_, None) => End::Tail { offset, bad },
    }
}

/// Appends the trailer of a snapshot of `count` records, the trailer
/// starting at byte `at` of the file `header` heads.
pub fn encode_trailer(header: &Header, at: u64, count: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(&END_MARK.to_le_bytes());
    out.extend_from_slice(&trailer_crc(header, at, count).to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
}

fn trailer_crc(header: &Header, at: u64, count: u64) -> u32 {
    let crc = crc32c::crc32c_append(header.seed(at), &END_MARK.to_le_bytes());
    crc32c::crc32c_append(crc, &count.to_le_bytes())
}

/// Why a snapshot does not end as a written one does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotBad {
    /// The file ends after a whole record (or its header) with no trailer:
    /// cut at a record boundary.
    NoTrailer,
    /// A bad record before the trailer.
    Record(Bad),
    /// The trailer is cut short or its checksum does not match.
    Trailer,
    /// The trailer counts another number of records than the file holds.
    Count { read: u64, trailer: u64 },
    /// Bytes follow the trailer.
    AfterTrailer,
}

impl fmt::Display for SnapshotBad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotBad::NoTrailer => write!(f, "the file ends with no trailer"),
            SnapshotBad::Record(bad) => write!(f, "bad record: {bad}"),
            SnapshotBad::Trailer => write!(f, "the trailer is damaged"),
            SnapshotBad::Count { read, trailer } => write!(
                f,
                "the trailer counts {trailer} records but {read} precede it"
            ),
            SnapshotBad::AfterTrailer => write!(f, "bytes follow the trailer"),
        }
    }
}

/// Checks that the snapshot `file` (headed by `header`, read into `scan`)
/// ends as written: its records, then a valid trailer counting them, then
/// the end of the file. On failure, the offset where it goes wrong.
pub fn check_trailer(
    file: &[u8],
    header: &Header,
    scan: &Scan,
) -> Result<(), (usize, SnapshotBad)> {
    let at = scan.good_end;
    let bad = match scan.end {
        End::Clean => return Err((at, SnapshotBad::NoTrailer)),
        End::Tail { bad, .. } | End::Middle { bad, .. } => bad,
    };
    if bad != Bad::Length(END_MARK) {
        return Err((at, SnapshotBad::Record(bad)));
    }
    let t = file
        .get(at..at + TRAILER_LEN)
        .ok_or((at, SnapshotBad::Trailer))?;
    let count = u64_at(t, 8);
    if trailer_crc(header, at as u64, count) != u32_at(t, 4) {
        return Err((at, SnapshotBad::Trailer));
    }
    let read = scan.records.len() as u64;
    if count != read {
        return Err((
            at,
            SnapshotBad::Count {
                read,
                trailer: count,
            },
        ));
    }
    if file.len() != at + TRAILER_LEN {
        return Err((at + TRAILER_LEN, SnapshotBad::AfterTrailer));
    }
    Ok(())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Header = Header {
        kind: Kind::Log,
        generation: 7,
        salt: 0x5eed_5eed_1234_abcd,
    };

    fn file(payloads: &[&[u8]]) -> Vec<u8> {
        let mut f = encode_header(H.kind, H.generation, H.salt).to_vec();
        for p in payloads {
            encode_sealed(p, &H, f.len() as u64, &mut f);
        }
        f
    }

    /// A format 1 header, as the previous build wrote it.
    fn v1_header(kind: u8, generation: u64) -> Vec<u8> {
        let mut h = vec![0u8; 24];
        h[..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&1u16.to_le_bytes());
        h[10] = kind;
        h[12..20].copy_from_slice(&generation.to_le_bytes());
        let crc = crc32c::crc32c(&h[..20]);
        h[20..24].copy_from_slice(&crc.to_le_bytes());
        h
    }

    #[test]
    fn header_round_trip_and_refusals() {
        let h = encode_header(Kind::Snapshot, 42, 9);
        assert_eq!(
            decode_header(&h),
            Ok(Header {
                kind: Kind::Snapshot,
                generation: 42,
                salt: 9
            })
        );
        assert_eq!(decode_header(&h[..HEADER_LEN - 1]), Err(HeaderError::Short));
        let mut bad = h;
        bad[0] = b'X';
        assert_eq!(decode_header(&bad), Err(HeaderError::Magic));
        let mut bad = h;
        bad[13] ^= 1;
        assert_eq!(decode_header(&bad), Err(HeaderError::Checksum));
        let mut bad = h;
        bad[22] ^= 1;
        assert_eq!(decode_header(&bad), Err(HeaderError::Checksum), "salt");
    }

    #[test]
    fn a_format_1_header_is_recognised_as_one() {
        let mut v1 = v1_header(b'L', 3);
        assert_eq!(decode_header(&v1), Err(HeaderError::Version(1)));
        v1[14] ^= 1;
        assert_eq!(decode_header(&v1), Err(HeaderError::Checksum));
    }

    #[test]
    fn clean_file_reads_every_record() {
        let f = file(&[b"one", b"", b"three"]);
        let s = scan(&f, &H, HEADER_LEN);
        assert_eq!(s.end, End::Clean);
        assert_eq!(s.good_end, f.len());
        let got: Vec<&[u8]> = s.records.iter().map(|r| &f[r.clone()]).collect();
        assert_eq!(got, [&b"one"[..], b"", b"three"]);
    }

    #[test]
    fn sealing_a_run_equals_sealing_each_record() {
        let mut run = Vec::new();
        for p in [&b"a"[..], b"", b"ccc"] {
            encode_record(p, &mut run);
        }
        seal(&mut run, &H, HEADER_LEN as u64).unwrap();
        assert_eq!(run, file(&[b"a", b"", b"ccc"])[HEADER_LEN..]);
        let mut part = run[..5].to_vec();
        assert_eq!(seal(&mut part, &H, 0), Err(Unframed { at: 0 }));
    }

    #[test]
    fn short_and_long_payloads_seal_alike() {
        // Either side of the rehash bound: hashed again, or combined.
        let short = vec![7u8; 100];
        let long = vec![9u8; REHASH_UP_TO + 1];
        let mut run = Vec::new();
        encode_record(&short, &mut run);
        encode_record(&long, &mut run);
        seal(&mut run, &H, HEADER_LEN as u64).unwrap();
        let f = [&encode_header(Kind::Log, H.generation, H.salt)[..], &run].concat();
        let s = scan(&f, &H, HEADER_LEN);
        assert_eq!(s.end, End::Clean);
        assert_eq!(s.records.len(), 2);
        assert_eq!(&f[s.records[1].clone()], &long[..]);
    }

    #[test]
    fn a_record_is_valid_only_in_its_own_file_and_place() {
        let f = file(&[b"x", b"payload"]);
        let second = HEADER_LEN + FRAME_LEN + 1;
        assert!(record_at(&f, &H, second).is_ok());
        let moved = [&f[..HEADER_LEN], &f[second..]].concat();
        assert_eq!(record_at(&moved, &H, HEADER_LEN), Err(Bad::Checksum));
        for other in [
            Header { salt: 1, ..H },
            Header { generation: 8, ..H },
            Header {
                kind: Kind::Snapshot,
                ..H
            },
        ] {
            assert_eq!(record_at(&f, &other, second), Err(Bad::Checksum));
        }
        // The previous format's frame (no seed) is no record either.
        let mut v1 = f[..HEADER_LEN].to_vec();
        encode_record(b"payload", &mut v1);
        assert_eq!(record_at(&v1, &H, HEADER_LEN), Err(Bad::Checksum));
    }

    #[test]
    fn zeroes_are_not_a_record() {
        // A file extended with zeroes after a crash must read as a tail,
        // whatever the salt makes of a zero frame's checksum.
        for salt in 0..64 {
            let h = Header { salt, ..H };
            let mut f = encode_header(h.kind, h.generation, salt).to_vec();
            encode_sealed(b"a", &h, HEADER_LEN as u64, &mut f);
            let good = f.len();
            f.extend_from_slice(&[0; 64]);
            let s = scan(&f, &h, HEADER_LEN);
            assert_eq!(s.good_end, good);
            assert!(matches!(s.end, End::Tail { offset, .. } if offset == good));
        }
    }

    #[test]
    fn impossible_length_is_middle_even_last() {
        let mut f = file(&[b"a"]);
        let good = f.len();
        f.extend_from_slice(&u32::MAX.to_le_bytes());
        f.extend_from_slice(&[0; 4]);
        let s = scan(&f, &H, HEADER_LEN);
        assert!(
            matches!(s.end, End::Middle { offset, bad: Bad::Length(_), next_good: None } if offset == good)
        );
    }

    fn snapshot(payloads: &[&[u8]]) -> (Header, Vec<u8>) {
        let h = Header {
            kind: Kind::Snapshot,
            ..H
        };
        let mut f = encode_header(h.kind, h.generation, h.salt).to_vec();
        for p in payloads {
            encode_sealed(p, &h, f.len() as u64, &mut f);
        }
        encode_trailer(&h, f.len() as u64, payloads.len() as u64, &mut f);
        (h, f)
    }

    fn check(f: &[u8], h: &Header) -> Result<(), (usize, SnapshotBad)> {
        check_trailer(f, h, &scan(f, h, HEADER_LEN))
    }

    #[test]
    fn a_snapshot_ends_with_a_trailer_that_counts_its_records() {
        let (h, f) = snapshot(&[b"one", b"two"]);
        assert_eq!(check(&f, &h), Ok(()));
        let (h0, f0) = snapshot(&[]);
        assert_eq!(check(&f0, &h0), Ok(()));
        let end = f.len() - TRAILER_LEN;
        let boundary = HEADER_LEN + FRAME_LEN + 3;
        assert_eq!(check(&f[..end], &h), Err((end, SnapshotBad::NoTrailer)));
        assert_eq!(
            check(&f[..boundary], &h),
            Err((boundary, SnapshotBad::NoTrailer))
        );
        assert_eq!(
            check(&f[..HEADER_LEN], &h),
            Err((HEADER_LEN, SnapshotBad::NoTrailer))
        );
        assert_eq!(
            check(&f[..f.len() - 1], &h),
            Err((end, SnapshotBad::Trailer))
        );
        let mut more = f.clone();
        more.push(0);
        assert_eq!(check(&more, &h), Err((f.len(), SnapshotBad::AfterTrailer)));
        // The trailer of a longer snapshot, moved to a record boundary.
        let (_, long) = snapshot(&[b"one", b"two", b"three"]);
        let mut cut = long[..boundary].to_vec();
        encode_trailer(&h, boundary as u64, 3, &mut cut);
        assert_eq!(
            check(&cut, &h),
            Err((
                boundary,
                SnapshotBad::Count {
                    read: 1,
                    trailer: 3
                }
            ))
        );
        let mut flipped = f.clone();
        flipped[HEADER_LEN + FRAME_LEN] ^= 1;
        assert_eq!(
            check(&flipped, &h),
            Err((HEADER_LEN, SnapshotBad::Record(Bad::Checksum)))
        );
    }
}
