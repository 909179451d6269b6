//! Lending a session to the kernel while a send reads its replies (rule 3
//! of `sys`).

use std::mem::ManuallyDrop;

/// Proof that the send a [`Lent`] was lent to has completed.
#[derive(Debug)]
pub(crate) struct Returned(pub(super) u64);

/// A session that a send may lend to the kernel (rule 3).
pub(crate) struct Lent<T> {
    value: ManuallyDrop<Box<T>>,
    /// The user data of the send reading it, while one is.
    pub(super) lent_to: Option<u64>,
}

impl<T> Lent<T> {
    pub(crate) fn new(value: T) -> Self {
        Lent {
            value: ManuallyDrop::new(Box::new(value)),
            lent_to: None,
        }
    }

    /// Shared access, always: the kernel only reads while it holds it.
    pub(crate) fn get(&self) -> &T {
        &self.value
    }

    /// Exclusive access, unless a send is reading it.
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        match self.lent_to {
            None => Some(&mut self.value),
            Some(_) => None,
        }
    }

    pub(crate) fn is_lent(&self) -> bool {
        self.lent_to.is_some()
    }

    /// The send it was lent to has completed. Panics if `back` is another
    /// send's: handing it back early would let the replies change while
    /// the kernel reads them.
    pub(crate) fn give_back(&mut self, back: Returned) {
        assert_eq!(
            self.lent_to,
            Some(back.0),
            "a send's completion handed back another send's session"
        );
        self.lent_to = None;
    }
}

impl<T> Drop for Lent<T> {
    fn drop(&mut self) {
        if self.lent_to.is_none() {
            // SAFETY: dropped once, here; not lent, so the kernel holds no
            // pointer into it. A lent value is leaked instead (rule 3).
            unsafe { ManuallyDrop::drop(&mut self.value) }
        }
    }
}
