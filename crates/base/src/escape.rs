//! Text a peer sent (an error body, a model name) made safe on a terminal:
//! nothing in it can move the cursor, clear the screen or rewrite what was
//! printed. Every line the tool prints through `secret::println!`,
//! `secret::print!` and `secret::eprintln!` goes through [`printed()`];
//! `cb_report::escape` adds the Markdown cell.

/// `text` safe on a terminal: line breaks kept, every other control
/// character (an escape sequence's ESC, a carriage return, a backspace)
/// written as `\u{..}`.
pub fn terminal(text: &str) -> String {
    escaped(text, &['\n'])
}

/// `text` as the tool prints it: as [`terminal()`], with tabs kept too (a
/// tab moves nothing the tool wrote, and an error can quote a file's
/// indented line).
pub fn printed(text: &str) -> String {
    escaped(text, &['\n', '\t'])
}

/// `text` with every control character but those of `keep` written as
/// `\u{..}`.
fn escaped(text: &str, keep: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !keep.contains(&c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as one line on a terminal: as [`terminal()`], with line breaks
/// written as `\u{a}` too, so that a peer's text inside a line cannot
/// start a line of its own that reads like the tool's.
pub fn line(text: &str) -> String {
    terminal(text).replace('\n', "\\u{a}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
