//! A plugin that misbehaves on purpose, for the host's sandbox tests.
//!
//! It claims `*.hostile` files and acts on the first word of the file:
//! `TRAP` panics, `LOOP` spins forever, `ALLOC` allocates until refused,
//! `BADSPAN` cites lines past the end of the file, `BADBLOCK` points a chunk
//! at a block that does not exist, `EMPTY` returns no chunks, `LOGSPAM` calls
//! `log` a million times, `BIGTEXT` returns a 100 MB chunk; anything else is
//! parsed as one honest paragraph.

use kebab_plugin_sdk::{
    Block, BlockKind, Chunk, ChunkPolicy, Document, Guest, LogLevel, PluginError, PluginInfo, Span,
    log,
};

/// The plugin type exported to the host.
pub struct HostilePlugin;

fn behaviour(doc: &Document) -> &str {
    doc.blocks
        .first()
        .and_then(|b| b.text.split_whitespace().next())
        .unwrap_or("")
}

impl Guest for HostilePlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "hostile".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "hostile-v1".into(),
            chunker_version: "hostile-chunker-v1".into(),
            handles: vec!["*.hostile".into()],
            accepts_binary: false,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        let text = String::from_utf8(bytes).map_err(|e| PluginError::Malformed(e.to_string()))?;
        let lines = text.lines().count().max(1) as u32;
        Ok(Document {
            title: None,
            lang: None,
            blocks: vec![Block {
                kind: BlockKind::Paragraph,
                heading_path: Vec::new(),
                span: Span::lines(1, lines),
                text,
                level: None,
                lang: None,
            }],
            metadata: Vec::new(),
        })
    }

    fn chunk_document(doc: Document, _policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        let (_, end) = doc.blocks[0].span.line_bounds().unwrap_or((1, 1));
        let mut span = Span::lines(1, end);
        let mut blocks = vec![0];
        match behaviour(&doc) {
            "TRAP" => panic!("hostile plugin: deliberate trap"),
            "LOOP" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "ALLOC" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(std::hint::black_box(vec![1u8; 16 << 20]));
                }
            }
            "BADSPAN" => span = Span::lines(1, end + 1000),
            "BADBLOCK" => blocks = vec![7],
            "BIGTEXT" => {
                return Ok(vec![Chunk {
                    text: "x".repeat(100 << 20),
                    heading_path: Vec::new(),
                    blocks,
                    spans: vec![span],
                }]);
            }
            "EMPTY" => return Ok(Vec::new()),
            "LOGSPAM" => {
                for i in 0..1_000_000 {
                    log(LogLevel::Info, &format!("spam {i}"));
                }
            }
            _ => {}
        }
        Ok(vec![Chunk {
            text: doc.blocks[0].text.clone(),
            heading_path: Vec::new(),
            blocks,
            spans: vec![span],
        }])
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(HostilePlugin);
