//! Presentations (PowerPoint, OpenDocument, legacy .ppt) as blocks.
//!
//! Every slide is numbered by its position in the presentation (1-based)
//! and each of its blocks cites `Span::Slide(n)`: its title (a level-1
//! heading), each text shape and table in shape order, and its speaker
//! notes (a quote starting with a `Notes:` line). All sit under the
//! heading path `["Slide n: Title"]` (`["Slide n"]` without a title).
//! Hidden slides are indexed too — they hold the author's text — and say
//! so in that path: `["Slide n (hidden): Title"]`.

use kebab_plugin_sdk::{Block, BlockKind, Document, LogLevel, Span, log};

use crate::flow::{Item, bounded, one_line, table_rows};
use crate::limits::{MAX_BLOCKS, MAX_SLIDES};
use crate::meta::{Properties, assemble};

/// The text of one shape of a slide.
#[derive(Debug, Clone, PartialEq)]
pub enum SlidePart {
    /// A text shape: its paragraphs, one per line.
    Text(String),
    /// A table: `| a | b |` rows, the first being its header.
    Table(String),
}

/// One slide's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slide {
    /// The title placeholder's text.
    pub title: Option<String>,
    /// Every other shape's text, in shape order.
    pub parts: Vec<SlidePart>,
    /// The speaker notes' paragraphs.
    pub notes: Vec<String>,
    /// Whether the slide is hidden from the slide show.
    pub hidden: bool,
}

impl Slide {
    /// Add the content of one shape: its paragraphs as one text part, its
    /// tables as table parts.
    pub fn add_shape(&mut self, items: &[Item]) {
        let mut lines: Vec<&str> = Vec::new();
        for item in items {
            match item {
                Item::Para(p) if !p.text.is_empty() => lines.push(&p.text),
                Item::Para(_) => {}
                Item::Table(t) => {
                    let rows: Vec<String> = table_rows(t).into_iter().map(|r| r.line).collect();
                    if !rows.is_empty() {
                        self.parts.push(SlidePart::Table(rows.join("\n")));
                    }
                }
            }
        }
        if !lines.is_empty() {
            self.parts.push(SlidePart::Text(lines.join("\n")));
        }
    }

    /// Set the title from a title shape's content (its lines joined).
    pub fn set_title(&mut self, items: &[Item]) {
        let text = items_text(items);
        if !text.is_empty() && self.title.is_none() {
            self.title = Some(text);
        }
    }

    /// Add a notes shape's content.
    pub fn add_notes(&mut self, items: &[Item]) {
        let text = items_text(items);
        if !text.is_empty() {
            self.notes.push(text);
        }
    }

    /// The heading path label of slide `n`.
    fn label(&self, n: usize) -> String {
        let hidden = if self.hidden { " (hidden)" } else { "" };
        match &self.title {
            Some(title) => format!("Slide {n}{hidden}: {}", one_line(title)),
            None => format!("Slide {n}{hidden}"),
        }
    }
}

/// The paragraphs of `items` (tables' rows included), one per line.
fn items_text(items: &[Item]) -> String {
    let mut lines = Vec::new();
    for item in items {
        match item {
            Item::Para(p) if !p.text.is_empty() => lines.push(p.text.clone()),
            Item::Para(_) => {}
            Item::Table(t) => lines.extend(table_rows(t).into_iter().map(|r| r.line)),
        }
    }
    lines.join("\n")
}

/// The document of a presentation's slides (in presentation order).
pub fn document(slides: &[Slide], props: &Properties, format: &str) -> Document {
    if slides.len() > MAX_SLIDES {
        log(
            LogLevel::Warn,
            &format!(
                "{} slides past the first {MAX_SLIDES} were left out",
                slides.len() - MAX_SLIDES
            ),
        );
    }
    let mut blocks = Vec::new();
    for (i, slide) in slides.iter().take(MAX_SLIDES).enumerate() {
        slide_blocks(slide, i + 1, &mut blocks);
    }
    if blocks.len() > MAX_BLOCKS {
        log(
            LogLevel::Warn,
            &format!(
                "{} blocks past the first {MAX_BLOCKS} were left out",
                blocks.len() - MAX_BLOCKS
            ),
        );
        blocks.truncate(MAX_BLOCKS);
    }
    let hidden = slides.iter().filter(|s| s.hidden).count();
    let mut extra = vec![("slides".to_string(), slides.len().to_string())];
    if hidden > 0 {
        extra.push(("hidden_slides".to_string(), hidden.to_string()));
    }
    let first_title = slides.iter().find_map(|s| s.title.as_deref());
    assemble(blocks, props, first_title, format, extra)
}

/// The blocks of slide `n`.
fn slide_blocks(slide: &Slide, n: usize, out: &mut Vec<Block>) {
    let path = vec![slide.label(n)];
    let block = |kind, text: &str, level| Block {
        kind,
        heading_path: path.clone(),
        span: Span::Slide(n as u32),
        text: bounded(text),
        level,
        lang: None,
    };
    if let Some(title) = &slide.title {
        out.push(block(BlockKind::Heading, title, Some(1)));
    }
    for part in &slide.parts {
        out.push(match part {
            SlidePart::Text(text) => block(BlockKind::Paragraph, text, None),
            SlidePart::Table(text) => block(BlockKind::Table, text, None),
        });
    }
    if !slide.notes.is_empty() {
        let text = format!("Notes:\n{}", slide.notes.join("\n"));
        out.push(block(BlockKind::Quote, &text, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Para, Role};

    fn para(text: &str) -> Item {
        Item::Para(Para {
            text: text.into(),
            role: Role::Body,
        })
    }

    #[test]
    fn slides_become_blocks_citing_their_position() {
        let mut first = Slide::default();
        first.set_title(&[para("Welcome")]);
        first.add_shape(&[para("point one"), para(""), para("point two")]);
        first.add_notes(&[para("say hello")]);
        let second = Slide {
            hidden: true,
            ..Slide::default()
        };
        let mut third = Slide::default();
        third.add_shape(&[para("last")]);
        let doc = document(&[first, second, third], &Properties::default(), "pptx");
        assert_eq!(doc.title.as_deref(), Some("Welcome"));
        assert_eq!(doc.blocks.len(), 4);
        assert_eq!(doc.blocks[0].heading_path, vec!["Slide 1: Welcome"]);
        assert_eq!(doc.blocks[1].text, "point one\npoint two");
        assert_eq!(doc.blocks[2].text, "Notes:\nsay hello");
        assert_eq!(doc.blocks[3].span, Span::Slide(3));
        assert_eq!(doc.blocks[3].heading_path, vec!["Slide 3"]);
        assert!(
            doc.metadata
                .contains(&("hidden_slides".to_string(), "1".to_string()))
        );
    }
}
