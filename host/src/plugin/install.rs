//! Installing, removing and locating plugin components under the data
//! directory (`plugins/<name>/<version>/plugin.wasm` + `install.json`).

use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::json;

use super::registry::plugins_dir;
use super::runtime::{LoadError, Runtime};

/// Why an install or removal failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The source could not be read or downloaded.
    #[error("cannot read plugin from {source_name}: {detail}")]
    Source { source_name: String, detail: String },
    /// `--blake3` did not match.
    #[error("blake3 mismatch for {source_name}: expected {expected}, got {actual}")]
    HashMismatch {
        source_name: String,
        expected: String,
        actual: String,
    },
    /// Not a usable kebab plugin component.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An older version than the one installed, without `--allow-downgrade`.
    #[error(
        "{name} {new} is older than the installed {installed}; pass --allow-downgrade to roll back"
    )]
    Downgrade {
        name: String,
        new: String,
        installed: String,
    },
    /// The same version is installed with different bytes.
    #[error(
        "{name} {version} is already installed with different content; a changed plugin needs a new version"
    )]
    VersionClash { name: String, version: String },
    /// `remove` of a plugin that is not installed.
    #[error("no installed plugin named {0}")]
    NotInstalled(String),
    #[error("cannot write {path}: {detail}")]
    Write { path: PathBuf, detail: String },
}

/// What an install did.
#[derive(Debug, Clone)]
pub struct Installed {
    pub name: String,
    pub version: Version,
    pub api_version: Version,
    pub path: PathBuf,
    /// The identical component was already installed.
    pub unchanged: bool,
    /// Newer versions removed by a rollback.
    pub rolled_back: Vec<Version>,
}

/// Read a component from a file, a directory (its `plugin.wasm` or only
/// `.wasm`), or an `http(s)://` URL.
pub fn fetch(source: &str) -> Result<Vec<u8>, InstallError> {
    let fail = |detail: String| InstallError::Source {
        source_name: source.to_string(),
        detail,
    };
    if source.starts_with("https://") || source.starts_with("http://") {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::blocking::Client::builder()
            .timeout(std::time::Duration::from_secs(300))
            .build()
            .and_then(|c| c.get(source).send())
            .map_err(|e| fail(e.to_string()))?;
        if !response.status().is_success() {
            return Err(fail(format!("HTTP {}", response.status())));
        }
        return response
            .bytes()
            .map(|b| b.to_vec())
            .map_err(|e| fail(e.to_string()));
    }
    let path = Path::new(source);
    let file = if path.is_dir() {
        let named = path.join("plugin.wasm");
        if named.is_file() {
            named
        } else {
            let wasm: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| fail(e.to_string()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
                .collect();
            match wasm.as_slice() {
                [one] => one.clone(),
                [] => return Err(fail("no .wasm file in the directory".into())),
                _ => return Err(fail("several .wasm files; name one".into())),
            }
        }
    } else {
        path.to_path_buf()
    };
    std::fs::read(&file).map_err(|e| fail(format!("{}: {e}", file.display())))
}

/// Versions of `name` installed under `data_dir`, ascending.
pub fn installed_versions(data_dir: &Path, name: &str) -> Vec<Version> {
    let mut out: Vec<Version> = std::fs::read_dir(plugins_dir(data_dir).join(name))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| Version::parse(&e.file_name().to_string_lossy()).ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Check and install the component `bytes` (from `source`).
pub fn install(
    runtime: &Runtime,
    data_dir: &Path,
    source: &str,
    bytes: &[u8],
    expected_blake3: Option<&str>,
    allow_downgrade: bool,
) -> Result<Installed, InstallError> {
    let actual = crate::ids::checksum(bytes);
    if let Some(expected) = expected_blake3
        && !expected.eq_ignore_ascii_case(&actual)
    {
        return Err(InstallError::HashMismatch {
            source_name: source.to_string(),
            expected: expected.to_string(),
            actual,
        });
    }
    // Compiles (filling the code cache), checks the world and API version.
    let plugin = runtime.load(bytes)?;
    let name = plugin.info.name.clone();
    let version = plugin.version.clone();
    let versions = installed_versions(data_dir, &name);
    if let Some(highest) = versions.last()
        && &version < highest
        && !allow_downgrade
    {
        return Err(InstallError::Downgrade {
            name,
            new: version.to_string(),
            installed: highest.to_string(),
        });
    }
    let dir = plugins_dir(data_dir).join(&name).join(version.to_string());
    let path = dir.join("plugin.wasm");
    let write_err = |p: &Path, e: std::io::Error| InstallError::Write {
        path: p.to_path_buf(),
        detail: e.to_string(),
    };
    let mut unchanged = false;
    if path.is_file() {
        let existing = std::fs::read(&path).map_err(|e| write_err(&path, e))?;
        if crate::ids::checksum(&existing) != actual {
            return Err(InstallError::VersionClash {
                name,
                version: version.to_string(),
            });
        }
        unchanged = true;
    } else {
        std::fs::create_dir_all(&dir).map_err(|e| write_err(&dir, e))?;
        let tmp = dir.join("plugin.wasm.tmp");
        std::fs::write(&tmp, bytes).map_err(|e| write_err(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| write_err(&path, e))?;
        let meta = json!({
            "source": source,
            "blake3": actual,
            "api_version": plugin.api_version.to_string(),
            "installed_at": crate::store::now_rfc3339(),
        });
        let meta_path = dir.join("install.json");
        std::fs::write(&meta_path, meta.to_string()).map_err(|e| write_err(&meta_path, e))?;
    }
    let mut rolled_back = Vec::new();
    for newer in versions.into_iter().filter(|v| v > &version) {
        let newer_dir = plugins_dir(data_dir).join(&name).join(newer.to_string());
        std::fs::remove_dir_all(&newer_dir).map_err(|e| write_err(&newer_dir, e))?;
        rolled_back.push(newer);
    }
    Ok(Installed {
        name,
        version,
        api_version: plugin.api_version,
        path,
        unchanged,
        rolled_back,
    })
}

/// Remove every installed version of `name`; returns the versions removed.
pub fn remove(data_dir: &Path, name: &str) -> Result<Vec<Version>, InstallError> {
    let versions = installed_versions(data_dir, name);
    if versions.is_empty() {
        return Err(InstallError::NotInstalled(name.to_string()));
    }
    let dir = plugins_dir(data_dir).join(name);
    std::fs::remove_dir_all(&dir).map_err(|e| InstallError::Write {
        path: dir,
        detail: e.to_string(),
    })?;
    Ok(versions)
}

/// `install.json` of an installed component, if any.
pub fn install_record(component: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(component.with_file_name("install.json")).ok()?;
    serde_json::from_str(&text).ok()
}
