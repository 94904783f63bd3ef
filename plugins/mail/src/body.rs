//! Plain-text bodies: `format=flowed` lines joined back as the sender wrote
//! them (RFC 3676), and a body cut into the paragraphs that become blocks.

use crate::limits::MAX_BLOCK_BYTES;

/// The signature delimiter line (RFC 3676 §4.3), also what a flowed line
/// must never be joined to.
pub const SIGNATURE_DELIMITER: &str = "-- ";

/// One paragraph of a body: its lines, and whether every line is quoted
/// (starts with `>`).
#[derive(Debug, Clone, PartialEq)]
pub struct Paragraph {
    /// Its lines, joined with `\n`.
    pub text: String,
    /// Every line starts with `>`.
    pub quoted: bool,
}

/// A `format=flowed` body as its reader sees it: a line ending in a space
/// continues on the next line of the same quote depth (with `delsp=yes`
/// that space is not part of the text), space-stuffing is undone, and
/// quoted lines are written back as `> text` (one `>` per level).
pub fn unflow(text: &str, delete_space: bool) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let depth = raw.chars().take_while(|&c| c == '>').count();
        let content = &raw[depth..];
        let content = content.strip_prefix(' ').unwrap_or(content);
        if let Some((open_depth, line)) = open.take() {
            if open_depth == depth && content != SIGNATURE_DELIMITER {
                open = Some((depth, line));
            } else {
                out.push(quoted_line(open_depth, &line));
            }
        }
        let soft = content.ends_with(' ') && content != SIGNATURE_DELIMITER;
        let piece = if soft && delete_space {
            &content[..content.len() - 1]
        } else {
            content
        };
        let (depth, mut line) = open.take().unwrap_or((depth, String::new()));
        line.push_str(piece);
        if soft {
            open = Some((depth, line));
        } else {
            out.push(quoted_line(depth, &line));
        }
    }
    if let Some((depth, line)) = open {
        out.push(quoted_line(depth, &line));
    }
    out.join("\n")
}

fn quoted_line(depth: usize, text: &str) -> String {
    if depth == 0 {
        return text.to_string();
    }
    let mut line = ">".repeat(depth);
    if !text.is_empty() {
        line.push(' ');
        line.push_str(text);
    }
    line
}

/// Whether a line is quoted from another message.
pub fn is_quoted(line: &str) -> bool {
    line.starts_with('>')
}

/// The paragraphs of a body: runs of lines between blank lines, trailing
/// whitespace trimmed; a paragraph over [`MAX_BLOCK_BYTES`] is cut at line
/// breaks (a longer line at a space or a character boundary).
pub fn paragraphs(body: &str) -> Vec<Paragraph> {
    let mut out = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    for line in body.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            emit(&mut out, &lines);
            lines.clear();
        } else {
            lines.push(line);
        }
    }
    emit(&mut out, &lines);
    out
}

/// Add the paragraph of `lines` (if any), cut to size.
fn emit(out: &mut Vec<Paragraph>, lines: &[&str]) {
    let mut text = String::new();
    let mut quoted = true;
    for line in lines.iter().flat_map(|l| pieces(l)) {
        if !text.is_empty() && text.len() + 1 + line.len() > MAX_BLOCK_BYTES {
            out.push(Paragraph {
                text: std::mem::take(&mut text),
                quoted,
            });
            quoted = true;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
        quoted &= is_quoted(line);
    }
    if !text.is_empty() {
        out.push(Paragraph { text, quoted });
    }
}

/// A line cut into pieces of at most [`MAX_BLOCK_BYTES`], at the last space
/// of each piece when there is one in its second half.
fn pieces(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > MAX_BLOCK_BYTES {
        let mut cut = MAX_BLOCK_BYTES;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if let Some(space) = rest[..cut].rfind(' ').filter(|&s| s > MAX_BLOCK_BYTES / 2) {
            cut = space;
        }
        out.push(rest[..cut].trim_end());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flowed_lines_are_joined_within_one_quote_depth() {
        let text = "Hello there, this \r\nline was wrapped.\r\n>Quoted and \r\n>> deeper \r\n>> still\r\n \
                    stuffed\r\n-- \r\nsig";
        assert_eq!(
            unflow(text, false),
            "Hello there, this line was wrapped.\n> Quoted and \n>> deeper still\nstuffed\n-- \nsig"
        );
        assert_eq!(unflow("ab \r\ncd", true), "abcd");
    }

    #[test]
    fn paragraphs_split_on_blank_lines_and_mark_quotes() {
        let body = "Hi Kim,\r\n\r\nThe plan:\r\nstep one\r\n \r\n> old text\r\n>\r\n> more\r\n";
        let paras = paragraphs(body);
        let texts: Vec<(&str, bool)> = paras.iter().map(|p| (p.text.as_str(), p.quoted)).collect();
        assert_eq!(
            texts,
            vec![
                ("Hi Kim,", false),
                ("The plan:\nstep one", false),
                ("> old text\n>\n> more", true)
            ]
        );
    }

    #[test]
    fn oversized_paragraphs_are_cut_to_block_size() {
        let line = "word ".repeat(MAX_BLOCK_BYTES / 2);
        let paras = paragraphs(&format!("{line}\n{line}"));
        assert!(paras.len() >= 3);
        assert!(paras.iter().all(|p| p.text.len() <= MAX_BLOCK_BYTES));
        let hangul = "한".repeat(MAX_BLOCK_BYTES);
        let paras = paragraphs(&hangul);
        assert!(paras.iter().all(|p| p.text.len() <= MAX_BLOCK_BYTES));
        assert_eq!(
            paras.iter().map(|p| p.text.as_str()).collect::<String>(),
            hangul
        );
    }
}
