//! A plugin written against the frozen `wit/v1.0.0` contract with
//! `wit-bindgen` directly, as a third party that never updated would have:
//! `*.note` files, one block per blank-line paragraph (the first line is the
//! title, a paragraph starting with `$` is shell code cited with a code
//! span), one chunk per paragraph, and a log line per parse. The test suite
//! installs it into a host whose newest contract is later than 1.0.0.

wit_bindgen::generate!({
    world: "plugin",
    path: "../../../wit/v1.0.0",
});

use exports::kebab::plugin::parser::Guest;
#[cfg(target_arch = "wasm32")]
use kebab::plugin::log::{Level, log};
use kebab::plugin::types::{
    Block, BlockKind, Chunk, ChunkPolicy, CodeSpan, Document, Error, LineRange, PluginInfo, Span,
};

/// The plugin type exported to the host.
pub struct Legacy;

impl Guest for Legacy {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "legacy".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "legacy-parser-v1".into(),
            chunker_version: "legacy-paragraph-v1".into(),
            handles: vec!["*.note".into()],
            accepts_binary: false,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, Error> {
        let text = String::from_utf8(bytes).map_err(|_| Error::Malformed("not UTF-8".into()))?;
        let title = text.lines().next().map(|l| l.trim().to_string());
        let mut blocks = Vec::new();
        for (start, end, body) in paragraphs(&text) {
            let (kind, span, lang) = if body.starts_with('$') {
                let span = Span::Code(CodeSpan {
                    start,
                    end,
                    symbol: None,
                    lang: Some("shell".into()),
                });
                (BlockKind::Code, span, Some("shell".to_string()))
            } else {
                (
                    BlockKind::Paragraph,
                    Span::Lines(LineRange { start, end }),
                    None,
                )
            };
            blocks.push(Block {
                kind,
                heading_path: title.iter().cloned().collect(),
                span,
                text: body,
                level: None,
                lang,
            });
        }
        #[cfg(target_arch = "wasm32")]
        log(Level::Info, &format!("{} paragraphs", blocks.len()));
        Ok(Document {
            title,
            lang: None,
            blocks,
            metadata: vec![("format".into(), "note".into())],
        })
    }

    fn chunk_document(doc: Document, _policy: ChunkPolicy) -> Result<Vec<Chunk>, Error> {
        Ok(doc
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| Chunk {
                text: b.text.clone(),
                heading_path: b.heading_path.clone(),
                blocks: vec![i as u32],
                spans: vec![b.span.clone()],
            })
            .collect())
    }
}

/// `(first line, last line, text)` of each blank-line-separated paragraph.
fn paragraphs(text: &str) -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    let mut open: Option<(u32, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        if line.trim().is_empty() {
            if let Some((first, lines)) = open.take() {
                out.push((first, n - 1, lines.join("\n")));
            }
        } else {
            open.get_or_insert((n, Vec::new())).1.push(line);
        }
    }
    if let Some((first, lines)) = open {
        let last = first + lines.len() as u32 - 1;
        out.push((first, last, lines.join("\n")));
    }
    out
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
export!(Legacy);
