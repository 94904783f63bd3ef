//! The `office` plugin: word-processing documents by paragraph and
//! presentations by slide.
//!
//! - Word (`.docx`, `.docm`, `.dotx`, `.dotm`, Word 2003 XML), OpenDocument
//!   text (`.odt`, `.ott`, `.fodt`), RTF and legacy Word (`.doc`, `.dot`):
//!   paragraphs numbered in reading order (`Span::Part{unit: Paragraph}`),
//!   headings as heading paths, tables as `| a | b |` rows, then headers,
//!   footers, footnotes, endnotes and comments under their own paths.
//! - PowerPoint (`.pptx`, `.pptm`, `.ppsx`, `.ppsm`, `.potx`), OpenDocument
//!   presentations (`.odp`, `.otp`, `.fodp`) and legacy PowerPoint
//!   (`.ppt`, `.pps`): one document per file, blocks per slide in
//!   presentation order (`Span::Slide(n)`), speaker notes included.
//!
//! Files are told apart by their bytes (ZIP package, OLE compound file,
//! RTF, flat XML), the extension serving only in messages: a file that is
//! not what its name claims is read for what it is, or refused as
//! malformed when it is nothing this plugin reads. Password-protected
//! files are refused as unsupported, with the remedy.

mod bytes;
mod chunker;
mod codepage;
mod detect;
mod doc;
mod docx;
mod flow;
mod limits;
mod meta;
mod numbers;
mod odf;
mod ole;
mod opc;
mod ppt;
mod pptx;
mod rtf;
mod slides;
mod textdoc;
mod xml;

use kebab_plugin_sdk::archive::Archive;
use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo};

use detect::Container;
use opc::Package;

/// The label of the parser's behaviour, stored with every document.
pub const PARSER_VERSION: &str = "office-v1";

/// The files this plugin claims.
const HANDLES: [&str; 20] = [
    "*.docx", "*.docm", "*.dotx", "*.dotm", "*.odt", "*.ott", "*.fodt", "*.rtf", "*.doc", "*.dot",
    "*.pptx", "*.pptm", "*.ppsx", "*.ppsm", "*.potx", "*.odp", "*.otp", "*.fodp", "*.ppt", "*.pps",
];

/// The plugin type exported to the host.
pub struct Plugin;

impl Guest for Plugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "office".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: PARSER_VERSION.into(),
            chunker_version: chunker::CHUNKER_VERSION.into(),
            handles: HANDLES.iter().map(|h| h.to_string()).collect(),
            accepts_binary: true,
        }
    }

    fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        parse(&path, &bytes)
    }

    fn chunk_document(doc: Document, policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(chunker::chunk(&doc, &policy))
    }
}

/// Parse the file at `path` (used in messages) holding `bytes`.
pub fn parse(path: &str, bytes: &[u8]) -> Result<Document, PluginError> {
    let ext = detect::extension(path);
    if bytes.is_empty() {
        return Err(PluginError::Malformed("the file is empty".into()));
    }
    match detect::container(bytes) {
        Container::Zip => parse_zip(bytes, &ext),
        Container::Ole => parse_ole(bytes, &ext),
        Container::Rtf => rtf::parse(bytes),
        Container::FlatOdf => odf::parse_flat(bytes),
        Container::WordMl => docx::parse_wordml(&xml::decode(bytes)),
        Container::AncientWord => Err(PluginError::Unsupported(format!(
            "this .{ext} file is a Word 1/2 or Word for DOS document: open it in Word or LibreOffice and save as .docx"
        ))),
        Container::WebPage => Err(PluginError::Unsupported(format!(
            "this .{ext} file is a web page (HTML): rename it to .html and ingest again"
        ))),
        Container::Unknown => Err(PluginError::Malformed(format!(
            "this .{ext} file is not a Word, PowerPoint, OpenDocument or RTF file (no known signature)"
        ))),
    }
}

/// Chunk a parsed document (the plugin's chunker, callable natively).
pub fn chunk(doc: &Document, policy: &ChunkPolicy) -> Vec<Chunk> {
    chunker::chunk(doc, policy)
}

/// A ZIP package: OpenDocument, or Office Open XML by its main part.
fn parse_zip(bytes: &[u8], ext: &str) -> Result<Document, PluginError> {
    let archive = Archive::open(bytes)?;
    if archive.contains("mimetype") || archive.contains("content.xml") {
        return odf::parse_package(archive);
    }
    let mut package = Package::new(archive);
    let main = package.rel_target("", "officeDocument")?;
    let main = main.as_deref().unwrap_or_else(|| {
        if package.contains("ppt/presentation.xml") {
            "ppt/presentation.xml"
        } else {
            "word/document.xml"
        }
    });
    if main.starts_with("ppt/") {
        pptx::parse(package)
    } else if main.starts_with("word/") {
        docx::parse(package)
    } else if main.starts_with("xl/") {
        Err(PluginError::Malformed(format!(
            "this .{ext} file is an Excel workbook, not a Word or PowerPoint file"
        )))
    } else {
        Err(PluginError::Malformed(format!(
            "this .{ext} file is a ZIP archive but not a Word, PowerPoint or OpenDocument package"
        )))
    }
}

/// An OLE compound file: legacy Word or PowerPoint, or an encrypted
/// package.
fn parse_ole(bytes: &[u8], ext: &str) -> Result<Document, PluginError> {
    let mut file = ole::open(bytes)?;
    match ole::content(&file) {
        ole::Content::EncryptedPackage => Err(PluginError::Unsupported(
            "encrypted (password-protected) Office file: remove the password and ingest again"
                .into(),
        )),
        ole::Content::Word => doc::parse(&mut file),
        ole::Content::PowerPoint => ppt::parse(&mut file),
        ole::Content::Excel => Err(PluginError::Malformed(format!(
            "this .{ext} file is a legacy Excel workbook, not a Word or PowerPoint file"
        ))),
        ole::Content::Other => Err(PluginError::Malformed(format!(
            "this .{ext} file is an OLE compound file without a Word or PowerPoint stream"
        ))),
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(Plugin);
