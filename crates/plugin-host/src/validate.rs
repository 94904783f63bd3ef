//! Checks on plugin output before anything is stored: spans inside the file,
//! block indices in range, bounded sizes. Invalid output is that file's
//! error, never a crash and never a half-written document.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use kebab_core::document::{Chunk, Document};
use kebab_core::spans::SourceSpan;

/// Size bounds on what one plugin call may return: every list has a count
/// cap and every string a byte cap, so a plugin cannot make the host
/// allocate or store without bound. Each is named in the error it causes.
#[derive(Debug, Clone, Copy)]
pub struct OutputLimits {
    pub max_blocks: usize,
    pub max_chunks: usize,
    /// Cap on any single block or chunk text.
    pub max_text_bytes: usize,
    /// Cap on all strings of the output together.
    pub max_total_bytes: usize,
    /// Cap on every other string: title, language, heading path entries,
    /// span symbols and languages, metadata keys.
    pub max_field_bytes: usize,
    /// Cap on one metadata value (frontmatter, resource lists).
    pub max_metadata_value_bytes: usize,
    pub max_spans_per_chunk: usize,
    pub max_blocks_per_chunk: usize,
    pub max_heading_depth: usize,
    pub max_metadata_entries: usize,
}

/// What was wrong with a plugin's output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid plugin output: {0}")]
pub struct InvalidOutput(pub String);

/// What the host knows about the file the output claims to describe.
#[derive(Debug, Clone, Copy)]
pub struct SourceShape {
    /// Number of lines, when the file is text.
    pub lines: Option<u32>,
}

impl SourceShape {
    /// Shape of a file's bytes: its line count when it is UTF-8 text.
    pub fn of(bytes: &[u8]) -> SourceShape {
        SourceShape {
            lines: std::str::from_utf8(bytes)
                .ok()
                .map(|t| t.lines().count().max(1) as u32),
        }
    }
}

/// Highest page (or slide) number accepted in a span.
const MAX_PAGE: u32 = 1_000_000;
/// Highest row of a cells span (a CSV file may be longer than a sheet).
const MAX_ROW: u32 = 1_000_000_000;
/// Highest column of a cells span.
const MAX_COLUMN: u32 = 1_000_000;
/// Highest numbered part (paragraph, chapter, message).
const MAX_PART: u32 = 100_000_000;
/// Farthest pixel edge of a region.
const MAX_PIXEL: u32 = 1_000_000;

/// Validate a document and its chunks against the source file.
pub fn validate(
    doc: &Document,
    chunks: &[Chunk],
    source: SourceShape,
    limits: &OutputLimits,
) -> Result<(), InvalidOutput> {
    count("blocks", doc.blocks.len(), limits.max_blocks, "max_blocks")?;
    count("chunks", chunks.len(), limits.max_chunks, "max_chunks")?;
    count(
        "metadata entries",
        doc.metadata.len(),
        limits.max_metadata_entries,
        "max_metadata_entries",
    )?;
    let mut budget = Budget { limits, total: 0 };
    check_document(doc, source, &mut budget)?;
    check_chunks(doc, chunks, source, &mut budget)
}

/// The output's size so far against the per-text caps and the total cap.
struct Budget<'a> {
    limits: &'a OutputLimits,
    total: usize,
}

impl Budget<'_> {
    /// Count `text` (a `what`, capped at `cap` by config key `cap_name`).
    fn account(
        &mut self,
        what: &str,
        text: &str,
        cap: usize,
        cap_name: &str,
    ) -> Result<(), InvalidOutput> {
        if text.len() > cap {
            return Err(InvalidOutput(format!(
                "{what} is {} bytes (limit {cap}, {cap_name})",
                text.len()
            )));
        }
        self.total += text.len();
        if self.total > self.limits.max_total_bytes {
            return Err(InvalidOutput(format!(
                "output exceeds {} bytes in total (max_output_mb)",
                self.limits.max_total_bytes
            )));
        }
        Ok(())
    }

    /// Count a short label (title, heading, symbol…) under `max_field_bytes`.
    fn field(&mut self, what: &str, text: &str) -> Result<(), InvalidOutput> {
        self.account(what, text, self.limits.max_field_bytes, "max_field_bytes")
    }

    /// Count a block or chunk text under `max_text_kb`.
    fn text(&mut self, text: &str) -> Result<(), InvalidOutput> {
        self.account("text", text, self.limits.max_text_bytes, "max_text_kb")
    }
}

/// The document's fields and blocks.
fn check_document(
    doc: &Document,
    source: SourceShape,
    budget: &mut Budget<'_>,
) -> Result<(), InvalidOutput> {
    let limits = budget.limits;
    for text in doc.title.iter().chain(doc.lang.iter()) {
        budget.field("title or language", text)?;
    }
    for (k, v) in &doc.metadata {
        budget.field("metadata key", k)?;
        budget.account(
            "metadata value",
            v,
            limits.max_metadata_value_bytes,
            "max_metadata_value_kb",
        )?;
    }
    for (i, b) in doc.blocks.iter().enumerate() {
        let at = |m: String| InvalidOutput(format!("block {i}: {m}"));
        budget.text(&b.text).map_err(|e| at(e.0))?;
        for text in b.heading_path.iter().chain(b.lang.iter()) {
            budget
                .field("heading or language", text)
                .map_err(|e| at(e.0))?;
        }
        check_heading_path(&b.heading_path, limits).map_err(at)?;
        check_span(&b.span, source).map_err(at)?;
        for text in span_strings(&b.span) {
            budget.field("span label", text).map_err(|e| at(e.0))?;
        }
        if let Some(level) = b.level
            && !(1..=6).contains(&level)
        {
            return Err(at(format!("heading level {level} outside 1–6")));
        }
    }
    Ok(())
}

/// Every chunk: text, spans, block references, caps, and no twins.
fn check_chunks(
    doc: &Document,
    chunks: &[Chunk],
    source: SourceShape,
    budget: &mut Budget<'_>,
) -> Result<(), InvalidOutput> {
    let limits = budget.limits;
    let fail = |m: String| Err(InvalidOutput(m));
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, c) in chunks.iter().enumerate() {
        let at = |m: String| InvalidOutput(format!("chunk {i}: {m}"));
        budget.text(&c.text).map_err(|e| at(e.0))?;
        if c.text.trim().is_empty() {
            return fail(format!("chunk {i} has no text"));
        }
        for text in &c.heading_path {
            budget.field("heading", text).map_err(|e| at(e.0))?;
        }
        check_heading_path(&c.heading_path, limits).map_err(at)?;
        count(
            "spans",
            c.spans.len(),
            limits.max_spans_per_chunk,
            "max_spans_per_chunk",
        )
        .map_err(|e| at(e.0))?;
        count(
            "blocks",
            c.blocks.len(),
            limits.max_blocks_per_chunk,
            "max_blocks_per_chunk",
        )
        .map_err(|e| at(e.0))?;
        if c.spans.is_empty() {
            return fail(format!("chunk {i} has no source span"));
        }
        for s in &c.spans {
            check_span(s, source).map_err(at)?;
            for text in span_strings(s) {
                budget.field("span label", text).map_err(|e| at(e.0))?;
            }
        }
        if let Some(bad) = c.blocks.iter().find(|&&b| b as usize >= doc.blocks.len()) {
            return fail(format!(
                "chunk {i} refers to block {bad} but the document has {} blocks",
                doc.blocks.len()
            ));
        }
        // The host derives a chunk's ID from its blocks and spans: two
        // chunks with the same of both would be one chunk twice.
        let twins = seen.entry(provenance_hash(c)).or_default();
        if let Some(&first) = twins
            .iter()
            .find(|&&j| chunks[j].blocks == c.blocks && chunks[j].spans == c.spans)
        {
            return fail(format!(
                "duplicate chunk: chunk {i} has the same blocks and spans as chunk {first}"
            ));
        }
        twins.push(i);
    }
    Ok(())
}

/// `what` holds `n` items against the cap `max` (config key `key`).
fn count(what: &str, n: usize, max: usize, key: &str) -> Result<(), InvalidOutput> {
    if n > max {
        return Err(InvalidOutput(format!("{n} {what} (limit {max}, {key})")));
    }
    Ok(())
}

/// The strings a span carries (a code span's symbol and language, a cells
/// span's sheet name).
fn span_strings(span: &SourceSpan) -> impl Iterator<Item = &String> {
    let (first, second) = match span {
        SourceSpan::Code { symbol, lang, .. } => (symbol.as_ref(), lang.as_ref()),
        SourceSpan::Cells { sheet, .. } => (Some(sheet), None),
        _ => (None, None),
    };
    first.into_iter().chain(second)
}

/// A hash of what a chunk's ID is derived from (its blocks and spans).
fn provenance_hash(chunk: &Chunk) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    chunk.blocks.hash(&mut h);
    chunk.spans.hash(&mut h);
    h.finish()
}

fn check_heading_path(path: &[String], limits: &OutputLimits) -> Result<(), String> {
    if path.len() > limits.max_heading_depth {
        return Err(format!(
            "heading path {} deep (limit {}, max_heading_depth)",
            path.len(),
            limits.max_heading_depth
        ));
    }
    Ok(())
}

fn check_span(span: &SourceSpan, source: SourceShape) -> Result<(), String> {
    let ordered = |what: &str, first: u32, last: u32, max: u32| {
        if first == 0 || last < first || last > max {
            Err(format!(
                "{what} {first}–{last} is not a 1-based ascending range up to {max}"
            ))
        } else {
            Ok(())
        }
    };
    match span {
        SourceSpan::Line { start, end } | SourceSpan::Code { start, end, .. } => {
            let (start, end) = (*start, *end);
            if start == 0 || end < start {
                return Err(format!(
                    "line span {start}–{end} is not a 1-based ascending range"
                ));
            }
            match source.lines {
                Some(n) if end > n => Err(format!(
                    "line span {start}–{end} ends past the file's {n} lines"
                )),
                None => Err("line span on a file that is not text".to_string()),
                _ => Ok(()),
            }
        }
        SourceSpan::Page { page } | SourceSpan::Slide { slide: page } => {
            ordered("page", *page, *page, MAX_PAGE)
        }
        SourceSpan::Cells {
            first_row,
            last_row,
            first_column,
            last_column,
            ..
        } => ordered("rows", *first_row, *last_row, MAX_ROW)
            .and_then(|()| ordered("columns", *first_column, *last_column, MAX_COLUMN)),
        SourceSpan::Part { first, last, .. } => ordered("parts", *first, *last, MAX_PART),
        SourceSpan::Region {
            page,
            x,
            y,
            width,
            height,
            confidence,
        } => {
            if let Some(page) = page {
                ordered("page", *page, *page, MAX_PAGE)?;
            }
            let far = [x.checked_add(*width), y.checked_add(*height)];
            if *width == 0 || *height == 0 || far.iter().any(|e| e.is_none_or(|e| e > MAX_PIXEL)) {
                return Err(format!(
                    "region {x},{y},{width},{height} is empty or past {MAX_PIXEL} pixels"
                ));
            }
            if !(0.0..=1.0).contains(&confidence.0) {
                return Err(format!("OCR confidence {} outside 0–1", confidence.0));
            }
            Ok(())
        }
        // Made by the host from an attachment's own output, which was
        // checked against the attachment's bytes before it was wrapped.
        SourceSpan::Attachment { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_core::document::{Block, BlockKind};

    fn lines(start: u32, end: u32) -> SourceSpan {
        SourceSpan::Line { start, end }
    }

    fn doc() -> Document {
        doc_with(lines(1, 3))
    }

    fn doc_with(span: SourceSpan) -> Document {
        Document {
            title: None,
            lang: None,
            blocks: vec![Block {
                kind: BlockKind::Paragraph,
                heading_path: vec![],
                span,
                text: "a\nb\nc".into(),
                level: None,
                lang: None,
            }],
            metadata: vec![],
        }
    }

    fn chunk(span: SourceSpan, blocks: Vec<u32>) -> Chunk {
        Chunk {
            text: "a".into(),
            heading_path: vec![],
            blocks,
            spans: vec![span],
        }
    }

    const SHAPE: SourceShape = SourceShape { lines: Some(3) };

    #[test]
    fn good_output_passes() {
        let l = OutputLimits::default();
        assert_eq!(
            validate(&doc(), &[chunk(lines(1, 3), vec![0])], SHAPE, &l),
            Ok(())
        );
    }

    #[test]
    fn spans_past_the_file_fail() {
        let l = OutputLimits::default();
        let err = validate(&doc(), &[chunk(lines(2, 9), vec![0])], SHAPE, &l).unwrap_err();
        assert!(err.0.contains("past the file's 3 lines"), "{err}");
        assert!(validate(&doc(), &[chunk(lines(0, 1), vec![0])], SHAPE, &l).is_err());
        assert!(validate(&doc(), &[chunk(lines(3, 2), vec![0])], SHAPE, &l).is_err());
    }

    #[test]
    fn block_indices_must_exist() {
        let l = OutputLimits::default();
        let err = validate(&doc(), &[chunk(lines(1, 1), vec![7])], SHAPE, &l).unwrap_err();
        assert!(err.0.contains("block 7"), "{err}");
    }

    #[test]
    fn sizes_are_capped() {
        let l = OutputLimits {
            max_text_bytes: 2,
            ..OutputLimits::default()
        };
        let err = validate(&doc(), &[], SHAPE, &l).unwrap_err();
        assert!(
            err.0
                .contains("block 0: text is 5 bytes (limit 2, max_text_kb)"),
            "{err}"
        );
        let l = OutputLimits {
            max_chunks: 0,
            ..OutputLimits::default()
        };
        assert!(validate(&doc(), &[chunk(lines(1, 1), vec![0])], SHAPE, &l).is_err());
    }

    #[test]
    fn empty_chunks_and_pages_out_of_range_fail() {
        let l = OutputLimits::default();
        let mut c = chunk(lines(1, 1), vec![0]);
        c.text = "  ".into();
        assert!(validate(&doc(), &[c], SHAPE, &l).is_err());
        assert!(
            validate(
                &doc(),
                &[chunk(SourceSpan::Page { page: 0 }, vec![0])],
                SHAPE,
                &l
            )
            .is_err()
        );
        assert!(
            validate(
                &doc(),
                &[chunk(SourceSpan::Page { page: 2 }, vec![0])],
                SHAPE,
                &l
            )
            .is_ok()
        );
    }

    #[test]
    fn spans_of_files_without_lines_are_range_checked() {
        use kebab_core::spans::{Confidence, PartUnit};
        let l = OutputLimits::default();
        let binary = SourceShape { lines: None };
        let check = |span: SourceSpan| {
            validate(&doc_with(span.clone()), &[chunk(span, vec![0])], binary, &l)
        };
        let cells = |rows: (u32, u32), cols: (u32, u32)| SourceSpan::Cells {
            sheet: "S".into(),
            first_row: rows.0,
            last_row: rows.1,
            first_column: cols.0,
            last_column: cols.1,
        };
        let part = |first, last| SourceSpan::Part {
            unit: PartUnit::Paragraph,
            first,
            last,
        };
        let region = |w, c| SourceSpan::Region {
            page: None,
            x: 10,
            y: 10,
            width: w,
            height: 5,
            confidence: Confidence(c),
        };
        for good in [
            SourceSpan::Slide { slide: 3 },
            cells((1, 40), (1, 6)),
            part(12, 18),
            region(100, 0.9),
        ] {
            assert!(check(good.clone()).is_ok(), "{good:?}");
        }
        for bad in [
            SourceSpan::Slide { slide: 0 },
            cells((5, 4), (1, 6)),
            cells((1, 1), (0, 6)),
            part(0, 3),
            part(9, 3),
            region(0, 0.9),
            region(u32::MAX, 0.9),
            region(10, f32::NAN),
            region(10, 1.5),
        ] {
            assert!(check(bad.clone()).is_err(), "{bad:?}");
        }
        assert!(
            check(lines(1, 1)).is_err(),
            "a line span on a binary file is still refused"
        );
    }

    #[test]
    fn twin_chunks_are_a_named_error() {
        let l = OutputLimits::default();
        let twins = [chunk(lines(1, 2), vec![0]), chunk(lines(1, 2), vec![0])];
        let err = validate(&doc(), &twins, SHAPE, &l).unwrap_err();
        assert!(
            err.0
                .contains("duplicate chunk: chunk 1 has the same blocks and spans as chunk 0"),
            "{err}"
        );
        let distinct = [chunk(lines(1, 2), vec![0]), chunk(lines(2, 3), vec![0])];
        assert_eq!(validate(&doc(), &distinct, SHAPE, &l), Ok(()));
    }

    #[test]
    fn every_list_and_string_is_bounded_and_the_limit_named() {
        let l = OutputLimits {
            max_field_bytes: 8,
            max_spans_per_chunk: 2,
            max_blocks_per_chunk: 2,
            ..OutputLimits::default()
        };
        let mut d = doc();
        d.title = Some("a long title".into());
        let err = validate(&d, &[], SHAPE, &l).unwrap_err();
        assert!(err.0.contains("max_field_bytes"), "{err}");

        let mut d = doc();
        d.metadata = vec![("key too long".into(), "v".into())];
        assert!(
            validate(&d, &[], SHAPE, &l)
                .unwrap_err()
                .0
                .contains("metadata key")
        );
        d.metadata = vec![("k".into(), "v".repeat(2 << 20))];
        let err = validate(&d, &[], SHAPE, &l).unwrap_err();
        assert!(err.0.contains("max_metadata_value_kb"), "{err}");

        let mut c = chunk(lines(1, 1), vec![0, 0, 0]);
        let err = validate(&doc(), &[c.clone()], SHAPE, &l).unwrap_err();
        assert!(
            err.0.contains("3 blocks (limit 2, max_blocks_per_chunk)"),
            "{err}"
        );
        c.blocks = vec![0];
        c.spans = vec![lines(1, 1); 3];
        let err = validate(&doc(), &[c.clone()], SHAPE, &l).unwrap_err();
        assert!(
            err.0.contains("3 spans (limit 2, max_spans_per_chunk)"),
            "{err}"
        );
        c.spans = vec![lines(1, 1)];
        c.heading_path = vec!["a heading too long".into()];
        assert!(validate(&doc(), &[c.clone()], SHAPE, &l).is_err());
        c.heading_path = vec![];
        c.spans = vec![SourceSpan::Code {
            start: 1,
            end: 1,
            symbol: Some("s".repeat(9)),
            lang: None,
        }];
        assert!(
            validate(&doc(), &[c], SHAPE, &l)
                .unwrap_err()
                .0
                .contains("span label")
        );
    }
}
