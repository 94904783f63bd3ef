//! The ignore files a walk honours — `.gitignore` (with a repository's
//! `.git/info/exclude`) and `.kebabignore` — read by kebab itself so their
//! cost is bounded by kebab, not by a file's length: at most
//! [`MAX_FILE_PATTERNS`] patterns (and [`MAX_FILE_BYTES`]) are read from one
//! file, at most [`MAX_WALK_PATTERNS`] from all the files one walk meets
//! (each compiled pattern costs a few KiB; a 300 000-line `.gitignore` took
//! an ingest past 3 GB); a file cut short is named in the walk's report.
//!
//! Matching is git's: in each directory from the deepest up to the top
//! (the root, or the repository holding it), the last pattern of its file
//! that matches decides (`!` keeps); the deepest file with an answer wins.
//! A `.kebabignore` answer comes before any `.gitignore` one, and
//! `.git/info/exclude` is asked last, as the `ignore` crate ranks them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Most patterns read from one ignore file.
pub const MAX_FILE_PATTERNS: usize = 10_000;
/// Most bytes read from one ignore file.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most patterns one walk reads from all its ignore files.
pub const MAX_WALK_PATTERNS: usize = 20_000;

/// Which kind of ignore file left a path out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.gitignore` or `.git/info/exclude`.
    Git,
    /// `.kebabignore`.
    Kebab,
}

/// The matchers of one directory's ignore files.
#[derive(Default)]
struct Dir {
    kebab: Option<Gitignore>,
    git: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// The ignore files of one walk, read as directories are met.
pub struct IgnoreFiles {
    /// The highest directory whose files count: the root, or the
    /// repository (a `.git` beside it) holding the root.
    top: PathBuf,
    git: bool,
    kebab: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    dirs: HashMap<PathBuf, Arc<Dir>>,
    patterns: usize,
    /// Ignore files cut short, with why.
    cut: Vec<(PathBuf, String)>,
}

impl IgnoreFiles {
    /// The ignore files of a walk inside `root`: `.gitignore` files when
    /// `git`, `.kebabignore` files when `kebab`.
    pub fn new(root: &Path, git: bool, kebab: bool) -> IgnoreFiles {
        let top = root
            .ancestors()
            .find(|d| d.join(".git").exists())
            .unwrap_or(root)
            .to_path_buf();
        IgnoreFiles {
            top,
            git,
            kebab,
            state: Mutex::default(),
        }
    }

    /// Whether `path` (a directory when `is_dir`) is left out, and by which
    /// kind of file.
    pub fn matched(&self, path: &Path, is_dir: bool) -> Option<Kind> {
        let dirs: Vec<Arc<Dir>> = path
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.top))
            .map(|d| self.dir(d))
            .collect();
        let first = |pick: fn(&Dir) -> Option<&Gitignore>| {
            dirs.iter()
                .find_map(|d| match pick(d)?.matched(path, is_dir) {
                    Match::None => None,
                    Match::Ignore(_) => Some(true),
                    Match::Whitelist(_) => Some(false),
                })
        };
        if let Some(ignored) = first(|d| d.kebab.as_ref()) {
            return ignored.then_some(Kind::Kebab);
        }
        if let Some(ignored) = first(|d| d.git.as_ref()) {
            return ignored.then_some(Kind::Git);
        }
        first(|d| d.exclude.as_ref())
            .filter(|ignored| *ignored)
            .map(|_| Kind::Git)
    }

    /// Ignore files read only in part, and why.
    pub fn cut(&self) -> Vec<(PathBuf, String)> {
        self.state.lock().map(|s| s.cut.clone()).unwrap_or_default()
    }

    /// The matchers of `dir`'s files, read on first use.
    fn dir(&self, dir: &Path) -> Arc<Dir> {
        let Ok(mut state) = self.state.lock() else {
            return Arc::default();
        };
        if let Some(found) = state.dirs.get(dir) {
            return found.clone();
        }
        let read = Arc::new(Dir {
            kebab: self
                .kebab
                .then(|| read_file(dir, &dir.join(".kebabignore"), &mut state))
                .flatten(),
            git: self
                .git
                .then(|| read_file(dir, &dir.join(".gitignore"), &mut state))
                .flatten(),
            exclude: self
                .git
                .then(|| read_file(dir, &dir.join(".git/info/exclude"), &mut state))
                .flatten(),
        });
        state.dirs.insert(dir.to_path_buf(), read.clone());
        read
    }
}

/// The patterns of the ignore file `file` (of directory `dir`), within the
/// bounds; `None` when there is no such file or it holds none.
fn read_file(dir: &Path, file: &Path, state: &mut State) -> Option<Gitignore> {
    let opened = std::fs::File::open(file).ok()?;
    if !opened.metadata().ok()?.is_file() {
        return None;
    }
    let mut builder = GitignoreBuilder::new(dir);
    let mut reader = BufReader::new(opened.take(MAX_FILE_BYTES));
    let mut line = String::new();
    let mut taken = 0usize;
    let mut why = None;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => {
                if reader.get_ref().limit() == 0 {
                    why = Some(format!("longer than {MAX_FILE_BYTES} bytes"));
                }
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
        let pattern = line.trim_end_matches(['\n', '\r']);
        if pattern.trim().is_empty() || pattern.starts_with('#') {
            continue;
        }
        if taken >= MAX_FILE_PATTERNS {
            why = Some(format!("more than {MAX_FILE_PATTERNS} patterns"));
            break;
        }
        if state.patterns >= MAX_WALK_PATTERNS {
            why = Some(format!(
                "the walk's ignore files hold more than {MAX_WALK_PATTERNS} patterns"
            ));
            break;
        }
        // A pattern git would refuse is passed over, as git does.
        if builder.add_line(Some(file.to_path_buf()), pattern).is_ok() {
            taken += 1;
            state.patterns += 1;
        }
    }
    if let Some(why) = why {
        state.cut.push((
            file.to_path_buf(),
            format!("only its first {taken} patterns are honoured: {why}"),
        ));
    }
    (taken > 0).then(|| builder.build().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn git_rules_deepest_first_kebab_before_git_and_whitelists() {
        let dir = tree(&[
            (".gitignore", "*.log\nbuild/\n"),
            ("sub/.gitignore", "!keep.log\n"),
            (".kebabignore", "private/\n!important.log\n"),
        ]);
        let root = dir.path();
        let rules = IgnoreFiles::new(root, true, true);
        assert_eq!(rules.matched(&root.join("a.log"), false), Some(Kind::Git));
        assert_eq!(rules.matched(&root.join("sub/keep.log"), false), None);
        assert_eq!(
            rules.matched(&root.join("sub/other.log"), false),
            Some(Kind::Git)
        );
        assert_eq!(rules.matched(&root.join("build"), true), Some(Kind::Git));
        assert_eq!(
            rules.matched(&root.join("build"), false),
            None,
            "build/ is for dirs"
        );
        assert_eq!(
            rules.matched(&root.join("private"), true),
            Some(Kind::Kebab)
        );
        assert_eq!(rules.matched(&root.join("important.log"), false), None);
        assert_eq!(rules.matched(&root.join("notes.md"), false), None);
        let git_only = IgnoreFiles::new(root, true, false);
        assert_eq!(git_only.matched(&root.join("private"), true), None);
        assert_eq!(
            git_only.matched(&root.join("important.log"), false),
            Some(Kind::Git)
        );
        assert!(rules.cut().is_empty());
    }

    #[test]
    fn a_huge_ignore_file_is_read_only_up_to_its_bound() {
        let mut text = String::from("first-*.tmp\n");
        for i in 0..(MAX_FILE_PATTERNS + 500) {
            text.push_str(&format!("generated/dir{i}/**/*.o{i}\n"));
        }
        text.push_str("last-*.tmp\n");
        let dir = tree(&[(".gitignore", &text)]);
        let root = dir.path();
        let rules = IgnoreFiles::new(root, true, false);
        assert_eq!(
            rules.matched(&root.join("first-1.tmp"), false),
            Some(Kind::Git)
        );
        assert_eq!(
            rules.matched(&root.join("last-1.tmp"), false),
            None,
            "past the bound"
        );
        let cut = rules.cut();
        assert_eq!(cut.len(), 1);
        assert!(cut[0].1.contains(&MAX_FILE_PATTERNS.to_string()), "{cut:?}");
    }
}
