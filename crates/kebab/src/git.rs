//! Where a file sits in git: work tree name, branch and commit, read from
//! the `.git` directory without running git.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Git facts about a work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitInfo {
    /// The work tree's directory name.
    pub repo: String,
    /// Checked-out branch (`None` when HEAD is detached).
    pub branch: Option<String>,
    /// HEAD commit, first 12 hex digits.
    pub commit: Option<String>,
}

/// Git lookups cached per directory (shared by ingest workers).
#[derive(Default)]
pub struct GitCache {
    by_dir: Mutex<HashMap<PathBuf, Option<GitInfo>>>,
}

impl GitCache {
    /// Git facts for the work tree holding `file`, if any.
    pub fn lookup(&self, file: &Path) -> Option<GitInfo> {
        let dir = file.parent()?.to_path_buf();
        if let Some(hit) = self.by_dir.lock().ok()?.get(&dir) {
            return hit.clone();
        }
        let info = dir.ancestors().find_map(work_tree_info);
        if let Ok(mut cache) = self.by_dir.lock() {
            cache.insert(dir, info.clone());
        }
        info
    }
}

/// Git facts when `dir` is the top of a work tree (`dir/.git` exists).
fn work_tree_info(dir: &Path) -> Option<GitInfo> {
    let dot_git = dir.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else if dot_git.is_file() {
        // Worktrees and submodules: `.git` is a file `gitdir: <path>`.
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text.strip_prefix("gitdir:")?.trim();
        dir.join(target)
    } else {
        return None;
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let (branch, commit) = match head.strip_prefix("ref:") {
        Some(reference) => {
            let reference = reference.trim();
            let branch = reference.strip_prefix("refs/heads/").map(String::from);
            (branch, resolve_ref(&git_dir, reference))
        }
        None => (None, Some(head.to_string())),
    };
    Some(GitInfo {
        repo: dir.file_name()?.to_string_lossy().into_owned(),
        branch,
        commit: commit
            .filter(|c| c.len() >= 12)
            .map(|c| c[..12].to_string()),
    })
}

/// The commit a ref points at: the loose ref file, else `packed-refs`.
fn resolve_ref(git_dir: &Path, reference: &str) -> Option<String> {
    if let Ok(loose) = std::fs::read_to_string(git_dir.join(reference)) {
        return Some(loose.trim().to_string());
    }
    let packed = std::fs::read_to_string(git_dir.join("packed-refs")).ok()?;
    packed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .find_map(|l| {
            let (hash, name) = l.split_once(' ')?;
            (name.trim() == reference).then(|| hash.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_commit_and_repo_from_loose_and_packed_refs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("shop");
        std::fs::create_dir_all(repo.join(".git/refs/heads")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            repo.join(".git/refs/heads/main"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        let cache = GitCache::default();
        let info = cache.lookup(&repo.join("src/lib.rs")).unwrap();
        assert_eq!(
            info,
            GitInfo {
                repo: "shop".into(),
                branch: Some("main".into()),
                commit: Some("0123456789ab".into())
            }
        );
        std::fs::remove_file(repo.join(".git/refs/heads/main")).unwrap();
        std::fs::write(
            repo.join(".git/packed-refs"),
            "# pack-refs with: peeled\nfedcba9876543210fedcba9876543210fedcba98 refs/heads/main\n",
        )
        .unwrap();
        let fresh = GitCache::default();
        assert_eq!(
            fresh
                .lookup(&repo.join("src/lib.rs"))
                .unwrap()
                .commit
                .as_deref(),
            Some("fedcba987654")
        );
        assert_eq!(
            GitCache::default().lookup(&dir.path().join("loose.rs")),
            None
        );
    }
}
