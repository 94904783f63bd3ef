//! Walking a workspace: `.gitignore`, `.kebabignore` (read within bounds:
//! [`ignore_files`]), configured excludes, a built-in blacklist of build and
//! dependency directories, and a size cap. Everything passed over for a
//! reason is reported with that reason.
//!
//! The walk stays inside the root: a symlink whose target resolves outside
//! it is not followed (like git, which never follows them), a link inside
//! it is followed once (a file reached by two paths is indexed under its
//! real one), and loops are cut. Reading a file re-checks what the walk saw
//! ([`kebab_core::paths::read_regular_file`]): the path may have become a FIFO, a device, a
//! link or a bigger file since.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use kebab_core::paths::escape_path;

pub mod ignore_files;

use ignore_files::IgnoreFiles;

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
    /// Nothing but whitespace: no chunk to make. Not bad input.
    Blank,
    /// Looks binary (see `ingest::binary_kind`).
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
    /// A symlink whose target lies outside the ingest root.
    SymlinkOutsideRoot,
    /// A symlink loop (a link to an ancestor, or to itself).
    SymlinkLoop,
    /// A second path (through a symlink) to a file already walked.
    SymlinkDuplicate,
    /// Not a regular file (FIFO, socket, device), or it became one since
    /// the walk.
    NotRegularFile,
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
            SkipReason::Blank => "blank",
            SkipReason::Binary => "binary",
            SkipReason::Unsupported => "unsupported",
            SkipReason::Unchanged => "unchanged",
            SkipReason::Orphaned => "orphaned",
            SkipReason::Generated => "generated",
            SkipReason::SymlinkOutsideRoot => "symlink_outside_root",
            SkipReason::SymlinkLoop => "symlink_loop",
            SkipReason::SymlinkDuplicate => "symlink_duplicate",
            SkipReason::NotRegularFile => "not_regular_file",
        }
    }
}

/// One thing the walk found.
#[derive(Debug, Clone)]
pub enum WalkItem {
    /// A file to consider.
    File {
        /// The path walked (possibly through a link inside the root).
        abs: PathBuf,
        /// The file's resolved path: what is opened, without following links.
        real: PathBuf,
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

impl WalkItem {
    /// The item's path relative to its root.
    pub fn rel(&self) -> &str {
        match self {
            WalkItem::File { rel, .. }
            | WalkItem::Skipped { rel, .. }
            | WalkItem::Error { rel, .. } => rel,
        }
    }
}

/// Walk options.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Files above this many bytes are skipped.
    pub max_file_bytes: u64,
    /// Extra gitignore-style exclude patterns.
    pub exclude: Vec<String>,
    /// Directories of other roots nested inside this one: left to their
    /// own root, so no file is indexed twice.
    pub nested_roots: Vec<PathBuf>,
    /// kebab's own directories inside the root (data, cache, logs): never
    /// walked, so a watcher never indexes the files it writes itself.
    pub own_dirs: Vec<PathBuf>,
}

impl WalkOptions {
    /// Whether `path` lies in one of kebab's own directories.
    fn is_own(&self, path: &Path) -> bool {
        self.own_dirs.iter().any(|d| path.starts_with(d))
    }
}

/// Whether a walk may start at `start` inside `root`: the root is still
/// the directory it was (not replaced by a link: its path resolves to
/// itself), `start` (or, when it is gone, its nearest existing parent)
/// resolves inside it with every link on the way followed, and it is not
/// one of kebab's own directories. The walk's rule for what it enters
/// (links out of the root are not followed), applied to where a walk
/// begins — so a watcher that re-walks a directory swapped for a link
/// leaves it, however the swaps were timed.
fn may_start(start: &Path, root: &Path, opts: &WalkOptions) -> bool {
    if opts.is_own(start) || !is_intact_root(root) {
        return false;
    }
    let mut at = start;
    loop {
        match at.canonicalize() {
            Ok(real) => return real.starts_with(root),
            Err(_) => match at.parent() {
                Some(parent) if parent.starts_with(root) => at = parent,
                _ => return false,
            },
        }
    }
}

/// Whether `root` is still a directory of its own: it exists and its path
/// resolves to itself (roots are stored resolved), so a root deleted and
/// made again as a link elsewhere is not.
pub fn is_intact_root(root: &Path) -> bool {
    root.canonicalize().is_ok_and(|real| real == root) && root.is_dir()
}

/// Which ignore rules a walk applies.
#[derive(Debug, Clone, Copy)]
struct Rules {
    gitignore: bool,
    kebabignore: bool,
}

/// A walker over `start` applying `rules` (kebab reads the ignore files
/// itself, within bounds: [`ignore_files`]), the configured excludes (with
/// `kebabignore`), the built-in blacklist and root containment; what it
/// prunes (blacklisted directories, links out of the root, link loops) is
/// collected in the returned list, and the ignore files it read are
/// returned too (to say which were cut short).
fn builder(
    start: &Path,
    root: &Path,
    opts: &WalkOptions,
    rules: Rules,
    errors: &mut Vec<WalkItem>,
) -> (WalkBuilder, Arc<Mutex<Vec<WalkItem>>>, Arc<IgnoreFiles>) {
    let mut builder = WalkBuilder::new(start);
    builder
        .follow_links(true)
        .standard_filters(false)
        // Dot files and directories stay out, as they always did.
        .hidden(true)
        .sort_by_file_name(|a, b| a.cmp(b));
    if rules.kebabignore {
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
    let ignore_files = Arc::new(IgnoreFiles::new(root, rules.gitignore, rules.kebabignore));
    let pruned = Arc::new(Mutex::new(Vec::new()));
    builder.filter_entry({
        let root = root.to_path_buf();
        let pruned = Arc::clone(&pruned);
        let nested = opts.nested_roots.clone();
        let own = opts.own_dirs.clone();
        let ignore_files = Arc::clone(&ignore_files);
        move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if is_dir && entry.depth() > 0 && nested.iter().chain(&own).any(|n| n == entry.path()) {
                return false;
            }
            if entry.depth() > 0 && ignore_files.matched(entry.path(), is_dir).is_some() {
                return false;
            }
            let name = entry.file_name().to_string_lossy();
            let skip = if entry.depth() > 0 && is_dir && BUILTIN_BLACKLIST.contains(&name.as_ref())
            {
                Some((
                    SkipReason::BuiltinBlacklist,
                    "built-in blacklisted directory".to_string(),
                ))
            } else if entry.path_is_symlink() {
                link_escape(entry.path(), &root)
            } else {
                None
            };
            match skip {
                Some((reason, detail)) => {
                    pruned.lock().expect("pruned lock").push(WalkItem::Skipped {
                        rel: relative(entry.path(), &root),
                        reason,
                        detail,
                    });
                    false
                }
                None => true,
            }
        }
    });
    (builder, pruned, ignore_files)
}

/// Why the symlink at `path` must not be followed: its target resolves
/// outside `root`, or never resolves (a loop).
fn link_escape(path: &Path, root: &Path) -> Option<(SkipReason, String)> {
    match path.canonicalize() {
        Ok(target) if target.starts_with(root) => None,
        Ok(target) => Some((
            SkipReason::SymlinkOutsideRoot,
            format!("links to {} outside the ingest root", escape_path(&target)),
        )),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Some((SkipReason::SymlinkLoop, "symlink loop".to_string()))
        }
        // A dangling link: the walk reports it as an error of its own.
        Err(_) => None,
    }
}

/// Relative paths of the files a walk with `rules` would visit.
fn files_under(start: &Path, root: &Path, opts: &WalkOptions, rules: Rules) -> BTreeSet<String> {
    if !may_start(start, root, opts) {
        return BTreeSet::new();
    }
    let (builder, _, _) = builder(start, root, opts, rules, &mut Vec::new());
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

/// The directories a walk of `start` (inside `root`) enters, `start` first,
/// then in walk order: every one that no ignore rule, exclude, the
/// blacklist or root containment leaves out — what a watcher watches.
pub fn dirs(start: &Path, root: &Path, opts: &WalkOptions) -> Vec<PathBuf> {
    if !may_start(start, root, opts) {
        return Vec::new();
    }
    let rules = Rules {
        gitignore: true,
        kebabignore: true,
    };
    let (builder, _, _) = builder(start, root, opts, rules, &mut Vec::new());
    builder
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(|e| e.into_path())
        .collect()
}

/// Walk `start` (a directory or a single file); paths are reported relative
/// to `root`. A file named as `start` is walked even when an ignore rule
/// matches it (the user asked for it); [`walk_files`] applies the rules.
pub fn walk(start: &Path, root: &Path, opts: &WalkOptions) -> Vec<WalkItem> {
    walk_to_depth(start, root, opts, None)
}

/// Whether a walk of `root` enters the directory `dir` (inside it): no
/// ignore rule, exclude, the blacklist or a nested root leaves it out, nor
/// any of its parents.
pub fn enters(dir: &Path, root: &Path, opts: &WalkOptions) -> bool {
    if !may_start(dir, root, opts) {
        return false;
    }
    if dir == root {
        return true;
    }
    let Some(parent) = dir.parent() else {
        return false;
    };
    if !parent.starts_with(root) || !enters(parent, root, opts) {
        return false;
    }
    let rules = Rules {
        gitignore: true,
        kebabignore: true,
    };
    let (mut builder, _, _) = builder(parent, root, opts, rules, &mut Vec::new());
    builder.max_depth(Some(1));
    builder
        .build()
        .flatten()
        .any(|e| e.depth() == 1 && e.path() == dir && e.file_type().is_some_and(|t| t.is_dir()))
}

/// The walk items of the files `files` as a walk of their directories
/// would see them: nothing for a file an ignore rule, exclude or the
/// blacklist leaves out (what a watcher applies changed paths with). Each
/// directory is read once for all its changed files, so a burst of N new
/// files in one directory costs one listing, not N.
pub fn walk_files(files: &[PathBuf], root: &Path, opts: &WalkOptions) -> Vec<WalkItem> {
    let mut by_dir: std::collections::BTreeMap<&Path, BTreeSet<String>> = Default::default();
    for file in files {
        if let Some(dir) = file.parent() {
            by_dir.entry(dir).or_default().insert(relative(file, root));
        }
    }
    let mut out = Vec::new();
    for (dir, wanted) in by_dir {
        out.extend(
            walk_to_depth(dir, root, opts, Some(1))
                .into_iter()
                .filter(|item| match item {
                    WalkItem::File { rel, .. }
                    | WalkItem::Skipped { rel, .. }
                    | WalkItem::Error { rel, .. } => wanted.contains(rel),
                }),
        );
    }
    out
}

fn walk_to_depth(
    start: &Path,
    root: &Path,
    opts: &WalkOptions,
    depth: Option<usize>,
) -> Vec<WalkItem> {
    let mut out = Vec::new();
    if !may_start(start, root, opts) {
        if !opts.is_own(start) {
            out.push(WalkItem::Skipped {
                rel: relative(start, root),
                reason: SkipReason::SymlinkOutsideRoot,
                detail: "it leads out of the root (a directory on its path is a link \
                         elsewhere, or the root itself was replaced by one)"
                    .into(),
            });
        }
        return out;
    }
    let rules = Rules {
        gitignore: true,
        kebabignore: true,
    };
    let (mut builder, pruned, ignore_files) = builder(start, root, opts, rules, &mut out);
    builder.max_depth(depth);
    for result in builder.build() {
        match result {
            Ok(entry) => {
                let Some(file_type) = entry.file_type() else {
                    continue;
                };
                if file_type.is_dir() {
                    continue;
                }
                let rel = relative(entry.path(), root);
                if !file_type.is_file() {
                    out.push(WalkItem::Skipped {
                        rel,
                        reason: SkipReason::NotRegularFile,
                        detail: "not a regular file (FIFO, socket or device)".into(),
                    });
                    continue;
                }
                if is_generated_name(&entry.file_name().to_string_lossy()) {
                    out.push(WalkItem::Skipped {
                        rel,
                        reason: SkipReason::Generated,
                        detail: "lock file or minified code".into(),
                    });
                    continue;
                }
                out.push(match entry.metadata() {
                    Ok(meta) => sized(entry.path(), rel, meta.len(), opts.max_file_bytes),
                    Err(e) => WalkItem::Error {
                        rel,
                        message: e.to_string(),
                    },
                });
            }
            Err(e) => out.push(match loop_child(&e) {
                Some(child) => WalkItem::Skipped {
                    rel: relative(&child, root),
                    reason: SkipReason::SymlinkLoop,
                    detail: "symlink loop".into(),
                },
                None => WalkItem::Error {
                    rel: error_path(&e).map_or_else(String::new, |p| relative(&p, root)),
                    message: error_message(&e),
                },
            }),
        }
    }
    out.extend(std::mem::take(&mut *pruned.lock().expect("pruned lock")));
    out.extend(
        ignore_files
            .cut()
            .into_iter()
            .map(|(file, message)| WalkItem::Error {
                rel: relative(&file, root),
                message,
            }),
    );
    dedupe_links(&mut out);
    report_unicode_twins(&mut out);
    out
}

/// The link that closes a loop, when `e` reports one: a directory link to
/// an ancestor, or a link that resolves to itself (`ELOOP`).
fn loop_child(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::WithDepth { err, .. } => loop_child(err),
        // walkdir wraps the OS error; its kind (FilesystemLoop) is not yet
        // nameable on stable Rust, so match its name.
        _ if e
            .io_error()
            .is_some_and(|io| format!("{:?}", io.kind()) == "FilesystemLoop") =>
        {
            error_path(e)
        }
        _ => None,
    }
}

/// The walk item of a regular file of `len` bytes at `path`.
fn sized(path: &Path, rel: String, len: u64, max_file_bytes: u64) -> WalkItem {
    if len == 0 {
        return WalkItem::Skipped {
            rel,
            reason: SkipReason::Empty,
            detail: "0 bytes".into(),
        };
    }
    if len > max_file_bytes {
        return WalkItem::Skipped {
            rel,
            reason: SkipReason::SizeExceeded,
            detail: format!(
                "{} exceeds the {} cap",
                human_bytes(len),
                human_bytes(max_file_bytes)
            ),
        };
    }
    match path.canonicalize() {
        Ok(real) => WalkItem::File {
            abs: path.to_path_buf(),
            real,
            rel,
            size: len,
        },
        Err(e) => WalkItem::Error {
            rel,
            message: e.to_string(),
        },
    }
}

/// Keep one walk item per real file: its own path when the walk reached
/// it directly, else the first link path; later paths become
/// [`SkipReason::SymlinkDuplicate`].
fn dedupe_links(items: &mut [WalkItem]) {
    let mut owner: std::collections::HashMap<PathBuf, (usize, bool)> = Default::default();
    for (i, item) in items.iter().enumerate() {
        if let WalkItem::File { abs, real, .. } = item {
            let direct = abs == real;
            let slot = owner.entry(real.clone()).or_insert((i, direct));
            if direct && !slot.1 {
                *slot = (i, true);
            }
        }
    }
    let kept_rels: std::collections::HashMap<usize, String> = owner
        .values()
        .filter_map(|&(i, _)| match &items[i] {
            WalkItem::File { rel, .. } => Some((i, rel.clone())),
            _ => None,
        })
        .collect();
    for (i, item) in items.iter_mut().enumerate() {
        let WalkItem::File { real, rel, .. } = item else {
            continue;
        };
        let (kept, _) = owner[real.as_path()];
        if kept != i {
            *item = WalkItem::Skipped {
                rel: rel.clone(),
                reason: SkipReason::SymlinkDuplicate,
                detail: format!("same file as {}", kept_rels[&kept]),
            };
        }
    }
}

/// Files whose names differ only in Unicode form (NFC `é`, NFD `e` +
/// U+0301) share one workspace path: the first in walk order (sorted by
/// name, so the same on every run) is kept, each later one becomes an
/// error that says so.
fn report_unicode_twins(items: &mut [WalkItem]) {
    let mut first: std::collections::HashMap<String, PathBuf> = Default::default();
    for item in items.iter_mut() {
        let WalkItem::File { abs, rel, .. } = item else {
            continue;
        };
        match first.get(rel.as_str()) {
            None => {
                first.insert(rel.clone(), abs.clone());
            }
            Some(kept) => {
                let message = format!(
                    "`{rel}` is spelled twice in this tree, in two Unicode forms (NFC and NFD); \
                     {} is indexed under that name and this one is not: rename one of the two files",
                    escape_path(kept)
                );
                *item = WalkItem::Error {
                    rel: rel.clone(),
                    message,
                };
            }
        }
    }
}

/// `path` relative to `root`, POSIX slashes, NFC; bytes that are not
/// UTF-8 escaped losslessly (see [`escape_path`]).
pub fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    kebab_core::ids::normalize_workspace_path(&escape_path(rel))
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
    use kebab_core::paths::{ReadRefusal, read_regular_file, unescape_path};

    fn opts() -> WalkOptions {
        WalkOptions {
            max_file_bytes: 100,
            exclude: vec!["drafts/**".into()],
            nested_roots: Vec::new(),
            own_dirs: Vec::new(),
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
    fn kebabs_own_directories_are_never_walked_nor_watched() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        for p in [
            "note.md",
            "kebab-data/lexical/meta.json",
            "kebab-data/writer.lock",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"x").unwrap();
        }
        let data = root.join("kebab-data");
        let own = WalkOptions {
            own_dirs: vec![data.clone()],
            ..opts()
        };
        assert_eq!(names(&walk(root, root, &own)), vec!["file note.md"]);
        assert_eq!(dirs(root, root, &own), vec![root.clone()]);
        assert!(dirs(&data, root, &own).is_empty());
        assert!(!enters(&data.join("lexical"), root, &own));
        assert!(walk_files(&[data.join("writer.lock")], root, &own).is_empty());
        assert!(ignored(&data, root, &own, &[]).is_empty());
        // Without the rule, the same walk indexes the data directory.
        assert_eq!(walk(root, root, &opts()).len(), 3);
    }

    #[test]
    fn symlink_loops_are_skipped_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/a.md"), b"x").unwrap();
        std::os::unix::fs::symlink(root.join("d"), root.join("d/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("self.md"), root.join("self.md")).unwrap();
        let items = walk(root, root, &opts());
        let n = names(&items);
        assert!(n.contains(&"file d/a.md".to_string()), "{n:?}");
        assert!(n.contains(&"skip d/loop symlink_loop".to_string()), "{n:?}");
        assert!(
            n.contains(&"skip self.md symlink_loop".to_string()),
            "{n:?}"
        );
    }

    #[test]
    fn links_out_of_the_root_are_not_followed_and_inner_links_once() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), b"x").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("notes")).unwrap();
        std::fs::write(root.join("notes/a.md"), b"x").unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).unwrap()
        };
        link(outside.path(), "out-dir");
        link(&outside.path().join("secret.md"), "out-file.md");
        link(Path::new("/etc"), "etc");
        link(&root.join("notes"), "notes-again");
        link(&root.join("notes/a.md"), "a-again.md");
        let items = walk(root, root, &opts());
        let n = names(&items);
        for expected in [
            "file notes/a.md",
            "skip out-dir symlink_outside_root",
            "skip out-file.md symlink_outside_root",
            "skip etc symlink_outside_root",
            "skip notes-again/a.md symlink_duplicate",
            "skip a-again.md symlink_duplicate",
        ] {
            assert!(n.contains(&expected.to_string()), "{expected} not in {n:?}");
        }
        assert_eq!(
            n.iter().filter(|l| l.starts_with("file ")).count(),
            1,
            "{n:?}"
        );
    }

    #[test]
    fn non_utf8_names_stay_distinct_and_round_trip() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        for name in [&b"bad\xff.md"[..], b"bad\xfe.md"] {
            std::fs::write(root.join(std::ffi::OsStr::from_bytes(name)), b"x").unwrap();
        }
        let items = walk(root, root, &opts());
        let rels: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                WalkItem::File { rel, .. } => Some(rel.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(rels, vec!["bad\u{FFFD}fe.md", "bad\u{FFFD}ff.md"]);
        for rel in &rels {
            assert!(root.join(unescape_path(rel)).is_file(), "{rel}");
        }
        assert_eq!(
            unescape_path("plain \u{FFFD}zz"),
            PathBuf::from("plain \u{FFFD}zz")
        );
    }

    #[test]
    fn reading_refuses_what_is_no_longer_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular_file(&fifo, 100),
            Err(ReadRefusal::NotRegular("FIFO"))
        ));
        let file = dir.path().join("f.md");
        std::fs::write(&file, vec![b'x'; 150]).unwrap();
        assert!(matches!(
            read_regular_file(&file, 100),
            Err(ReadRefusal::TooLarge(150))
        ));
        assert_eq!(read_regular_file(&file, 200).unwrap().len(), 150);
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(matches!(
            read_regular_file(&link, 200),
            Err(ReadRefusal::NotRegular("symlink"))
        ));
        let fifo_items = walk(dir.path(), dir.path(), &opts());
        assert!(names(&fifo_items).contains(&"skip pipe not_regular_file".to_string()));
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
