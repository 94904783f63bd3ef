//! Who is asking, and what they may read. A call from the CLI, `kebab
//! mcp` or a server without users reads everything; a call from a
//! `[[serve.users]]` user of `kebab serve` reads only that user's roots
//! and conversations. The rule lives here; the use cases (search, fetch,
//! ask, list, sessions) apply it before anything is ranked or returned,
//! so every front end gets it alike.
//!
//! - A user's search and ask retrieve from their roots only: the roots
//!   filter is set inside the engine, before top-k.
//! - A root a user may not read is to them a root the index does not have
//!   (the same error, naming it), and a chunk or document in one is not
//!   found — so neither its existence nor its ids leak.
//! - A user with no readable root sees nothing (`forbidden`).
//! - A user's conversations are theirs: stored under their name
//!   (`@name/id`), listed, shown and deleted only for them, and shown to
//!   them under the id they gave.

use std::sync::Arc;

/// Why a user's call reads nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// A root the user may not read, named in the call: to them, a root
    /// the index does not have (the same words as for one it lacks).
    #[error("the index has no root `{0}` (`kebab roots` lists them)")]
    Hidden(String),
    /// A user none of whose roots is in the index.
    #[error("user `{0}` may read no root of this index")]
    NothingReadable(String),
}

/// Whose call it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scope {
    /// A caller who may read everything: the CLI, `kebab mcp`, a server
    /// without users, or the server's own token.
    #[default]
    Everything,
    /// A `[[serve.users]]` user.
    User(Arc<User>),
}

/// A user of `kebab serve` and the roots they may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The name from `[[serve.users]]`.
    pub name: String,
    /// The roots (by name) the user may read.
    pub roots: Vec<String>,
}

impl Scope {
    /// The scope of user `name`, who may read `roots`.
    pub fn user(name: &str, roots: &[String]) -> Scope {
        Scope::User(Arc::new(User {
            name: name.to_string(),
            roots: roots.to_vec(),
        }))
    }

    /// The user's name (`None`: everything is readable).
    pub fn user_name(&self) -> Option<&str> {
        match self {
            Scope::Everything => None,
            Scope::User(u) => Some(&u.name),
        }
    }

    /// Whether documents of root `root` are readable.
    pub fn may_read(&self, root: &str) -> bool {
        match self {
            Scope::Everything => true,
            Scope::User(u) => u.roots.iter().any(|r| r == root),
        }
    }

    /// The roots a call reads: those it asked for (every root when none),
    /// within what the caller may read; `indexed` is the index's roots.
    /// For a user the answer is never empty (empty means every root): a
    /// root they may not read is refused as one the index does not have,
    /// and a user with no readable root in the index gets `forbidden`.
    pub fn roots(
        &self,
        requested: &[String],
        indexed: &[String],
    ) -> Result<Vec<String>, ScopeError> {
        let Scope::User(user) = self else {
            return Ok(requested.to_vec());
        };
        if let Some(hidden) = requested.iter().find(|r| !self.may_read(r)) {
            return Err(ScopeError::Hidden(hidden.clone()));
        }
        if !requested.is_empty() {
            return Ok(requested.to_vec());
        }
        let readable: Vec<String> = indexed
            .iter()
            .filter(|r| self.may_read(r))
            .cloned()
            .collect();
        if readable.is_empty() {
            return Err(ScopeError::NothingReadable(user.name.clone()));
        }
        Ok(readable)
    }

    /// The id a conversation is stored under.
    pub fn session_key(&self, id: &str) -> String {
        match self {
            Scope::Everything => id.to_string(),
            Scope::User(u) => format!("@{}/{id}", u.name),
        }
    }

    /// A stored conversation id as the caller knows it; `None` when the
    /// conversation is not theirs.
    pub fn shown_session(&self, stored: &str) -> Option<String> {
        match self {
            Scope::Everything => Some(stored.to_string()),
            Scope::User(u) => stored
                .strip_prefix('@')
                .and_then(|s| s.strip_prefix(u.name.as_str()))
                .and_then(|s| s.strip_prefix('/'))
                .map(str::to_string),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_user_reads_only_their_roots_and_an_unreadable_root_looks_absent() {
        let indexed = names(&["wiki", "hr", "code"]);
        let ana = Scope::user("ana", &names(&["wiki", "code", "later"]));
        assert_eq!(ana.roots(&[], &indexed).unwrap(), names(&["wiki", "code"]));
        assert_eq!(
            ana.roots(&names(&["code"]), &indexed).unwrap(),
            names(&["code"])
        );
        let e = ana.roots(&names(&["hr"]), &indexed).unwrap_err();
        assert_eq!(e, ScopeError::Hidden("hr".into()));
        assert!(e.to_string().contains("no root `hr`"), "{e}");
        let nobody = Scope::user("nobody", &[]);
        assert_eq!(
            nobody.roots(&[], &indexed).unwrap_err(),
            ScopeError::NothingReadable("nobody".into())
        );
        // Everything: as asked, every root when none.
        assert_eq!(Scope::Everything.roots(&[], &indexed).unwrap(), names(&[]));
        assert!(Scope::Everything.may_read("hr") && !ana.may_read("hr"));
    }

    #[test]
    fn conversations_are_kept_under_their_user() {
        let ana = Scope::user("ana", &[]);
        let bo = Scope::user("bo", &[]);
        let key = ana.session_key("trip");
        assert_eq!(key, "@ana/trip");
        assert_eq!(ana.shown_session(&key).as_deref(), Some("trip"));
        assert_eq!(bo.shown_session(&key), None);
        assert_eq!(ana.shown_session("trip"), None);
        // A name that starts another's: not theirs.
        assert_eq!(Scope::user("an", &[]).shown_session(&key), None);
        assert_eq!(
            Scope::Everything.shown_session(&key).as_deref(),
            Some("@ana/trip")
        );
        assert_eq!(Scope::Everything.session_key("trip"), "trip");
    }
}
