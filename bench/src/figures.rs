//! How figures leave the benchmark: one JSON line per figure (each starts with
//! `{"bench":`, so `grep '^{"bench"'` extracts them) as soon as it is measured,
//! and a plain table per section for people.

use std::io::Write;

use serde_json::Value;

/// Where figures go (stdout in the binary, a buffer in tests).
pub struct Out<'w> {
    writer: Box<dyn Write + Send + 'w>,
    lines: Vec<Value>,
}

impl std::fmt::Debug for Out<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Out")
            .field("lines", &self.lines.len())
            .finish_non_exhaustive()
    }
}

impl<'w> Out<'w> {
    /// Figures written to `writer`.
    pub fn new(writer: Box<dyn Write + Send + 'w>) -> Out<'w> {
        Out {
            writer,
            lines: Vec::new(),
        }
    }

    /// Writes one figure as a JSON line (`bench` first) and keeps it.
    pub fn figure(&mut self, bench: &str, fields: Value) {
        let mut line = serde_json::Map::new();
        line.insert("bench".to_owned(), Value::String(bench.to_owned()));
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        let line = Value::Object(line);
        // Stdout going away (a closed pipe) must not abort the measurements.
        let _ = writeln!(self.writer, "{line}");
        let _ = self.writer.flush();
        self.lines.push(line);
    }

    /// Writes text for people.
    pub fn text(&mut self, text: &str) {
        let _ = writeln!(self.writer, "{text}");
        let _ = self.writer.flush();
    }

    /// Every figure written so far.
    pub fn lines(&self) -> &[Value] {
        &self.lines
    }
}

/// A table with a header, columns as wide as their widest cell; numbers right-aligned.
pub fn table(title: &str, headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let numeric = |cell: &str| cell.chars().next().is_some_and(|c| c.is_ascii_digit());
    let line = |cells: Vec<&str>| -> String {
        let mut out = String::from(" ");
        for (i, cell) in cells.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            let pad = w.saturating_sub(cell.chars().count());
            if numeric(cell) && i > 0 {
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            }
            out.push_str("  ");
        }
        out.trim_end().to_owned()
    };
    let mut out = format!("\n== {title}\n");
    out.push_str(&line(headers.to_vec()));
    out.push('\n');
    out.push_str(&line(
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    ));
    out.push('\n');
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

/// `12345.6` as `12346`, `0.123` as `0.123`: enough digits to read, no more.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_owned();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// KiB as MiB with one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn figures_are_json_lines_with_bench_first() {
        let mut buffer = Vec::new();
        {
            let mut out = Out::new(Box::new(&mut buffer));
            out.figure("ok_path", json!({"server": "simulator", "rps": 1.5}));
            assert_eq!(out.lines().len(), 1);
        }
        let text = String::from_utf8(buffer).unwrap();
        assert_eq!(
            text,
            "{\"bench\":\"ok_path\",\"server\":\"simulator\",\"rps\":1.5}\n"
        );
    }

    #[test]
    fn tables_align_columns() {
        let t = table(
            "T",
            &["server", "rps"],
            &[
                vec!["simulator".into(), "100".into()],
                vec!["bare".into(), "2000".into()],
            ],
        );
        assert!(t.contains(" simulator   100\n"), "{t}");
        assert!(t.contains(" bare       2000\n"), "{t}");
        assert_eq!(num(12345.6), "12346");
        assert_eq!(num(0.1234), "0.123");
        assert_eq!(mib(2048), "2.0 MiB");
    }
}
