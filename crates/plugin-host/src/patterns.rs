//! File patterns as plugins claim them (`info().handles`) and as
//! `[plugins.routes]` writes them: how one glob is read, and a plugin's
//! patterns compiled for routing. A leaf: identity checks, routing and the
//! overlap check all read patterns the same way through it.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A file pattern as plugins and `[plugins.routes]` write it: case-insensitive,
/// `*` never crossing `/`.
pub fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
}

/// File patterns compiled as routing matches them.
pub struct Patterns {
    /// Patterns without `/`, matched against the file name.
    names: GlobSet,
    /// Patterns with `/`, matched against the workspace path.
    paths: GlobSet,
}

impl Patterns {
    /// Compile `patterns`; a bad glob is an error naming it.
    pub fn new(patterns: &[String]) -> Result<Patterns, String> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        for pattern in patterns {
            let glob = glob(pattern).map_err(|e| format!("pattern `{pattern}`: {e}"))?;
            if pattern.contains('/') {
                paths.add(glob);
            } else {
                names.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| e.to_string());
        Ok(Patterns {
            names: build(names)?,
            paths: build(paths)?,
        })
    }

    /// Whether one of the patterns claims `workspace_path`.
    pub fn matches(&self, workspace_path: &str) -> bool {
        let file_name = workspace_path.rsplit('/').next().unwrap_or(workspace_path);
        self.names.is_match(file_name) || self.paths.is_match(workspace_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_globs_ignore_case_and_path_globs_respect_slashes() {
        assert!(
            glob("*.md")
                .unwrap()
                .compile_matcher()
                .is_match("README.MD")
        );
        let g = glob("deploy/*.yaml").unwrap().compile_matcher();
        assert!(g.is_match("deploy/a.yaml"));
        assert!(!g.is_match("deploy/x/a.yaml"));
    }
}
