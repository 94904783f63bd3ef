//! `citation.v1`: how the spans of a chunk become the place a person can
//! follow back into the file — lines (`notes/a.md#L3-L9`), a page
//! (`paper.pdf#page=3`), a slide (`deck.pptx#slide=7`, kind `page`), cells
//! (`book.xlsx#sheet=Budget&range=A2:F40`), numbered parts
//! (`report.docx#para=12-18`, `book.epub#chapter=3`, `box.mbox#message=12`),
//! a region of an image (`scan.png#xywh=120,40,520,180`, W3C media
//! fragments) — and a file attached to the cited one
//! (`mail.eml › report.pdf#page=2`). One rule for every front end: the CLI,
//! MCP, the JSON API and the page render these, never rebuild them.

use serde::Serialize;

use crate::spans::{PartUnit, SourceSpan, column_name};

/// `citation.v1`: where a hit or claim comes from.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Citation {
    pub schema_version: &'static str,
    /// The root (tree) the cited document belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The file inside the cited one the text comes from (an e-mail's
    /// attachment, by its file name); the rest of the citation is a place in
    /// that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment: Option<String>,
    #[serde(flatten)]
    pub body: CitationBody,
}

/// The variant part of a citation, tagged by `kind`.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CitationBody {
    /// Lines of a text document.
    Line {
        path: String,
        uri: String,
        start: u32,
        end: u32,
        section: Option<String>,
    },
    /// A page of a paged document, or a slide of a presentation.
    Page {
        path: String,
        uri: String,
        page: u32,
        section: Option<String>,
        /// What `page` counts when it is not a page: `slide`.
        #[serde(skip_serializing_if = "Option::is_none")]
        unit: Option<&'static str>,
        /// The text was read from an image of the page by OCR: the engine's
        /// lowest confidence in it (0 to 1).
        #[serde(skip_serializing_if = "Option::is_none")]
        ocr_confidence: Option<f32>,
    },
    /// Lines of a source file.
    Code {
        path: String,
        uri: String,
        line_start: u32,
        line_end: u32,
        symbol: Option<String>,
        lang: Option<String>,
    },
    /// Cells of a spreadsheet.
    Cells {
        path: String,
        uri: String,
        /// The sheet's name as its tab shows it.
        sheet: String,
        /// The cells in A1 notation (`A2:F40`, `B3`; rectangles apart joined
        /// with commas: `A1:C1,A6:C9`).
        range: String,
        section: Option<String>,
    },
    /// Numbered paragraphs, chapters or messages `first..=last`.
    Part {
        path: String,
        uri: String,
        unit: PartUnit,
        first: u32,
        last: u32,
        section: Option<String>,
    },
    /// Text read from an image by OCR: a rectangle in its pixels.
    Region {
        path: String,
        uri: String,
        x: u32,
        y: u32,
        width: u32,
        height: u32,
        /// The engine's lowest confidence in the text (0 to 1).
        ocr_confidence: f32,
        section: Option<String>,
    },
}

impl Citation {
    /// Build a citation for `path` of the root `root` from a chunk's spans;
    /// spans of the first span's kind are merged (line ranges from the
    /// first start to the last end, cells and regions into their bounding
    /// rectangle, parts into their range). With `qualify` (an index of
    /// several roots) the URI names the root: `notes:tech/raft.md#L3-L9`.
    pub fn from_spans(
        root: &str,
        path: &str,
        qualify: bool,
        spans: &[SourceSpan],
        section: Option<String>,
    ) -> Option<Citation> {
        let place = if qualify {
            format!("{root}:{path}")
        } else {
            path.to_string()
        };
        let (place, attachment, spans) = match spans.first()? {
            SourceSpan::Attachment { name, within, .. } => {
                let inner: Vec<SourceSpan> = spans
                    .iter()
                    .filter_map(|s| match s {
                        SourceSpan::Attachment {
                            name: n,
                            within: w,
                            span,
                        } if n == name && w == within => Some((**span).clone()),
                        _ => None,
                    })
                    .collect();
                let outer = match within {
                    Some(part) => format!("{place}#{}", fragment(part)),
                    None => place,
                };
                (format!("{outer} › {name}"), Some(name.clone()), inner)
            }
            _ => (place, None, spans.to_vec()),
        };
        Some(Citation {
            schema_version: "citation.v1",
            root: Some(root.to_string()),
            attachment,
            body: body(path, &place, &spans, section)?,
        })
    }

    /// The citation URI (`path#L3-L9`, `path#page=2`; `root:path#L3-L9` in
    /// an index of several roots).
    pub fn uri(&self) -> &str {
        match &self.body {
            CitationBody::Line { uri, .. }
            | CitationBody::Page { uri, .. }
            | CitationBody::Code { uri, .. }
            | CitationBody::Cells { uri, .. }
            | CitationBody::Part { uri, .. }
            | CitationBody::Region { uri, .. } => uri,
        }
    }

    /// Cited line range, for line and code citations of the file itself.
    pub fn lines(&self) -> Option<(u32, u32)> {
        if self.attachment.is_some() {
            return None;
        }
        match &self.body {
            CitationBody::Line { start, end, .. } => Some((*start, *end)),
            CitationBody::Code {
                line_start,
                line_end,
                ..
            } => Some((*line_start, *line_end)),
            _ => None,
        }
    }

    /// The OCR engine's confidence in the cited text, when it was read from
    /// an image.
    pub fn ocr_confidence(&self) -> Option<f32> {
        match &self.body {
            CitationBody::Page { ocr_confidence, .. } => *ocr_confidence,
            CitationBody::Region { ocr_confidence, .. } => Some(*ocr_confidence),
            _ => None,
        }
    }
}

/// The body for `spans` (all of one file) at `place`.
fn body(
    path: &str,
    place: &str,
    spans: &[SourceSpan],
    section: Option<String>,
) -> Option<CitationBody> {
    let path = path.to_string();
    let lines = || {
        let start = spans.iter().filter_map(|s| s.lines()).map(|l| l.0).min()?;
        let end = spans.iter().filter_map(|s| s.lines()).map(|l| l.1).max()?;
        Some((start, end, line_uri(place, start, end)))
    };
    Some(match spans.first()? {
        SourceSpan::Page { page } => CitationBody::Page {
            uri: format!("{place}#page={page}"),
            path,
            page: *page,
            section,
            unit: None,
            ocr_confidence: None,
        },
        SourceSpan::Slide { slide } => CitationBody::Page {
            uri: format!("{place}#slide={slide}"),
            path,
            page: *slide,
            section,
            unit: Some("slide"),
            ocr_confidence: None,
        },
        SourceSpan::Code { symbol, lang, .. } => {
            let (start, end, uri) = lines()?;
            CitationBody::Code {
                path,
                uri,
                line_start: start,
                line_end: end,
                symbol: symbol.clone(),
                lang: lang.clone(),
            }
        }
        SourceSpan::Line { .. } => {
            let (start, end, uri) = lines()?;
            CitationBody::Line {
                path,
                uri,
                start,
                end,
                section,
            }
        }
        SourceSpan::Cells { sheet, .. } => {
            let range = cell_ranges(spans, sheet);
            CitationBody::Cells {
                uri: format!("{place}#{}", cells_fragment(sheet, &range)),
                path,
                sheet: sheet.clone(),
                range,
                section,
            }
        }
        SourceSpan::Part { unit, .. } => {
            let (first, _, last, _) = merged(spans, |s| match s {
                SourceSpan::Part {
                    unit: other,
                    first,
                    last,
                } if other == unit => Some((*first, 0, *last, 0)),
                _ => None,
            })?;
            CitationBody::Part {
                uri: format!("{place}#{}", part_fragment(*unit, first, last)),
                path,
                unit: *unit,
                first,
                last,
                section,
            }
        }
        SourceSpan::Region { page, .. } => {
            let of_page = |s: &SourceSpan| match s {
                SourceSpan::Region {
                    page: other,
                    x,
                    y,
                    width,
                    height,
                    confidence,
                } if other == page => Some((*x, *y, *width, *height, confidence.0)),
                _ => None,
            };
            let confidence = spans
                .iter()
                .filter_map(of_page)
                .map(|r| r.4)
                .fold(1.0f32, f32::min);
            match page {
                // A page of a paged file (a scanned PDF page, a TIFF frame)
                // is cited by its page, as text pages are.
                Some(page) => CitationBody::Page {
                    uri: format!("{place}#page={page}"),
                    path,
                    page: *page,
                    section,
                    unit: None,
                    ocr_confidence: Some(confidence),
                },
                None => {
                    let (x0, y0, x1, y1) = merged(spans, |s| {
                        of_page(s)
                            .map(|(x, y, w, h, _)| (x, y, x.saturating_add(w), y.saturating_add(h)))
                    })?;
                    let (width, height) = (x1 - x0, y1 - y0);
                    CitationBody::Region {
                        uri: format!("{place}#xywh={x0},{y0},{width},{height}"),
                        path,
                        x: x0,
                        y: y0,
                        width,
                        height,
                        ocr_confidence: confidence,
                        section,
                    }
                }
            }
        }
        SourceSpan::Attachment { .. } => return None,
    })
}

/// The bounding box `(min a, min b, max c, max d)` of the quadruples `pick`
/// finds among `spans`.
fn merged(
    spans: &[SourceSpan],
    pick: impl Fn(&SourceSpan) -> Option<(u32, u32, u32, u32)>,
) -> Option<(u32, u32, u32, u32)> {
    spans
        .iter()
        .filter_map(pick)
        .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3)))
}

/// The fragment naming one span (without `#`): how the part of a file an
/// attachment belongs to is written before ` › `.
fn fragment(span: &SourceSpan) -> String {
    match span {
        SourceSpan::Line { start, end } | SourceSpan::Code { start, end, .. } => {
            line_uri("", *start, *end)[1..].to_string()
        }
        SourceSpan::Page { page } => format!("page={page}"),
        SourceSpan::Slide { slide } => format!("slide={slide}"),
        SourceSpan::Cells {
            sheet,
            first_row,
            last_row,
            first_column,
            last_column,
        } => cells_fragment(
            sheet,
            &a1_range((*first_column, *first_row, *last_column, *last_row)),
        ),
        SourceSpan::Part { unit, first, last } => part_fragment(*unit, *first, *last),
        SourceSpan::Region {
            x,
            y,
            width,
            height,
            ..
        } => format!("xywh={x},{y},{width},{height}"),
        SourceSpan::Attachment { name, .. } => name.clone(),
    }
}

/// The cells of `sheet` among `spans` in A1 notation: touching or
/// overlapping rectangles merged, the rest listed apart with commas
/// (`A1:C1,A6:C9`: a header row carried above a window of rows), top to
/// bottom.
fn cell_ranges(spans: &[SourceSpan], sheet: &str) -> String {
    let mut boxes: Vec<(u32, u32, u32, u32)> = spans
        .iter()
        .filter_map(|s| match s {
            SourceSpan::Cells {
                sheet: other,
                first_row,
                last_row,
                first_column,
                last_column,
            } if other == sheet => Some((*first_column, *first_row, *last_column, *last_row)),
            _ => None,
        })
        .collect();
    boxes.sort_by_key(|b| (b.1, b.0));
    let mut merged: Vec<(u32, u32, u32, u32)> = Vec::new();
    for b in boxes {
        match merged.last_mut() {
            // Same columns, rows touching or overlapping: one rectangle.
            Some(last) if last.0 == b.0 && last.2 == b.2 && b.1 <= last.3.saturating_add(1) => {
                last.3 = last.3.max(b.3)
            }
            _ => merged.push(b),
        }
    }
    merged
        .into_iter()
        .map(a1_range)
        .collect::<Vec<_>>()
        .join(",")
}

/// `para=12-18`, `chapter=3`.
fn part_fragment(unit: PartUnit, first: u32, last: u32) -> String {
    let key = unit.fragment_key();
    if first == last {
        format!("{key}={first}")
    } else {
        format!("{key}={first}-{last}")
    }
}

/// `sheet=Budget&range=A2:F40`, the sheet's name escaped where it would end
/// the value (`%`, `&`, `#`, `=`, spaces and controls).
fn cells_fragment(sheet: &str, range: &str) -> String {
    let mut name = String::with_capacity(sheet.len());
    for c in sheet.chars() {
        match c {
            '%' | '&' | '#' | '=' | '+' => name.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_whitespace() || c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    name.push_str(&format!("%{b:02X}"));
                }
            }
            c => name.push(c),
        }
    }
    format!("sheet={name}&range={range}")
}

/// `A2:F40` for columns 1–6 and rows 2–40; one cell is `B3`.
fn a1_range((first_column, first_row, last_column, last_row): (u32, u32, u32, u32)) -> String {
    let first = format!("{}{first_row}", column_name(first_column));
    if (first_column, first_row) == (last_column, last_row) {
        first
    } else {
        format!("{first}:{}{last_row}", column_name(last_column))
    }
}

/// `path#L5` for one line, `path#L3-L9` for a range.
pub fn line_uri(path: &str, start: u32, end: u32) -> String {
    if start == end {
        format!("{path}#L{start}")
    } else {
        format!("{path}#L{start}-L{end}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::Confidence;
    use serde_json::json;

    #[test]
    fn line_citation_spans_first_start_to_last_end() {
        let spans = vec![
            SourceSpan::Line { start: 3, end: 4 },
            SourceSpan::Line { start: 7, end: 9 },
        ];
        let c = Citation::from_spans("notes", "notes/a.md", false, &spans, Some("Intro".into()))
            .unwrap();
        assert_eq!(c.uri(), "notes/a.md#L3-L9");
        assert_eq!(c.lines(), Some((3, 9)));
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(
            wire,
            json!({"schema_version":"citation.v1","root":"notes","kind":"line","path":"notes/a.md",
                   "uri":"notes/a.md#L3-L9","start":3,"end":9,"section":"Intro"})
        );
    }

    #[test]
    fn code_and_page_citations() {
        let code = SourceSpan::parse_list(
            r#"[{"kind":"code","start":10,"end":42,"symbol":"fn ingest","lang":"rust"}]"#,
        );
        let c = Citation::from_spans("app", "src/a.rs", false, &code, None).unwrap();
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(wire["kind"], "code");
        assert_eq!(wire["line_start"], 10);
        assert_eq!(wire["symbol"], "fn ingest");
        assert_eq!(c.uri(), "src/a.rs#L10-L42");
        let page =
            Citation::from_spans("app", "p.pdf", false, &[SourceSpan::Page { page: 3 }], None)
                .unwrap();
        assert_eq!(page.uri(), "p.pdf#page=3");
        assert_eq!(
            serde_json::to_value(&page).unwrap(),
            json!({"schema_version":"citation.v1","root":"app","kind":"page","path":"p.pdf",
                   "uri":"p.pdf#page=3","page":3,"section":null})
        );
        assert_eq!(line_uri("a.md", 5, 5), "a.md#L5");
        assert!(Citation::from_spans("app", "x", false, &[], None).is_none());
        let qualified = Citation::from_spans("app", "src/a.rs", true, &code, None).unwrap();
        assert_eq!(qualified.uri(), "app:src/a.rs#L10-L42");
        let page =
            Citation::from_spans("app", "p.pdf", true, &[SourceSpan::Page { page: 3 }], None);
        assert_eq!(page.unwrap().uri(), "app:p.pdf#page=3");
    }

    #[test]
    fn slides_are_pages_counted_as_slides() {
        let c = Citation::from_spans(
            "d",
            "deck.pptx",
            false,
            &[SourceSpan::Slide { slide: 7 }],
            Some("Slide 7: Roadmap".into()),
        )
        .unwrap();
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(wire["kind"], "page");
        assert_eq!(wire["page"], 7);
        assert_eq!(wire["unit"], "slide");
        assert_eq!(c.uri(), "deck.pptx#slide=7");
    }

    #[test]
    fn cells_merge_into_one_a1_range_of_their_sheet() {
        let cells = |sheet: &str, rows: (u32, u32), cols: (u32, u32)| SourceSpan::Cells {
            sheet: sheet.into(),
            first_row: rows.0,
            last_row: rows.1,
            first_column: cols.0,
            last_column: cols.1,
        };
        let c = Citation::from_spans(
            "d",
            "book.xlsx",
            false,
            &[
                cells("Q1 Budget", (20, 40), (1, 6)),
                cells("Q1 Budget", (2, 19), (1, 6)),
                cells("Other", (1, 1000), (1, 50)),
            ],
            None,
        )
        .unwrap();
        assert_eq!(c.uri(), "book.xlsx#sheet=Q1%20Budget&range=A2:F40");
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(
            (wire["kind"].as_str(), wire["sheet"].as_str()),
            (Some("cells"), Some("Q1 Budget"))
        );
        assert_eq!(wire["range"], "A2:F40");
        // A header row carried above a later window is listed apart.
        let windowed = Citation::from_spans(
            "d",
            "book.xlsx",
            false,
            &[cells("S", (1, 1), (1, 3)), cells("S", (6, 9), (1, 3))],
            None,
        )
        .unwrap();
        assert_eq!(windowed.uri(), "book.xlsx#sheet=S&range=A1:C1,A6:C9");
        let one =
            Citation::from_spans("d", "b.ods", false, &[cells("A&B", (3, 3), (28, 28))], None)
                .unwrap();
        assert_eq!(one.uri(), "b.ods#sheet=A%26B&range=AB3");
    }

    #[test]
    fn parts_cite_their_unit_and_range() {
        let part = |unit, first, last| SourceSpan::Part { unit, first, last };
        let para = Citation::from_spans(
            "d",
            "report.docx",
            false,
            &[
                part(PartUnit::Paragraph, 12, 14),
                part(PartUnit::Paragraph, 15, 18),
            ],
            Some("Results › Costs".into()),
        )
        .unwrap();
        assert_eq!(para.uri(), "report.docx#para=12-18");
        let wire = serde_json::to_value(&para).unwrap();
        assert_eq!(wire["kind"], "part");
        assert_eq!(wire["unit"], "paragraph");
        assert_eq!(
            (wire["first"].as_u64(), wire["last"].as_u64()),
            (Some(12), Some(18))
        );
        let chapter =
            Citation::from_spans("d", "b.epub", false, &[part(PartUnit::Chapter, 3, 3)], None);
        assert_eq!(chapter.unwrap().uri(), "b.epub#chapter=3");
        let message = Citation::from_spans(
            "d",
            "x.mbox",
            false,
            &[part(PartUnit::Message, 12, 12)],
            None,
        );
        assert_eq!(message.unwrap().uri(), "x.mbox#message=12");
    }

    #[test]
    fn regions_of_an_image_and_of_a_page() {
        let region = |page, x, y, w, h, c| SourceSpan::Region {
            page,
            x,
            y,
            width: w,
            height: h,
            confidence: Confidence(c),
        };
        let image = Citation::from_spans(
            "d",
            "scan.png",
            false,
            &[
                region(None, 120, 40, 400, 30, 0.9),
                region(None, 100, 80, 540, 140, 0.7),
            ],
            None,
        )
        .unwrap();
        assert_eq!(image.uri(), "scan.png#xywh=100,40,540,180");
        assert_eq!(image.ocr_confidence(), Some(0.7));
        assert_eq!(serde_json::to_value(&image).unwrap()["kind"], "region");
        let page = Citation::from_spans(
            "d",
            "scan.pdf",
            false,
            &[region(Some(3), 0, 0, 10, 10, 0.8)],
            None,
        )
        .unwrap();
        assert_eq!(page.uri(), "scan.pdf#page=3");
        let wire = serde_json::to_value(&page).unwrap();
        assert_eq!(
            (wire["kind"].as_str(), wire["page"].as_u64()),
            (Some("page"), Some(3))
        );
        assert!((wire["ocr_confidence"].as_f64().unwrap() - 0.8).abs() < 1e-6);
    }

    #[test]
    fn an_attachment_is_cited_through_the_file_holding_it() {
        let attached = |page| SourceSpan::Attachment {
            name: "report.pdf".into(),
            within: None,
            span: Box::new(SourceSpan::Page { page }),
        };
        let c = Citation::from_spans("m", "mail.eml", false, &[attached(2), attached(3)], None)
            .unwrap();
        assert_eq!(c.uri(), "mail.eml › report.pdf#page=2");
        assert_eq!(c.attachment.as_deref(), Some("report.pdf"));
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(
            (wire["path"].as_str(), wire["page"].as_u64()),
            (Some("mail.eml"), Some(2))
        );
        assert_eq!(c.lines(), None);
        let in_message = SourceSpan::Attachment {
            name: "notes.txt".into(),
            within: Some(Box::new(SourceSpan::Part {
                unit: PartUnit::Message,
                first: 3,
                last: 3,
            })),
            span: Box::new(SourceSpan::Line { start: 1, end: 4 }),
        };
        let c = Citation::from_spans("m", "box.mbox", true, &[in_message], None).unwrap();
        assert_eq!(c.uri(), "m:box.mbox#message=3 › notes.txt#L1-L4");
        assert_eq!(
            c.lines(),
            None,
            "lines of the attachment, not of the mailbox"
        );
    }
}
