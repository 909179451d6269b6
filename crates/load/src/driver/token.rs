//! Which connection an epoll event is for. A slot's index rides in a
//! token's low 32 bits and its connection's generation in the high 32,
//! so an event for a closed connection is not mistaken for its
//! successor's. The loop's kernel timer has a token no slot has.

use mio::Token;

/// The token of the loop's kernel timer.
pub(super) const TIMER: Token = Token(usize::MAX);

/// The token of slot `index`'s connection number `generation`.
pub(super) fn encode(index: usize, generation: u32) -> Token {
    Token(((generation as u64) << 32 | index as u64) as usize)
}

/// What an event's token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Named {
    pub index: usize,
    generation: u32,
}

pub(super) fn decode(token: Token) -> Named {
    let bits = token.0 as u64;
    Named {
        index: (bits & 0xFFFF_FFFF) as usize,
        generation: (bits >> 32) as u32,
    }
}

impl Named {
    /// Whether the event is for the slot's connection `generation` (where
    /// a token has no room for generations, any event is taken as its).
    pub fn is_of(self, generation: u32) -> bool {
        usize::BITS < 64 || self.generation == generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_slot_and_connection() {
        let named = decode(encode(7, 3));
        assert_eq!(named.index, 7);
        assert!(named.is_of(3));
        assert!(!named.is_of(2) || usize::BITS < 64);
        assert_ne!(decode(TIMER).index, 7);
    }
}
