//! Reading a file someone else named, bounded: every file a flag names
//! (a targets list, a request body, an experiment, an agent's result, a
//! fit's table) is read through here, so `/dev/zero`, a file growing
//! while read or a pipe that never ends is refused at a limit, not read
//! into memory until it runs out.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// Opening, asking about or reading it failed.
    Io(io::Error),
    /// It has (or gave, read) more than the limit's bytes.
    TooBig { bytes: u64, max: u64 },
    /// Only a regular file was asked for: this is a device, pipe or
    /// directory.
    NotRegular,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read it: {e}"),
            ReadError::TooBig { bytes, max } => {
                write!(
                    f,
                    "{bytes} bytes or more, past the {} it may have",
                    size(*max)
                )
            }
            ReadError::NotRegular => {
                f.write_str("not a regular file (a device, pipe or directory)")
            }
        }
    }
}

/// `n` bytes as a person reads them: in MiB or KiB where they divide.
fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// At most `max` bytes of `reader`, or [`ReadError::TooBig`] where it
/// has more (read up to one byte past the limit, never further).
pub fn read_at_most(reader: impl Read, max: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    let got = bytes.len() as u64;
    if got > max {
        return Err(ReadError::TooBig { bytes: got, max });
    }
    Ok(bytes)
}

/// The bytes of the file at `path`, at most `max`. Any file: a pipe or
/// `/dev/stdin` is read to its end (waiting for a writer, as `cat`
/// would), a device that never ends is cut at the limit. A regular file
/// is refused by its length before it is read.
pub fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let file = File::open(path).map_err(ReadError::Io)?;
    refuse_long(&file, max)?;
    read_at_most(file, max)
}

/// As [`read_capped`], for a regular file only: opened without waiting
/// (a named pipe with no writer would hold the open for ever) and asked
/// what it is once open, so what is read is what was asked about.
pub fn read_regular_capped(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(ReadError::Io)?;
    if !file.metadata().map_err(ReadError::Io)?.is_file() {
        return Err(ReadError::NotRegular);
    }
    refuse_long(&file, max)?;
    read_at_most(file, max)
}

/// The text of [`read_capped`]; bytes that are not UTF-8 are an error.
pub fn read_text_capped(path: &Path, max: u64) -> Result<String, ReadError> {
    text(read_capped(path, max)?)
}

/// The text of [`read_regular_capped`].
pub fn read_regular_text_capped(path: &Path, max: u64) -> Result<String, ReadError> {
    text(read_regular_capped(path, max)?)
}

fn text(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes)
        .map_err(|e| ReadError::Io(io::Error::new(io::ErrorKind::InvalidData, e.utf8_error())))
}

/// A regular file longer than `max` is refused before it is read.
fn refuse_long(file: &File, max: u64) -> Result<(), ReadError> {
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_file() && meta.len() > max {
        return Err(ReadError::TooBig {
            bytes: meta.len(),
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_within_the_limit_is_read_whole() {
        let dir = tempdir();
        let path = dir.join("f");
        std::fs::write(&path, b"hello").unwrap();
        assert_eq!(read_capped(&path, 5).unwrap(), b"hello");
        assert_eq!(read_regular_capped(&path, 5).unwrap(), b"hello");
        assert_eq!(read_text_capped(&path, 64).unwrap(), "hello");
        let err = read_capped(&path, 4).unwrap_err();
        assert!(
            matches!(err, ReadError::TooBig { bytes: 5, max: 4 }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "5 bytes or more, past the 4 bytes it may have"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_device_that_never_ends_is_cut_at_the_limit() {
        let path = Path::new("/dev/zero");
        let err = read_capped(path, 1 << 20).unwrap_err();
        assert!(
            matches!(err, ReadError::TooBig { bytes, .. } if bytes == (1 << 20) + 1),
            "{err}"
        );
        assert!(err.to_string().contains("past the 1 MiB"), "{err}");
        let err = read_regular_capped(path, 1 << 20).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular), "{err}");
    }

    #[test]
    fn a_named_pipe_without_a_writer_is_refused_at_once_where_a_file_is_asked_for() {
        let dir = tempdir();
        let fifo = dir.join("p");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Blocking here would hang the test: the open must not wait.
        let err = read_regular_capped(&fifo, 64).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular), "{err}");
        // Read as any file, a pipe with a writer is read to its end.
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                w.write_all(b"from a pipe").unwrap();
            })
        };
        assert_eq!(read_capped(&fifo, 64).unwrap(), b"from a pipe");
        writer.join().unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_and_a_missing_file_say_why() {
        let dir = tempdir();
        assert!(matches!(
            read_regular_capped(&dir, 64),
            Err(ReadError::NotRegular)
        ));
        let err = read_capped(&dir.join("missing"), 64).unwrap_err();
        assert!(err.to_string().starts_with("cannot read it: "), "{err}");
        std::fs::write(dir.join("bin"), [0xff, 0xfe]).unwrap();
        let err = read_text_capped(&dir.join("bin"), 64).unwrap_err();
        assert!(err.to_string().contains("invalid utf-8"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempdir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "serverlab-util-file-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
