//! Glob patterns as Redis matches them (`stringmatchlen`): `*`, `?`,
//! `[abc]`, `[^a-z]`, and `\` to escape; without regard to case (CONFIG
//! GET's patterns) or with it (KEYS, SCAN's MATCH).

/// Whether `text` matches `pattern`, ignoring ASCII case.
pub fn matches(pattern: &[u8], text: &[u8]) -> bool {
    matches_as(pattern, text, true)
}

/// Whether `text` matches `pattern`, case counting.
pub fn matches_exact(pattern: &[u8], text: &[u8]) -> bool {
    matches_as(pattern, text, false)
}

fn matches_as(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: (pattern after it, text it covers to).
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() {
            if pattern[p] == b'*' {
                star = Some((p + 1, t));
                p += 1;
                continue;
            }
            if let Some(next) = one(pattern, p, text[t], nocase) {
                p = next;
                t += 1;
                continue;
            }
        }
        match star {
            Some((sp, st)) => {
                p = sp;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// If the pattern element at `p` matches `c`, where the next one starts.
fn one(pattern: &[u8], p: usize, c: u8, nocase: bool) -> Option<usize> {
    let lower = |x: u8| if nocase { x.to_ascii_lowercase() } else { x };
    match pattern[p] {
        b'?' => Some(p + 1),
        b'\\' if p + 1 < pattern.len() => (lower(pattern[p + 1]) == lower(c)).then_some(p + 2),
        b'[' => class(pattern, p + 1, lower(c), nocase),
        x => (lower(x) == lower(c)).then_some(p + 1),
    }
}

/// A `[…]` class starting after its `[`: where the pattern goes on if `c`
/// is in it.
fn class(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> Option<usize> {
    let lower = |x: u8| if nocase { x.to_ascii_lowercase() } else { x };
    let not = pattern.get(p) == Some(&b'^');
    if not {
        p += 1;
    }
    let mut hit = false;
    while p < pattern.len() && pattern[p] != b']' {
        if pattern[p] == b'\\' && p + 1 < pattern.len() {
            hit |= lower(pattern[p + 1]) == c;
            p += 2;
        } else if p + 2 < pattern.len() && pattern[p + 1] == b'-' && pattern[p + 2] != b']' {
            let (a, b) = (lower(pattern[p]), lower(pattern[p + 2]));
            let (a, b) = (a.min(b), a.max(b));
            hit |= (a..=b).contains(&c);
            p += 3;
        } else {
            hit |= lower(pattern[p]) == c;
            p += 1;
        }
    }
    (hit != not).then_some((p + 1).min(pattern.len()))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        for (p, t, want) in [
            ("save", "save", true),
            ("SAVE", "save", true),
            ("sa*", "save", true),
            ("*", "appendonly", true),
            ("*only", "appendonly", true),
            ("a?pendonly", "appendonly", true),
            ("s[a-c]ve", "save", true),
            ("s[^a]ve", "save", false),
            ("s\\ave", "save", true),
            ("save", "saves", false),
            ("*e*e*", "save", false),
            ("max*", "save", false),
            ("", "", true),
            ("*", "", true),
        ] {
            assert_eq!(matches(p.as_bytes(), t.as_bytes()), want, "{p} {t}");
        }
    }
}
