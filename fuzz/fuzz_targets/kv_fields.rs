#![no_main]
//! kv header fields (`Host`, `Content-Length`, `Transfer-Encoding`,
//! `Connection`, `Expect`, `If-None-Match`), folded over every field of a
//! head by `proto::kv::scan`, against the rules of RFC 9110/9112 and
//! the wire contract (docs/protocols/) written here a second way: a head is accepted exactly when
//! no rule refuses it, then with the right keep-alive, length and
//! expectation; refused, with one of the errors that apply.
//! Input: [method, version, then fields split at LF: a name byte, value…].

use libfuzzer_sys::fuzz_target;
use serverlab_fuzz::input::Input;
use serverlab_proto::kv::{scan, HeadScan, Limits, RequestError};
use serverlab_proto::number::parse_u64;

const NAMES: [&str; 8] = [
    "Host",
    "Content-Length",
    "content-LENGTH",
    "Connection",
    "Transfer-Encoding",
    "If-None-Match",
    "Expect",
    "X-Other",
];
const MAX_VALUE: usize = 100;

/// What the fields say, by the rules.
#[derive(Default)]
struct Fields<'a> {
    hosts: usize,
    lengths: Vec<&'a [u8]>,
    chunked: bool,
    close: bool,
    keep_alive: bool,
    if_none_match: bool,
    expect_continue: bool,
    expect_other: bool,
}

impl<'a> Fields<'a> {
    fn add(&mut self, name: &str, value: &'a [u8]) {
        let value = value.trim_ascii();
        match name.to_ascii_lowercase().as_str() {
            "host" => self.hosts += 1,
            "content-length" => self.lengths.push(value),
            "transfer-encoding" => self.chunked = true,
            "connection" => {
                for option in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    self.close |= option.eq_ignore_ascii_case(b"close");
                    self.keep_alive |= option.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            "if-none-match" => self.if_none_match = true,
            "expect" if value.eq_ignore_ascii_case(b"100-continue") => self.expect_continue = true,
            "expect" => self.expect_other = true,
            _ => {}
        }
    }

    /// The errors that refuse this head (any one may be reported), and
    /// the body length when none does.
    fn errors(&self, http11: bool, writes: bool) -> (Vec<RequestError>, usize) {
        let mut errors = Vec::new();
        if self.hosts > 1 || (http11 && self.hosts == 0) {
            errors.push(RequestError::Host);
        }
        if self.chunked {
            errors.push(RequestError::TransferEncoding);
        }
        let numbers: Vec<_> = self.lengths.iter().map(|v| parse_u64(v)).collect();
        if numbers.iter().any(Result::is_err) {
            errors.push(RequestError::LengthNotANumber);
        }
        let values: Vec<Option<u64>> = numbers.into_iter().filter_map(Result::ok).collect();
        if values.windows(2).any(|w| w[0] != w[1]) {
            errors.push(RequestError::LengthConflict);
        }
        let mut length = 0;
        match values.first() {
            Some(Some(n)) if *n <= MAX_VALUE as u64 => length = *n as usize,
            Some(_) => errors.push(RequestError::BodyTooLarge),
            None if self.lengths.is_empty() && writes => errors.push(RequestError::LengthRequired),
            None => {}
        }
        if self.expect_other && http11 {
            errors.push(RequestError::Expectation);
        }
        (errors, length)
    }
}

/// Field-value bytes httparse accepts: HTAB, SP, VCHAR, obs-text.
fn field_byte(b: &u8) -> bool {
    *b == b'\t' || (0x20..0x7f).contains(b) || *b >= 0x80
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let method = input.pick(&["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"]);
    let http11 = input.byte() % 2 == 1;
    let mut head = format!("{method} /k HTTP/1.{}\r\n", u8::from(http11)).into_bytes();
    let values: Vec<(&str, Vec<u8>)> = input
        .rest()
        .split(|&b| b == b'\n')
        .filter_map(|f| f.split_first())
        .map(|(&n, v)| {
            (
                NAMES[usize::from(n) % NAMES.len()],
                v.iter().copied().filter(field_byte).collect(),
            )
        })
        .collect();
    let mut fields = Fields::default();
    for (name, value) in &values {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
        fields.add(name, value);
    }
    head.extend_from_slice(b"\r\n");

    let limits = Limits {
        max_value: MAX_VALUE,
        ..Limits::default()
    };
    let writes = matches!(method, "PUT" | "POST");
    let (errors, length) = fields.errors(http11, writes);
    let text = String::from_utf8_lossy(&head);
    match scan(&head, &mut 0, &limits) {
        HeadScan::Complete { head: h, len } => {
            assert!(errors.is_empty(), "accepted, yet {errors:?}: {text:?}");
            assert_eq!(len, head.len());
            assert_eq!(h.content_length, length, "{text:?}");
            assert_eq!(
                h.keep_alive,
                !fields.close && (http11 || fields.keep_alive),
                "{text:?}"
            );
            assert_eq!(
                h.expect_continue,
                fields.expect_continue && http11,
                "{text:?}"
            );
            assert_eq!(h.if_none_match.is_some(), fields.if_none_match, "{text:?}");
        }
        HeadScan::Reject(r) if r.error == RequestError::TooManyHeaders => {
            assert!(values.len() > 100)
        }
        HeadScan::Reject(r) if r.error == RequestError::HeadersTooLarge => {
            assert!(head.len() > 16 * 1024)
        }
        HeadScan::Reject(r) => assert!(
            errors.contains(&r.error),
            "{r:?}, not one of {errors:?}: {text:?}"
        ),
        HeadScan::Incomplete => panic!("a whole head is incomplete: {text:?}"),
    }
});
