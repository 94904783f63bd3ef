//! `kebab plugin new`: a ready-to-build plugin project in Rust, Python or
//! JavaScript, with the WIT contract this kebab speaks.

use std::path::{Path, PathBuf};

/// The contract, as compiled into this binary.
pub const WIT: &str = include_str!(env!("KEBAB_PLUGIN_WIT"));

/// Languages a project can be scaffolded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Js,
}

impl std::str::FromStr for Lang {
    type Err = String;

    /// `rust`, `python` or `js`.
    fn from_str(name: &str) -> Result<Lang, String> {
        match name {
            "rust" => Ok(Lang::Rust),
            "python" => Ok(Lang::Python),
            "js" => Ok(Lang::Js),
            other => Err(format!("unknown language `{other}`: rust, python or js")),
        }
    }
}

/// Why scaffolding failed.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error("plugin names are lowercase letters, digits and `-`: `{0}`")]
    BadName(String),
    #[error("{0} already exists; choose another directory")]
    Exists(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Create `<dir>/<name>/` with a plugin skeleton; returns the files written.
pub fn scaffold(
    dir: &Path,
    name: &str,
    lang: Lang,
    sdk: &Path,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(ScaffoldError::BadName(name.to_string()));
    }
    let root = dir.join(name);
    if root.exists() {
        return Err(ScaffoldError::Exists(root));
    }
    let ident = name.replace('-', "_");
    let files: Vec<(&str, String)> = match lang {
        Lang::Rust => vec![
            (
                "Cargo.toml",
                format!(
                    "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\nkebab-plugin-sdk = {{ path = {sdk:?} }}\n\n[workspace]\n"
                ),
            ),
            ("src/lib.rs", RUST_TEMPLATE.replace("{name}", name)),
            (
                "build.sh",
                "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\ncargo build --release --target wasm32-wasip2\necho \"built target/wasm32-wasip2/release/{ident}.wasm\"\n"
                    .replace("{ident}", &ident),
            ),
        ],
        Lang::Python => vec![
            ("app.py", PYTHON_TEMPLATE.replace("{name}", name)),
            ("wit/plugin.wit", WIT.to_string()),
            (
                "build.sh",
                format!("#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\npip install --quiet componentize-py==0.25.1\ncomponentize-py --wit-path wit --world plugin componentize app -o {name}.wasm\n"),
            ),
        ],
        Lang::Js => vec![
            ("src/app.js", JS_TEMPLATE.replace("{name}", name)),
            ("wit/plugin.wit", WIT.to_string()),
            (
                "package.json",
                format!("{{\n  \"name\": \"{name}\",\n  \"version\": \"0.1.0\",\n  \"private\": true,\n  \"type\": \"module\",\n  \"devDependencies\": {{\n    \"@bytecodealliance/componentize-js\": \"0.18.4\",\n    \"@bytecodealliance/jco\": \"1.15.4\"\n  }}\n}}\n"),
            ),
            (
                "build.sh",
                format!("#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\n[ -x node_modules/.bin/jco ] || npm install --no-audit --no-fund --silent\nnode_modules/.bin/jco componentize src/app.js --wit wit --world-name plugin -o {name}.wasm --disable all\n"),
            ),
        ],
    };
    let mut written = Vec::new();
    for (rel, body) in files {
        let path = root.join(rel);
        let wrap = |source| ScaffoldError::Write {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(wrap)?;
        }
        std::fs::write(&path, body).map_err(wrap)?;
        #[cfg(unix)]
        if rel.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(wrap)?;
        }
        written.push(path);
    }
    Ok(written)
}

const RUST_TEMPLATE: &str = r#"//! The `{name}` kebab plugin.

use kebab_plugin_sdk::text::{paragraphs, LineIndex};
use kebab_plugin_sdk::{Block, BlockKind, Chunk, ChunkPolicy, Document, Guest, PluginError, PluginInfo, Span};

struct Plugin;

impl Guest for Plugin {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "{name}".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            parser_version: "{name}-parser-v1".into(),
            chunker_version: "{name}-chunker-v1".into(),
            handles: vec!["*.{name}".into()],
            accepts_binary: false,
        }
    }

    fn parse(_path: String, bytes: Vec<u8>) -> Result<Document, PluginError> {
        let text = String::from_utf8(bytes).map_err(|e| PluginError::Malformed(e.to_string()))?;
        let lines = LineIndex::new(&text).line_count();
        Ok(Document {
            title: None,
            lang: None,
            blocks: vec![Block {
                kind: BlockKind::Paragraph,
                heading_path: vec![],
                span: Span::lines(1, lines),
                text,
                level: None,
                lang: None,
            }],
            metadata: vec![],
        })
    }

    fn chunk_document(doc: Document, _policy: ChunkPolicy) -> Result<Vec<Chunk>, PluginError> {
        let block = &doc.blocks[0];
        let lines = LineIndex::new(&block.text);
        Ok(paragraphs(&block.text)
            .into_iter()
            .map(|(start, end)| Chunk {
                text: lines.slice(&block.text, start, end),
                heading_path: vec![],
                blocks: vec![0],
                spans: vec![Span::lines(start, end)],
            })
            .collect())
    }
}

kebab_plugin_sdk::export_plugin!(Plugin);
"#;

const PYTHON_TEMPLATE: &str = r#""""The `{name}` kebab plugin."""

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types


class Parser(exports.Parser):
    def info(self) -> types.PluginInfo:
        return types.PluginInfo(
            name="{name}",
            version="0.1.0",
            parser_version="{name}-parser-v1",
            chunker_version="{name}-chunker-v1",
            handles=["*.{name}"],
            accepts_binary=False,
        )

    def parse(self, path: str, bytes: bytes) -> types.Document:
        try:
            text = bytes.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Err(types.Error_Malformed(f"invalid UTF-8 at byte {e.start}"))
        lines = max(len(text.splitlines()), 1)
        span = types.Span_Lines(types.LineRange(start=1, end=lines))
        block = types.Block(kind=types.BlockKind.PARAGRAPH, heading_path=[], span=span, text=text, level=None, lang=None)
        return types.Document(title=None, lang=None, blocks=[block], metadata=[])

    def chunk_document(self, doc: types.Document, policy: types.ChunkPolicy) -> list[types.Chunk]:
        block = doc.blocks[0]
        return [types.Chunk(text=block.text, heading_path=[], blocks=[0], spans=[block.span])]
"#;

const JS_TEMPLATE: &str = r#"// The `{name}` kebab plugin.

export const parser = {
  info() {
    return {
      name: "{name}",
      version: "0.1.0",
      parserVersion: "{name}-parser-v1",
      chunkerVersion: "{name}-chunker-v1",
      handles: ["*.{name}"],
      acceptsBinary: false,
    };
  },

  parse(path, bytes) {
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (e) {
      throw { tag: "malformed", val: "invalid UTF-8" };
    }
    const lines = Math.max(text.replace(/\n$/, "").split("\n").length, 1);
    const span = { tag: "lines", val: { start: 1, end: lines } };
    return {
      title: undefined,
      lang: undefined,
      blocks: [{ kind: "paragraph", headingPath: [], span, text, level: undefined, lang: undefined }],
      metadata: [],
    };
  },

  chunkDocument(doc, policy) {
    const block = doc.blocks[0];
    // list<u32> crosses the boundary as a typed array.
    return [{ text: block.text, headingPath: [], blocks: Uint32Array.of(0), spans: [block.span] }];
  },
};
"#;
