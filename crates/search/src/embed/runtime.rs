//! Finding and loading the ONNX Runtime shared library.
//!
//! kebab links ONNX Runtime dynamically (`ort`'s `load-dynamic`): nothing is
//! downloaded at build time, and a missing library is a clear error rather
//! than a crash.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::EmbedError;

/// Places searched, in order, for `libonnxruntime.so*`: the configured
/// path, `ORT_DYLIB_PATH`, then `onnxruntime/` under the data and cache
/// directories.
pub fn candidates(configured: Option<&str>, data_dir: &Path, cache_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = configured {
        out.push(PathBuf::from(p));
    }
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        out.push(PathBuf::from(p));
    }
    out.push(data_dir.join("onnxruntime"));
    out.push(cache_dir.join("onnxruntime"));
    out
}

/// The library file a candidate names: the file itself, or in a directory
/// the `libonnxruntime.so*` with the longest name (the versioned one).
fn library_in(candidate: &Path) -> Option<PathBuf> {
    if candidate.is_file() {
        return Some(candidate.to_path_buf());
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(candidate)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libonnxruntime.so") || n == "onnxruntime.dll")
        })
        .collect();
    found.sort_by_key(|p| p.as_os_str().len());
    found.pop()
}

/// The first library found among `candidates`.
pub fn locate(candidates: &[PathBuf]) -> Result<PathBuf, EmbedError> {
    candidates
        .iter()
        .find_map(|c| library_in(c))
        .ok_or_else(|| EmbedError::RuntimeMissing {
            searched: candidates.to_vec(),
        })
}

/// A loaded ONNX Runtime: the library file and its environment.
#[derive(Clone)]
pub struct Loaded {
    pub library: PathBuf,
    pub environment: ort::environment::Environment,
}

static LOADED: OnceLock<Result<Loaded, String>> = OnceLock::new();

/// Load ONNX Runtime from `library` once per process. Later calls report
/// the first outcome (ONNX Runtime allows one environment per process).
pub fn init(library: &Path) -> Result<Loaded, EmbedError> {
    LOADED
        .get_or_init(|| {
            let environment = ort::init_from(library)
                .map_err(|e| e.to_string())?
                .with_name("kebab")
                .build()
                .map_err(|e| e.to_string())?;
            Ok(Loaded {
                library: library.to_path_buf(),
                environment,
            })
        })
        .clone()
        .map_err(|message| EmbedError::RuntimeLoad {
            path: library.to_path_buf(),
            message,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_yields_its_versioned_library() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("libonnxruntime.so.1.22.1"), b"").unwrap();
        std::fs::write(dir.path().join("libonnxruntime_providers_shared.so"), b"").unwrap();
        std::fs::write(dir.path().join("README"), b"").unwrap();
        let got = locate(&[dir.path().join("missing"), dir.path().to_path_buf()]).unwrap();
        assert_eq!(got, dir.path().join("libonnxruntime.so.1.22.1"));
    }

    #[test]
    fn nothing_found_lists_every_place_searched() {
        let dir = tempfile::tempdir().unwrap();
        let searched = vec![dir.path().join("a"), dir.path().join("b")];
        match locate(&searched) {
            Err(EmbedError::RuntimeMissing { searched: s }) => assert_eq!(s, searched),
            other => panic!("{other:?}"),
        }
    }
}
