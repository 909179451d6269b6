//! Header fields both sides of kv read the same way: `Connection` and
//! `Content-Length`, folded over every field of a message.

use crate::number::parse_u64;

/// The `Connection` options of a message (RFC 9110 §7.6.1): a
/// comma-separated, case-insensitive list over one or more fields.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionOptions {
    pub close: bool,
    pub keep_alive: bool,
}

impl ConnectionOptions {
    /// Fold in one `Connection` field value.
    pub fn add(&mut self, value: &[u8]) {
        for option in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
            self.close |= option.eq_ignore_ascii_case(b"close");
            self.keep_alive |= option.eq_ignore_ascii_case(b"keep-alive");
        }
    }
}

/// Why `Content-Length` fields cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LengthError {
    NotANumber,
    /// Two fields that differ (RFC 9112 §6.3: unrecoverable).
    Conflict,
}

/// The `Content-Length` of a message, over every such field.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ContentLength {
    /// `Some(None)`: a length too large for u64.
    value: Option<Option<u64>>,
}

impl ContentLength {
    /// Fold in one `Content-Length` field value (already trimmed).
    /// Repeats of the same length are allowed.
    pub fn add(&mut self, value: &[u8]) -> Result<(), LengthError> {
        let n = parse_u64(value).map_err(|()| LengthError::NotANumber)?;
        if self.value.is_some_and(|old| old != n) {
            return Err(LengthError::Conflict);
        }
        self.value = Some(n);
        Ok(())
    }

    /// `None`: no field; `Some(None)`: too large for u64.
    pub fn get(&self) -> Option<Option<u64>> {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_options_fold() {
        let mut c = ConnectionOptions::default();
        c.add(b"Upgrade, Keep-Alive");
        assert_eq!(
            c,
            ConnectionOptions {
                close: false,
                keep_alive: true
            }
        );
        c.add(b" CLOSE ");
        assert!(c.close && c.keep_alive);
    }

    #[test]
    fn content_lengths() {
        let mut l = ContentLength::default();
        assert_eq!(l.get(), None);
        l.add(b"5").unwrap();
        l.add(b"5").unwrap();
        assert_eq!(l.get(), Some(Some(5)));
        assert_eq!(l.add(b"6"), Err(LengthError::Conflict));
        assert_eq!(l.add(b"-1"), Err(LengthError::NotANumber));
        let mut huge = ContentLength::default();
        huge.add(b"99999999999999999999999").unwrap();
        assert_eq!(huge.get(), Some(None));
    }
}
