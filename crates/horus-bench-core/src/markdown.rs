//! A table built once and printed two ways: aligned text for the terminal, and a
//! Markdown table for `docs/benchmarks.md`.

use std::fmt::Write as _;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A titled table of strings.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Column headers.
    pub header: Vec<String>,
    /// Alignment per column (missing = right).
    pub align: Vec<Align>,
    /// Cells, one `Vec` per row.
    pub rows: Vec<Vec<String>>,
    /// Lines printed under the table (what was measured, how).
    pub notes: Vec<String>,
}

impl Table {
    /// A table with these headers; the first column is left-aligned, the rest right.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        let header: Vec<String> = header.into_iter().map(Into::into).collect();
        let align = (0..header.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Self {
            header,
            align,
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Left-aligns column `i`.
    pub fn left(mut self, i: usize) -> Self {
        if i < self.align.len() {
            self.align[i] = Align::Left;
        }
        self
    }

    /// Adds a row (padded or cut to the header's width).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut cells: Vec<String> = cells.into_iter().map(Into::into).collect();
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    /// Adds a note line.
    pub fn note(&mut self, line: impl Into<String>) {
        self.notes.push(line.into());
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn aligned(&self, c: usize) -> Align {
        self.align.get(c).copied().unwrap_or(Align::Right)
    }

    /// Aligned plain text.
    pub fn to_text(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, s)| {
                    let pad = widths[c].saturating_sub(s.chars().count());
                    match self.aligned(c) {
                        Align::Left => format!("{s}{}", " ".repeat(pad)),
                        Align::Right => format!("{}{s}", " ".repeat(pad)),
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", parts.join("  ").trim_end());
        };
        line(&self.header, &mut out);
        for r in &self.rows {
            line(r, &mut out);
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        out
    }

    /// A GitHub-flavoured Markdown table (notes follow as a paragraph).
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = String::new();
        let _ = writeln!(
            out,
            "| {} |",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let rule: Vec<&str> = (0..self.header.len())
            .map(|c| match self.aligned(c) {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        let _ = writeln!(out, "|{}|", rule.join("|"));
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                let _ = writeln!(out, "{n}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_both_ways() {
        let mut t = Table::new(["system", "median"]);
        t.row(["horus", "250 ns"]);
        t.row(["a|b", "1.20 µs"]);
        t.note("pinned");
        let text = t.to_text();
        assert!(text.contains("horus    250 ns"), "{text}");
        let md = t.to_markdown();
        assert!(md.starts_with("| system | median |\n|---|---:|\n"));
        assert!(md.contains("| a\\|b | 1.20 µs |"));
        assert!(md.ends_with("\npinned\n"));
    }
}
