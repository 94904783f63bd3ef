//! What a plugin may call itself and claim: the one rule for plugin names
//! (from `info()` or the command line, checked before any filesystem
//! operation uses one), version labels and file patterns.
//!
//! `install` refuses whatever the registry could not load later, so an
//! installed plugin never turns into a warning at every start.

use semver::Version;

use crate::PluginInfo;
use kebab_core::sanitize::bounded;

/// Longest plugin name.
pub const MAX_NAME_LEN: usize = 64;
/// Longest version or parser/chunker label.
pub const MAX_LABEL_LEN: usize = 64;
/// Most file patterns one plugin may claim.
pub const MAX_PATTERNS: usize = 256;
/// Longest file pattern.
pub const MAX_PATTERN_LEN: usize = 256;
/// How much of an offending value an error quotes.
const QUOTE: usize = 80;

/// A plugin name: 1–64 of `a-z`, `0-9`, `-`, `_`, starting with a letter
/// or digit. Nothing else can reach a path under the data directory.
pub fn check_name(name: &str) -> Result<(), String> {
    let valid_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "plugin name `{}` is {} bytes (limit {MAX_NAME_LEN})",
            bounded(name, QUOTE),
            name.len()
        ));
    }
    if !valid_chars || !starts_well {
        return Err(format!(
            "plugin name `{}` must be lowercase letters, digits, `-` or `_`, starting with a letter or digit",
            bounded(name, QUOTE)
        ));
    }
    Ok(())
}

/// Check everything `info()` returned; on success the plugin's semver.
pub fn check_info(info: &PluginInfo) -> Result<Version, String> {
    check_name(&info.name)?;
    for (what, label) in [
        ("version", &info.version),
        ("parser-version", &info.parser_version),
        ("chunker-version", &info.chunker_version),
    ] {
        if label.is_empty() || label.len() > MAX_LABEL_LEN || label.chars().any(char::is_control) {
            return Err(format!(
                "{what} `{}` must be 1–{MAX_LABEL_LEN} printable bytes",
                bounded(label, QUOTE)
            ));
        }
    }
    let version = Version::parse(&info.version).map_err(|e| {
        format!(
            "version `{}` is not semver: {e}",
            bounded(&info.version, QUOTE)
        )
    })?;
    if info.handles.len() > MAX_PATTERNS {
        return Err(format!(
            "{} file patterns (limit {MAX_PATTERNS})",
            info.handles.len()
        ));
    }
    for pattern in &info.handles {
        if pattern.is_empty() || pattern.len() > MAX_PATTERN_LEN {
            return Err(format!(
                "file pattern `{}` must be 1–{MAX_PATTERN_LEN} bytes",
                bounded(pattern, QUOTE)
            ));
        }
        crate::patterns::glob(pattern)
            .map_err(|e| format!("file pattern `{}`: {e}", bounded(pattern, QUOTE)))?;
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, version: &str, handles: &[&str]) -> PluginInfo {
        PluginInfo {
            name: name.into(),
            version: version.into(),
            parser_version: "p-v1".into(),
            chunker_version: "c-v1".into(),
            handles: handles.iter().map(|s| s.to_string()).collect(),
            accepts_binary: false,
        }
    }

    #[test]
    fn names_cannot_reach_outside_the_plugin_directory() {
        assert!(check_name("csv").is_ok());
        assert!(check_name("my-plugin_2").is_ok());
        for bad in [
            "",
            "..",
            "../../../x",
            "a/b",
            "A",
            "-x",
            "_x",
            "a b",
            "a\u{1b}b",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        let long = "a".repeat(1 << 20);
        let err = check_name(&long).unwrap_err();
        assert!(
            err.len() < 300,
            "error echoes the input: {} bytes",
            err.len()
        );
    }

    #[test]
    fn info_is_checked_whole() {
        assert_eq!(
            check_info(&info("csv", "1.2.3", &["*.csv"])).unwrap(),
            Version::new(1, 2, 3)
        );
        assert!(check_info(&info("csv", "one", &["*.csv"])).is_err());
        assert!(check_info(&info("csv", &"1".repeat(100), &[])).is_err());
        let err = check_info(&info("csv", "1.0.0", &["a[b"])).unwrap_err();
        assert!(err.contains("a[b"), "{err}");
        let many: Vec<String> = (0..1000).map(|i| format!("*.x{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(
            check_info(&info("csv", "1.0.0", &many))
                .unwrap_err()
                .contains("1000 file patterns")
        );
        let long = "x".repeat(1 << 20);
        let err = check_info(&info("csv", "1.0.0", &[&long])).unwrap_err();
        assert!(err.len() < 400, "bounded error, got {} bytes", err.len());
    }
}
