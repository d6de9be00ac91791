//! The one fixed-width table renderer of the tool: every table printed on
//! stdout (the `run` summary, the `semantics` results, the calibrations)
//! goes through it, so they all read alike: a header line, a rule, one line
//! per row, columns two spaces apart, trailing blanks trimmed; a table
//! nested under a heading is indented as a whole.

/// Gap between columns.
const COLUMN_GAP: &str = "  ";

/// How a column's cells are padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

/// A table of text cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
    indent: String,
}

impl Table {
    /// A table with these column headers, every column left-aligned.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        Table {
            align: vec![Align::Left; headers.len()],
            headers,
            rows: Vec::new(),
            indent: String::new(),
        }
    }

    /// Starts every rendered line with `prefix` (a table nested under a
    /// heading).
    #[must_use]
    pub fn indented(mut self, prefix: &str) -> Self {
        self.indent = prefix.to_string();
        self
    }

    /// Right-aligns every column from `column` (from 0) on.
    #[must_use]
    pub fn right_aligned_from(mut self, column: usize) -> Self {
        for a in self.align.iter_mut().skip(column) {
            *a = Align::Right;
        }
        self
    }

    /// Appends a row; missing cells are blank, extra cells are dropped.
    pub fn push<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        let mut row: Vec<String> = row.into_iter().map(Into::into).collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Number of rows (the header not counted).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain(std::iter::once(self.headers[i].chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = self.line(&self.headers, &widths);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&self.line(&rule, &widths));
        for row in &self.rows {
            out.push_str(&self.line(row, &widths));
        }
        out
    }

    fn line(&self, cells: &[String], widths: &[usize]) -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .zip(&self.align)
            .map(|((cell, width), align)| match align {
                Align::Left => format!("{cell:<width$}"),
                Align::Right => format!("{cell:>width$}"),
            })
            .collect();
        format!("{}{}\n", self.indent, padded.join(COLUMN_GAP).trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns_and_trims() {
        let mut t = Table::new(["system", "events", "note"]).right_aligned_from(1);
        t.push(["history", "750", ""]);
        t.push(["stateless", "12", "x"]);
        let expected = "system     events  note\n\
                        ---------  ------  ----\n\
                        history       750\n\
                        stateless      12     x\n";
        assert_eq!(t.render(), expected);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn an_indented_table_indents_every_line() {
        let mut t = Table::new(["a", "b"]).indented("  ");
        t.push(["x", ""]);
        assert_eq!(t.render(), "  a  b\n  -  -\n  x\n");
    }

    #[test]
    fn width_counts_characters_not_bytes() {
        let mut t = Table::new(["a"]);
        t.push(["é—"]);
        assert_eq!(t.render(), "a\n--\né—\n");
    }
}
