//! Walking a workspace: `.gitignore`, `.kebabignore`, configured excludes, a
//! built-in blacklist of build and dependency directories, and a size cap.
//! Everything passed over for a reason is reported with that reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;

/// Directories never worth indexing.
pub const BUILTIN_BLACKLIST: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "target",
    "node_modules",
    "__pycache__",
    ".venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    "vendor",
    "third_party",
    "bower_components",
    ".gradle",
    ".next",
];

/// Machine-written files passed over by name: lock files and minified code.
pub fn is_generated_name(name: &str) -> bool {
    const LOCKFILES: &[&str] = &[
        "Cargo.lock",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "go.sum",
        "composer.lock",
        "Gemfile.lock",
    ];
    LOCKFILES.contains(&name) || name.ends_with(".min.js") || name.ends_with(".min.css")
}

/// Why a file was passed over without being parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// A directory from [`BUILTIN_BLACKLIST`].
    BuiltinBlacklist,
    /// Matched by a `.gitignore` (or `.git/info/exclude`).
    Gitignore,
    /// Matched by a `.kebabignore` or `[workspace] exclude`.
    Kebabignore,
    /// Larger than the configured cap.
    SizeExceeded,
    /// Zero bytes.
    Empty,
    /// Looks binary (NUL bytes).
    Binary,
    /// No plugin claims it.
    Unsupported,
    /// Same bytes, plugin version and chunk policy as already indexed.
    Unchanged,
    /// Indexed before, but no plugin handles it now (removed or disabled).
    Orphaned,
    /// Machine-written: lock files, minified code, `@generated` /
    /// `DO NOT EDIT` sources.
    Generated,
}

impl SkipReason {
    /// The reason's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::BuiltinBlacklist => "builtin_blacklist",
            SkipReason::Gitignore => "gitignore",
            SkipReason::Kebabignore => "kebabignore",
            SkipReason::SizeExceeded => "size_exceeded",
            SkipReason::Empty => "empty",
            SkipReason::Binary => "binary",
            SkipReason::Unsupported => "unsupported",
            SkipReason::Unchanged => "unchanged",
            SkipReason::Orphaned => "orphaned",
            SkipReason::Generated => "generated",
        }
    }
}

/// One thing the walk found.
#[derive(Debug, Clone)]
pub enum WalkItem {
    /// A file to consider.
    File {
        abs: PathBuf,
        rel: String,
        size: u64,
    },
    /// Passed over.
    Skipped {
        rel: String,
        reason: SkipReason,
        detail: String,
    },
    /// Could not be examined (permissions, symlink loop, vanished…).
    Error { rel: String, message: String },
}

/// Walk options.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Files above this many bytes are skipped.
    pub max_file_bytes: u64,
    /// Extra gitignore-style exclude patterns.
    pub exclude: Vec<String>,
}

/// Which ignore rules a walk applies.
#[derive(Debug, Clone, Copy)]
struct Rules {
    gitignore: bool,
    kebabignore: bool,
}

/// A walker over `start` applying `rules`, the configured excludes (with
/// `kebabignore`) and the built-in blacklist; pruned blacklisted directories
/// are collected in the returned list.
fn builder(
    start: &Path,
    root: &Path,
    opts: &WalkOptions,
    rules: Rules,
    errors: &mut Vec<WalkItem>,
) -> (WalkBuilder, Arc<Mutex<Vec<String>>>) {
    let mut builder = WalkBuilder::new(start);
    builder
        .follow_links(true)
        .require_git(false)
        .git_ignore(rules.gitignore)
        .git_global(false)
        .git_exclude(rules.gitignore)
        .sort_by_file_name(|a, b| a.cmp(b));
    if rules.kebabignore {
        builder.add_custom_ignore_filename(".kebabignore");
        let mut overrides = OverrideBuilder::new(root);
        for pattern in &opts.exclude {
            if let Err(e) = overrides.add(&format!("!{pattern}")) {
                errors.push(WalkItem::Error {
                    rel: pattern.clone(),
                    message: format!("invalid exclude pattern: {e}"),
                });
            }
        }
        if let Ok(o) = overrides.build() {
            builder.overrides(o);
        }
    }
    let blacklisted = Arc::new(Mutex::new(Vec::new()));
    builder.filter_entry({
        let root = root.to_path_buf();
        let blacklisted = Arc::clone(&blacklisted);
        move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let name = entry.file_name().to_string_lossy();
            if entry.depth() > 0 && is_dir && BUILTIN_BLACKLIST.contains(&name.as_ref()) {
                blacklisted
                    .lock()
                    .expect("blacklist lock")
                    .push(relative(entry.path(), &root));
                return false;
            }
            true
        }
    });
    (builder, blacklisted)
}

/// Relative paths of the files a walk with `rules` would visit.
fn files_under(start: &Path, root: &Path, opts: &WalkOptions, rules: Rules) -> BTreeSet<String> {
    let (builder, _) = builder(start, root, opts, rules, &mut Vec::new());
    builder
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| relative(e.path(), root))
        .collect()
}

/// Files the ignore rules passed over: `(reason, path)`, `.gitignore` first
/// (a file both ignore files match counts as gitignored). `walked` is what
/// [`walk`] returned for the same arguments, so only the two less filtered
/// walks run again.
pub fn ignored(
    start: &Path,
    root: &Path,
    opts: &WalkOptions,
    walked: &[WalkItem],
) -> Vec<(SkipReason, String)> {
    let none = files_under(
        start,
        root,
        opts,
        Rules {
            gitignore: false,
            kebabignore: false,
        },
    );
    let git = files_under(
        start,
        root,
        opts,
        Rules {
            gitignore: true,
            kebabignore: false,
        },
    );
    let all: BTreeSet<String> = walked
        .iter()
        .map(|item| match item {
            WalkItem::File { rel, .. }
            | WalkItem::Skipped { rel, .. }
            | WalkItem::Error { rel, .. } => rel.clone(),
        })
        .collect();
    let by_git = none
        .difference(&git)
        .map(|p| (SkipReason::Gitignore, p.clone()));
    let by_kebab = git
        .difference(&all)
        .map(|p| (SkipReason::Kebabignore, p.clone()));
    by_git.chain(by_kebab).collect()
}

/// Walk `start` (a directory or a single file); paths are reported relative
/// to `root`.
pub fn walk(start: &Path, root: &Path, opts: &WalkOptions) -> Vec<WalkItem> {
    let mut out = Vec::new();
    let rules = Rules {
        gitignore: true,
        kebabignore: true,
    };
    let (builder, blacklisted) = builder(start, root, opts, rules, &mut out);
    for result in builder.build() {
        match result {
            Ok(entry) => {
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let rel = relative(entry.path(), root);
                if is_generated_name(&entry.file_name().to_string_lossy()) {
                    out.push(WalkItem::Skipped {
                        rel,
                        reason: SkipReason::Generated,
                        detail: "lock file or minified code".into(),
                    });
                    continue;
                }
                match entry.metadata() {
                    Ok(meta) if meta.len() == 0 => out.push(WalkItem::Skipped {
                        rel,
                        reason: SkipReason::Empty,
                        detail: "0 bytes".into(),
                    }),
                    Ok(meta) if meta.len() > opts.max_file_bytes => out.push(WalkItem::Skipped {
                        rel,
                        reason: SkipReason::SizeExceeded,
                        detail: format!(
                            "{} exceeds the {} cap",
                            human_bytes(meta.len()),
                            human_bytes(opts.max_file_bytes)
                        ),
                    }),
                    Ok(meta) => out.push(WalkItem::File {
                        abs: entry.path().to_path_buf(),
                        rel,
                        size: meta.len(),
                    }),
                    Err(e) => out.push(WalkItem::Error {
                        rel,
                        message: e.to_string(),
                    }),
                }
            }
            Err(e) => out.push(WalkItem::Error {
                rel: error_path(&e).map_or_else(String::new, |p| relative(&p, root)),
                message: error_message(&e),
            }),
        }
    }
    let pruned = std::mem::take(&mut *blacklisted.lock().expect("blacklist lock"));
    for rel in pruned {
        out.push(WalkItem::Skipped {
            rel,
            reason: SkipReason::BuiltinBlacklist,
            detail: "built-in blacklisted directory".into(),
        });
    }
    out
}

/// `path` relative to `root`, POSIX slashes, NFC.
pub fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    crate::ids::normalize_workspace_path(&rel.to_string_lossy())
}

fn error_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

fn error_message(e: &ignore::Error) -> String {
    match e {
        ignore::Error::WithPath { err, .. } => error_message(err),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_message(err)
        }
        ignore::Error::Loop { ancestor, .. } => {
            format!("symlink loop back to {}", ancestor.display())
        }
        other => other.to_string(),
    }
}

/// `1.5 MB` style sizes.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> WalkOptions {
        WalkOptions {
            max_file_bytes: 100,
            exclude: vec!["drafts/**".into()],
        }
    }

    fn names(items: &[WalkItem]) -> Vec<String> {
        items
            .iter()
            .map(|i| match i {
                WalkItem::File { rel, .. } => format!("file {rel}"),
                WalkItem::Skipped { rel, reason, .. } => format!("skip {rel} {}", reason.as_str()),
                WalkItem::Error { rel, .. } => format!("error {rel}"),
            })
            .collect()
    }

    #[test]
    fn ignores_blacklist_size_and_empty_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |p: &str, body: &[u8]| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        };
        write("a.md", b"hello");
        write("big.md", &[b'x'; 200]);
        write("empty.md", b"");
        write("target/out.md", b"x");
        write("node_modules/m/readme.md", b"x");
        write("secret.md", b"x");
        write(".gitignore", b"secret.md\n");
        write("private/p.md", b"x");
        write(".kebabignore", b"private/\n");
        write("drafts/d.md", b"x");
        write("sub/b.md", b"x");
        let items = walk(root, root, &opts());
        let mut skipped = ignored(root, root, &opts(), &items);
        skipped.sort();
        assert_eq!(
            skipped,
            vec![
                (SkipReason::Gitignore, "secret.md".to_string()),
                (SkipReason::Kebabignore, "drafts/d.md".to_string()),
                (SkipReason::Kebabignore, "private/p.md".to_string()),
            ]
        );
        assert_eq!(
            names(&items),
            vec![
                "file a.md",
                "skip big.md size_exceeded",
                "skip empty.md empty",
                "file sub/b.md",
                "skip node_modules builtin_blacklist",
                "skip target builtin_blacklist",
            ]
        );
    }

    #[test]
    fn symlink_loops_are_errors_not_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/a.md"), b"x").unwrap();
        std::os::unix::fs::symlink(root.join("d"), root.join("d/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("self.md"), root.join("self.md")).unwrap();
        let items = walk(root, root, &opts());
        let n = names(&items);
        assert!(n.contains(&"file d/a.md".to_string()), "{n:?}");
        assert!(n.contains(&"error d/loop".to_string()), "{n:?}");
        assert!(n.contains(&"error self.md".to_string()), "{n:?}");
    }

    #[test]
    fn single_file_walk_is_relative_to_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("n")).unwrap();
        std::fs::write(dir.path().join("n/x.md"), b"x").unwrap();
        let items = walk(&dir.path().join("n/x.md"), dir.path(), &opts());
        assert_eq!(names(&items), vec!["file n/x.md"]);
    }

    #[test]
    fn human_bytes_rounds() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(52_428_800), "52.4 MB");
    }
}
