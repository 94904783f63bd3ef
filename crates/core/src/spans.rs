//! Where a block or chunk sits in its source file: the one typed form of a
//! span from the moment a plugin's output is accepted (the plugin host
//! converts each contract version's span into it), through the index
//! (`blocks.source_span_json`, `chunks.source_spans_json`, whose JSON this
//! type defines) to citations, fetch and filters.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A source span, stored as `{"kind": "line" | "page" | "code" | "slide" |
/// "cells" | "part" | "region" | "attachment", …}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SourceSpan {
    /// Lines `start..=end`, from 1.
    Line { start: u32, end: u32 },
    /// A page, from 1 (PDF).
    Page { page: u32 },
    /// Lines of source code, with the symbol defined there and the
    /// language label.
    Code {
        start: u32,
        end: u32,
        symbol: Option<String>,
        lang: Option<String>,
    },
    /// A slide of a presentation, from 1 in presentation order.
    Slide { slide: u32 },
    /// A rectangle of cells in one sheet of a spreadsheet; rows and columns
    /// from 1 (column 1 is `A`).
    Cells {
        sheet: String,
        first_row: u32,
        last_row: u32,
        first_column: u32,
        last_column: u32,
    },
    /// Numbered parts `first..=last` of a document: paragraphs, chapters,
    /// messages.
    Part {
        unit: PartUnit,
        first: u32,
        last: u32,
    },
    /// Text read from an image by OCR: a rectangle in the image's pixels
    /// (origin top left), on `page` of a file of several images, and the
    /// engine's confidence in the text.
    Region {
        page: Option<u32>,
        x: u32,
        y: u32,
        width: u32,
        height: u32,
        confidence: Confidence,
    },
    /// A place in a file attached to this one (an e-mail's attachment), in
    /// the part `within` of this file it belongs to, if any.
    Attachment {
        name: String,
        within: Option<Box<SourceSpan>>,
        span: Box<SourceSpan>,
    },
}

/// What a [`SourceSpan::Part`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PartUnit {
    /// Paragraphs of a word-processing document or an e-mail.
    Paragraph,
    /// Chapters of a book.
    Chapter,
    /// Messages of a mailbox.
    Message,
}

impl PartUnit {
    /// The key naming the unit in a citation URI's fragment (`para=3`).
    pub fn fragment_key(self) -> &'static str {
        match self {
            PartUnit::Paragraph => "para",
            PartUnit::Chapter => "chapter",
            PartUnit::Message => "message",
        }
    }
}

/// An OCR engine's confidence in a text, 0 to 1 (a finite number: the
/// plugin host refuses others), compared and hashed by its bits.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Confidence(pub f32);

impl PartialEq for Confidence {
    fn eq(&self, other: &Confidence) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Confidence {}

impl std::hash::Hash for Confidence {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl SourceSpan {
    /// The first and last line, for line and code spans.
    pub fn lines(&self) -> Option<(u32, u32)> {
        match self {
            SourceSpan::Line { start, end } | SourceSpan::Code { start, end, .. } => {
                Some((*start, *end))
            }
            _ => None,
        }
    }

    /// The language label of a code span.
    pub fn lang(&self) -> Option<&str> {
        match self {
            SourceSpan::Code { lang, .. } => lang.as_deref(),
            _ => None,
        }
    }

    /// The OCR confidence of text read from an image (also inside an
    /// attachment).
    pub fn ocr_confidence(&self) -> Option<f32> {
        match self {
            SourceSpan::Region { confidence, .. } => Some(confidence.0),
            SourceSpan::Attachment { span, .. } => span.ocr_confidence(),
            _ => None,
        }
    }

    /// The stored JSON (also what block and chunk IDs are derived from).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a span serialises")
    }

    /// A stored list of spans; an unreadable value reads as none.
    pub fn parse_list(json: &str) -> Vec<SourceSpan> {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// One stored span, if it reads.
    pub fn parse(json: &str) -> Option<SourceSpan> {
        serde_json::from_str(json).ok()
    }
}

/// The A1-notation name of column `n` (from 1): `A`, `Z`, `AA`, `XFD`.
pub fn column_name(mut n: u32) -> String {
    let mut out = Vec::new();
    while n > 0 {
        let rem = (n - 1) % 26;
        out.push(b'A' + rem as u8);
        n = (n - 1) / 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spans_are_stored_as_the_json_ids_were_always_derived_from() {
        let line = SourceSpan::Line { start: 3, end: 9 };
        assert_eq!(
            line.to_json(),
            json!({"kind": "line", "start": 3, "end": 9})
        );
        let page = SourceSpan::Page { page: 4 };
        assert_eq!(page.to_json(), json!({"kind": "page", "page": 4}));
        let code = SourceSpan::Code {
            start: 1,
            end: 2,
            symbol: Some("a::b".into()),
            lang: None,
        };
        assert_eq!(
            code.to_json(),
            json!({"kind": "code", "start": 1, "end": 2, "symbol": "a::b", "lang": null})
        );
        let list = serde_json::to_string(&vec![line.clone(), code.clone()]).unwrap();
        assert_eq!(
            SourceSpan::parse_list(&list),
            vec![line.clone(), code.clone()]
        );
        assert_eq!(SourceSpan::parse_list("not json"), vec![]);
        assert_eq!((line.lines(), page.lines()), (Some((3, 9)), None));
        assert_eq!(code.lang(), None);
    }

    #[test]
    fn spans_without_lines_are_stored_by_kind() {
        let cells = SourceSpan::Cells {
            sheet: "Budget".into(),
            first_row: 1,
            last_row: 40,
            first_column: 1,
            last_column: 6,
        };
        assert_eq!(
            cells.to_json(),
            json!({"kind": "cells", "sheet": "Budget", "first_row": 1, "last_row": 40,
                   "first_column": 1, "last_column": 6})
        );
        let part = SourceSpan::Part {
            unit: PartUnit::Chapter,
            first: 3,
            last: 3,
        };
        assert_eq!(
            part.to_json(),
            json!({"kind": "part", "unit": "chapter", "first": 3, "last": 3})
        );
        let region = SourceSpan::Region {
            page: None,
            x: 1,
            y: 2,
            width: 3,
            height: 4,
            confidence: Confidence(0.5),
        };
        let nested = SourceSpan::Attachment {
            name: "a.pdf".into(),
            within: Some(Box::new(SourceSpan::Part {
                unit: PartUnit::Message,
                first: 2,
                last: 2,
            })),
            span: Box::new(region.clone()),
        };
        let list = serde_json::to_string(&vec![cells.clone(), nested.clone()]).unwrap();
        assert_eq!(
            SourceSpan::parse_list(&list),
            vec![cells.clone(), nested.clone()]
        );
        assert_eq!(nested.ocr_confidence(), Some(0.5));
        assert_eq!(
            (cells.lines(), nested.lines(), region.lines()),
            (None, None, None)
        );
    }

    #[test]
    fn columns_are_named_as_spreadsheets_name_them() {
        let names: Vec<String> = [1, 26, 27, 52, 53, 702, 703, 16384]
            .into_iter()
            .map(column_name)
            .collect();
        assert_eq!(names, ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA", "XFD"]);
    }
}
