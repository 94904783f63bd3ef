//! Checks on plugin output before anything is stored: spans inside the file,
//! block indices in range, bounded sizes. Invalid output is that file's
//! error, never a crash and never a half-written document.

use super::{Chunk, Document, Span};

/// Size bounds on what one plugin call may return.
#[derive(Debug, Clone, Copy)]
pub struct OutputLimits {
    pub max_blocks: usize,
    pub max_chunks: usize,
    /// Cap on any single block or chunk text.
    pub max_text_bytes: usize,
    /// Cap on all strings of the output together.
    pub max_total_bytes: usize,
    pub max_heading_depth: usize,
    pub max_metadata_entries: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            max_blocks: 200_000,
            max_chunks: 100_000,
            max_text_bytes: 4 << 20,
            max_total_bytes: 256 << 20,
            max_heading_depth: 32,
            max_metadata_entries: 1_000,
        }
    }
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

/// Highest page number accepted in a page span.
const MAX_PAGE: u32 = 1_000_000;

/// Validate a document and its chunks against the source file.
pub fn validate(
    doc: &Document,
    chunks: &[Chunk],
    source: SourceShape,
    limits: &OutputLimits,
) -> Result<(), InvalidOutput> {
    let fail = |m: String| Err(InvalidOutput(m));
    if doc.blocks.len() > limits.max_blocks {
        return fail(format!(
            "{} blocks (limit {})",
            doc.blocks.len(),
            limits.max_blocks
        ));
    }
    if chunks.len() > limits.max_chunks {
        return fail(format!(
            "{} chunks (limit {})",
            chunks.len(),
            limits.max_chunks
        ));
    }
    if doc.metadata.len() > limits.max_metadata_entries {
        return fail(format!(
            "{} metadata entries (limit {})",
            doc.metadata.len(),
            limits.max_metadata_entries
        ));
    }
    let mut total = 0usize;
    let mut account = |what: &str, text: &str| -> Result<(), InvalidOutput> {
        if text.len() > limits.max_text_bytes {
            return Err(InvalidOutput(format!(
                "{what} is {} bytes (limit {})",
                text.len(),
                limits.max_text_bytes
            )));
        }
        total += text.len();
        if total > limits.max_total_bytes {
            return Err(InvalidOutput(format!(
                "output exceeds {} bytes in total",
                limits.max_total_bytes
            )));
        }
        Ok(())
    };
    for (k, v) in &doc.metadata {
        account("metadata entry", k)?;
        account("metadata entry", v)?;
    }
    for (i, b) in doc.blocks.iter().enumerate() {
        account(&format!("block {i} text"), &b.text)?;
        check_heading_path(&b.heading_path, limits)
            .map_err(|m| InvalidOutput(format!("block {i}: {m}")))?;
        check_span(&b.span, source).map_err(|m| InvalidOutput(format!("block {i}: {m}")))?;
        if let Some(level) = b.level
            && !(1..=6).contains(&level)
        {
            return fail(format!("block {i}: heading level {level} outside 1–6"));
        }
    }
    for (i, c) in chunks.iter().enumerate() {
        account(&format!("chunk {i} text"), &c.text)?;
        if c.text.trim().is_empty() {
            return fail(format!("chunk {i} has no text"));
        }
        check_heading_path(&c.heading_path, limits)
            .map_err(|m| InvalidOutput(format!("chunk {i}: {m}")))?;
        if c.spans.is_empty() {
            return fail(format!("chunk {i} has no source span"));
        }
        for s in &c.spans {
            check_span(s, source).map_err(|m| InvalidOutput(format!("chunk {i}: {m}")))?;
        }
        if let Some(bad) = c.blocks.iter().find(|&&b| b as usize >= doc.blocks.len()) {
            return fail(format!(
                "chunk {i} refers to block {bad} but the document has {} blocks",
                doc.blocks.len()
            ));
        }
    }
    Ok(())
}

fn check_heading_path(path: &[String], limits: &OutputLimits) -> Result<(), String> {
    if path.len() > limits.max_heading_depth {
        return Err(format!(
            "heading path {} deep (limit {})",
            path.len(),
            limits.max_heading_depth
        ));
    }
    Ok(())
}

fn check_span(span: &Span, source: SourceShape) -> Result<(), String> {
    match span.line_bounds() {
        Some((start, end)) => {
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
        None => match span {
            Span::Page(p) if *p == 0 || *p > MAX_PAGE => Err(format!("page {p} out of range")),
            _ => Ok(()),
        },
    }
}

impl Span {
    /// First and last 1-based line of a line-based span; `None` for pages.
    pub fn line_bounds(&self) -> Option<(u32, u32)> {
        match self {
            Span::Lines(r) => Some((r.start, r.end)),
            Span::Code(c) => Some((c.start, c.end)),
            Span::Page(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Block, BlockKind, LineRange};
    use super::*;

    fn lines(s: u32, e: u32) -> Span {
        Span::Lines(LineRange { start: s, end: e })
    }

    fn doc() -> Document {
        Document {
            title: None,
            lang: None,
            blocks: vec![Block {
                kind: BlockKind::Paragraph,
                heading_path: vec![],
                span: lines(1, 3),
                text: "a\nb\nc".into(),
                level: None,
                lang: None,
            }],
            metadata: vec![],
        }
    }

    fn chunk(span: Span, blocks: Vec<u32>) -> Chunk {
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
        assert!(err.0.contains("block 0 text is 5 bytes"), "{err}");
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
        assert!(validate(&doc(), &[chunk(Span::Page(0), vec![0])], SHAPE, &l).is_err());
        assert!(validate(&doc(), &[chunk(Span::Page(2), vec![0])], SHAPE, &l).is_ok());
    }
}
