//! A table of N and X as people keep one: CSV (a comma on the line) or
//! columns separated by blanks, an optional header line (a first line
//! with no number in it), `#` comments and blank lines skipped. N and X
//! are chosen by name or position ([`Choice`]), else they are the two
//! columns whose cells on the first data line are numbers (so a label
//! column before them is fine; a third column of numbers makes the choice
//! ambiguous, and it is refused). An N may repeat (repetitions). Every
//! line has as many cells as the first; every N and X is a finite
//! number within [`MAX_N`] and [`MIN_X`]–[`MAX_X`]. Every complaint names
//! its line and quotes at most [`QUOTE`] bytes of a cell. The table is
//! read line by line, in one pass.

use super::MIN_POINTS;

/// A point (N, X) and the line it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub n: f64,
    pub x: f64,
    pub line: usize,
}

/// What is wrong with a table, and where (a line from 1; None for the
/// whole table).
#[derive(Debug, Clone, PartialEq)]
pub struct BadTable {
    pub line: Option<usize>,
    pub message: String,
}

impl BadTable {
    fn at(line: usize, message: String) -> BadTable {
        BadTable {
            line: Some(line),
            message,
        }
    }
}

/// N beyond this is no concurrency any machine or load has (a billion).
pub const MAX_N: f64 = 1e9;
/// X beyond this is no throughput (10¹⁵ a second in any unit); its
/// squares, summed over a million runs, stay far inside an f64.
pub const MAX_X: f64 = 1e15;
/// X below this is no throughput either (and its relative residuals'
/// squares would leave an f64's normal range).
pub const MIN_X: f64 = 1e-9;
/// At most this many bytes of a cell are quoted in a complaint.
pub const QUOTE: usize = 32;

/// A column: by its header's name, or its position from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Name(String),
    Position(usize),
}

impl Column {
    /// A positive integer is a position (a header holds no numbers), any
    /// other text a name.
    pub fn parse(text: &str) -> Column {
        match text.trim().parse::<usize>() {
            Ok(p) if p > 0 => Column::Position(p),
            _ => Column::Name(text.trim().to_string()),
        }
    }
}

/// Which columns are N and X (None: the table's two columns of
/// numbers), and which rows count: those whose cell in each `filters`
/// column is its text (`--where readers=1`: one series of a report's
/// table).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Choice {
    pub n: Option<Column>,
    pub x: Option<Column>,
    pub filters: Vec<(Column, String)>,
}

/// The rows read, and the lines skipped because their N or X cell was
/// empty (a report's point with no runs).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub empty: Vec<usize>,
    /// How many data lines `--where` left out.
    pub filtered: usize,
    /// The columns' names (their header cells, or `column K`).
    pub names: (String, String),
}

/// The rows of `text` (N and X the two columns of numbers), or what is
/// wrong with it.
pub fn parse(text: &str) -> Result<Vec<Row>, BadTable> {
    parse_with(text, &Choice::default()).map(|t| t.rows)
}

/// A table's data lines from 1, comments and blank lines skipped.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// The table in `text` with N and X as `choice` says, or what is wrong.
pub fn parse_with(text: &str, choice: &Choice) -> Result<Table, BadTable> {
    let mut lines = data_lines(text).peekable();
    let Some(&(first_line, first)) = lines.peek() else {
        return Err(BadTable {
            line: None,
            message: "no data: the table is empty (write N and X, one pair a line)".into(),
        });
    };
    let shape = Shape::of(first_line, first);
    if shape.header.is_some() {
        lines.next();
    }
    let Some(&(line, data)) = lines.peek() else {
        return Err(BadTable::at(
            first_line,
            "a header and no data (write N and X, one pair a line)".into(),
        ));
    };
    let header = shape.header.as_deref();
    let columns = match (&choice.n, &choice.x) {
        (None, None) => numeric_columns(&cells(data, shape.comma), header, line)?,
        (n, x) => {
            let at = |c: &Option<Column>, what| chosen(c.as_ref(), what, header, shape.width);
            (at(n, "--n")?, at(x, "--x")?)
        }
    };
    let filters = choice
        .filters
        .iter()
        .map(|(c, v)| Ok((chosen(Some(c), "--where", header, shape.width)?, v.as_str())))
        .collect::<Result<Vec<_>, BadTable>>()?;
    let name =
        |col: usize| header.map_or_else(|| format!("column {}", col + 1), |h| quote(&h[col]));
    let mut table = Table {
        names: (name(columns.0), name(columns.1)),
        ..Table::default()
    };
    for (line, text) in lines {
        let cells = shape.cells(line, text)?;
        if filters.iter().any(|&(c, v)| cells[c] != v) {
            table.filtered += 1;
            continue;
        }
        match row(&cells, columns, line)? {
            Some(r) => table.rows.push(r),
            None => table.empty.push(line),
        }
    }
    if table.rows.is_empty() && table.filtered > 0 {
        return Err(none_matches(&choice.filters));
    }
    enough(&table.rows, line)?;
    Ok(table)
}

/// What the first line says of every line: CSV or blanks, how many
/// cells, and the header's names where it is one.
struct Shape {
    comma: bool,
    width: usize,
    first_line: usize,
    header: Option<Vec<String>>,
}

impl Shape {
    fn of(first_line: usize, first: &str) -> Shape {
        let comma = first.contains(',');
        let cells = cells(first, comma);
        let header = cells.iter().all(|c| kind(c) == Kind::Text);
        Shape {
            comma,
            width: cells.len(),
            first_line,
            header: header.then(|| cells.iter().map(|c| c.to_string()).collect()),
        }
    }

    /// A data line's cells, as many as the first line's.
    fn cells<'a>(&self, line: usize, text: &'a str) -> Result<Vec<&'a str>, BadTable> {
        let cells = cells(text, self.comma);
        if cells.len() != self.width {
            return Err(ragged(line, cells.len(), self.first_line, self.width));
        }
        Ok(cells)
    }
}

/// `--where` left no line.
fn none_matches(filters: &[(Column, String)]) -> BadTable {
    let said: Vec<String> = filters
        .iter()
        .map(|(c, v)| match c {
            Column::Name(n) => format!("{n}={v}"),
            Column::Position(p) => format!("{p}={v}"),
        })
        .collect();
    BadTable {
        line: None,
        message: format!(
            "--where {}: no line matches (a cell matches by its text, as written)",
            quote(&said.join(" "))
        ),
    }
}

/// A line's cells: split at commas in a CSV table, else at blanks;
/// quotes around a cell dropped.
fn cells(line: &str, comma: bool) -> Vec<&str> {
    let split: Vec<&str> = if comma {
        line.split(',').map(str::trim).collect()
    } else {
        line.split_whitespace().collect()
    };
    split.into_iter().map(|c| c.trim_matches('"')).collect()
}

/// What a cell holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Number(f64),
    /// Written as a number, but NaN, infinite, or beyond an f64 (1e400).
    NotFinite,
    Text,
}

fn kind(cell: &str) -> Kind {
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Kind::Number(v),
        Ok(_) => Kind::NotFinite,
        Err(_) => Kind::Text,
    }
}

/// `cell` in quotes, cut to [`QUOTE`] bytes (and its length said) where
/// longer.
pub fn quote(cell: &str) -> String {
    match cut_at(cell) {
        None => format!("'{cell}'"),
        Some(end) => format!("'{}…' ({} bytes)", &cell[..end], cell.len()),
    }
}

/// `cell` unquoted, cut as [`quote`] cuts it.
fn cut(cell: &str) -> String {
    match cut_at(cell) {
        None => cell.to_string(),
        Some(end) => format!("{}… ({} bytes)", &cell[..end], cell.len()),
    }
}

/// Where a cell longer than [`QUOTE`] bytes is cut (a character's start).
fn cut_at(cell: &str) -> Option<usize> {
    if cell.len() <= QUOTE {
        return None;
    }
    let mut end = QUOTE;
    while !cell.is_char_boundary(end) {
        end -= 1;
    }
    Some(end)
}

/// The N and X columns when none were chosen: the two holding numbers on
/// the first data line, and only two.
fn numeric_columns(
    cells: &[&str],
    header: Option<&[String]>,
    line: usize,
) -> Result<(usize, usize), BadTable> {
    let numeric: Vec<usize> = (0..cells.len())
        .filter(|&i| kind(cells[i]) != Kind::Text)
        .collect();
    // Columns by their header's names where there is one, else their cells.
    let listed = |cols: &[usize]| -> String {
        let shown: Vec<String> = cols
            .iter()
            .take(8)
            .map(|&i| header.map_or_else(|| quote(cells[i]), |h| quote(&h[i])))
            .collect();
        let more = if cols.len() > 8 { ", …" } else { "" };
        format!("{}{more}", shown.join(", "))
    };
    match numeric[..] {
        [n, x] => Ok((n, x)),
        [_] if cells.len() == 1 => Err(BadTable::at(
            line,
            "one column: the table needs two, N and X".into(),
        )),
        [_, _, _, ..] => Err(BadTable::at(
            line,
            format!(
                "{} columns hold numbers ({}): say which are N and X with --n and --x \
                 (a header's names or positions from 1)",
                numeric.len(),
                listed(&numeric)
            ),
        )),
        _ => Err(BadTable::at(
            line,
            format!(
                "one number ({}): the table needs two columns of numbers, N and X",
                listed(&(0..cells.len()).collect::<Vec<_>>())
            ),
        )),
    }
}

/// The column `choice` names (from 0), or why none: a name the header
/// lacks (or no header), a position past the line's cells.
fn chosen(
    choice: Option<&Column>,
    flag: &str,
    header: Option<&[String]>,
    width: usize,
) -> Result<usize, BadTable> {
    let whole = |message: String| BadTable {
        line: None,
        message,
    };
    let Some(choice) = choice else {
        return Err(whole(format!(
            "{flag} is missing: with one of --n and --x, give both"
        )));
    };
    match (choice, header) {
        (Column::Position(p), _) if *p <= width => Ok(p - 1),
        (Column::Position(p), _) => Err(whole(format!(
            "{flag} {p}: the table has {width} column(s)"
        ))),
        (Column::Name(name), Some(header)) => header
            .iter()
            .position(|h| h == name)
            .or_else(|| header.iter().position(|h| h.eq_ignore_ascii_case(name)))
            .ok_or_else(|| {
                let names: Vec<String> = header.iter().map(|h| quote(h)).collect();
                whole(format!(
                    "{flag} {}: the header names no such column (it has {})",
                    quote(name),
                    names.join(", ")
                ))
            }),
        (Column::Name(name), None) => Err(whole(format!(
            "{flag} {}: the table has no header line, so name its columns by position (1, 2, …)",
            quote(name)
        ))),
    }
}

/// A line with more or fewer cells than the first.
fn ragged(line: usize, got: usize, first_line: usize, width: usize) -> BadTable {
    BadTable::at(
        line,
        format!(
            "{got} cell(s) where line {first_line} has {width}: every line needs the same \
             columns (a ragged table)"
        ),
    )
}

/// The point on a data line, None where its N or X cell is empty: N and
/// X finite numbers within their bounds.
fn row(
    cells: &[&str],
    (n_col, x_col): (usize, usize),
    line: usize,
) -> Result<Option<Row>, BadTable> {
    if cells[n_col].is_empty() || cells[x_col].is_empty() {
        return Ok(None);
    }
    Ok(Some(Row {
        n: value(cells[n_col], n_col, "N", line)?,
        x: value(cells[x_col], x_col, "X", line)?,
        line,
    }))
}

/// A cell's value as N or X, or why it cannot be one.
fn value(cell: &str, col: usize, what: &str, line: usize) -> Result<f64, BadTable> {
    let bad = |m: String| Err(BadTable::at(line, m));
    let v = match kind(cell) {
        Kind::Number(v) => v,
        Kind::NotFinite => {
            return bad(format!(
                "{} is not a finite number ({what}, column {}): NaN, infinities and \
                 numbers beyond an f64 cannot be fitted",
                quote(cell),
                col + 1
            ))
        }
        Kind::Text => {
            return bad(format!(
                "{} is not a number ({what}, column {})",
                quote(cell),
                col + 1
            ))
        }
    };
    if v <= 0.0 {
        return bad(format!("{what} = {}: {what} must be positive", cut(cell)));
    }
    let absurd = if what == "N" {
        (v > MAX_N).then_some("beyond any plausible concurrency (N ≤ 1e9)")
    } else {
        (!(MIN_X..=MAX_X).contains(&v))
            .then_some("beyond any plausible throughput (X within 1e-9–1e15)")
    };
    if let Some(why) = absurd {
        return bad(format!("{what} = {}: {why}", cut(cell)));
    }
    Ok(v)
}

/// At least [`MIN_POINTS`] distinct N (the law has three parameters).
fn enough(rows: &[Row], first_data: usize) -> Result<(), BadTable> {
    let ns = super::distinct_n(rows.iter().map(|r| r.n));
    if ns.len() >= MIN_POINTS {
        return Ok(());
    }
    let listed: Vec<String> = ns.iter().map(|n| n.to_string()).collect();
    let (first, last) = match (rows.first(), rows.last()) {
        (Some(f), Some(l)) => (f.line, l.line),
        _ => (first_data, first_data),
    };
    let span = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}–{last}")
    };
    Err(BadTable::at(
        last,
        format!(
            "{} distinct N ({}) on {span}: the law has three parameters and needs \
             {MIN_POINTS} distinct N",
            ns.len(),
            listed.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(text: &str) -> Vec<(f64, f64)> {
        parse(text).unwrap().iter().map(|r| (r.n, r.x)).collect()
    }

    #[test]
    fn csv_whitespace_headers_labels_and_repeats_are_read() {
        let want = vec![(1.0, 10.0), (2.0, 19.0), (4.0, 30.0)];
        assert_eq!(points("N,X\n1,10\n2,19\n4,30\n"), want);
        assert_eq!(points("1, 10\n2, 19\r\n4, 30"), want);
        assert_eq!(points("# cores throughput\n1\t10\n\n2  19\n4 30\n"), want);
        assert_eq!(points("run,N,X\na,1,10\nb,2,19\nc,4,30\n"), want);
        assert_eq!(points("\"N\",\"X\"\n\"1\",\"10\"\n2,19\n4,30"), want);
        let rows = parse("1 10\n1 11\n2 19\n4 30\n").unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[3].line, 4);
    }

    #[test]
    fn each_complaint_names_its_line() {
        let bad = |text: &str| parse(text).unwrap_err();
        let e = bad("");
        assert!(e.line.is_none() && e.message.contains("empty"), "{e:?}");
        let e = bad("N,X\n");
        assert!(e.message.contains("no data"), "{e:?}");
        let e = bad("1\n2\n3\n");
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("one column"), "{e:?}");
        let e = bad("N X\n1 10\n2 abc\n4 30\n");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("'abc' is not a number"), "{e:?}");
        let e = bad("1 10\n-2 19\n4 30\n");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("N = -2"), "{e:?}");
        let e = bad("1 10\n2 0\n4 30\n");
        assert!(e.message.contains("X = 0"), "{e:?}");
        let e = bad("1 10\n2 19\n1 11\n");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("2 distinct N (1, 2)"), "{e:?}");
        let e = bad("1 10\n2\n4 30\n");
        assert!(
            e.line == Some(2) && e.message.contains("1 cell(s) where line 1 has 2"),
            "{e:?}"
        );
    }
}
