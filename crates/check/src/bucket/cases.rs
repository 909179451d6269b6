//! The bucket protocol's conformance cases: the wire contract's section 2,
//! docs/protocols/bucket.md, one case each.

use super::talk::{add, ask, current, read, refused, request, value};
use super::Bucket;
use crate::case::{pause, Case, Ctx, Fail, Scope};
use crate::wire::show;
use serverlab_proto::bucket::DelayUnit;
use serverlab_util::Named;
use std::time::{Duration, Instant};

type C<'a> = Ctx<'a, Bucket>;

use Scope::{Assignment as A, Serverlab as S};

#[allow(
    clippy::too_many_lines,
    reason = "a table of cases, one per line: splitting it would hide the list"
)]
pub fn all() -> Vec<Case<Bucket>> {
    let case = Case::<Bucket>::new;
    vec![
        case(
            "add-returns-new-value",
            A,
            "d,b adds d to bucket b and answers its new value",
            "the reply is how a client learns the bucket's total",
            add_returns_new_value,
        ),
        case(
            "read-zero-delay",
            A,
            "0,b answers bucket b's value and changes nothing",
            "it is how a client checks totals",
            read_zero_delay,
        ),
        case(
            "delay-before-reply",
            A,
            "the reply comes no sooner than the delay asked for",
            "the delay is the work the homework measures; skipping it fakes throughput",
            delay_before_reply,
        ),
        case(
            "adds-accumulate",
            A,
            "adds on separate connections accumulate: no add is lost",
            "a lost update silently corrupts every total",
            adds_accumulate,
        ),
        case(
            "buckets-independent",
            A,
            "an add to one bucket leaves the others as they were",
            "buckets are separate counters",
            buckets_independent,
        ),
        case(
            "first-and-last-bucket",
            A,
            "buckets 0 and N-1 both exist",
            "an off-by-one loses the last bucket",
            first_and_last_bucket,
        ),
        case(
            "one-request-per-connection",
            A,
            "the assignment's client: connect, send one line, read the reply, close",
            "that is how the homework's client talks",
            one_request_per_connection,
        ),
        case(
            "split-request",
            A,
            "a line sent one byte per write is one request",
            "TCP is a byte stream: a request can arrive in pieces",
            split_request,
        ),
        case(
            "leading-zeros",
            S,
            "numbers may have leading zeros: 001,0002 is delay 1, bucket 2",
            "they are base-10 numbers, not strings",
            leading_zeros,
        ),
        case(
            "crlf-accepted",
            S,
            "a CR before the LF is dropped",
            "telnet and some clients end lines with CRLF",
            crlf_accepted,
        ),
        case(
            "keep-alive",
            S,
            "further lines on one connection are answered, one by one",
            "serverlab answers until the client closes; clients may reuse a connection",
            keep_alive,
        ),
        case(
            "pipelined-in-order",
            S,
            "lines sent in one write are answered in order, the slow one first",
            "a client matches replies to requests by order alone",
            pipelined_in_order,
        ),
        case(
            "replies-before-error",
            S,
            "lines before a bad one are answered first, then ERR, then the close",
            "an error must not swallow the answers owed before it",
            replies_before_error,
        ),
        case(
            "malformed",
            S,
            "a line that is not <delay>,<bucket> gets ERR and the connection closes",
            "bad input is answered and contained, never a crash or a hang",
            malformed,
        ),
        case(
            "number-too-large",
            S,
            "a number over 64 bits gets ERR and the connection closes",
            "a number from a client must never overflow the server",
            number_too_large,
        ),
        case(
            "bucket-out-of-range",
            S,
            "bucket N or more gets ERR and the connection closes",
            "an unchecked index writes outside the buckets",
            bucket_out_of_range,
        ),
        case(
            "delay-over-max",
            S,
            "a delay over --max-delay gets ERR at once, with no delay",
            "one request must not hold a worker for an unbounded time",
            delay_over_max,
        ),
        case(
            "line-too-long",
            S,
            "a line over --max-line bytes gets ERR and the connection closes",
            "a client must not make the server buffer without bound",
            line_too_long,
        ),
        case(
            "nul-not-terminator",
            S,
            "NUL is an ordinary byte here: 0,0\\0 is malformed",
            "only LF ends a line in this protocol, unlike the board",
            nul_not_terminator,
        ),
    ]
}

fn buckets(ctx: &C) -> u64 {
    ctx.proto.buckets.expect("known once prepared")
}

/// A bucket for a case: spread over the buckets so cases do not share one.
fn bucket(ctx: &C, k: u64) -> u64 {
    k % buckets(ctx)
}

fn add_returns_new_value(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 1);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    add(ctx, &mut c, 1, b, before)
}

fn read_zero_delay(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 2);
    let v = current(ctx, b)?;
    let mut c = ctx.conn()?;
    ask(
        ctx,
        &mut c,
        &request(0, b),
        0,
        &format!("\"{v}\\n\""),
        |x| x == v,
    )?;
    let again = current(ctx, b)?;
    ctx.ensure(again == v, "0,b twice", || {
        format!("0,{b} changed bucket {b} from {v} to {again}")
    })
}

fn delay_before_reply(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 3);
    let unit = ctx.proto.delay_unit;
    // Long enough to measure, short enough to be quick, within the limit.
    let d = match unit {
        DelayUnit::Seconds => 1,
        DelayUnit::Millis => 20,
        DelayUnit::Micros => 2000,
    }
    .min(ctx.proto.max_delay)
    .max(1);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    let started = Instant::now();
    add(ctx, &mut c, d, b, before)?;
    let took = started.elapsed();
    let want = unit.duration(d);
    ctx.ensure(took >= want, "(timing)", || {
        format!(
            "a {d} {unit} delay was answered after {took:?}, sooner than {want:?}{}",
            unit_hint(d, unit, took)
        )
    })
}

/// For a delay of `d` `unit`s answered after only `took`: the server's
/// `--delay-unit` it matches, said as the flag that tells `check` so.
fn unit_hint(d: u64, unit: DelayUnit, took: Duration) -> String {
    let matched = DelayUnit::ALL
        .iter()
        .copied()
        .filter(|u| u.duration(d) < unit.duration(d) && u.duration(d) <= took)
        .max_by_key(|u| u.duration(d));
    match matched {
        Some(u) => format!(
            ": the server seems to count delays in {u}; if it runs with --delay-unit {u}, \
             run check bucket --delay-unit {u}"
        ),
        None => format!(
            ": if the server runs with a --delay-unit smaller than {unit}, give check bucket \
             the same --delay-unit"
        ),
    }
}

fn adds_accumulate(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 4);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    add(ctx, &mut c, 1, b, before)?;
    let mut c = ctx.conn()?;
    add(ctx, &mut c, 1, b, before + 1)?;
    let after = current(ctx, b)?;
    ctx.ensure(after == before + 2, "0,b", || {
        format!("bucket {b} went from {before} to {after} after two adds of 1")
    })
}

fn buckets_independent(ctx: &mut C) -> Result<(), Fail> {
    if buckets(ctx) < 2 {
        ctx.note(
            "(none)",
            "two buckets",
            "the server has one bucket: nothing to compare",
            true,
        );
        return Ok(());
    }
    let (b, other) = (bucket(ctx, 5), bucket(ctx, 6));
    let (before, other_before) = (current(ctx, b)?, current(ctx, other)?);
    let mut c = ctx.conn()?;
    add(ctx, &mut c, 1, b, before)?;
    let other_after = current(ctx, other)?;
    ctx.ensure(other_after == other_before, "0,other", || {
        format!("adding to bucket {b} changed bucket {other} from {other_before} to {other_after}")
    })
}

fn first_and_last_bucket(ctx: &mut C) -> Result<(), Fail> {
    for b in [0, buckets(ctx) - 1] {
        let before = current(ctx, b)?;
        let mut c = ctx.conn()?;
        add(ctx, &mut c, 1, b, before)?;
    }
    Ok(())
}

fn one_request_per_connection(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 7);
    for _ in 0..5 {
        current(ctx, b)?;
    }
    Ok(())
}

fn split_request(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 8);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    let wire = request(1, b);
    for byte in &wire {
        c.send(std::slice::from_ref(byte));
        pause();
    }
    let got = read(ctx, &mut c, 1);
    let want = before + 1;
    ctx.expect(
        &wire,
        &format!("\"{want}\\n\""),
        &got,
        value(&got) == Some(want),
    )
}

fn leading_zeros(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 9);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    let wire = format!("001,000{b}\n").into_bytes();
    let want = before + 1;
    ask(ctx, &mut c, &wire, 1, &format!("\"{want}\\n\""), |v| {
        v == want
    })
    .map(drop)
}

fn crlf_accepted(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 10);
    let v = current(ctx, b)?;
    let mut c = ctx.conn()?;
    let wire = format!("0,{b}\r\n").into_bytes();
    ask(ctx, &mut c, &wire, 0, &format!("\"{v}\\n\""), |x| x == v).map(drop)
}

fn keep_alive(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 11);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    add(ctx, &mut c, 1, b, before)?;
    add(ctx, &mut c, 0, b, before + 1)?;
    add(ctx, &mut c, 1, b, before + 1)
}

fn pipelined_in_order(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 12);
    let before = current(ctx, b)?;
    let mut c = ctx.conn()?;
    let wire = [request(1, b), request(0, b)].concat();
    c.send(&wire);
    let first = read(ctx, &mut c, 1);
    let second = read(ctx, &mut c, 0);
    // The read may run beside the add, so it may see either value; the
    // add's reply, whatever the read saw, must come first.
    let ok = value(&first) == Some(before + 1)
        && value(&second).is_some_and(|v| v == before || v == before + 1);
    let got = format!("{} then {}", first.show(), second.show());
    let expected = format!(
        "\"{}\\n\" then \"{before}\\n\" or \"{}\\n\"",
        before + 1,
        before + 1
    );
    ctx.note(&show(&wire), &expected, &got, ok);
    ctx.ensure(ok, "(order)", || {
        "the replies came out of request order".into()
    })
}

fn replies_before_error(ctx: &mut C) -> Result<(), Fail> {
    let b = bucket(ctx, 13);
    let v = current(ctx, b)?;
    let mut c = ctx.conn()?;
    let wire = [request(0, b), b"abc\n".to_vec()].concat();
    c.send(&wire);
    let first = read(ctx, &mut c, 0);
    ctx.expect(
        &wire,
        &format!("\"{v}\\n\""),
        &first,
        value(&first) == Some(v),
    )?;
    let err = read(ctx, &mut c, 0);
    let ok = err.reply().is_some_and(|r| r.starts_with(b"ERR "));
    ctx.expect(b"(the second line)", "\"ERR <reason>\\n\"", &err, ok)?;
    ctx.expect_close(&mut c, "ERR")
}

fn malformed(ctx: &mut C) -> Result<(), Fail> {
    for line in [
        "abc\n", "-1,2\n", "1, 2\n", "1,2,3\n", "\n", "1;2\n", ",\n", "1,\n",
    ] {
        refused(ctx, line.as_bytes())?;
    }
    Ok(())
}

fn number_too_large(ctx: &mut C) -> Result<(), Fail> {
    refused(ctx, b"99999999999999999999,0\n")?;
    refused(ctx, b"0,18446744073709551616\n")
}

fn bucket_out_of_range(ctx: &mut C) -> Result<(), Fail> {
    let n = buckets(ctx);
    refused(ctx, &request(0, n))?;
    refused(ctx, &request(1, n.saturating_add(1000)))
}

fn delay_over_max(ctx: &mut C) -> Result<(), Fail> {
    // `refused` waits --timeout, not the delay: a server that delays
    // before refusing fails here when the delay is longer than that.
    refused(ctx, &request(ctx.proto.max_delay.saturating_add(1), 0))
}

fn line_too_long(ctx: &mut C) -> Result<(), Fail> {
    // Digits only, so the line is wrong only for its length.
    let mut line = vec![b'0'; ctx.proto.max_line];
    line.extend_from_slice(b",0\n");
    refused(ctx, &line)
}

fn nul_not_terminator(ctx: &mut C) -> Result<(), Fail> {
    refused(ctx, b"0,0\0\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 s asked, 1.08 ms taken: the server counts in ms.
    #[test]
    fn a_too_soon_delay_names_the_delay_unit() {
        let ms = unit_hint(1, DelayUnit::Seconds, Duration::from_micros(1080));
        assert!(ms.contains("--delay-unit ms"), "{ms}");
        let us = unit_hint(20, DelayUnit::Millis, Duration::from_micros(25));
        assert!(us.contains("--delay-unit us"), "{us}");
        let none = unit_hint(1, DelayUnit::Seconds, Duration::from_nanos(10));
        assert!(none.contains("--delay-unit"), "{none}");
    }
}
