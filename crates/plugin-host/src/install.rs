//! Installing, removing and locating plugin components under the data
//! directory (`plugins/<name>/<version>/plugin.wasm` + `install.json`).
//! A component is read bounded (`[plugins] max_download_mb`: a download
//! streams to a temporary file and stops at the cap, a local file must be
//! a regular file under it), its `--blake3` pin checked before it is
//! parsed (a download is hashed as it streams, so one that is not the
//! pinned component is refused as it ends, never read back), and an
//! install that would take files from another plugin needs the same
//! consent as replacing a built-in one (`--replace-builtin`).

use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::json;

use crate::registry::{Origin, Registry, plugins_dir};
use crate::runtime::{LoadError, Runtime};
use kebab_core::http::{DownloadCap, DownloadError};

/// Why an install or removal failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The source could not be read or downloaded.
    #[error("cannot read plugin from {source_name}: {detail}")]
    Source { source_name: String, detail: String },
    /// The download failed or ran past the cap.
    #[error(transparent)]
    Download(#[from] DownloadError),
    /// `--blake3` is not a blake3 digest (refused before any network).
    #[error("--blake3 `{0}` is not a blake3 digest: it takes 64 hexadecimal digits")]
    MalformedHash(String),
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
    /// A plugin name that breaks the naming rule (checked before any path
    /// is built from it).
    #[error("{0}")]
    InvalidName(String),
    /// The plugin would replace a built-in one, without `--replace-builtin`.
    #[error(
        "`{name}` is a built-in plugin (built-in {name} {builtin_version}); installing {name} {version} replaces it for every file it handles — pass --replace-builtin to do that"
    )]
    ReplacesBuiltIn {
        name: String,
        version: String,
        builtin_version: String,
    },
    /// The plugin's patterns claim files other plugins handle, without
    /// `--replace-builtin`.
    #[error(
        "{name}'s file patterns claim files other plugins handle; installed, it would take them — {taken}; pass --replace-builtin to let it"
    )]
    TakesOver { name: String, taken: String },
    #[error("cannot write {path}: {detail}")]
    Write { path: PathBuf, detail: String },
}

impl InstallError {
    /// The `error.v1` code.
    pub fn code(&self) -> &'static str {
        match self {
            InstallError::Source { .. } | InstallError::Write { .. } => "io_error",
            InstallError::Download(e) => e.code(),
            InstallError::HashMismatch { .. } => "hash_mismatch",
            InstallError::Load(_) => "plugin_invalid",
            InstallError::Downgrade { .. }
            | InstallError::VersionClash { .. }
            | InstallError::ReplacesBuiltIn { .. }
            | InstallError::TakesOver { .. } => "plugin_refused",
            InstallError::NotInstalled(_) => "plugin_not_found",
            InstallError::InvalidName(_) | InstallError::MalformedHash(_) => "invalid_input",
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            InstallError::Download(e) => e.hint(),
            other => other.static_hint().to_string(),
        }
    }

    fn static_hint(&self) -> &'static str {
        match self {
            InstallError::Download(_) => "check the URL and try again",
            InstallError::MalformedHash(_) => {
                "pass the component's blake3 digest as 64 hex digits (`b3sum plugin.wasm` prints it)"
            }
            InstallError::Source { .. } => {
                "check the path or URL (http/https) and try again; a component is a regular file under [plugins] max_download_mb"
            }
            InstallError::Write { .. } => {
                "pass --data-dir DIR (or set KEBAB_DATA_DIR) to a writable place"
            }
            InstallError::HashMismatch { .. } => {
                "the component is not the one the hash pins: check the source and the --blake3 value"
            }
            InstallError::Load(_) => {
                "build a wasm32-wasip2 component against kebab's wit/ (`kebab plugin new` starts one)"
            }
            InstallError::Downgrade { .. }
            | InstallError::VersionClash { .. }
            | InstallError::ReplacesBuiltIn { .. }
            | InstallError::TakesOver { .. } => {
                "the message names the flag or the version change it needs"
            }
            InstallError::NotInstalled(_) => "`kebab plugin list` shows the installed plugins",
            InstallError::InvalidName(_) => "plugin names are lowercase letters, digits and dashes",
        }
    }
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
    /// The built-in plugin this one now stands in for, with its version.
    pub replaces_builtin: Option<String>,
    /// Other plugins' patterns whose files this one now takes.
    pub takes_over: Vec<TakenOver>,
}

/// Patterns of another plugin whose files a new plugin takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenOver {
    pub plugin: String,
    pub origin: Origin,
    pub patterns: Vec<String>,
}

/// What an install may do beyond adding a new version.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstallOptions<'a> {
    /// The component's expected blake3 hex digest.
    pub expected_blake3: Option<&'a str>,
    /// Install a version older than an installed or built-in one.
    pub allow_downgrade: bool,
    /// Install a plugin named like a built-in one, or one whose patterns
    /// take files another plugin handles.
    pub replace_builtin: bool,
}

impl InstallOptions<'_> {
    /// Refuse malformed options before anything is read or downloaded.
    pub fn check(&self) -> Result<(), InstallError> {
        match self.expected_blake3 {
            Some(hex) if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                let shown: String = hex.chars().take(80).collect();
                Err(InstallError::MalformedHash(shown))
            }
            _ => Ok(()),
        }
    }
}

/// The warning an install over plain `http://` without a `--blake3` pin
/// carries: anyone on the network path could have swapped the component.
pub fn transport_warning(source: &str, options: InstallOptions<'_>) -> Option<String> {
    (is_url(source) && !source.starts_with("https://") && options.expected_blake3.is_none()).then(
        || {
            "plugin downloaded over plain http:// without --blake3: anyone on the network path \
             could have replaced it; pin it with --blake3 HEX or use https://"
                .to_string()
        },
    )
}

fn is_url(source: &str) -> bool {
    source.starts_with("https://") || source.starts_with("http://")
}

/// Read a component, at most `cap` bytes, from a file, a directory (its
/// `plugin.wasm` or only `.wasm`), or an `http(s)://` URL (streamed into
/// a temporary file under `data_dir`'s plugins directory, deleted after,
/// and hashed as it streams: a download whose blake3 is not
/// `expected_blake3` is refused as it ends, without reading it back).
pub fn fetch(
    source: &str,
    data_dir: &Path,
    cap: DownloadCap,
    expected_blake3: Option<&str>,
) -> Result<Vec<u8>, InstallError> {
    let fail = |detail: String| InstallError::Source {
        source_name: source.to_string(),
        detail,
    };
    if is_url(source) {
        let response = kebab_core::http::builder()
            .timeout(std::time::Duration::from_secs(300))
            .connect_timeout(std::time::Duration::from_secs(20))
            .build()
            .and_then(|c| c.get(source).send())
            .map_err(|e| fail(e.to_string()))?;
        let dir = plugins_dir(data_dir);
        std::fs::create_dir_all(&dir).map_err(|e| write_err(&dir, e))?;
        let mut hasher = blake3::Hasher::new();
        let file = kebab_core::http::download(response, source, &dir, cap, |chunk, _| {
            hasher.update(chunk);
        })?;
        check_pin(source, expected_blake3, &hasher.finalize().to_hex())?;
        return std::fs::read(file.path()).map_err(|e| write_err(file.path(), e));
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
    // Resolved first (a symlinked component is fine), then opened without
    // blocking and read only when it is a regular file under the cap: a
    // FIFO or a device (`/dev/zero`) is refused, not read forever.
    let real = file
        .canonicalize()
        .map_err(|e| fail(format!("{}: {e}", file.display())))?;
    kebab_core::paths::read_regular_file(&real, cap.bytes).map_err(|e| {
        fail(match e {
            kebab_core::paths::ReadRefusal::NotRegular(what) => {
                format!("{} is a {what}, not a regular file", file.display())
            }
            kebab_core::paths::ReadRefusal::TooLarge(size) => format!(
                "{} is {size} bytes, over the cap of {} bytes ({})",
                file.display(),
                cap.bytes,
                cap.setting
            ),
            kebab_core::paths::ReadRefusal::Io(e) => format!("{}: {e}", file.display()),
            kebab_core::paths::ReadRefusal::Outside(to) => {
                format!("{} leads to {to}", file.display())
            }
        })
    })
}

/// Refuse a component from `source` whose blake3 hex digest, `actual`, is
/// not the `expected` pin (when there is one).
fn check_pin(source: &str, expected: Option<&str>, actual: &str) -> Result<(), InstallError> {
    match expected {
        Some(expected) if !expected.eq_ignore_ascii_case(actual) => {
            Err(InstallError::HashMismatch {
                source_name: source.to_string(),
                expected: expected.to_string(),
                actual: actual.to_string(),
            })
        }
        _ => Ok(()),
    }
}

/// Versions of `name` installed under `data_dir`, ascending.
pub fn installed_versions(data_dir: &Path, name: &str) -> Vec<Version> {
    if crate::identity::check_name(name).is_err() {
        return Vec::new();
    }
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

/// Check and install the component `bytes` (from `source`); `current` is
/// the registry as it is before the install (what the new plugin may take
/// files from).
pub fn install(
    runtime: &Runtime,
    current: &Registry,
    data_dir: &Path,
    source: &str,
    bytes: &[u8],
    options: InstallOptions<'_>,
) -> Result<Installed, InstallError> {
    let actual = kebab_core::ids::checksum(bytes);
    check_pin(source, options.expected_blake3, &actual)?;
    // Compiles (filling the code cache), checks the world, the API version
    // and the plugin's info (name, versions, patterns: what the registry
    // will need to load it later); info() is cached for later loads.
    let plugin = runtime.load(bytes)?;
    let name = plugin.info.name.clone();
    let version = plugin.version.clone();
    let builtin = crate::registry::built_in_version(runtime, &name)?;
    let versions = installed_versions(data_dir, &name);
    check_precedence(&name, &version, builtin.as_ref(), &versions, options)?;
    let takes_over = taken_over(current, &name, &plugin.info.handles)?;
    if !takes_over.is_empty() && !options.replace_builtin {
        return Err(InstallError::TakesOver {
            taken: describe(&takes_over),
            name,
        });
    }
    let dir = plugins_dir(data_dir).join(&name).join(version.to_string());
    let path = dir.join("plugin.wasm");
    let unchanged = if path.is_file() {
        let existing = std::fs::read(&path).map_err(|e| write_err(&path, e))?;
        if kebab_core::ids::checksum(&existing) != actual {
            return Err(InstallError::VersionClash {
                name,
                version: version.to_string(),
            });
        }
        true
    } else {
        let record = json!({
            "source": source,
            "blake3": actual,
            "api_version": plugin.api_version.to_string(),
            "installed_at": kebab_core::clock::now_rfc3339(),
        });
        write_component(&dir, &path, bytes, &record)?;
        false
    };
    let mut rolled_back = Vec::new();
    for newer in versions.into_iter().filter(|v| v > &version) {
        let newer_dir = plugins_dir(data_dir).join(&name).join(newer.to_string());
        std::fs::remove_dir_all(&newer_dir).map_err(|e| write_err(&newer_dir, e))?;
        rolled_back.push(newer);
    }
    Ok(Installed {
        version,
        api_version: plugin.api_version,
        path,
        unchanged,
        rolled_back,
        replaces_builtin: builtin.map(|v| format!("built-in {name} {v}")),
        takes_over,
        name,
    })
}

/// The patterns of every other plugin in `current` whose files a plugin
/// `name` claiming `patterns` would take (a plugin of the same name is the
/// one it replaces, covered by the precedence check).
fn taken_over(
    current: &Registry,
    name: &str,
    patterns: &[String],
) -> Result<Vec<TakenOver>, InstallError> {
    let mut out = Vec::new();
    for other in current.plugins().iter().filter(|p| p.name() != name) {
        let taken = crate::overlap::taken(patterns, &other.plugin.info.handles)?;
        if !taken.is_empty() {
            out.push(TakenOver {
                plugin: other.name().to_string(),
                origin: other.origin.clone(),
                patterns: taken,
            });
        }
    }
    Ok(out)
}

/// Patterns named per plugin in a refusal.
const SHOWN_PATTERNS: usize = 6;

/// `markdown (built-in): *.md, *.markdown; text (built-in): *.txt, … 3 more`.
fn describe(taken: &[TakenOver]) -> String {
    taken
        .iter()
        .map(|t| {
            let origin = match t.origin {
                Origin::BuiltIn => "built-in",
                Origin::Installed(_) => "installed",
            };
            let mut shown: Vec<&str> = t
                .patterns
                .iter()
                .take(SHOWN_PATTERNS)
                .map(String::as_str)
                .collect();
            let more = t.patterns.len().saturating_sub(SHOWN_PATTERNS);
            let more_text = format!("… {more} more");
            if more > 0 {
                shown.push(&more_text);
            }
            format!("{} ({origin}): {}", t.plugin, shown.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// An I/O failure under the plugins directory.
fn write_err(path: &Path, e: std::io::Error) -> InstallError {
    InstallError::Write {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Refuse an install that would replace a built-in without
/// `--replace-builtin`, or go below a built-in or installed version without
/// `--allow-downgrade`.
fn check_precedence(
    name: &str,
    version: &Version,
    builtin: Option<&Version>,
    installed: &[Version],
    options: InstallOptions<'_>,
) -> Result<(), InstallError> {
    if let Some(builtin_version) = builtin {
        if !options.replace_builtin {
            return Err(InstallError::ReplacesBuiltIn {
                builtin_version: builtin_version.to_string(),
                version: version.to_string(),
                name: name.to_string(),
            });
        }
        if version < builtin_version && !options.allow_downgrade {
            return Err(InstallError::Downgrade {
                name: name.to_string(),
                new: version.to_string(),
                installed: format!("built-in {builtin_version}"),
            });
        }
    }
    if let Some(highest) = installed.last()
        && version < highest
        && !options.allow_downgrade
    {
        return Err(InstallError::Downgrade {
            name: name.to_string(),
            new: version.to_string(),
            installed: highest.to_string(),
        });
    }
    Ok(())
}

/// Write the component to `path` in `dir` (through a temporary file and a
/// rename, so a crash never leaves half a component) and its install
/// record beside it.
fn write_component(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    record: &serde_json::Value,
) -> Result<(), InstallError> {
    std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let tmp = dir.join("plugin.wasm.tmp");
    std::fs::write(&tmp, bytes).map_err(|e| write_err(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| write_err(path, e))?;
    let meta_path = dir.join("install.json");
    std::fs::write(&meta_path, record.to_string()).map_err(|e| write_err(&meta_path, e))
}

/// Remove every installed version of `name`; returns the versions removed.
pub fn remove(data_dir: &Path, name: &str) -> Result<Vec<Version>, InstallError> {
    crate::identity::check_name(name).map_err(InstallError::InvalidName)?;
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
