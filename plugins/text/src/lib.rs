//! The `text` plugin: plain text, logs and shell scripts, and the fallback the
//! host uses for any file another plugin fails on.
//!
//! Chunker `code-text-paragraph-v1`: blank-line paragraphs; a paragraph longer
//! than 80 lines is cut into 80-line windows overlapping by 20 lines. The
//! language label comes from the file name, so a Rust or YAML file that falls
//! back here keeps its label. Setting `lang` (`[plugins.config.text]`) labels
//! every document it parses with that natural language (`en`, `ko`).
//!
//! Any text file up to the host's size cap is indexed, in time linear in its
//! size: the parse cuts it into blocks of at most [`BLOCK_BYTES`] (at a blank
//! line when one comes after half of that, else at a line end; a single
//! longer line is cut at character boundaries into blocks citing that line),
//! and chunks are sliced through a line index, never by rescanning the text.

use kebab_plugin_sdk::text::{LineIndex, line_windows, paragraphs};
use kebab_plugin_sdk::{
    Block, BlockKind, Chunk, ChunkPolicy, CodeSpan, Document, Guest, PluginError, PluginInfo, Span,
};

/// Lines per window for paragraphs longer than this.
pub const WINDOW_LINES: u32 = 80;
/// Lines shared by consecutive windows.
pub const WINDOW_OVERLAP: u32 = 20;
/// Largest block the parse makes (well under the host's per-text cap).
pub const BLOCK_BYTES: usize = 1 << 20;
/// The chunker label stored with every chunk this plugin makes.
pub const CHUNKER_VERSION: &str = "code-text-paragraph-v1";

/// The plugin type exported to the host.
pub struct TextPlugin;

impl Guest for TextPlugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "text".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "none-v1".into(),
            chunker_version: CHUNKER_VERSION.into(),
            handles: ["*.txt", "*.text", "*.log", "*.sh", "*.bash", "*.zsh"]
                .map(String::from)
                .to_vec(),
            accepts_binary: false,
        }
    }

    fn parse(path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        parse(&path, &bytes)
    }

    fn chunk_document(doc: Document, _policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        Ok(chunk(&doc))
    }
}

// Exported only in the component: the export names are not valid native symbols.
#[cfg(target_arch = "wasm32")]
kebab_plugin_sdk::export_plugin!(TextPlugin);

/// Extensions of prose and markup read as plain paragraphs (no label).
const PROSE: &[&str] = &[
    "txt", "text", "log", "rst", "adoc", "asciidoc", "org", "tex", "me", "1st", "nfo",
];

/// The language label of a file: from its name (a known extension, else
/// the extension itself), else from a `#!` line (`#!/usr/bin/env python3`
/// → `python`). `None` for prose (`.txt`, `.log`, `.rst`, …) and for files
/// with neither, which are cited by plain line ranges.
pub fn lang_label(path: &str, text: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "Dockerfile" || name.starts_with("Dockerfile.") {
        return Some("dockerfile".into());
    }
    if matches!(name, "Makefile" | "GNUmakefile" | "makefile") {
        return Some("makefile".into());
    }
    match name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()) {
        Some(ext) if PROSE.contains(&ext.as_str()) => None,
        Some(ext) => Some(known_extension(&ext).map_or(ext, String::from)).filter(|label| {
            label.len() <= 16 && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }),
        None => shebang_label(text),
    }
}

/// The label kebab uses for a well-known extension.
fn known_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "sh" | "bash" | "zsh" => "shell",
        "rs" => "rust",
        "py" => "python",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "c" | "h" => "c",
        "cpp" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "markdown",
        "htm" | "html" | "xhtml" => "html",
        "mk" => "makefile",
        _ => return None,
    })
}

/// The interpreter a `#!` first line names, as a label.
fn shebang_label(text: &str) -> Option<String> {
    let line = text.lines().next()?.strip_prefix("#!")?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        program = words.find(|w| !w.starts_with('-'))?;
    }
    let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(
        match program {
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" => "shell",
            "node" | "deno" | "bun" => "javascript",
            "python" | "pypy" => "python",
            other => other,
        }
        .to_string(),
    )
    .filter(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Parse any UTF-8 file into blocks of at most [`BLOCK_BYTES`].
pub fn parse(path: &str, bytes: &[u8]) -> Result<Document, PluginError> {
    let text = kebab_plugin_sdk::utf8(bytes)?;
    let lang = lang_label(path, text);
    let kind = if lang.is_some() {
        BlockKind::Code
    } else {
        BlockKind::Paragraph
    };
    let blocks = if text.trim().is_empty() {
        Vec::new()
    } else {
        block_ranges(text)
            .into_iter()
            .map(|(first, last, piece)| Block {
                kind,
                heading_path: Vec::new(),
                span: Span::lines(first, last),
                text: piece.to_string(),
                level: None,
                lang: lang.clone(),
            })
            .collect()
    };
    Ok(Document {
        title: None,
        // Plain text says nothing about its language; the user may
        // (`[plugins.config.text] lang = "ko"`).
        lang: kebab_plugin_sdk::setting("lang"),
        blocks,
        metadata: Vec::new(),
    })
}

/// `(first line, last line, text)` of each block, in order, covering `text`.
fn block_ranges(text: &str) -> Vec<(u32, u32, &str)> {
    let mut out = Vec::new();
    // The block being built: its first line and byte offset.
    let mut open: Option<(u32, usize)> = None;
    let mut offset = 0;
    let mut n = 0u32;
    for line in text.split_inclusive('\n') {
        n += 1;
        if line.len() > BLOCK_BYTES {
            if let Some((first, from)) = open.take() {
                out.push((first, n - 1, &text[from..offset]));
            }
            let mut rest = line;
            while !rest.is_empty() {
                let mut cut = rest.len().min(BLOCK_BYTES);
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.push((n, n, &rest[..cut]));
                rest = &rest[cut..];
            }
        } else {
            let (first, from) = *open.get_or_insert((n, offset));
            let size = offset - from;
            let full = size + line.len() > BLOCK_BYTES;
            let at_break = size >= BLOCK_BYTES / 2 && line.trim().is_empty();
            if full || at_break {
                out.push((first, n - 1, &text[from..offset]));
                open = Some((n, offset));
            }
        }
        offset += line.len();
    }
    if let Some((first, from)) = open {
        out.push((first, n, &text[from..]));
    }
    // A block of blank lines only gives no chunks but keeps coverage simple.
    out.retain(|(first, last, piece)| first <= last && !piece.is_empty());
    out
}

/// Split every block of `doc` into paragraphs and windows.
pub fn chunk(doc: &Document) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (index, block) in doc.blocks.iter().enumerate() {
        let Some((first_line, _)) = block.span.line_bounds() else {
            continue;
        };
        let offset = first_line - 1;
        let lines = LineIndex::new(&block.text);
        for (p_start, p_end) in paragraphs(&block.text) {
            for (w_start, w_end) in line_windows(p_start, p_end, WINDOW_LINES, WINDOW_OVERLAP) {
                let (start, end) = (w_start + offset, w_end + offset);
                let span = match &block.lang {
                    Some(lang) if lang != "markdown" => Span::Code(CodeSpan {
                        start,
                        end,
                        symbol: None,
                        lang: Some(lang.clone()),
                    }),
                    _ => Span::lines(start, end),
                };
                out.push(Chunk {
                    text: lines.slice(&block.text, w_start, w_end),
                    heading_path: block.heading_path.clone(),
                    blocks: vec![index as u32],
                    spans: vec![span],
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(chunks: &[Chunk]) -> Vec<(u32, u32)> {
        chunks
            .iter()
            .map(|c| c.spans[0].line_bounds().unwrap())
            .collect()
    }

    #[test]
    fn shell_paragraphs_split_on_blank_lines() {
        let src = "#!/bin/sh\necho a\n\necho b\necho c\n\n\necho d\n";
        let doc = parse("deploy.sh", src.as_bytes()).unwrap();
        let chunks = chunk(&doc);
        assert_eq!(bounds(&chunks), vec![(1, 2), (4, 5), (8, 8)]);
        assert_eq!(chunks[1].text, "echo b\necho c");
        match &chunks[0].spans[0] {
            Span::Code(c) => {
                assert_eq!(c.lang.as_deref(), Some("shell"));
                assert_eq!(c.symbol, None);
            }
            other => panic!("expected a code span, got {other:?}"),
        }
    }

    #[test]
    fn labels_come_from_the_extension_or_the_shebang() {
        let label = |path: &str, text: &str| lang_label(path, text);
        assert_eq!(label("a/style.css", ""), Some("css".into()));
        assert_eq!(label("setup.CFG", ""), Some("cfg".into()));
        assert_eq!(label("x.zsh", ""), Some("shell".into()));
        assert_eq!(label("Makefile", "all:\n"), Some("makefile".into()));
        assert_eq!(label("docs/index.rst", ""), None);
        assert_eq!(label("notes.txt", "#!/bin/sh\n"), None);
        assert_eq!(label("LICENSE", "MIT License\n"), None);
        assert_eq!(
            label("bin/tool", "#!/usr/bin/env python3\n"),
            Some("python".into())
        );
        assert_eq!(label("bin/run", "#!/bin/bash -e\n"), Some("shell".into()));
        assert_eq!(
            label("bin/x", "#!/usr/bin/env -S node --flag\n"),
            Some("javascript".into())
        );
        assert_eq!(label("bin/y", "#!/usr/bin/ruby\n"), Some("ruby".into()));
        assert_eq!(label("odd.a b", ""), None);
    }

    #[test]
    fn long_paragraph_is_windowed() {
        let src: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        let chunks = chunk(&parse("big.txt", src.as_bytes()).unwrap());
        assert_eq!(bounds(&chunks), vec![(1, 80), (61, 140), (121, 200)]);
        assert!(chunks[2].text.starts_with("line 121\n"));
        assert!(chunks[2].text.ends_with("line 200"));
        assert!(matches!(chunks[0].spans[0], Span::Lines(_)));
    }

    #[test]
    fn empty_and_blank_files_give_no_chunks() {
        assert!(chunk(&parse("a.txt", b"").unwrap()).is_empty());
        assert!(chunk(&parse("a.txt", b"\n \n\t\n").unwrap()).is_empty());
    }

    #[test]
    fn language_label_is_kept_for_fallback_files() {
        let chunks = chunk(&parse("deploy/app.yaml", b"a: 1\n").unwrap());
        match &chunks[0].spans[0] {
            Span::Code(c) => assert_eq!(c.lang.as_deref(), Some("yaml")),
            other => panic!("expected a code span, got {other:?}"),
        }
    }

    #[test]
    fn big_files_are_cut_into_bounded_blocks_that_cover_every_line() {
        let line = "2026-11-23T10:00:00Z INFO request served in 12 ms\n";
        let mut src = String::new();
        for i in 0..100_000 {
            src.push_str(line);
            if i % 7 == 0 {
                src.push('\n');
            }
        }
        let doc = parse("big.log", src.as_bytes()).unwrap();
        assert!(doc.blocks.len() > 4, "{} blocks", doc.blocks.len());
        let mut next = 1;
        for b in &doc.blocks {
            assert!(b.text.len() <= BLOCK_BYTES);
            let (first, last) = b.span.line_bounds().unwrap();
            assert_eq!(first, next, "blocks are contiguous");
            next = last + 1;
        }
        assert_eq!(next - 1, LineIndex::new(&src).line_count());
        let chunks = chunk(&doc);
        assert!(chunks.iter().all(|c| c.text.len() < BLOCK_BYTES));
        assert!(chunks.last().unwrap().text.ends_with("12 ms"));
    }

    #[test]
    fn a_line_longer_than_a_block_is_cut_into_blocks_citing_it() {
        let src = format!("head\n{}\ntail\n", "é".repeat(BLOCK_BYTES));
        let doc = parse("one.txt", src.as_bytes()).unwrap();
        let spans: Vec<(u32, u32)> = doc
            .blocks
            .iter()
            .map(|b| b.span.line_bounds().unwrap())
            .collect();
        assert_eq!(spans, vec![(1, 1), (2, 2), (2, 2), (2, 2), (3, 3)]);
        let joined: String = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(joined, src);
        let chunks = chunk(&doc);
        let blocks: Vec<Vec<u32>> = chunks.iter().map(|c| c.blocks.clone()).collect();
        // The third piece of line 2 is its line break alone: no chunk.
        assert_eq!(blocks, vec![vec![0], vec![1], vec![2], vec![4]]);
    }

    #[test]
    fn invalid_utf8_is_malformed() {
        let err = parse("x.txt", &[b'a', 0xff, b'b']).unwrap_err();
        assert!(matches!(err, PluginError::Malformed(m) if m.contains("byte 1")));
    }
}
