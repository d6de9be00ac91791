//! Text a peer sent (a model name, a header value, an error message), made
//! safe where it is shown: inside a Markdown table cell nothing in it can
//! end the cell, open a code span or inject HTML; on a terminal nothing in
//! it can move the cursor or rewrite what was printed ([`terminal()`] and
//! [`line()`] live in `cb_base`, where every line the tool prints goes
//! through the first).

pub use cb_base::escape::{line, terminal};

/// `text` safe inside a Markdown table cell: backslashes, pipes,
/// backticks and the brackets and bang of a link or image escaped, `<` and
/// `>` as entities, line breaks and other control characters as spaces.
pub fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '`' => out.push_str("\\`"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '!' => out.push_str("\\!"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_value_stays_inside_its_cell() {
        let hostile = "gpt-4o | pass |\n<script>`x`\\\u{1b}[2J";
        let safe = markdown_cell(hostile);
        assert_eq!(safe, "gpt-4o \\| pass \\| &lt;script&gt;\\`x\\`\\\\ \\[2J");
        assert!(!safe.contains('\n') && !safe.contains('\u{1b}') && !safe.contains('<'));
        assert_eq!(
            markdown_cell("continuity-sim-fallback"),
            "continuity-sim-fallback"
        );
    }

    #[test]
    fn a_cell_cannot_open_a_link_or_an_image() {
        assert_eq!(
            markdown_cell("![x](http://evil/p.png) [y](javascript:z)"),
            "\\!\\[x\\](http://evil/p.png) \\[y\\](javascript:z)"
        );
    }
}
