//! A count with its noun, singular or plural as the count asks: `1 reply`,
//! `3 replies`, `0 requests`.

/// `n` and `one` when `n` is 1, else `n` and `many`.
pub fn plural(n: impl Into<u128>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_and_many() {
        assert_eq!(plural(1u64, "reply", "replies"), "1 reply");
        assert_eq!(plural(0u64, "reply", "replies"), "0 replies");
        assert_eq!(plural(3u32, "request", "requests"), "3 requests");
    }
}
