//! The on-disk plugin cache under `<cache>/components/`: precompiled
//! machine code and the answer of `info()`, both keyed by the blake3 of the
//! component's bytes.
//!
//! Compiling a tree-sitter component takes hundreds of milliseconds and a
//! plugin's `info()` may take as long as its deadline, so both are paid
//! once per component (at install, or the first start after a kebab
//! upgrade), not by every `ingest`, `plugin list`, `doctor` or `which`.
//! Compiled code is also keyed by the engine's compatibility hash, so a
//! different wasmtime or configuration never loads stale code.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::PluginInfo;

/// The cache directory, or none (every load compiles and calls `info()`).
pub(super) struct PluginCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

/// `info()` as cached (the WIT record, field for field).
#[derive(Serialize, Deserialize)]
struct CachedInfo {
    name: String,
    version: String,
    parser_version: String,
    chunker_version: String,
    handles: Vec<String>,
    accepts_binary: bool,
}

impl PluginCache {
    /// A cache under `dir/components` for code compiled by an engine whose
    /// compatibility hash is `engine_key`.
    pub(super) fn new(dir: Option<&Path>, engine_key: String) -> PluginCache {
        PluginCache {
            dir: dir.map(|d| d.join("components")),
            engine_key,
        }
    }

    fn path(&self, wasm_hash: &str, suffix: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{}{suffix}", &wasm_hash[..32])))
    }

    /// Whether both the compiled code and `info()` of the component whose
    /// hash is `wasm_hash` are cached (so loading it compiles nothing).
    pub(super) fn holds(&self, wasm_hash: &str) -> bool {
        let code = self.path(wasm_hash, &format!("-{}.cwasm", self.engine_key));
        let info = self.path(wasm_hash, ".info.json");
        code.zip(info)
            .is_some_and(|(c, i)| c.is_file() && i.is_file())
    }

    /// The component, from cached code when there is a usable entry, else
    /// compiled (and cached). A corrupt entry is replaced.
    pub(super) fn component(
        &self,
        engine: &Engine,
        wasm: &[u8],
        wasm_hash: &str,
    ) -> wasmtime::Result<Component> {
        let cached = self.path(wasm_hash, &format!("-{}.cwasm", self.engine_key));
        if let Some(path) = cached.as_deref().filter(|p| p.is_file()) {
            // SAFETY: the cache holds only files this module serialised, keyed
            // by the component hash and the engine's compatibility hash, in
            // the user's own cache directory.
            match unsafe { Component::deserialize_file(engine, path) } {
                Ok(c) => return Ok(c),
                Err(_) => {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let component = Component::new(engine, wasm)?;
        if let Some(path) = cached {
            // The cache is an optimisation: failing to write it is not an error.
            if let Ok(bytes) = component.serialize() {
                let _ = write_atomically(&path, &bytes);
            }
        }
        Ok(component)
    }

    /// The cached answer of `info()` for this component.
    pub(super) fn info(&self, wasm_hash: &str) -> Option<PluginInfo> {
        let path = self.path(wasm_hash, ".info.json")?;
        let c: CachedInfo = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        Some(PluginInfo {
            name: c.name,
            version: c.version,
            parser_version: c.parser_version,
            chunker_version: c.chunker_version,
            handles: c.handles,
            accepts_binary: c.accepts_binary,
        })
    }

    /// Remember a checked `info()` answer.
    pub(super) fn store_info(&self, wasm_hash: &str, info: &PluginInfo) {
        let Some(path) = self.path(wasm_hash, ".info.json") else {
            return;
        };
        let cached = CachedInfo {
            name: info.name.clone(),
            version: info.version.clone(),
            parser_version: info.parser_version.clone(),
            chunker_version: info.chunker_version.clone(),
            handles: info.handles.clone(),
            accepts_binary: info.accepts_binary,
        };
        if let Ok(bytes) = serde_json::to_vec(&cached) {
            let _ = write_atomically(&path, &bytes);
        }
    }
}

/// Write through a temporary file and rename, so a reader never sees half.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
