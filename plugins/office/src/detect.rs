//! What a file is, read from its bytes (the extension is only a hint for
//! messages): a ZIP package (Office Open XML or OpenDocument), an OLE
//! compound file (legacy Word or PowerPoint, or a password-protected
//! Office Open XML file), RTF (a fragment without its `\rtf1` header
//! too), one of the single-XML formats (flat OpenDocument, Word 2003
//! XML), or something recognisably unreadable (a web page saved as .doc,
//! a Word 1/2 or DOS document).

use kebab_plugin_sdk::archive::is_compound_file;

/// The container a file's bytes are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Container {
    Zip,
    Ole,
    Rtf,
    /// A flat OpenDocument file (`office:document`).
    FlatOdf,
    /// A Word 2003 XML document (`w:wordDocument`).
    WordMl,
    /// A web page (HTML or MHTML), often saved by Word under a `.doc` name.
    WebPage,
    /// A Word for Windows 1/2 or Word for DOS document.
    AncientWord,
    Unknown,
}

/// How much of the start of a text file is searched for its root element.
const SNIFF_BYTES: usize = 64 << 10;

/// The container of `bytes`.
pub fn container(bytes: &[u8]) -> Container {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return Container::Zip;
    }
    if is_compound_file(bytes) {
        return Container::Ole;
    }
    if bytes.starts_with(&[0x9B, 0xA5])
        || bytes.starts_with(&[0xDB, 0xA5])
        || bytes.starts_with(&[0x31, 0xBE, 0x00, 0x00])
    {
        return Container::AncientWord;
    }
    let head = crate::xml::decode(&bytes[..bytes.len().min(SNIFF_BYTES)]);
    let text = head.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with("{\\") {
        return Container::Rtf;
    }
    if text.starts_with('<') {
        let lower = text.to_ascii_lowercase();
        if lower.contains("<office:document") {
            return Container::FlatOdf;
        }
        if lower.contains("<w:worddocument") {
            return Container::WordMl;
        }
        if lower.contains("<html") {
            return Container::WebPage;
        }
    }
    if text.starts_with("MIME-Version:") {
        return Container::WebPage;
    }
    Container::Unknown
}

/// The file's extension, lowercased (`docx`), or empty.
pub fn extension(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_are_told_by_content() {
        assert_eq!(container(b"PK\x03\x04rest"), Container::Zip);
        assert_eq!(
            container(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0]),
            Container::Ole
        );
        assert_eq!(container(b"\xef\xbb\xbf {\\rtf1\\ansi}"), Container::Rtf);
        assert_eq!(container(b"{\\pard fragment\\par}"), Container::Rtf);
        assert_eq!(
            container(b"<?xml version=\"1.0\"?>\n<office:document office:version=\"1.3\">"),
            Container::FlatOdf
        );
        assert_eq!(
            container(b"<html><body>x</body></html>"),
            Container::WebPage
        );
        assert_eq!(container(b"plain text"), Container::Unknown);
        assert_eq!(container(&[0xDB, 0xA5, 0x2D, 0]), Container::AncientWord);
        assert_eq!(container(b""), Container::Unknown);
    }

    #[test]
    fn extensions() {
        assert_eq!(extension("a/b/Report.DOCX"), "docx");
        assert_eq!(extension("noext"), "");
    }
}
