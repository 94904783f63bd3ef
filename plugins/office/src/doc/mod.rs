//! Legacy Word documents (Word 97–2003 `.doc`, `.dot`).
//!
//! The text is read through the piece table: the File Information Block
//! at the start of the `WordDocument` stream gives the length of each
//! story (main text, footnotes, headers, comments, endnotes, text boxes)
//! in characters and where the `CLX` lies in the table stream (`0Table`
//! or `1Table`); its piece descriptors map character positions to runs
//! of 8-bit (Windows-1252) or UTF-16 text in the `WordDocument` stream.
//!
//! Paragraphs end at `\r` (and at cell and row marks, `\x07`, so each
//! table cell is a paragraph: rows are not reconstructed); fields keep
//! their displayed result (`\x13` code `\x14` result `\x15`); object
//! anchors, note marks, hidden and deleted runs (character properties
//! of the formatted disk pages) are dropped. Styles are not read, so there are
//! no headings. Headers and footers are told apart by the `PlcfHdd`
//! story table. Encrypted or obfuscated files, and Word 6/95 files, are
//! refused with a hint.

mod fib;
mod pieces;
mod unseen;

use kebab_plugin_sdk::{Document, PluginError};

use crate::bytes::Bytes;
use crate::flow::{Item, Para, Role, clean};
use crate::ole::{self, Compound};
use crate::textdoc::{self, Section};
use fib::Fib;
use pieces::{UNSEEN, characters, pieces};
use unseen::Unseen;

/// Index of `fcClx` / `fcPlcfHdd` / `fcPlcfBteChpx` among the FIB's
/// offset/length pairs.
const PAIR_CLX: usize = 33;
const PAIR_PLCF_HDD: usize = 11;
const PAIR_PLCF_BTE_CHPX: usize = 12;

/// Where a story's text goes.
#[derive(Clone, Copy)]
enum Story {
    /// The body (the main text, then the text boxes).
    Body,
    /// One group per paragraph under a section (notes, comments).
    Notes(Section),
    /// Headers and footers, split by the `PlcfHdd`.
    Headers,
    /// Not read (macro text, header text boxes).
    Skip,
}

/// The stories of a document in character-position order: the index of
/// their length in `fibRgLw`, and where each goes.
const STORIES: [(usize, Story); 8] = [
    (3, Story::Body),
    (4, Story::Notes(Section::Footnotes)),
    (5, Story::Headers),
    (6, Story::Skip),
    (7, Story::Notes(Section::Comments)),
    (8, Story::Notes(Section::Endnotes)),
    (9, Story::Body),
    (10, Story::Skip),
];

/// Parse a legacy Word document in an open compound file.
pub fn parse(file: &mut Compound<'_>) -> Result<Document, PluginError> {
    let word = ole::stream(file, "WordDocument")?.unwrap_or_default();
    let fib = Fib::read(&word)?;
    let table_name = fib.table_stream();
    let table = ole::stream(file, table_name)?.ok_or_else(|| {
        PluginError::Malformed(format!("legacy Word .doc without its {table_name} stream"))
    })?;
    let pieces = pieces(&table, fib.pair(&word, PAIR_CLX))?;
    let unseen = Unseen::read(&word, &table, fib.pair(&word, PAIR_PLCF_BTE_CHPX));
    let text = characters(&word, &pieces, &unseen);
    let mut body: Vec<Item> = Vec::new();
    let mut groups: Vec<(Section, Vec<Item>)> = Vec::new();
    let mut start = 0usize;
    for (index, section) in STORIES {
        let len = fib.story_length(&word, index);
        let end = start.saturating_add(len).min(text.len());
        let story = &text[start.min(end)..end];
        match section {
            Story::Body => body.extend(paragraphs(story)),
            Story::Headers => {
                groups.extend(headers(story, &table, fib.pair(&word, PAIR_PLCF_HDD)));
            }
            Story::Notes(section) => {
                groups.extend(paragraphs(story).into_iter().map(|p| (section, vec![p])));
            }
            Story::Skip => {}
        }
        start = end;
    }
    let props = ole::summary(file);
    Ok(textdoc::document(&body, &groups, &props, "doc"))
}

/// The paragraphs of a story, fields reduced to their results.
fn paragraphs(story: &[u16]) -> Vec<Item> {
    let mut out = Vec::new();
    let mut current: Vec<u16> = Vec::new();
    let mut fields: Vec<bool> = Vec::new();
    for &unit in story {
        match unit {
            0x13 => fields.push(false),
            0x14 => {
                if let Some(top) = fields.last_mut() {
                    *top = true;
                }
            }
            0x15 => {
                fields.pop();
            }
            _ if !fields.iter().all(|showing| *showing) => {}
            0x0D | 0x07 | 0x0C | 0x0E => {
                let text = clean(&String::from_utf16_lossy(&current));
                if !text.is_empty() {
                    out.push(Item::Para(Para {
                        text,
                        role: Role::Body,
                    }));
                }
                current.clear();
            }
            0x0B => current.push(u16::from(b'\n')),
            0x1E => current.push(u16::from(b'-')),
            0x01..=0x08 | 0x1F | UNSEEN => {}
            _ => current.push(unit),
        }
    }
    let text = clean(&String::from_utf16_lossy(&current));
    if !text.is_empty() {
        out.push(Item::Para(Para {
            text,
            role: Role::Body,
        }));
    }
    out
}

/// The header and footer stories of the header story, told apart by the
/// `PlcfHdd` at `(offset, length)` of the table stream: after six
/// note-separator stories, each section has six (even header, odd
/// header, even footer, odd footer, first header, first footer).
fn headers(
    story: &[u16],
    table: &[u8],
    (offset, length): (usize, usize),
) -> Vec<(Section, Vec<Item>)> {
    let Some(plc) = table.get(offset..offset.saturating_add(length)) else {
        return Vec::new();
    };
    let bounds: Vec<usize> = (0..plc.len() / 4)
        .filter_map(|i| plc.u32_at(i * 4).map(|v| v as usize))
        .collect();
    let mut out = Vec::new();
    for (i, pair) in bounds.windows(2).enumerate().skip(6) {
        let (start, end) = (pair[0].min(story.len()), pair[1].min(story.len()));
        if start >= end {
            continue;
        }
        let section = match (i - 6) % 6 {
            0 | 1 | 4 => Section::Header,
            _ => Section::Footer,
        };
        out.push((section, paragraphs(&story[start..end])));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::paragraphs as texts;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn fields_cells_and_marks() {
        let story = units("a\u{13} PAGE \u{14}7\u{15}b\rc\u{7}d\u{7}\u{7}\u{1}e\u{1e}f\u{b}g\r");
        let items = paragraphs(&story);
        assert_eq!(texts(&items), vec!["a7b", "c", "d", "e-f\ng"]);
    }
}
