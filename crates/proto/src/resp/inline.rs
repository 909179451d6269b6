//! Splitting an inline command line into arguments as redis-server does
//! (`sdssplitargs`): words separated by blanks (an unquoted word ends
//! at a space, tab, CR or LF; VT and FF inside it are part of it);
//! `"…"` with the escapes `\n \r \t \b \a \xHH` and `\<c>`, and `'…'`
//! with `\'`, group words;
//! a closing quote must be followed by a blank or the end of the line. A
//! NUL ends the line, as it ends Redis's C string.

use super::frame::Span;

/// The quotes do not balance.
pub(crate) struct Unbalanced;

/// C's `isspace`: what `sdssplitargs` skips between words and accepts
/// after a closing quote.
fn blank(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c)
}

/// What ends an unquoted word in `sdssplitargs` (its `switch`): not VT
/// or FF, which belong to the word.
fn ends_word(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

/// Split `line` into `args`: words without quotes are spans of `line`;
/// quoted ones are unescaped into `scratch`.
pub(crate) fn split(
    line: &[u8],
    args: &mut Vec<Span>,
    scratch: &mut Vec<u8>,
) -> Result<(), Unbalanced> {
    let line = match memchr::memchr(0, line) {
        Some(nul) => &line[..nul],
        None => line,
    };
    let mut p = 0;
    loop {
        while p < line.len() && blank(line[p]) {
            p += 1;
        }
        if p == line.len() {
            return Ok(());
        }
        let start = p;
        while p < line.len() && !ends_word(line[p]) && line[p] != b'"' && line[p] != b'\'' {
            p += 1;
        }
        if p == line.len() || ends_word(line[p]) {
            args.push(Span::input(start, p - start));
            continue;
        }
        // A quote: this word is built in the scratch.
        let from = scratch.len();
        scratch.extend_from_slice(&line[start..p]);
        p = quoted_word(line, p, scratch)?;
        args.push(Span::scratch(from, scratch.len() - from));
    }
}

/// The rest of a word from `p` (at a quote) into `out`; returns where
/// the word ends.
fn quoted_word(line: &[u8], mut p: usize, out: &mut Vec<u8>) -> Result<usize, Unbalanced> {
    loop {
        match line.get(p).copied() {
            None => return Ok(p),
            Some(c) if blank(c) => return Ok(p),
            Some(b'"') => return double_quoted(line, p + 1, out),
            Some(b'\'') => return single_quoted(line, p + 1, out),
            Some(c) => {
                out.push(c);
                p += 1;
            }
        }
    }
}

/// The inside of `"…"` from `p` (after the opening quote) into `out`,
/// unescaped; returns where the word ends.
fn double_quoted(line: &[u8], mut p: usize, out: &mut Vec<u8>) -> Result<usize, Unbalanced> {
    loop {
        match (line.get(p).copied(), line.get(p + 1)) {
            (None, _) => return Err(Unbalanced),
            (Some(b'\\'), Some(_)) => p += escape(line, p, out),
            (Some(b'"'), _) => return closed(line, p),
            (Some(c), _) => {
                out.push(c);
                p += 1;
            }
        }
    }
}

/// The inside of `'…'` from `p` (after the opening quote) into `out`:
/// only `\'` is an escape; returns where the word ends.
fn single_quoted(line: &[u8], mut p: usize, out: &mut Vec<u8>) -> Result<usize, Unbalanced> {
    loop {
        match (line.get(p).copied(), line.get(p + 1).copied()) {
            (None, _) => return Err(Unbalanced),
            (Some(b'\\'), Some(b'\'')) => {
                out.push(b'\'');
                p += 2;
            }
            (Some(b'\''), _) => return closed(line, p),
            (Some(c), _) => {
                out.push(c);
                p += 1;
            }
        }
    }
}

/// The escape at `p` in `"…"` (a backslash and at least one byte after
/// it) unescaped into `out`; returns its length: `\xHH`, or `\` and one.
fn escape(line: &[u8], p: usize, out: &mut Vec<u8>) -> usize {
    let hex_at = |i: usize| line.get(i).is_some_and(|c| c.is_ascii_hexdigit());
    if line[p + 1] == b'x' && hex_at(p + 2) && hex_at(p + 3) {
        out.push(hex(line[p + 2]) << 4 | hex(line[p + 3]));
        return 4;
    }
    out.push(match line[p + 1] {
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'b' => 0x08,
        b'a' => 0x07,
        c => c,
    });
    2
}

/// The closing quote at `p`: it must be followed by a blank or the end of
/// the line; returns where the word ends (after it).
fn closed(line: &[u8], p: usize) -> Result<usize, Unbalanced> {
    match line.get(p + 1) {
        Some(&c) if !blank(c) => Err(Unbalanced),
        _ => Ok(p + 1),
    }
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}
