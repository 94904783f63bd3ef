//! Legacy PowerPoint presentations (PowerPoint 97–2003 `.ppt`, `.pps`).
//!
//! The `PowerPoint Document` stream is a tree of records. The `Current
//! User` stream points at the newest `UserEditAtom`, whose chain of edits
//! gives the persist directory (object id → stream offset) and the
//! document container. Its slide list (`SlideListWithText`, instance 0)
//! names the slides in presentation order, each with the text of its
//! placeholders; each slide's drawing holds its text boxes
//! (`ClientTextbox`: `TextCharsAtom` UTF-16, `TextBytesAtom` 8-bit, or an
//! `OutlineTextRefAtom` pointing into the slide list), in shape order.
//! Text typed as a title (`TextHeaderAtom` type 0 or 6) is the slide's
//! title. A slide's `SlideAtom` names its notes, read the same way from
//! the notes list (instance 2); `SSSlideInfoAtom` says whether it is
//! hidden. A file without a usable persist directory falls back to the
//! slide list's text alone. A PowerPoint 95/97 dual-format file is read
//! from its PowerPoint 97 storage; PowerPoint 95 and older are refused
//! with a hint. Records are walked with an explicit stack,
//! at most [`MAX_PPT_RECORDS`] of them.

use std::collections::{HashMap, HashSet};

use kebab_plugin_sdk::{Document, LogLevel, PluginError, log};

use crate::bytes::Bytes;
use crate::flow::clean;
use crate::limits::{MAX_PPT_RECORDS, MAX_SLIDES};
use crate::ole::{self, Compound};
use crate::slides::{self, Slide, SlidePart};

/// Record types.
const RT_DOCUMENT: u16 = 0x03E8;
const RT_SLIDE: u16 = 0x03EE;
const RT_SLIDE_ATOM: u16 = 0x03EF;
const RT_NOTES: u16 = 0x03F0;
const RT_SLIDE_PERSIST_ATOM: u16 = 0x03F3;
const RT_SLIDE_SHOW_SLIDE_INFO_ATOM: u16 = 0x03F9;
const RT_OUTLINE_TEXT_REF_ATOM: u16 = 0x0F9E;
const RT_TEXT_HEADER_ATOM: u16 = 0x0F9F;
const RT_TEXT_CHARS_ATOM: u16 = 0x0FA0;
const RT_TEXT_BYTES_ATOM: u16 = 0x0FA8;
const RT_SLIDE_LIST_WITH_TEXT: u16 = 0x0FF0;
const RT_USER_EDIT_ATOM: u16 = 0x0FF5;
const RT_PERSIST_DIRECTORY_ATOM: u16 = 0x1772;
const RT_CLIENT_TEXTBOX: u16 = 0xF00D;

/// `TextHeaderAtom` types of titles (title, centered title).
const TITLE_TYPES: [u32; 2] = [0, 6];

/// The `Current User` header token of an encrypted presentation.
const ENCRYPTED_TOKEN: u32 = 0xF3D1_C4DF;

/// The storage where a PowerPoint 95/97 dual-format file keeps its
/// PowerPoint 97 streams.
const DUAL_STORAGE: &str = "PP97_DUALSTORAGE/";

/// Most edits followed back through the user edit chain.
const MAX_EDITS: usize = 4096;

/// Parse a legacy PowerPoint presentation in an open compound file.
pub fn parse(file: &mut Compound<'_>) -> Result<Document, PluginError> {
    let storage = if file.is_stream(format!("/{DUAL_STORAGE}PowerPoint Document")) {
        DUAL_STORAGE
    } else {
        ""
    };
    let stream = ole::stream(file, &format!("{storage}PowerPoint Document"))?.unwrap_or_default();
    let current = ole::stream(file, &format!("{storage}Current User"))?.unwrap_or_default();
    if current.u32_at(12) == Some(ENCRYPTED_TOKEN) || file.is_stream("/EncryptedSummary") {
        return Err(PluginError::Unsupported(
            "encrypted (password-protected) PowerPoint .ppt file: remove the password and ingest again"
                .into(),
        ));
    }
    let persist = current
        .u32_at(16)
        .and_then(|offset| persist_directory(&stream, offset as usize));
    let document = match &persist {
        Some(p) => p
            .directory
            .get(&p.document)
            .and_then(|&at| record_at(&stream, at))
            .filter(|r| r.kind == RT_DOCUMENT),
        None => None,
    };
    let document = match document {
        Some(d) => d,
        None => {
            log(
                LogLevel::Warn,
                "no usable persist directory: reading the slide list's text only",
            );
            top_level(&stream)
                .find(|r| r.kind == RT_DOCUMENT)
                .ok_or_else(|| {
                    PluginError::Unsupported(
                        "a PowerPoint 95 (or older) .ppt: open it in PowerPoint or LibreOffice and save as .pptx"
                            .into(),
                    )
                })?
        }
    };
    let lists = SlideLists::read(&document);
    let directory = persist.map(|p| p.directory).unwrap_or_default();
    let deck: Vec<Slide> = lists
        .slides
        .iter()
        .take(MAX_SLIDES)
        .map(|entry| read_slide(&stream, &directory, entry, &lists.notes))
        .collect();
    let props = ole::summary(file);
    Ok(slides::document(&deck, &props, "ppt"))
}

/// One record of the stream.
#[derive(Debug, Clone, Copy)]
struct Record<'a> {
    kind: u16,
    instance: u16,
    container: bool,
    data: &'a [u8],
}

/// The record whose header starts at byte `at` (its data cut to the
/// stream's end).
fn record_at(stream: &[u8], at: usize) -> Option<Record<'_>> {
    let ver_instance = stream.u16_at(at)?;
    let kind = stream.u16_at(at + 2)?;
    let len = stream.u32_at(at + 4)? as usize;
    let start = at + 8;
    let end = start.saturating_add(len).min(stream.len());
    Some(Record {
        kind,
        instance: ver_instance >> 4,
        container: ver_instance & 0xF == 0xF,
        data: stream.get(start..end)?,
    })
}

/// The records laid one after another in `data`.
fn top_level(data: &[u8]) -> impl Iterator<Item = Record<'_>> + '_ {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let record = record_at(data, at)?;
        at += 8 + record.data.len();
        Some(record)
    })
    .take(MAX_PPT_RECORDS)
}

/// Every record inside `root`, depth first in stream order.
fn descendants<'a>(root: &Record<'a>) -> Vec<Record<'a>> {
    let mut out = Vec::new();
    let mut stack: Vec<Box<dyn Iterator<Item = Record<'a>> + 'a>> = Vec::new();
    if root.container {
        stack.push(Box::new(top_level(root.data)));
    }
    while let Some(top) = stack.last_mut() {
        let Some(record) = top.next() else {
            stack.pop();
            continue;
        };
        if out.len() >= MAX_PPT_RECORDS {
            break;
        }
        if record.container {
            stack.push(Box::new(top_level(record.data)));
        }
        out.push(record);
    }
    out
}

/// The persist directory and the document's persist id.
struct Persist {
    directory: HashMap<u32, usize>,
    document: u32,
}

/// Follow the user edits from the one at `offset`, newest first, merging
/// their persist directories (newer entries win).
fn persist_directory(stream: &[u8], offset: usize) -> Option<Persist> {
    let mut directory = HashMap::new();
    let mut document = None;
    let mut seen = HashSet::new();
    let mut next = offset;
    while seen.insert(next) && seen.len() <= MAX_EDITS {
        let edit = record_at(stream, next).filter(|r| r.kind == RT_USER_EDIT_ATOM)?;
        document.get_or_insert(edit.data.u32_at(16)?);
        let dir_at = edit.data.u32_at(12)? as usize;
        if let Some(dir) = record_at(stream, dir_at).filter(|r| r.kind == RT_PERSIST_DIRECTORY_ATOM)
        {
            read_directory(dir.data, &mut directory);
        }
        let last = edit.data.u32_at(8)? as usize;
        if last == 0 {
            break;
        }
        next = last;
    }
    Some(Persist {
        directory,
        document: document?,
    })
}

/// Add one `PersistDirectoryAtom`'s entries (runs of ids from a start).
fn read_directory(data: &[u8], directory: &mut HashMap<u32, usize>) {
    let mut at = 0usize;
    while let Some(head) = data.u32_at(at) {
        let first = head & 0x000F_FFFF;
        let count = (head >> 20) as usize;
        for i in 0..count {
            if let Some(offset) = data.u32_at(at + 4 + i * 4) {
                directory.entry(first + i as u32).or_insert(offset as usize);
            }
        }
        at += 4 + count * 4;
    }
}

/// A slide (or notes page) of a slide list and its placeholders' text.
#[derive(Debug, Default)]
struct ListEntry {
    /// The persist id of its container.
    persist: u32,
    /// Its slide (or notes) id, which `SlideAtom.notesIdRef` names.
    id: u32,
    texts: Vec<(u32, String)>,
}

/// The document's slide list and notes list.
struct SlideLists {
    slides: Vec<ListEntry>,
    /// Notes id → its entry.
    notes: HashMap<u32, ListEntry>,
}

impl SlideLists {
    /// The lists in the document container.
    fn read(document: &Record<'_>) -> SlideLists {
        let mut slides = Vec::new();
        let mut notes = HashMap::new();
        for list in top_level(document.data).filter(|r| r.kind == RT_SLIDE_LIST_WITH_TEXT) {
            let entries = list_entries(&list);
            match list.instance {
                0 => slides = entries,
                2 => notes.extend(entries.into_iter().map(|e| (e.id, e))),
                _ => {}
            }
        }
        SlideLists { slides, notes }
    }
}

/// The entries of one `SlideListWithText`.
fn list_entries(list: &Record<'_>) -> Vec<ListEntry> {
    let mut entries: Vec<ListEntry> = Vec::new();
    let mut text_type = 4u32;
    for record in top_level(list.data) {
        match record.kind {
            RT_SLIDE_PERSIST_ATOM => entries.push(ListEntry {
                persist: record.data.u32_at(0).unwrap_or(0),
                id: record.data.u32_at(12).unwrap_or(0),
                texts: Vec::new(),
            }),
            RT_TEXT_HEADER_ATOM => text_type = record.data.u32_at(0).unwrap_or(4),
            RT_TEXT_CHARS_ATOM | RT_TEXT_BYTES_ATOM => {
                if let Some(entry) = entries.last_mut() {
                    entry.texts.push((text_type, text_of(&record)));
                }
            }
            _ => {}
        }
    }
    entries
}

/// The text of a `TextCharsAtom` or `TextBytesAtom`, paragraphs on lines.
fn text_of(record: &Record<'_>) -> String {
    let raw: String = if record.kind == RT_TEXT_CHARS_ATOM {
        let units: Vec<u16> = record
            .data
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        record.data.iter().map(|&b| char::from(b)).collect()
    };
    let lines: Vec<&str> = raw
        .split(['\r', '\u{b}', '\n'])
        .filter(|l| !l.trim().is_empty())
        .collect();
    clean(&lines.join("\n"))
}

/// The text boxes of a slide or notes container, in shape order, each with
/// its text type; `OutlineTextRefAtom`s resolved through `entry`, whose
/// texts no box referenced follow.
fn text_boxes(container: &Record<'_>, entry: Option<&ListEntry>) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut used = HashSet::new();
    for record in descendants(container) {
        if record.kind != RT_CLIENT_TEXTBOX {
            continue;
        }
        let mut text_type = 4u32;
        for child in top_level(record.data) {
            match child.kind {
                RT_TEXT_HEADER_ATOM => text_type = child.data.u32_at(0).unwrap_or(4),
                RT_TEXT_CHARS_ATOM | RT_TEXT_BYTES_ATOM => out.push((text_type, text_of(&child))),
                RT_OUTLINE_TEXT_REF_ATOM => {
                    let index = child.data.u32_at(0).unwrap_or(u32::MAX) as usize;
                    if let Some((t, text)) = entry.and_then(|e| e.texts.get(index)) {
                        used.insert(index);
                        out.push((*t, text.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(entry) = entry {
        for (i, text) in entry.texts.iter().enumerate() {
            if !used.contains(&i) {
                out.push(text.clone());
            }
        }
    }
    out
}

/// One slide: its text boxes (or only its list entry's text without a
/// directory), hidden flag and notes.
fn read_slide(
    stream: &[u8],
    directory: &HashMap<u32, usize>,
    entry: &ListEntry,
    notes: &HashMap<u32, ListEntry>,
) -> Slide {
    let container = directory
        .get(&entry.persist)
        .and_then(|&at| record_at(stream, at))
        .filter(|r| r.kind == RT_SLIDE);
    let mut slide = Slide::default();
    let texts = match &container {
        Some(c) => text_boxes(c, Some(entry)),
        None => entry.texts.clone(),
    };
    for (text_type, text) in texts.into_iter().filter(|(_, t)| shows_text(t)) {
        if TITLE_TYPES.contains(&text_type) && slide.title.is_none() {
            slide.title = Some(text);
        } else {
            slide.parts.push(SlidePart::Text(text));
        }
    }
    let Some(container) = container else {
        return slide;
    };
    let records = descendants(&container);
    slide.hidden = records
        .iter()
        .find(|r| r.kind == RT_SLIDE_SHOW_SLIDE_INFO_ATOM)
        .and_then(|r| r.data.get(10))
        .is_some_and(|flags| flags & 0x04 != 0);
    let notes_entry = records
        .iter()
        .find(|r| r.kind == RT_SLIDE_ATOM)
        .and_then(|r| r.data.u32_at(16))
        .filter(|&id| id != 0)
        .and_then(|id| notes.get(&id));
    let notes_container = notes_entry
        .and_then(|e| directory.get(&e.persist))
        .and_then(|&at| record_at(stream, at))
        .filter(|r| r.kind == RT_NOTES);
    if let Some(notes_container) = notes_container {
        for (_, text) in text_boxes(&notes_container, notes_entry) {
            if shows_text(&text) {
                slide.notes.push(text);
            }
        }
    }
    slide
}

/// Whether a text box shows text of its own: not empty, not only the `*`
/// that stands for a slide-number field.
fn shows_text(text: &str) -> bool {
    !text.is_empty() && text != "*"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u16, instance: u16, container: bool, data: &[u8]) -> Vec<u8> {
        let ver = if container { 0xF } else { 0 };
        let mut out = ((instance << 4) | ver).to_le_bytes().to_vec();
        out.extend(kind.to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out.extend(data);
        out
    }

    fn chars(text: &str) -> Vec<u8> {
        text.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn slide_lists_give_text_in_order_with_titles() {
        let mut list = Vec::new();
        list.extend(record(RT_SLIDE_PERSIST_ATOM, 0, false, &[7, 0, 0, 0]));
        list.extend(record(RT_TEXT_HEADER_ATOM, 0, false, &[0, 0, 0, 0]));
        list.extend(record(RT_TEXT_CHARS_ATOM, 0, false, &chars("Title 한")));
        list.extend(record(RT_TEXT_HEADER_ATOM, 0, false, &[1, 0, 0, 0]));
        list.extend(record(RT_TEXT_BYTES_ATOM, 0, false, b"one\rtwo"));
        let document = record(
            RT_DOCUMENT,
            0,
            true,
            &record(RT_SLIDE_LIST_WITH_TEXT, 0, true, &list),
        );
        let root = record_at(&document, 0).unwrap();
        let lists = SlideLists::read(&root);
        assert_eq!(lists.slides.len(), 1);
        let slide = read_slide(&document, &HashMap::new(), &lists.slides[0], &lists.notes);
        assert_eq!(slide.title.as_deref(), Some("Title 한"));
        assert_eq!(slide.parts, vec![SlidePart::Text("one\ntwo".into())]);
    }

    #[test]
    fn truncated_and_looping_records_are_safe() {
        assert!(record_at(&[1, 2, 3], 0).is_none());
        let looping = record(RT_USER_EDIT_ATOM, 0, false, &[0; 28]);
        assert!(persist_directory(&looping, 0).is_some());
        let mut nested = Vec::new();
        for _ in 0..10_000 {
            nested = record(0x1000, 0, true, &nested);
        }
        let root = record_at(&nested, 0).unwrap();
        assert_eq!(descendants(&root).len(), 9_999);
    }
}
