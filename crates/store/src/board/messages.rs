//! One topic's messages, stored back to back: a byte arena and the end
//! offset of each message. A POST appends to two vectors instead of
//! allocating a box per message, which made POST several times dearer
//! than READ (see `cargo bench -p serverlab-service`).

#[derive(Default)]
pub(crate) struct Messages {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Messages {
    /// Append a message; its id.
    pub(crate) fn push(&mut self, message: &[u8]) -> u64 {
        self.bytes.extend_from_slice(message);
        self.ends.push(self.bytes.len());
        (self.ends.len() - 1) as u64
    }

    /// Message `id`, if there is one.
    pub(crate) fn get(&self, id: u64) -> Option<&[u8]> {
        let i = usize::try_from(id).ok()?;
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.bytes[start..end])
    }

    pub(crate) fn len(&self) -> u64 {
        self.ends.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::Messages;

    #[test]
    fn push_and_get() {
        let mut m = Messages::default();
        assert_eq!(m.push(b"a"), 0);
        assert_eq!(m.push(b"bcd"), 1);
        assert_eq!(m.push(b"\xff"), 2);
        assert_eq!(m.get(0), Some(&b"a"[..]));
        assert_eq!(m.get(1), Some(&b"bcd"[..]));
        assert_eq!(m.get(2), Some(&b"\xff"[..]));
        assert_eq!(m.get(3), None);
        assert_eq!(m.get(u64::MAX), None);
        assert_eq!(m.len(), 3);
    }
}
