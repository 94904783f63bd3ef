//! Markdown source → top-level blocks with exact 1-based line spans.
//!
//! Each block's text is the block's own source (markup included), so a
//! chunk's text can always be found again in its cited lines.

use kebab_plugin_sdk::text::LineIndex;
use kebab_plugin_sdk::{Block, BlockKind, Document, LogLevel, PluginError, Span, log};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::frontmatter;

/// Parse markdown bytes into a document.
pub fn parse(bytes: &[u8]) -> Result<Document, PluginError> {
    let text = kebab_plugin_sdk::utf8(bytes)?;
    let fm = frontmatter::split(text).unwrap_or_default();
    if let Some(err) = &fm.error {
        log(LogLevel::Warn, err);
    }
    let blocks = blocks(text, fm.len);
    let title = fm.title.clone().or_else(|| first_h1(&blocks));
    let mut metadata = fm.metadata;
    if let Some(err) = fm.error {
        metadata.push(("frontmatter_error".into(), err));
    }
    Ok(Document {
        title,
        lang: fm
            .lang
            .clone()
            .or_else(|| kebab_plugin_sdk::lang::detect(&text[fm.len..])),
        blocks,
        metadata,
    })
}

/// A top-level element being collected.
struct Open {
    kind: BlockKind,
    start: usize,
    end: usize,
    level: Option<u8>,
    lang: Option<String>,
    /// Plain text of a heading.
    title: String,
    /// Whether a paragraph holds anything besides images and whitespace.
    has_non_image: bool,
    has_image: bool,
}

fn blocks(text: &str, skip_until: usize) -> Vec<Block> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    let mut headings: Vec<(u8, String)> = Vec::new();
    let mut depth = 0usize;
    let mut image_depth = 0usize;
    let mut open: Option<Open> = None;

    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    open = start_block(&tag, range.start, range.end);
                } else if let (Some(o), Tag::Image { .. }) = (open.as_mut(), &tag) {
                    o.has_image = true;
                    image_depth += 1;
                }
                depth += 1;
            }
            Event::End(tag_end) => {
                depth = depth.saturating_sub(1);
                if matches!(tag_end, TagEnd::Image) {
                    image_depth = image_depth.saturating_sub(1);
                }
                if depth == 0
                    && let Some(o) = open.take()
                    && o.start >= skip_until
                {
                    out.push(finish_block(o, text, &lines, &mut headings));
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(o) = open.as_mut() {
                    if o.kind == BlockKind::Heading {
                        o.title.push_str(&t);
                    }
                    if image_depth == 0 && !t.trim().is_empty() {
                        o.has_non_image = true;
                    }
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(o) = open.as_mut().filter(|o| o.kind == BlockKind::Heading) {
                    o.title.push(' ');
                }
            }
            Event::InlineHtml(_) | Event::InlineMath(_) | Event::DisplayMath(_) => {
                if let Some(o) = open.as_mut() {
                    o.has_non_image = true;
                }
            }
            _ => {}
        }
    }
    out
}

fn start_block(tag: &Tag, start: usize, end: usize) -> Option<Open> {
    let (kind, level, lang) = match tag {
        Tag::Heading { level, .. } => (BlockKind::Heading, Some(heading_level(*level)), None),
        Tag::Paragraph | Tag::HtmlBlock | Tag::FootnoteDefinition(_) => {
            (BlockKind::Paragraph, None, None)
        }
        Tag::List(_) | Tag::DefinitionList => (BlockKind::List, None, None),
        Tag::CodeBlock(kind) => {
            let lang = match kind {
                CodeBlockKind::Fenced(info) => info
                    .split([' ', ',', '{'])
                    .next()
                    .filter(|s| !s.is_empty())
                    .map(str::to_ascii_lowercase),
                CodeBlockKind::Indented => None,
            };
            (BlockKind::Code, None, lang)
        }
        Tag::Table(_) => (BlockKind::Table, None, None),
        Tag::BlockQuote(_) => (BlockKind::Quote, None, None),
        _ => return None,
    };
    Some(Open {
        kind,
        start,
        end,
        level,
        lang,
        title: String::new(),
        has_non_image: false,
        has_image: false,
    })
}

fn finish_block(o: Open, text: &str, lines: &LineIndex, headings: &mut Vec<(u8, String)>) -> Block {
    let source = text[o.start..o.end].trim_end();
    let (first, last) = lines.line_range(o.start, o.start + source.len());
    let mut kind = o.kind;
    if kind == BlockKind::Paragraph && o.has_image && !o.has_non_image {
        kind = BlockKind::ImageRef;
    }
    if kind == BlockKind::Heading {
        let level = o.level.unwrap_or(1);
        while headings.last().is_some_and(|(l, _)| *l >= level) {
            headings.pop();
        }
        headings.push((level, o.title.trim().to_string()));
    }
    Block {
        kind,
        heading_path: headings.iter().map(|(_, t)| t.clone()).collect(),
        span: Span::lines(first, last),
        text: source.to_string(),
        level: o.level,
        lang: o.lang,
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn first_h1(blocks: &[Block]) -> Option<String> {
    blocks
        .iter()
        .find(|b| b.kind == BlockKind::Heading && b.level == Some(1))
        .and_then(|b| b.heading_path.last().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\ntitle: Sample\ntags: [a]\n---\n# Top\n\nIntro paragraph\nspans two lines.\n\n## Code\n\n```rust\nfn main() {}\n```\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n\n![diagram](img/d.png)\n\n### Deep\ntext\n";

    fn find(doc: &Document, kind: BlockKind) -> &Block {
        doc.blocks.iter().find(|b| b.kind == kind).unwrap()
    }

    #[test]
    fn blocks_have_kinds_lines_and_paths() {
        let doc = parse(DOC.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Sample"));
        assert_eq!(doc.lang.as_deref(), Some("en"));
        let kinds: Vec<BlockKind> = doc.blocks.iter().map(|b| b.kind).collect();
        assert_eq!(
            kinds,
            vec![
                BlockKind::Heading,
                BlockKind::Paragraph,
                BlockKind::Heading,
                BlockKind::Code,
                BlockKind::List,
                BlockKind::Table,
                BlockKind::Quote,
                BlockKind::ImageRef,
                BlockKind::Heading,
                BlockKind::Paragraph,
            ]
        );
        let para = find(&doc, BlockKind::Paragraph);
        assert_eq!(para.span, Span::lines(7, 8));
        assert_eq!(para.text, "Intro paragraph\nspans two lines.");
        assert_eq!(para.heading_path, vec!["Top"]);
        let code = find(&doc, BlockKind::Code);
        assert_eq!(code.span, Span::lines(12, 14));
        assert_eq!(code.lang.as_deref(), Some("rust"));
        assert_eq!(code.heading_path, vec!["Top", "Code"]);
        let table = find(&doc, BlockKind::Table);
        assert_eq!(table.span, Span::lines(19, 21));
        let last = doc.blocks.last().unwrap();
        assert_eq!(last.heading_path, vec!["Top", "Code", "Deep"]);
        assert_eq!(last.span, Span::lines(28, 28));
    }

    #[test]
    fn every_block_text_is_found_at_its_lines() {
        let doc = parse(DOC.as_bytes()).unwrap();
        let lines: Vec<&str> = DOC.lines().collect();
        for b in &doc.blocks {
            let (s, e) = b.span.line_bounds().unwrap();
            let cited = lines[s as usize - 1..e as usize].join("\n");
            assert_eq!(cited.trim_end(), b.text, "block {b:?}");
        }
    }

    #[test]
    fn sibling_headings_replace_each_other() {
        let doc = parse(b"# A\n## B\n## C\nx\n# D\ny\n").unwrap();
        let paths: Vec<Vec<String>> = doc.blocks.iter().map(|b| b.heading_path.clone()).collect();
        assert_eq!(paths[2], vec!["A", "C"]);
        assert_eq!(paths[3], vec!["A", "C"]);
        assert_eq!(paths[5], vec!["D"]);
        assert_eq!(doc.title.as_deref(), Some("A"));
    }

    #[test]
    fn korean_text_is_detected() {
        let doc =
            parse("# 제목\n\n한국어 형태소 분석기는 서울에서 개발되었다.\n".as_bytes()).unwrap();
        assert_eq!(doc.lang.as_deref(), Some("ko"));
    }

    #[test]
    fn invalid_utf8_is_malformed_and_bad_frontmatter_is_kept() {
        assert!(matches!(
            parse(&[0xc3, 0x28]),
            Err(PluginError::Malformed(_))
        ));
        let doc = parse(b"---\n: : :\n---\nbody\n").unwrap();
        assert!(doc.metadata.iter().any(|(k, _)| k == "frontmatter_error"));
        assert_eq!(doc.blocks.len(), 1);
    }
}
