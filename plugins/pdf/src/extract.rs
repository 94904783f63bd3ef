//! PDF bytes → one page block per page with a text layer, and paragraph
//! blocks read by OCR from the pages without one (see [`crate::ocr`]).

use kebab_plugin_sdk::{Block, BlockKind, Document, PluginError, Span};
use lopdf::{Document as Pdf, Object};

use crate::ocr::Scans;

/// A page whose text layer has fewer visible characters than this (none,
/// or a stray page number or scanner stamp) is read by OCR; what text it
/// has is kept beside what OCR reads.
pub const MIN_TEXT_LAYER_CHARS: usize = 16;

/// Parse a PDF into page blocks.
pub fn parse(bytes: &[u8]) -> Result<Document, PluginError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(PluginError::Malformed("not a PDF (no %PDF- header)".into()));
    }
    let mut pdf =
        Pdf::load_mem(bytes).map_err(|e| PluginError::Malformed(format!("corrupt PDF: {e}")))?;
    if pdf.is_encrypted() && pdf.decrypt("").is_err() {
        return Err(PluginError::Unsupported(
            "encrypted PDF (a password is required)".into(),
        ));
    }
    let title = info_title(&pdf);
    let pages = pdf.get_pages();
    let mut blocks = Vec::new();
    let mut scans = Scans::default();
    for (&number, &page_id) in &pages {
        let text = tidy(&page_text(&pdf, number)?);
        if !text.is_empty() {
            blocks.push(page_block(number, text.clone()));
        }
        if !has_text_layer(&text) {
            blocks.extend(scans.read_page(&pdf, number, page_id));
        }
    }
    if blocks.is_empty() {
        return Err(scans.failure(pages.len()));
    }
    scans.report_skipped();
    let mut metadata = vec![("page_count".into(), pages.len().to_string())];
    if scans.candidates > 0 {
        metadata.push(("ocr_pages".into(), scans.read.to_string()));
    }
    Ok(Document {
        title,
        lang: None,
        blocks,
        metadata,
    })
}

fn page_block(number: u32, text: String) -> Block {
    Block {
        kind: BlockKind::Page,
        heading_path: Vec::new(),
        span: Span::Page(number),
        text,
        level: None,
        lang: None,
    }
}

/// Whether a page's text has at least [`MIN_TEXT_LAYER_CHARS`] visible
/// characters.
fn has_text_layer(text: &str) -> bool {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .take(MIN_TEXT_LAYER_CHARS)
        .count()
        >= MIN_TEXT_LAYER_CHARS
}

fn page_text(pdf: &Pdf, number: u32) -> Result<String, PluginError> {
    let mut out = String::new();
    let mut sink = pdf_extract::PlainTextOutput::new(&mut out);
    pdf_extract::output_doc_page(pdf, &mut sink, number)
        .map_err(|e| PluginError::Malformed(format!("page {number}: {e}")))?;
    Ok(out)
}

/// Trim trailing spaces, collapse runs of blank lines, drop edge blanks.
fn tidy(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(if line.trim().is_empty() { "" } else { line });
    }
    while out.last() == Some(&"") {
        out.pop();
    }
    out.join("\n")
}

/// `/Title` from the document information dictionary.
fn info_title(pdf: &Pdf) -> Option<String> {
    let info = pdf.trailer.get(b"Info").ok()?;
    let dict = match info {
        Object::Reference(id) => pdf.get_object(*id).ok()?.as_dict().ok()?,
        Object::Dictionary(d) => d,
        _ => return None,
    };
    let Object::String(raw, _) = dict.get(b"Title").ok()? else {
        return None;
    };
    let title = decode_text_string(raw);
    let title = title.trim();
    (!title.is_empty()).then(|| title.to_string())
}

/// PDF text strings: UTF-16BE with a byte-order mark, else PDFDocEncoding
/// (Latin-1 for the printable range).
fn decode_text_string(raw: &[u8]) -> String {
    if let Some(body) = raw.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = body
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    raw.iter().map(|&b| b as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_strings_decode() {
        assert_eq!(decode_text_string(b"Plain"), "Plain");
        assert_eq!(
            decode_text_string(&[0xFE, 0xFF, 0xD5, 0x5C, 0xAE, 0x00]),
            "한글"
        );
    }

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("\n\na  \n\n\n\nb\n\n"), "a\n\nb");
    }

    #[test]
    fn garbage_is_refused_clearly() {
        assert!(
            matches!(parse(b"hello"), Err(PluginError::Malformed(m)) if m.contains("not a PDF"))
        );
        assert!(
            matches!(parse(b"%PDF-1.4\ngarbage"), Err(PluginError::Malformed(m)) if m.contains("corrupt"))
        );
    }
}
