//! The pieces of a self-contained HTML report: escaping, anchors, tables
//! and the page shell with its inline style sheet. Nothing here refers to
//! the network: no script, no font, no CDN; a chart is inline SVG
//! ([`crate::svg`]), so the page opens from a file on a machine offline.
//! This module knows no suite: a suite builds its page from these.

use std::fmt::Write as _;

/// The style sheet of every page, inlined in its `<head>`.
pub const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222;line-height:1.4}
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2.2rem;border-bottom:1px solid #ccc}h3{font-size:1.1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.pass{background:#d9f2d9}td.partial{background:#fff3c4}td.safe{background:#dbe8fb}
td.fail{background:#f8d0d0}td.inconclusive{background:#e6e6e6}td.not_scored{background:#f5f5f5}
td a{color:inherit}.note{color:#555;font-size:.9rem}.warn{color:#8a1f11;font-weight:600}
details{margin:.3rem 0}summary{cursor:pointer}section.evidence{margin-left:1rem}
svg{max-width:100%;height:auto}code{font-size:.9em}";

/// `text` with the five HTML-special characters escaped, safe in element
/// content and in a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An element id made of `parts`: letters and digits kept, anything else
/// written `-` (ids stay valid and unique for names of letters, digits,
/// `-` and `_`, which is what systems and cases are named).
pub fn anchor(parts: &[&str]) -> String {
    let mut id = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            id.push_str("--");
        }
        for c in part.chars() {
            id.push(if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            });
        }
    }
    id
}

/// One table cell: its HTML content and an optional class.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    /// The content, already HTML (escape text with [`escape`]).
    pub html: String,
    /// A class (`num` right-aligns, a verdict colours it).
    pub class: Option<String>,
}

impl Cell {
    /// A cell of plain text.
    pub fn text(text: &str) -> Self {
        Cell {
            html: escape(text),
            class: None,
        }
    }

    /// A right-aligned cell of plain text (a number).
    pub fn num(text: &str) -> Self {
        Cell {
            html: escape(text),
            class: Some("num".into()),
        }
    }

    /// A cell of HTML with a class.
    pub fn html(html: String, class: Option<&str>) -> Self {
        Cell {
            html,
            class: class.map(str::to_string),
        }
    }
}

/// A table: the header row (text) and rows of cells.
pub fn table(headers: &[&str], rows: &[Vec<Cell>]) -> String {
    let mut out = String::from("<table>\n<thead><tr>");
    for h in headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            match &cell.class {
                Some(class) => {
                    let _ = write!(out, "<td class=\"{}\">{}</td>", escape(class), cell.html);
                }
                None => {
                    let _ = write!(out, "<td>{}</td>", cell.html);
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// A whole page: `title` in the head and as its heading, [`STYLE`] inline,
/// then `body` (HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n<h1>{title}</h1>\n{body}</body>\n</html>\n",
        title = escape(title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">Tom & 'Jerry'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn anchors_are_valid_ids_and_keep_parts_apart() {
        assert_eq!(
            anchor(&["litellm", "429-retry-after"]),
            "litellm--429-retry-after"
        );
        assert_eq!(anchor(&["a b", "c<d"]), "a-b--c-d");
        assert_ne!(anchor(&["a-b", "c"]), anchor(&["a", "b-c"]));
    }

    #[test]
    fn tables_escape_text_and_keep_classes() {
        let html = table(&["system", "n"], &[vec![Cell::text("<x>"), Cell::num("5")]]);
        assert!(html.contains("<th>system</th><th>n</th>"), "{html}");
        assert!(
            html.contains("<td>&lt;x&gt;</td><td class=\"num\">5</td>"),
            "{html}"
        );
    }

    #[test]
    fn a_page_is_self_contained() {
        let html = page("A & B", "<p>hi</p>\n");
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>A &amp; B</title>"));
        assert!(html.contains("<style>"));
        for external in ["http://", "https://", "<script", "<link", "@import", "url("] {
            assert!(!html.contains(external), "{external} in the page");
        }
    }
}
