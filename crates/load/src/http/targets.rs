//! Targets files, in vegeta's two formats: its HTTP format (a request line
//! `METHOD URL`, then header lines, then an optional `@body-file` line;
//! targets apart by blank lines; `#` comments) and JSON lines
//! (`{"method", "url", "header": {"Name": ["value"]}, "body": base64}`,
//! as `vegeta -format=json`). serverlab adds a weight: ` weight=N` after
//! the URL, or `"weight": N`. The format is told by the first character
//! that is not blank: `{` is JSON lines.

use super::target::Target;
use base64::Engine;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The most bytes a body file may hold (each target's body is held, and
/// copied into every request of it).
pub const MAX_BODY: u64 = 64 << 20;
/// The most a `--targets` file may have.
pub const MAX_TARGETS_FILE: u64 = 64 << 20;

/// The targets in `text`, bodies read from the files it names. `Err`
/// names the line at fault and what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Target>, String> {
    let targets = if text.trim_start().starts_with('{') {
        json_lines(text)?
    } else {
        http_format(text)?
    };
    if targets.is_empty() {
        return Err("no targets in it".into());
    }
    Ok(targets)
}

/// A body: `STRING`, or `@FILE` for the file's bytes.
pub fn body(spec: &str) -> Result<Vec<u8>, String> {
    match spec.strip_prefix('@') {
        Some(path) => read_body(Path::new(path)),
        None => Ok(spec.as_bytes().to_vec()),
    }
}

/// The body file's bytes, at most [`MAX_BODY`]: any file (a pipe is read
/// to its end), one longer, or a device that never ends, refused.
fn read_body(path: &Path) -> Result<Vec<u8>, String> {
    serverlab_util::file::read_capped(path, MAX_BODY)
        .map_err(|e| format!("the body file {}: {e}", path.display()))
}

fn at(line: usize, why: String) -> String {
    format!("line {line}: {why}")
}

/// vegeta's HTTP format.
fn http_format(text: &str) -> Result<Vec<Target>, String> {
    let mut targets: Vec<Target> = Vec::new();
    // The target being read, and whether its body line came (nothing may
    // follow it but a blank line).
    let mut open: Option<(Target, bool)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            targets.extend(open.take().map(|(t, _)| t));
            continue;
        }
        match &mut open {
            None => open = Some((request_line(line).map_err(|e| at(n, e))?, false)),
            Some((_, true)) => {
                return Err(at(
                    n,
                    format!(
                        "'{line}' after the body line: a target ends with its @body line (put a \
                         blank line before the next)"
                    ),
                ))
            }
            Some((t, bodied)) => {
                if let Some(path) = line.strip_prefix('@') {
                    t.body = read_body(Path::new(path)).map_err(|e| at(n, e))?;
                    *bodied = true;
                } else if looks_like_request(line) {
                    // vegeta lets a target end without a blank line.
                    let next = request_line(line).map_err(|e| at(n, e))?;
                    targets.extend(open.replace((next, false)).map(|(t, _)| t));
                } else {
                    t.header(line).map_err(|e| at(n, e))?;
                }
            }
        }
    }
    targets.extend(open.map(|(t, _)| t));
    Ok(targets)
}

/// `METHOD URL`: a token, a space, something that is not a header's name
/// and colon.
fn looks_like_request(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(m), Some(u)) = (words.next(), words.next()) else {
        return false;
    };
    !m.ends_with(':')
        && (u.starts_with("http://") || u.starts_with("https://") || u.starts_with('/'))
}

/// `METHOD URL [weight=N]`.
fn request_line(line: &str) -> Result<Target, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (method, url, weight) = match words[..] {
        [m, u] => (m, u, None),
        [m, u, w] => (m, u, Some(w)),
        _ => {
            return Err(format!(
                "'{line}' is not a request line: write METHOD URL (GET http://host/path), \
                 optionally followed by weight=N"
            ))
        }
    };
    let mut t = Target::new(method, url)?;
    if let Some(w) = weight {
        t.weight = parse_weight(w.strip_prefix("weight=").ok_or_else(|| {
            format!("'{w}' after the URL: the only thing allowed there is weight=N")
        })?)?;
    }
    Ok(t)
}

/// A weight: a whole number from 1.
pub fn parse_weight(w: &str) -> Result<u32, String> {
    match w.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("'{w}' is not a weight (a whole number from 1)")),
    }
}

/// One target of a JSON-lines file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonTarget {
    method: String,
    url: String,
    #[serde(default)]
    header: BTreeMap<String, Vec<String>>,
    /// The body, base64.
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    weight: Option<u32>,
}

fn json_lines(text: &str) -> Result<Vec<Target>, String> {
    let mut targets = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let t = json_target(line).map_err(|e| at(i + 1, e))?;
        targets.push(t);
    }
    Ok(targets)
}

fn json_target(line: &str) -> Result<Target, String> {
    let j: JsonTarget = serde_json::from_str(line).map_err(|e| {
        format!("not a target ({e}); each line is {{\"method\", \"url\", \"header\", \"body\"}}")
    })?;
    let mut t = Target::new(&j.method, &j.url)?;
    for (name, values) in &j.header {
        for v in values {
            t.header(&format!("{name}: {v}"))?;
        }
    }
    if let Some(b) = &j.body {
        t.body = base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| format!("the body is not base64 ({e})"))?;
    }
    if let Some(w) = j.weight {
        t.weight = parse_weight(&w.to_string())?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vegetas_http_format_reads() {
        let dir = std::env::temp_dir().join(format!("serverlab-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("b.json");
        std::fs::write(&body, b"{\"a\":1}").unwrap();
        let text = format!(
            "# a comment\nGET http://h:81/a\nX-A: 1\nX-B: two words\n\n\
             POST http://h:81/b weight=3\nContent-Type: application/json\n@{}\n\n\
             DELETE /c\nGET /d\n",
            body.display()
        );
        let ts = parse(&text).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(ts.len(), 4);
        assert_eq!(ts[0].name(), "GET http://h:81/a");
        assert_eq!(ts[0].headers.len(), 2);
        assert_eq!(ts[0].headers[1], ("X-B".into(), "two words".into()));
        assert_eq!((ts[1].weight, &ts[1].body[..]), (3, &b"{\"a\":1}"[..]));
        assert_eq!(
            (ts[2].method.as_str(), ts[2].path.as_str()),
            ("DELETE", "/c")
        );
        assert_eq!(ts[3].weight, 1);
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, line, says) in [
            ("GET\n", 1, "not a request line"),
            ("GET http://h/\nnot a header\n", 2, "not a header"),
            ("GET http://h/ weight=0\n", 1, "not a weight"),
            ("GET http://h/ heavy\n", 1, "weight=N"),
            ("\n\nGET ftp://h/\n", 3, "not an http:// or https:// URL"),
            ("GET http://h/\n@/no/such/file\n", 2, "the body file /no/such/file: cannot read it"),
            ("GET http://h/\n@/dev/zero\n", 2, "past the 64 MiB"),
            ("{\"method\":\"GET\"}\n", 1, "not a target"),
            ("{\"method\":\"GET\",\"url\":\"/\"}\n{\"method\":\"GET\",\"url\":\"/\",\"body\":\"%%\"}", 2, "base64"),
            ("{\"method\":\"GET\",\"url\":\"/\",\"extra\":1}", 1, "unknown field"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(&format!("line {line}: ")) && e.contains(says), "{text:?}: {e}");
        }
        assert_eq!(parse("# nothing\n\n").unwrap_err(), "no targets in it");
    }

    #[test]
    fn vegetas_json_lines_read() {
        let text = r#"{"method":"POST","url":"http://h/x","header":{"A":["1","2"]},"body":"aGk=","weight":2}
{"method":"GET","url":"http://h/y"}"#;
        let ts = parse(text).unwrap();
        assert_eq!(ts.len(), 2);
        assert_eq!(
            ts[0].headers,
            vec![("A".into(), "1".into()), ("A".into(), "2".into())]
        );
        assert_eq!((&ts[0].body[..], ts[0].weight), (&b"hi"[..], 2));
        assert_eq!(ts[1].name(), "GET http://h/y");
    }
}
