//! What every format's parser builds: a document's blocks in order, each
//! with its section's heading path and the source lines it came from.

use kebab_plugin_sdk::{Block, BlockKind, Document, Span};

/// A document under construction over the lines of its source.
pub struct Outline<'a> {
    lines: Vec<&'a str>,
    /// Open sections: (level, title).
    headings: Vec<(u8, String)>,
    blocks: Vec<Block>,
    title: Option<String>,
}

impl<'a> Outline<'a> {
    /// An empty outline over `text`.
    pub fn new(text: &'a str) -> Outline<'a> {
        Outline {
            lines: text.lines().collect(),
            headings: Vec::new(),
            blocks: Vec::new(),
            title: None,
        }
    }

    /// The source lines (0-based indexes; blocks cite them 1-based).
    pub fn lines(&self) -> &[&'a str] {
        &self.lines
    }

    /// Set the document title (first one wins).
    pub fn title(&mut self, title: &str) {
        if self.title.is_none() && !title.trim().is_empty() {
            self.title = Some(title.trim().to_string());
        }
    }

    /// A section title at `level` (1 = outermost) spanning source lines
    /// `first..=last` (0-based): it closes every open section at its level
    /// or deeper.
    pub fn heading(&mut self, level: u8, title: &str, first: usize, last: usize) {
        let text = self.source(first, last);
        self.heading_text(level, title, first, last, text);
    }

    /// As [`Outline::heading`], with the block's text given (markup
    /// removed) instead of its source lines.
    pub fn heading_text(
        &mut self,
        level: u8,
        title: &str,
        first: usize,
        last: usize,
        text: String,
    ) {
        let level = level.max(1);
        while self.headings.last().is_some_and(|(l, _)| *l >= level) {
            self.headings.pop();
        }
        self.headings.push((level, title.trim().to_string()));
        self.push(BlockKind::Heading, first, last, text, Some(level), None);
    }

    /// A block whose text is its source lines `first..=last` (0-based).
    pub fn block(&mut self, kind: BlockKind, first: usize, last: usize, lang: Option<String>) {
        let text = self.source(first, last);
        if !text.trim().is_empty() {
            self.push(kind, first, last, text, None, lang);
        }
    }

    /// A block with text of its own (markup removed), one text line per
    /// source line from `first` (0-based).
    pub fn block_text(
        &mut self,
        kind: BlockKind,
        first: usize,
        text: String,
        lang: Option<String>,
    ) {
        if text.trim().is_empty() {
            return;
        }
        let last = first + text.lines().count().max(1) - 1;
        self.push(kind, first, last, text, None, lang);
    }

    /// Source lines `first..=last`, joined.
    pub fn source(&self, first: usize, last: usize) -> String {
        self.lines[first..=last.min(self.lines.len() - 1)].join("\n")
    }

    fn push(
        &mut self,
        kind: BlockKind,
        first: usize,
        last: usize,
        text: String,
        level: Option<u8>,
        lang: Option<String>,
    ) {
        self.blocks.push(Block {
            kind,
            heading_path: self.headings.iter().map(|(_, t)| t.clone()).collect(),
            span: Span::lines(first as u32 + 1, last as u32 + 1),
            text,
            level,
            lang,
        });
    }

    /// The finished document (title: the one set, else the first
    /// outermost heading).
    pub fn finish(self) -> Document {
        let title = self.title.or_else(|| {
            self.blocks
                .iter()
                .filter(|b| b.kind == BlockKind::Heading)
                .min_by_key(|b| b.level)
                .and_then(|b| b.heading_path.last().cloned())
        });
        Document {
            title,
            lang: None,
            blocks: self.blocks,
            metadata: Vec::new(),
        }
    }
}

/// Whether a line holds nothing but whitespace.
pub fn blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Whether a line starts a list item (`- `, `* `, `+ `, `1. `, `1) `, `#. `).
pub fn list_item(line: &str) -> bool {
    let t = line.trim_start();
    if ["- ", "* ", "+ ", "#. "].iter().any(|m| t.starts_with(m)) {
        return true;
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

/// The index after a run of lines from `start` that `more` accepts,
/// without the blank lines at its end.
pub fn run_end(lines: &[&str], start: usize, more: impl Fn(&str) -> bool) -> usize {
    let mut end = start;
    let mut last_text = start;
    while end < lines.len() && more(lines[end]) {
        if !blank(lines[end]) {
            last_text = end + 1;
        }
        end += 1;
    }
    last_text.max(start)
}

/// Paragraph or list: the kind of a plain text block starting with `line`.
pub fn prose_kind(line: &str) -> BlockKind {
    if list_item(line) {
        BlockKind::List
    } else {
        BlockKind::Paragraph
    }
}

/// Helpers for the parsers' fixture tests.
#[cfg(test)]
pub mod testing {
    use kebab_plugin_sdk::{BlockKind, Document};

    /// A block as the tests compare it: kind, heading path, line bounds.
    pub type Row = (BlockKind, Vec<String>, (u32, u32));

    /// Every block of `doc` as a [`Row`].
    pub fn summary(doc: &Document) -> Vec<Row> {
        doc.blocks
            .iter()
            .map(|b| {
                (
                    b.kind,
                    b.heading_path.clone(),
                    b.span.line_bounds().unwrap(),
                )
            })
            .collect()
    }

    /// Every block of `doc` as a [`Row`] with its text.
    pub fn summary_with_text(doc: &Document) -> Vec<(Row, String)> {
        summary(doc)
            .into_iter()
            .zip(doc.blocks.iter().map(|b| b.text.clone()))
            .collect()
    }

    /// A heading path from string slices.
    pub fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }
}
