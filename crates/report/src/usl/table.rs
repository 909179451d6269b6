//! A table of N and X as people keep one: CSV (a comma on the line) or
//! columns separated by blanks, an optional header line (a first line
//! with no number in it), `#` comments and blank lines skipped. N and X
//! are the first two columns whose cells on the first data line are
//! numbers (so a label column before them is fine); an N may repeat
//! (repetitions). Every complaint names its line.

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

/// The rows of `text`, or what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Row>, BadTable> {
    let lines: Vec<(usize, Vec<&str>)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i, cells(l)))
        .collect();
    let Some((first_line, first)) = lines.first() else {
        return Err(BadTable {
            line: None,
            message: "no data: the table is empty (write N and X, one pair a line)".into(),
        });
    };
    let header = first.iter().all(|c| number(c).is_none());
    let data = &lines[usize::from(header)..];
    let Some((line, cells)) = data.first() else {
        return Err(BadTable::at(
            *first_line,
            "a header and no data (write N and X, one pair a line)".into(),
        ));
    };
    let columns = numeric_columns(cells, *line)?;
    let rows = data
        .iter()
        .map(|(line, cells)| row(cells, columns, *line))
        .collect::<Result<Vec<Row>, BadTable>>()?;
    enough(&rows)?;
    Ok(rows)
}

/// A line's cells: split at commas where it has one, else at blanks;
/// quotes around a cell dropped.
fn cells(line: &str) -> Vec<&str> {
    let split: Vec<&str> = if line.contains(',') {
        line.split(',').map(str::trim).collect()
    } else {
        line.split_whitespace().collect()
    };
    split.into_iter().map(|c| c.trim_matches('"')).collect()
}

fn number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The first two columns holding numbers on the first data line.
fn numeric_columns(cells: &[&str], line: usize) -> Result<(usize, usize), BadTable> {
    let numeric: Vec<usize> = (0..cells.len())
        .filter(|&i| number(cells[i]).is_some())
        .collect();
    match numeric[..] {
        [n, x, ..] => Ok((n, x)),
        [_] if cells.len() == 1 => Err(BadTable::at(
            line,
            "one column: the table needs two, N and X".into(),
        )),
        _ => Err(BadTable::at(
            line,
            format!(
                "one number ({}): the table needs two columns of numbers, N and X",
                cells.join(", ")
            ),
        )),
    }
}

/// The point on a data line: N and X numbers, both positive.
fn row(cells: &[&str], (n_col, x_col): (usize, usize), line: usize) -> Result<Row, BadTable> {
    let get = |col: usize, what: &str| -> Result<f64, BadTable> {
        let Some(cell) = cells.get(col) else {
            return Err(BadTable::at(
                line,
                format!(
                    "no {what} (column {}): the line has {} cell(s)",
                    col + 1,
                    cells.len()
                ),
            ));
        };
        let v = number(cell).ok_or_else(|| {
            BadTable::at(
                line,
                format!("'{cell}' is not a number ({what}, column {})", col + 1),
            )
        })?;
        if v <= 0.0 {
            return Err(BadTable::at(
                line,
                format!("{what} = {cell}: {what} must be positive"),
            ));
        }
        Ok(v)
    };
    Ok(Row {
        n: get(n_col, "N")?,
        x: get(x_col, "X")?,
        line,
    })
}

/// At least [`MIN_POINTS`] distinct N (the law has three parameters).
fn enough(rows: &[Row]) -> Result<(), BadTable> {
    let mut ns: Vec<f64> = rows.iter().map(|r| r.n).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() >= MIN_POINTS {
        return Ok(());
    }
    let listed: Vec<String> = ns.iter().map(|n| n.to_string()).collect();
    let (first, last) = (rows[0].line, rows[rows.len() - 1].line);
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
        assert!(e.line == Some(2) && e.message.contains("no X"), "{e:?}");
    }
}
