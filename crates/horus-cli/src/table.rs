//! Aligned text tables for the verbs' text output.

/// A table of text cells: a header row, then rows; columns are padded to
/// their widest cell. Columns marked numeric are right-aligned.
#[derive(Debug)]
pub(crate) struct Table {
    header: Vec<String>,
    numeric: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles; a title starting with `>` is a
    /// right-aligned (numeric) column (the `>` is not printed).
    pub(crate) fn new(columns: &[&str]) -> Table {
        Table {
            header: columns
                .iter()
                .map(|c| c.trim_start_matches('>').to_owned())
                .collect(),
            numeric: columns.iter().map(|c| c.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are empty, extra cells are dropped).
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    /// Whether no row was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, ending with a newline.
    pub(crate) fn render(&self) -> String {
        let width = |i: usize| {
            std::iter::once(&self.header)
                .chain(&self.rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.header.len()).map(width).collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - cell.chars().count();
                if self.numeric[i] {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Prints the table on stdout.
    pub(crate) fn print(&self) {
        print!("{}", self.render());
    }
}

/// A duration in microseconds with one decimal.
pub(crate) fn micros(d: std::time::Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_left_and_numbers_right() {
        let mut t = Table::new(&["name", ">hz"]);
        t.row(vec!["imu".into(), "1000".into()]);
        t.row(vec!["controller".into(), "50".into()]);
        assert_eq!(
            t.render(),
            "name          hz\nimu         1000\ncontroller    50\n"
        );
    }
}
