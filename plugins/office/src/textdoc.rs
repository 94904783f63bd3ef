//! Blocks of a word-processing document (Word, OpenDocument text, RTF,
//! legacy .doc) from the items its reader found.
//!
//! Paragraphs with visible text are numbered from 1 in reading order —
//! body paragraphs, list items, table cells' paragraphs, then whatever the
//! reader adds after the body (headers, footers, notes, comments) — and
//! every block cites the numbers of the paragraphs it holds
//! (`Span::Part{unit: Paragraph}`). Empty paragraphs get no number, so the
//! same document saved by different programs (which keep or drop spacer
//! paragraphs) numbers its text alike.
//!
//! A body paragraph is a block; a heading moves the heading path; a table
//! is one block of `| a | b |` rows whose first row is its header. The
//! last paragraph of each row of each table is recorded in the document's
//! metadata under [`TABLE_ROWS_KEY`] so the chunker can cut a long table
//! between rows and cite exactly the rows a chunk holds.

use std::collections::HashSet;

use kebab_plugin_sdk::{Block, BlockKind, Document, PartUnit, Span, log};

use crate::flow::{Item, Role, Table, bounded, one_line, paragraphs, table_rows};
use crate::limits::{MAX_BLOCK_TEXT, MAX_BLOCKS};
use crate::meta::{Properties, assemble};

/// What comes after the body, in this order, each under its own heading
/// path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Section {
    Header,
    Footer,
    Footnotes,
    Endnotes,
    Comments,
}

impl Section {
    /// Every section, in document order.
    const ALL: [Section; 5] = [
        Section::Header,
        Section::Footer,
        Section::Footnotes,
        Section::Endnotes,
        Section::Comments,
    ];

    /// The heading path name of the section.
    pub fn name(self) -> &'static str {
        match self {
            Section::Header => "Header",
            Section::Footer => "Footer",
            Section::Footnotes => "Footnotes",
            Section::Endnotes => "Endnotes",
            Section::Comments => "Comments",
        }
    }
}

/// The document of a word processor's body `items` followed by its
/// `groups` (one header, one note, one comment each) in [`Section`]
/// order: headers and footers as paragraphs, each distinct text once;
/// notes and comments as quotes.
pub fn document(
    items: &[Item],
    groups: &[(Section, Vec<Item>)],
    props: &Properties,
    format: &str,
) -> Document {
    let mut doc = TextDoc::new();
    doc.add_body(items);
    let mut seen: HashSet<(&str, String)> = HashSet::new();
    for section in Section::ALL {
        let repeats = matches!(section, Section::Header | Section::Footer);
        for (_, group) in groups.iter().filter(|(s, _)| *s == section) {
            if repeats && !seen.insert((section.name(), paragraphs(group).join("\n"))) {
                continue;
            }
            let kind = if repeats {
                BlockKind::Paragraph
            } else {
                BlockKind::Quote
            };
            doc.add_group(section.name(), group, kind);
        }
    }
    let first_heading = doc.first_heading().map(str::to_string);
    let (blocks, extra) = doc.finish();
    assemble(blocks, props, first_heading.as_deref(), format, extra)
}

/// Metadata key holding the table rows' last paragraphs:
/// `block:end,end,…;block:…` (block indices and paragraph numbers).
pub const TABLE_ROWS_KEY: &str = "office.table_rows";

/// Blocks under construction.
#[derive(Default)]
pub struct TextDoc {
    blocks: Vec<Block>,
    /// The open headings, outermost first, with their levels.
    headings: Vec<(u8, String)>,
    /// The number the next non-empty paragraph gets.
    next: u32,
    /// `block:end,end,…` for each table block.
    table_rows: Vec<String>,
    left_out: usize,
}

/// A table being cut into blocks.
struct TableBlock {
    lines: Vec<String>,
    ends: Vec<u32>,
    bytes: usize,
}

impl TextDoc {
    /// An empty document; paragraphs number from 1.
    pub fn new() -> TextDoc {
        TextDoc {
            next: 1,
            ..TextDoc::default()
        }
    }

    /// The document's body: each paragraph and table its own block.
    pub fn add_body(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Para(p) => self.add_paragraph(&p.text, &p.role),
                Item::Table(t) => self.add_table(t),
            }
        }
    }

    /// One body paragraph.
    pub fn add_paragraph(&mut self, text: &str, role: &Role) {
        if text.is_empty() {
            return;
        }
        let number = self.number(1);
        let kind = match role {
            Role::Heading(level) => {
                let level = (*level).clamp(1, 6);
                while self.headings.last().is_some_and(|(l, _)| *l >= level) {
                    self.headings.pop();
                }
                self.headings.push((level, one_line(text)));
                self.push(BlockKind::Heading, Some(level), text, number, number);
                return;
            }
            Role::ListItem => BlockKind::List,
            Role::Body => BlockKind::Paragraph,
        };
        self.push(kind, None, text, number, number);
    }

    /// Items that belong together after the body (one header, one
    /// footnote, one comment) as one block of `kind` under the heading
    /// path `[section]`.
    pub fn add_group(&mut self, section: &str, items: &[Item], kind: BlockKind) {
        let mut lines = Vec::new();
        let mut count = 0u32;
        for item in items {
            match item {
                Item::Para(p) if !p.text.is_empty() => {
                    lines.push(p.text.clone());
                    count += 1;
                }
                Item::Para(_) => {}
                Item::Table(t) => {
                    for row in table_rows(t) {
                        count += row.paragraphs;
                        lines.push(row.line);
                    }
                }
            }
        }
        if count == 0 {
            return;
        }
        let first = self.number(count);
        let saved = std::mem::replace(&mut self.headings, vec![(1, section.to_string())]);
        self.push(kind, None, &lines.join("\n"), first, first + count - 1);
        self.headings = saved;
    }

    /// The title of the first heading, if any.
    pub fn first_heading(&self) -> Option<&str> {
        self.blocks
            .iter()
            .find(|b| b.kind == BlockKind::Heading)
            .map(|b| b.text.as_str())
    }

    /// The blocks, and the metadata the chunker needs.
    pub fn finish(self) -> (Vec<Block>, Vec<(String, String)>) {
        if self.left_out > 0 {
            log(
                kebab_plugin_sdk::LogLevel::Warn,
                &format!(
                    "{} blocks past the first {MAX_BLOCKS} were left out",
                    self.left_out
                ),
            );
        }
        let mut metadata = Vec::new();
        if !self.table_rows.is_empty() {
            metadata.push((TABLE_ROWS_KEY.to_string(), self.table_rows.join(";")));
        }
        (self.blocks, metadata)
    }

    /// One table as one block (or several when its text is past
    /// [`MAX_BLOCK_TEXT`]).
    fn add_table(&mut self, table: &Table) {
        let mut current = TableBlock {
            lines: Vec::new(),
            ends: Vec::new(),
            bytes: 0,
        };
        let mut first = self.next;
        for row in table_rows(table) {
            if current.bytes + row.line.len() > MAX_BLOCK_TEXT && !current.lines.is_empty() {
                first = self.push_table(
                    std::mem::replace(
                        &mut current,
                        TableBlock {
                            lines: Vec::new(),
                            ends: Vec::new(),
                            bytes: 0,
                        },
                    ),
                    first,
                );
            }
            let end = self.number(row.paragraphs) + row.paragraphs - 1;
            current.bytes += row.line.len() + 1;
            current.lines.push(row.line);
            current.ends.push(end);
        }
        if !current.lines.is_empty() {
            self.push_table(current, first);
        }
    }

    /// Push a table block whose paragraphs start at `first`; the first
    /// paragraph after it is returned.
    fn push_table(&mut self, table: TableBlock, first: u32) -> u32 {
        let last = table.ends.last().copied().unwrap_or(first);
        if self.push(BlockKind::Table, None, &table.lines.join("\n"), first, last) {
            let ends: Vec<String> = table.ends.iter().map(u32::to_string).collect();
            self.table_rows
                .push(format!("{}:{}", self.blocks.len() - 1, ends.join(",")));
        }
        last + 1
    }

    /// Take `count` paragraph numbers; the first is returned.
    fn number(&mut self, count: u32) -> u32 {
        let first = self.next;
        self.next = self.next.saturating_add(count);
        first
    }

    /// Add a block under the current heading path; `false` when the block
    /// bound was reached and it was left out.
    fn push(
        &mut self,
        kind: BlockKind,
        level: Option<u8>,
        text: &str,
        first: u32,
        last: u32,
    ) -> bool {
        if self.blocks.len() >= MAX_BLOCKS {
            self.left_out += 1;
            return false;
        }
        self.blocks.push(Block {
            kind,
            heading_path: self.headings.iter().map(|(_, t)| t.clone()).collect(),
            span: Span::parts(PartUnit::Paragraph, first, last.max(first)),
            text: bounded(text),
            level,
            lang: None,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::Para;

    fn p(text: &str, role: Role) -> Item {
        Item::Para(Para {
            text: text.into(),
            role,
        })
    }

    fn cell(text: &str) -> Vec<Item> {
        vec![p(text, Role::Body)]
    }

    #[test]
    fn headings_nest_and_empty_paragraphs_take_no_number() {
        let mut doc = TextDoc::new();
        doc.add_body(&[
            p("Intro", Role::Heading(1)),
            p("", Role::Body),
            p("Text", Role::Body),
            p("Deeper", Role::Heading(2)),
            p("- item", Role::ListItem),
            p("Next", Role::Heading(1)),
        ]);
        let (blocks, _) = doc.finish();
        let paths: Vec<Vec<String>> = blocks.iter().map(|b| b.heading_path.clone()).collect();
        assert_eq!(paths[1], vec!["Intro"]);
        assert_eq!(paths[3], vec!["Intro", "Deeper"]);
        assert_eq!(paths[4], vec!["Next"]);
        assert_eq!(blocks[3].kind, BlockKind::List);
        assert_eq!(blocks[3].span, Span::parts(PartUnit::Paragraph, 4, 4));
    }

    #[test]
    fn a_table_is_one_block_of_rows_citing_its_cells() {
        let mut doc = TextDoc::new();
        doc.add_body(&[
            p("Before", Role::Body),
            Item::Table(Table {
                rows: vec![
                    vec![cell("Name"), cell("Qty")],
                    vec![cell(""), vec![]],
                    vec![
                        cell("Apple"),
                        vec![p("3", Role::Body), p("three", Role::Body)],
                    ],
                ],
            }),
        ]);
        let (blocks, meta) = doc.finish();
        assert_eq!(blocks[1].text, "| Name | Qty |\n| Apple | 3 three |");
        assert_eq!(blocks[1].span, Span::parts(PartUnit::Paragraph, 2, 6));
        assert_eq!(
            meta,
            vec![(TABLE_ROWS_KEY.to_string(), "1:3,6".to_string())]
        );
    }

    #[test]
    fn groups_sit_under_their_section() {
        let mut doc = TextDoc::new();
        doc.add_body(&[p("Body", Role::Heading(1))]);
        doc.add_group(
            "Footnotes",
            &[p("a note", Role::Body), p("more", Role::Body)],
            BlockKind::Quote,
        );
        let (blocks, _) = doc.finish();
        assert_eq!(blocks[1].heading_path, vec!["Footnotes"]);
        assert_eq!(blocks[1].text, "a note\nmore");
        assert_eq!(blocks[1].span, Span::parts(PartUnit::Paragraph, 2, 3));
    }
}
