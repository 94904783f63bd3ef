//! A plugin that misbehaves on purpose, for the host's sandbox tests.
//!
//! It claims `*.hostile` files and acts on the first word of the file:
//!
//! - in `parse`: `SLEEPPARSE` sleeps 60 s (a WASI clock poll, not wasm),
//!   `BIGTITLE` returns a 2 MiB title, `LONGERROR` fails with a 1 MiB
//!   message full of terminal escapes, `RECURSE` recurses until the stack
//!   overflows;
//! - in `chunk-document`: `TRAP` panics, `LOOP` spins forever, `SLEEP`
//!   sleeps 60 s, `ALLOC` allocates until refused, `BADSPAN` cites lines
//!   past the end of the file, `BADBLOCK` points a chunk at a block that
//!   does not exist, `EMPTY` returns no chunks, `LOGSPAM` calls `log` a
//!   million times, `BIGTEXT` returns a 100 MB chunk, `DUPCHUNK` returns
//!   the same chunk twice, `MANYBLOCKS` a chunk listing 20 million blocks,
//!   `MANYSPANS` a chunk with 100 000 spans, `ESCAPES` logs a line and names
//!   a heading with ANSI escapes and carriage returns;
//!
//! anything else is parsed as one honest paragraph.
//!
//! `info()` can be rewritten without rebuilding: the component holds a
//! block of bytes starting with [`OVERRIDE_MARKER`] that tests patch in the
//! `.wasm` file (same length, so the component stays valid) with
//! `key=value;` pairs: `name`, `version`, `handles` (comma-separated),
//! `handles_count` (that many generated patterns), `sleep_ms` (sleep inside
//! `info()`).

use kebab_plugin_sdk::{
    Block, BlockKind, Chunk, ChunkPolicy, Document, Guest, LogLevel, PluginError, PluginInfo, Span,
    log,
};

/// The plugin type exported to the host.
pub struct HostilePlugin;

/// The bytes a test looks for to patch `info()`.
pub const OVERRIDE_MARKER: &[u8] = b"KEBAB-HOSTILE-INFO-OVERRIDE:";
/// Size of the patchable block, marker included.
pub const OVERRIDE_LEN: usize = 4096;

const fn override_block() -> [u8; OVERRIDE_LEN] {
    let mut block = [b' '; OVERRIDE_LEN];
    let mut i = 0;
    while i < OVERRIDE_MARKER.len() {
        block[i] = OVERRIDE_MARKER[i];
        i += 1;
    }
    block
}

/// Patched in the compiled component by tests; spaces mean "no override".
static INFO_OVERRIDE: [u8; OVERRIDE_LEN] = override_block();

/// The `key=value;` pairs patched after the marker.
fn overrides() -> Vec<(String, String)> {
    // black_box: the optimiser must read the bytes, not fold the constant.
    let block: &[u8; OVERRIDE_LEN] = std::hint::black_box(&INFO_OVERRIDE);
    let text = String::from_utf8_lossy(&block[OVERRIDE_MARKER.len()..]);
    text.trim()
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect()
}

fn sleep_60s() {
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// A depth the recursion never reaches, read at run time so the optimiser
/// can neither prove termination nor turn the recursion into a loop.
static NEVER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Recursion on the wasm call stack (locals only, no address taken, so no
/// shadow-stack frame): overflows wasmtime's native stack limit.
fn recurse(depth: u64) -> u64 {
    if depth == NEVER.load(std::sync::atomic::Ordering::Relaxed) {
        return 0;
    }
    recurse(depth + 1).wrapping_mul(31).wrapping_add(depth)
}

fn behaviour(doc: &Document) -> &str {
    doc.blocks
        .first()
        .and_then(|b| b.text.split_whitespace().next())
        .unwrap_or("")
}

impl Guest for HostilePlugin {
    fn info() -> PluginInfo {
        let mut info = PluginInfo {
            name: "hostile".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "hostile-v1".into(),
            chunker_version: "hostile-chunker-v1".into(),
            handles: vec!["*.hostile".into()],
            accepts_binary: false,
        };
        for (key, value) in overrides() {
            match key.as_str() {
                "name" => info.name = value,
                "version" => info.version = value,
                "handles" => info.handles = value.split(',').map(String::from).collect(),
                "handles_count" => {
                    let n: usize = value.parse().unwrap_or(0);
                    info.handles = (0..n).map(|i| format!("*.h{i}")).collect();
                }
                "sleep_ms" => {
                    std::thread::sleep(std::time::Duration::from_millis(value.parse().unwrap_or(0)))
                }
                _ => {}
            }
        }
        info
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        let text = String::from_utf8(bytes).map_err(|e| PluginError::Malformed(e.to_string()))?;
        let lines = text.lines().count().max(1) as u32;
        let mut title = None;
        match text.split_whitespace().next().unwrap_or("") {
            "SLEEPPARSE" => sleep_60s(),
            "BIGTITLE" => title = Some("t".repeat(2 << 20)),
            "LONGERROR" => {
                return Err(PluginError::Malformed(
                    "\u{1b}[2J\u{1b}[31mforged\r\n".repeat(1 << 16),
                ));
            }
            "RECURSE" => {
                title = Some(recurse(0).to_string());
            }
            _ => {}
        }
        Ok(Document {
            title,
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
        let mut heading_path = Vec::new();
        let mut spans_extra = 0;
        match behaviour(&doc) {
            "TRAP" => panic!("hostile plugin: deliberate trap"),
            "LOOP" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "SLEEP" => sleep_60s(),
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
                    heading_path,
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
            "DUPCHUNK" => {
                let twin = Chunk {
                    text: doc.blocks[0].text.clone(),
                    heading_path: Vec::new(),
                    blocks: blocks.clone(),
                    spans: vec![span.clone()],
                };
                return Ok(vec![twin.clone(), twin]);
            }
            "MANYBLOCKS" => blocks = vec![0; 20_000_000],
            "MANYSPANS" => spans_extra = 100_000,
            "ESCAPES" => {
                log(
                    LogLevel::Warn,
                    "\u{1b}[2J\u{1b}[1;1Hforged line\r\nerror: fake",
                );
                heading_path = vec!["\u{1b}[31mred\u{1b}[0m\rheading".to_string()];
            }
            _ => {}
        }
        let mut spans = vec![span.clone()];
        spans.extend(std::iter::repeat_n(span, spans_extra));
        Ok(vec![Chunk {
            text: doc.blocks[0].text.clone(),
            heading_path,
            blocks,
            spans,
        }])
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(HostilePlugin);
