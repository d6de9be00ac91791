//! Text a peer sent (a model name, a header value, an error message), made
//! safe where it is shown: inside a Markdown table cell nothing in it can
//! end the cell, open a code span or inject HTML; on a terminal nothing in
//! it can move the cursor or rewrite what was printed.

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

/// `text` safe on a terminal: line breaks kept, every other control
/// character (an escape sequence's ESC, a carriage return, a backspace)
/// written as `\u{..}`.
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as one line on a terminal: as [`terminal`], with line breaks
/// written as `\u{a}` too, so that a peer's text inside a line cannot
/// start a line of its own that reads like the tool's.
pub fn line(text: &str) -> String {
    terminal(text).replace('\n', "\\u{a}")
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
    fn a_terminal_sees_no_escape_sequence_but_keeps_its_lines() {
        assert_eq!(
            terminal("model \u{1b}[2Jx\r\nnext\tline"),
            "model \\u{1b}[2Jx\\u{d}\nnext\\u{9}line"
        );
        assert_eq!(terminal("plain text\n"), "plain text\n");
    }

    #[test]
    fn a_peer_s_text_inside_a_line_cannot_forge_another() {
        let forged = "overloaded\nscorecard litellm: 51/51 pass\r";
        assert_eq!(
            line(forged),
            "overloaded\\u{a}scorecard litellm: 51/51 pass\\u{d}"
        );
        assert!(!line(forged).contains('\n'));
    }

    #[test]
    fn a_cell_cannot_open_a_link_or_an_image() {
        assert_eq!(
            markdown_cell("![x](http://evil/p.png) [y](javascript:z)"),
            "\\!\\[x\\](http://evil/p.png) \\[y\\](javascript:z)"
        );
    }
}
