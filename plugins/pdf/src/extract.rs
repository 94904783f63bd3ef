//! PDF bytes → one page block per page with text.

use kebab_plugin_sdk::{Block, BlockKind, Document, PluginError, Span};
use lopdf::{Document as Pdf, Object};

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
    for &number in pages.keys() {
        let text = page_text(&pdf, number)?;
        let text = tidy(&text);
        if text.is_empty() {
            continue;
        }
        blocks.push(Block {
            kind: BlockKind::Page,
            heading_path: Vec::new(),
            span: Span::Page(number),
            text,
            level: None,
            lang: None,
        });
    }
    if blocks.is_empty() {
        return Err(PluginError::Malformed(format!(
            "no text layer ({} pages, image-only or scanned PDF)",
            pages.len()
        )));
    }
    Ok(Document {
        title,
        lang: None,
        blocks,
        metadata: vec![("page_count".into(), pages.len().to_string())],
    })
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
