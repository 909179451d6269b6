//! Requests to bytes, and replies back to values, as the simulation's
//! clients need them.

/// A RESP reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The elements of an array of bulk strings (nothing for a null).
    pub fn bulks(&self) -> Vec<Vec<u8>> {
        match self {
            Reply::Array(Some(items)) => items
                .iter()
                .filter_map(|i| match i {
                    Reply::Bulk(Some(b)) => Some(b.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn int(&self) -> Option<i64> {
        match self {
            Reply::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// `args` as a RESP request.
pub fn encode(args: &[Vec<u8>]) -> Vec<u8> {
    let bytes: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    serverlab_proto::resp::client::command(&mut out, &bytes);
    out
}

/// `args` as one line, for the run's trace.
pub fn show(args: &[Vec<u8>]) -> String {
    let words: Vec<String> = args.iter().map(|a| show_bytes(a)).collect();
    words.join(" ")
}

pub fn show_bytes(b: &[u8]) -> String {
    if b.iter().all(|c| c.is_ascii_graphic()) {
        String::from_utf8_lossy(b).into_owned()
    } else {
        format!("<{} bytes>", b.len())
    }
}

/// Every reply in `input`, in order.
pub fn parse_all(mut input: &[u8]) -> Result<Vec<Reply>, String> {
    let mut all = Vec::new();
    while !input.is_empty() {
        let (r, used) = parse(input)?;
        all.push(r);
        input = &input[used..];
    }
    Ok(all)
}

/// The first reply in `input` and its length.
fn parse(input: &[u8]) -> Result<(Reply, usize), String> {
    let end = input
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or_else(|| format!("no line end in {:?}", String::from_utf8_lossy(input)))?;
    let line = String::from_utf8_lossy(&input[1..end]).into_owned();
    let rest = end + 2;
    let num = || -> Result<i64, String> { line.parse().map_err(|_| format!("bad number {line}")) };
    match input[0] {
        b'+' => Ok((Reply::Simple(line), rest)),
        b'-' => Ok((Reply::Error(line), rest)),
        b':' => Ok((Reply::Int(num()?), rest)),
        b'$' => {
            let n = num()?;
            if n < 0 {
                return Ok((Reply::Bulk(None), rest));
            }
            let n = n as usize;
            let body = input
                .get(rest..rest + n)
                .ok_or("a short bulk string")?
                .to_vec();
            Ok((Reply::Bulk(Some(body)), rest + n + 2))
        }
        b'*' => {
            let n = num()?;
            if n < 0 {
                return Ok((Reply::Array(None), rest));
            }
            let mut at = rest;
            let mut items = Vec::new();
            for _ in 0..n {
                let (r, used) = parse(&input[at..])?;
                items.push(r);
                at += used;
            }
            Ok((Reply::Array(Some(items)), at))
        }
        c => Err(format!("not a reply: {:?}", c as char)),
    }
}
