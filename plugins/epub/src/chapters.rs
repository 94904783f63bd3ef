//! A chapter's blocks as the document holds them: a heading with the
//! chapter's title opens it (so no chunk spans two chapters), every block
//! cites the chapter (`Span::Part{unit: Chapter}`), and heading paths are
//! `[chapter title, headings inside the chapter…]`. A block too large to
//! be one chunk is cut at line (else word, else character) boundaries,
//! since the chunker cannot cut a block that cites a single chapter.

use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{Block, BlockKind, PartUnit, Span};

use crate::xhtml::Piece;
use crate::xml;

/// The most tokens (estimated) one block holds.
pub const MAX_BLOCK_TOKENS: u32 = 1_000;

/// Where a chapter's title may come from, best first.
#[derive(Debug, Default, Clone, Copy)]
pub struct TitleSources<'a> {
    /// The table of contents' entry for the chapter's file.
    pub toc: Option<&'a str>,
    /// The chapter's first block, when it is a heading.
    pub leading_heading: Option<&'a str>,
    /// The chapter's `<title>`.
    pub page_title: Option<&'a str>,
    /// The book's title.
    pub book_title: Option<&'a str>,
    /// The title of the chapter before (this file continues it).
    pub previous: Option<&'a str>,
}

/// The chapter's title: its table-of-contents entry, else its leading
/// heading, else its `<title>` unless that is just the book's title, else
/// the previous chapter's title, else the book's title, else
/// `Chapter {number}`.
pub fn title(sources: TitleSources<'_>, number: u32) -> String {
    let page_title = sources
        .page_title
        .filter(|t| sources.book_title.is_none_or(|book| !same_title(t, book)));
    [
        sources.toc,
        sources.leading_heading,
        page_title,
        sources.previous,
        sources.book_title,
    ]
    .into_iter()
    .flatten()
    .map(xml::collapse)
    .find(|t| !t.is_empty())
    .unwrap_or_else(|| format!("Chapter {number}"))
}

/// The blocks of chapter `number` titled `title`, made of its pieces.
pub fn blocks(number: u32, title: &str, pieces: Vec<Piece>) -> Vec<Block> {
    let span = Span::parts(PartUnit::Chapter, number, number);
    let block = |kind, path: Vec<String>, text: String, level| Block {
        kind,
        heading_path: path,
        span: span.clone(),
        text,
        level,
        lang: None,
    };
    let chapter_path = vec![title.to_string()];
    let mut pieces = pieces.into_iter().peekable();
    let leading = pieces.next_if(|p| p.kind == BlockKind::Heading && same_title(&p.text, title));
    let heading_text = leading.map_or_else(|| title.to_string(), |p| p.text);
    let mut out = vec![block(
        BlockKind::Heading,
        chapter_path.clone(),
        heading_text,
        Some(1),
    )];
    // Open headings inside the chapter: (level in the file, title).
    let mut open: Vec<(u8, String)> = Vec::new();
    for piece in pieces {
        if piece.kind == BlockKind::Heading {
            let level = piece.level.unwrap_or(1);
            while open.last().is_some_and(|(l, _)| *l >= level) {
                open.pop();
            }
            open.push((level, xml::collapse(&piece.text)));
        }
        let mut path = chapter_path.clone();
        path.extend(open.iter().map(|(_, t)| t.clone()));
        let level = (piece.kind == BlockKind::Heading).then(|| path.len().min(6) as u8);
        for text in split(&piece.text) {
            out.push(block(piece.kind, path.clone(), text, level));
        }
    }
    out
}

/// Whether two titles read the same (case and spacing aside).
fn same_title(a: &str, b: &str) -> bool {
    let fold = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    fold(a) == fold(b)
}

/// `text` in parts of at most [`MAX_BLOCK_TOKENS`], cut at line
/// boundaries where lines fit, else at spaces, else between characters.
fn split(text: &str) -> Vec<String> {
    if estimate_tokens(text) <= MAX_BLOCK_TOKENS {
        return vec![text.to_string()];
    }
    let mut packer = Packer::default();
    for line in text.split_inclusive('\n') {
        if estimate_tokens(line) <= MAX_BLOCK_TOKENS {
            packer.add(line);
            continue;
        }
        for word in line.split_inclusive(' ') {
            if estimate_tokens(word) <= MAX_BLOCK_TOKENS {
                packer.add(word);
                continue;
            }
            let chars: Vec<char> = word.chars().collect();
            for run in chars.chunks(MAX_BLOCK_TOKENS as usize) {
                packer.add(&run.iter().collect::<String>());
            }
        }
    }
    packer.finish()
}

/// Greedy packing of text pieces into parts under the token bound.
#[derive(Default)]
struct Packer {
    parts: Vec<String>,
    current: String,
    tokens: u32,
}

impl Packer {
    fn add(&mut self, piece: &str) {
        let tokens = estimate_tokens(piece);
        if !self.current.is_empty() && self.tokens + tokens > MAX_BLOCK_TOKENS {
            self.emit();
        }
        self.current.push_str(piece);
        self.tokens += tokens;
    }

    fn emit(&mut self) {
        let part = std::mem::take(&mut self.current);
        let trimmed = part.trim();
        if !trimmed.is_empty() {
            self.parts.push(trimmed.to_string());
        }
        self.tokens = 0;
    }

    fn finish(mut self) -> Vec<String> {
        self.emit();
        self.parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(kind: BlockKind, level: Option<u8>, text: &str) -> Piece {
        Piece {
            kind,
            level,
            text: text.to_string(),
        }
    }

    #[test]
    fn titles_fall_back_in_order() {
        let mut s = TitleSources {
            book_title: Some("Book"),
            page_title: Some(" book "),
            ..TitleSources::default()
        };
        assert_eq!(title(s, 4), "Book");
        s.previous = Some("Earlier");
        assert_eq!(title(s, 4), "Earlier");
        s.page_title = Some("Page");
        assert_eq!(title(s, 4), "Page");
        s.leading_heading = Some("Lead");
        s.toc = Some("  From   toc ");
        assert_eq!(title(s, 4), "From toc");
        assert_eq!(title(TitleSources::default(), 4), "Chapter 4");
    }

    #[test]
    fn a_leading_heading_like_the_title_opens_the_chapter() {
        let blocks = blocks(
            3,
            "One",
            vec![
                piece(BlockKind::Heading, Some(1), "ONE"),
                piece(BlockKind::Paragraph, None, "a"),
                piece(BlockKind::Heading, Some(2), "Sub"),
                piece(BlockKind::Heading, Some(3), "Deep"),
                piece(BlockKind::Heading, Some(2), "Sub 2"),
                piece(BlockKind::Table, None, "x | y"),
            ],
        );
        let rows: Vec<(BlockKind, Vec<&str>, &str, Option<u8>)> = blocks
            .iter()
            .map(|b| {
                assert_eq!(b.span, Span::parts(PartUnit::Chapter, 3, 3));
                let path = b.heading_path.iter().map(String::as_str).collect();
                (b.kind, path, b.text.as_str(), b.level)
            })
            .collect();
        use BlockKind::*;
        assert_eq!(
            rows,
            vec![
                (Heading, vec!["One"], "ONE", Some(1)),
                (Paragraph, vec!["One"], "a", None),
                (Heading, vec!["One", "Sub"], "Sub", Some(2)),
                (Heading, vec!["One", "Sub", "Deep"], "Deep", Some(3)),
                (Heading, vec!["One", "Sub 2"], "Sub 2", Some(2)),
                (Table, vec!["One", "Sub 2"], "x | y", None),
            ]
        );
        let other = super::blocks(1, "Title", vec![piece(BlockKind::Heading, Some(2), "Else")]);
        assert_eq!(other[0].text, "Title");
        assert_eq!(other[1].heading_path, ["Title", "Else"]);
    }

    #[test]
    fn oversized_text_is_cut_at_lines_then_words_then_characters() {
        let row = "cell one | cell two | cell three\n";
        let table = row.repeat(600);
        let parts = split(table.trim_end());
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| estimate_tokens(p) <= MAX_BLOCK_TOKENS));
        assert!(parts.iter().all(|p| p.lines().all(|l| l == row.trim_end())));
        let hangul = "가".repeat(2_500);
        let parts = split(&hangul);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), hangul);
        let words = "word ".repeat(5_000);
        let parts = split(words.trim_end());
        assert!(parts.len() > 1 && parts.iter().all(|p| !p.starts_with(' ')));
        assert_eq!(parts.join(" "), words.trim_end());
    }
}
