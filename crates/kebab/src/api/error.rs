//! Failures of the use cases, and their one translation into `error.v1`
//! (code, message, hint, details) shared by every front end: the CLI's
//! `--json` stderr line and the MCP server's `isError` result carry the
//! same body.

use std::error::Error as StdError;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::app::AppError;
use crate::config::ConfigError;
use crate::eval::EvalError;
use crate::fetch::FetchError;
use crate::ingest::{DerivedError, IngestError};
use crate::llm::LlmError;
use crate::service::ServeError;
use crate::watch::WatchError;
use kebab_core::wire::ErrorReport;
use kebab_plugin_host::install::InstallError;
use kebab_plugin_host::scaffold::ScaffoldError;
use kebab_search::cjk::CjkError;
use kebab_search::embed::EmbedError;
use kebab_search::embed::pull::PullError;
use kebab_search::korean::KoreanError;
use kebab_search::search::SearchError;
use kebab_store::StoreError;
use kebab_store::vector::VectorError;
use kebab_store::writer_lock::LockError;

/// What a use case can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Search or ask on an index that holds nothing (or does not exist).
    /// For `ask`, `refusal` is the `answer.v1` refusal (reason `no_index`)
    /// a front end shows beside the error.
    #[error("nothing is indexed in {data_dir}")]
    NotIndexed {
        data_dir: PathBuf,
        refusal: Option<Box<kebab_core::wire::Answer>>,
    },
    /// A request that cannot be served as given (a missing field, an
    /// unknown mode, too many queries).
    #[error("invalid input: {field}: {message}")]
    InvalidInput {
        field: &'static str,
        message: String,
    },
    /// A size over its documented bound (`k`, `max_tokens`, …).
    #[error(transparent)]
    Bounds(#[from] kebab_core::bounds::OutOfBounds),
    /// A call that failed inside kebab (a bug, such as a panic): a
    /// long-lived server answers the call with it and serves the next.
    #[error("internal error in `{call}`: {message}")]
    Internal { call: String, message: String },
    /// A server taking as many calls as it is bounded to: the call was
    /// refused at once rather than queued without end.
    #[error("server busy: {running} calls running and {queued} waiting, the most it takes")]
    Overloaded { running: usize, queued: usize },
    /// A server holding as many MCP sessions as it is bounded to, none of
    /// them idle: a new session was refused.
    #[error("{open} MCP sessions are open, the most this server keeps, and none is idle")]
    TooManySessions { open: usize },
    /// A call that did not finish within a server's per-call time; it was
    /// abandoned (an `ask` stops its stream).
    #[error("`{call}` did not finish within {secs} s")]
    TimedOut { call: String, secs: u64 },
    /// A plugin name no plugin has.
    #[error("no plugin named {0}")]
    UnknownPlugin(String),
    /// A conversation id no session has.
    #[error("no session with id {0}")]
    SessionNotFound(String),
    /// A `kebab serve` user none of whose roots is in the index.
    #[error("user `{user}` may read no root of this index")]
    NothingReadable { user: String },
    /// A call that reports on the whole index (every root, its paths, the
    /// model server), made by a `kebab serve` user.
    #[error("`{call}` is for the server's operator, not for user `{user}`")]
    OperatorOnly { call: &'static str, user: String },
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    #[error(transparent)]
    Pull(#[from] PullError),
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Korean(#[from] KoreanError),
    #[error(transparent)]
    Cjk(#[from] CjkError),
    #[error(transparent)]
    App(#[from] AppError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Search(#[from] SearchError),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Watch(#[from] WatchError),
    #[error(transparent)]
    Serve(#[from] ServeError),
}

impl ApiError {
    /// An [`ApiError::InvalidInput`] naming the offending field.
    pub fn invalid(field: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::InvalidInput {
            field,
            message: message.into(),
        }
    }

    /// The `error.v1` code.
    pub fn code(&self) -> &'static str {
        self.classified().code
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        self.classified().hint
    }

    /// The `error.v1` body.
    pub fn report(&self) -> ErrorReport {
        report(self)
    }

    fn classified(&self) -> Classified {
        classify_one(self).unwrap_or_else(Classified::generic)
    }
}

/// An error's `error.v1` code, hint and details.
struct Classified {
    code: &'static str,
    hint: Option<String>,
    details: Option<Value>,
}

impl Classified {
    fn new(code: &'static str, hint: impl Into<String>) -> Classified {
        Classified {
            code,
            hint: Some(hint.into()),
            details: None,
        }
    }

    fn with_details(mut self, details: Value) -> Classified {
        self.details = Some(details);
        self
    }

    fn generic() -> Classified {
        Classified {
            code: "generic",
            hint: None,
            details: None,
        }
    }
}

/// The `error.v1` body of `err`: the first cause in its chain that kebab
/// knows decides the code and hint; the message is the whole chain.
pub fn report(err: &(dyn StdError + 'static)) -> ErrorReport {
    let mut message = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = c.source();
    }
    report_with_message(err, message)
}

/// As [`report`], with a message the caller already formatted (anyhow's
/// `{:#}` at the CLI).
pub fn report_with_message(err: &(dyn StdError + 'static), message: String) -> ErrorReport {
    let classified = std::iter::successors(Some(err), |&e| e.source())
        .find_map(classify_one)
        .unwrap_or_else(Classified::generic);
    ErrorReport {
        schema_version: "error.v1",
        code: classified.code,
        message,
        hint: classified.hint,
        details: classified.details,
    }
}

/// The classification of a use-case error.
fn classify_api(e: &ApiError) -> Option<Classified> {
    Some(match e {
        ApiError::NotIndexed { data_dir, .. } => Classified::new(
            "not_indexed",
            "`kebab ingest <dir>` first, or pass the --data-dir that holds your index",
        )
        .with_details(json!({ "data_dir": data_dir })),
        ApiError::InvalidInput { field, .. } => Classified::new(
            "invalid_input",
            "check the field it names (`kebab schema` lists what each call takes)",
        )
        .with_details(json!({ "field": field })),
        ApiError::Bounds(e) => classify_bounds(e),
        ApiError::Internal { .. } => Classified::new(
            "internal_error",
            "a bug in kebab: the call was abandoned and the server goes on; please report the message",
        ),
        ApiError::Overloaded { running, queued } => Classified::new(
            "overloaded",
            "retry in a moment; the server refuses calls beyond its bound instead of queueing them",
        )
        .with_details(json!({ "running": running, "queued": queued })),
        ApiError::TooManySessions { open } => Classified::new(
            "overloaded",
            "retry after the Retry-After seconds: sessions idle for a while are closed to make room",
        )
        .with_details(json!({ "sessions": open })),
        ApiError::TimedOut { call, secs } => Classified::new(
            "timeout",
            "narrow the call (a smaller `k`, fewer queries) or raise `kebab serve --timeout`",
        )
        .with_details(json!({ "call": call, "secs": secs })),
        ApiError::UnknownPlugin(name) => Classified::new(
            "plugin_not_found",
            "`kebab plugin list` shows the built-in and installed plugins",
        )
        .with_details(json!({ "name": name })),
        ApiError::SessionNotFound(id) => Classified::new(
            "session_not_found",
            "`kebab sessions list` shows the sessions; `kebab ask --session ID` starts one",
        )
        .with_details(json!({ "session_id": id })),
        ApiError::OperatorOnly { call, user } => Classified::new(
            "forbidden",
            "call it with the server's own token (KEBAB_SERVE_TOKEN), or `kebab doctor` on the \
             server's machine",
        )
        .with_details(json!({ "call": call, "user": user })),
        ApiError::NothingReadable { user } => Classified::new(
            "forbidden",
            "the server's `[[serve.users]]` entry for this user names the roots it may read; none \
             of them is indexed",
        )
        .with_details(json!({ "user": user })),
        ApiError::Install(e) => classify_one(e)?,
        ApiError::Scaffold(_) => Classified::new(
            "invalid_input",
            "plugin names are lowercase letters, digits and dashes; the target directory must not exist",
        ),
        ApiError::Pull(e) => Classified::new(e.code(), e.hint()),
        ApiError::Korean(_) => Classified::new(
            "io_error",
            "point at a compiled mecab-ko-dic directory (PyPI: python-mecab-ko-dic)",
        ),
        ApiError::Cjk(_) => Classified::new(
            "io_error",
            "point at a compiled IPADIC directory (PyPI: ipadic, its ipadic/dicdir)",
        ),
        ApiError::Eval(_) => Classified::new(
            "invalid_input",
            "check the suite or dataset file the message names",
        ),
        ApiError::Ingest(e) => classify_one(e)?,
        ApiError::App(e) => classify_one(e)?,
        ApiError::Store(e) => classify_one(e)?,
        ApiError::Search(e) => classify_one(e)?,
        ApiError::Fetch(e) => classify_one(e)?,
        ApiError::Llm(e) => classify_one(e)?,
        ApiError::Lock(e) => classify_one(e)?,
        ApiError::Watch(e) => classify_one(e)?,
        ApiError::Serve(e) => classify_one(e)?,
    })
}

/// A size over its bound: `invalid_input` naming the field and the bound.
fn classify_bounds(e: &kebab_core::bounds::OutOfBounds) -> Classified {
    Classified::new(
        "invalid_input",
        format!("give {} a value of at most {}", e.field, e.max),
    )
    .with_details(json!({ "field": e.field, "max": u64::try_from(e.max).unwrap_or(u64::MAX) }))
}

/// The classification of a fetch error, with the id it names.
fn classify_fetch(e: &FetchError) -> Classified {
    let hint = match e {
        FetchError::SpanNotSupported(_) => "use `kebab fetch doc` or `kebab fetch chunk`",
        _ => "ids come from `kebab search --json` (chunk_id, doc_id)",
    };
    let details = match e {
        FetchError::ChunkNotFound(id) => Some(json!({ "chunk_id": id })),
        FetchError::DocNotFound(id) | FetchError::SpanNotSupported(id) => {
            Some(json!({ "doc_id": id }))
        }
        FetchError::Store(_) => None,
    };
    let c = Classified::new(e.code(), hint);
    match details {
        Some(d) => c.with_details(d),
        None => c,
    }
}

/// The classification of a search, embedding or reranking error.
fn classify_retrieval(cause: &(dyn StdError + 'static)) -> Option<Classified> {
    if let Some(e) = cause.downcast_ref::<EmbedError>() {
        let code = match e {
            EmbedError::Remote { .. } => "model_unreachable",
            _ => "model_missing",
        };
        return Some(Classified::new(code, e.hint()));
    }
    if let Some(e) = cause.downcast_ref::<kebab_search::rerank::RerankError>() {
        return match e {
            kebab_search::rerank::RerankError::Model(e) => classify_one(e),
            _ => Some(Classified::new("model_missing", e.hint())),
        };
    }
    if let Some(e) = cause.downcast_ref::<SearchError>() {
        return match e {
            SearchError::NoVectors { .. } => Some(Classified::new(
                "model_missing",
                "`kebab doctor` shows what is missing; `--mode lexical` works without a model",
            )),
            SearchError::FullTextDamaged(_) => Some(Classified::new(
                "full_text_index_damaged",
                kebab_search::search::FULL_TEXT_HINT,
            )),
            SearchError::Store(e) => classify_one(e),
            SearchError::Embed(e) => classify_one(e),
            SearchError::Rerank(e) => classify_one(e),
            SearchError::Bounds(e) => Some(classify_bounds(e)),
            SearchError::Vector(e) => classify_one(e),
        };
    }
    None
}

/// The classification of one error value, when kebab knows its type.
fn classify_one(cause: &(dyn StdError + 'static)) -> Option<Classified> {
    if let Some(e) = cause.downcast_ref::<ApiError>() {
        return classify_api(e);
    }
    if let Some(e) = cause.downcast_ref::<FetchError>() {
        return Some(classify_fetch(e));
    }
    if let Some(e) = cause.downcast_ref::<ConfigError>() {
        return Some(Classified::new("config_invalid", e.hint()));
    }
    match cause.downcast_ref::<IngestError>() {
        Some(IngestError::Path { .. }) => {
            return Some(Classified::new(
                "io_error",
                "check that the path exists and is readable",
            ));
        }
        Some(IngestError::NotAFileOrDirectory { .. }) => {
            return Some(Classified::new(
                "invalid_input",
                "ingest a directory or a regular file; to index what a device or a pipe gives, \
                 pipe it in: `cmd | kebab ingest - --name out.txt`",
            ));
        }
        Some(IngestError::Lock(e)) => return classify_one(e),
        Some(IngestError::External(e)) => {
            use crate::ingest::external::ExternalError;
            return Some(match e {
                ExternalError::Empty => Classified::new(
                    "invalid_input",
                    "pipe the document in: `cat note.md | kebab ingest - --name note.md`",
                ),
                ExternalError::TooLarge { .. } => Classified::new(
                    "invalid_input",
                    "raise [indexing] max_file_mb, or index a smaller document",
                ),
                ExternalError::Read { .. } | ExternalError::Write { .. } => Classified::new(
                    "io_error",
                    "check that the file is readable and the data dir writable",
                ),
            });
        }
        Some(IngestError::Derived(derived)) => {
            return match derived {
                DerivedError::Store(e) => classify_one(e),
                DerivedError::Embed(e) => classify_one(e),
                DerivedError::Vector(e) => classify_one(e),
            };
        }
        _ => {}
    }
    if let Some(e) = cause.downcast_ref::<AppError>() {
        return match e {
            AppError::DataDir { .. } => Some(Classified::new(
                "io_error",
                "pass --data-dir DIR (or set KEBAB_DATA_DIR) to a writable place",
            )),
            AppError::Config(e) => classify_one(e),
            AppError::Store(e) => classify_one(e),
            AppError::Objects(e) => classify_one(e),
            AppError::Plugins(_) => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<ServeError>() {
        let classified = Classified::new(e.code(), e.hint());
        return Some(match e {
            ServeError::AlreadyServing { pid, at, .. } => {
                classified.with_details(json!({ "pid": pid, "url": at }))
            }
            _ => classified,
        });
    }
    if let Some(e) = cause.downcast_ref::<WatchError>() {
        return match e {
            WatchError::Ingest(e) => classify_one(e),
            WatchError::Store(e) => classify_one(e),
            WatchError::Watcher(_) => Some(Classified::new(
                "io_error",
                "the OS refused a file-system watcher (check fs.inotify.max_user_instances); \
                 `kebab ingest` keeps the index fresh by hand meanwhile",
            )),
        };
    }
    if let Some(e) = cause.downcast_ref::<InstallError>() {
        return Some(Classified::new(e.code(), e.hint()));
    }
    if let Some(c) = classify_retrieval(cause) {
        return Some(c);
    }
    if let Some(e) = cause.downcast_ref::<LlmError>() {
        return Some(Classified {
            code: e.code(),
            hint: None,
            details: None,
        });
    }
    if let Some(e) = cause.downcast_ref::<StoreError>() {
        return Some(classify_store(e));
    }
    if let Some(e) = cause.downcast_ref::<VectorError>() {
        let code = match e {
            VectorError::Damaged { .. } => Some("vector_index_damaged"),
            VectorError::Objects { .. }
            | VectorError::BadObjects(_)
            | VectorError::NoConditionalPut(_)
            | VectorError::ForeignIndex { .. } => Some("object_storage"),
            _ => None,
        };
        if let Some(code) = code {
            return Some(Classified::new(code, crate::app::vector_hint(e)));
        }
    }
    if let Some(LockError::OtherUser { pid, uid, .. }) = cause.downcast_ref::<LockError>() {
        return Some(
            Classified::new(
                "locked_by_other_user",
                format!(
                    "a process of another user (uid {uid}, pid {pid}) holds this index's lock: make \
                     the data directory yours alone (`chmod 700 DATA_DIR`; kebab makes new ones so) \
                     and have that process stopped"
                ),
            )
            .with_details(json!({ "pid": pid, "uid": uid })),
        );
    }
    if let Some(LockError::Io { source, .. }) = cause.downcast_ref::<LockError>()
        && matches!(
            source.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        )
    {
        return Some(Classified::new("index_read_only", READ_ONLY_HINT));
    }
    None
}

/// What to do about an index this process cannot write.
const READ_ONLY_HINT: &str = "this user cannot write the data directory: search, fetch and \
     doctor still work on it; to ingest, get write access or pass --data-dir DIR to a writable \
     place";

/// The classification of a SQLite failure, by what SQLite said.
fn classify_store(e: &StoreError) -> Classified {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked, DiskFull, SystemIoFailure};
    match e {
        StoreError::UnknownRoot(_)
        | StoreError::RootExists(_)
        | StoreError::BadRootName(_)
        | StoreError::ReservedRootName(_) => {
            return Classified::new("invalid_input", "`kebab roots` lists the index's roots");
        }
        StoreError::Db(kebab_store::DbError::Postgres(_)) => {
            return Classified::new(
                "database",
                "check `[storage] database` (KEBAB_STORAGE_DATABASE): the PostgreSQL server must \
                 be reachable, the database exist and its user allowed in; `kebab doctor` \
                 checks it",
            );
        }
        StoreError::LexicalBehind(_) => {
            return Classified::new(
                "lexical_index_behind",
                "run `kebab ingest` on this machine: it brings its lexical index up to date from \
                 PostgreSQL",
            );
        }
        _ => {}
    }
    if let StoreError::Damaged(_) = e {
        return Classified::new(
            "index_damaged",
            "move kebab.sqlite out of the data directory (keep it if you want to inspect it) and \
             run `kebab ingest` on your folders again: the index is rebuilt from them, and kebab \
             never writes to them",
        );
    }
    if e.is_unwritable() {
        return Classified::new("index_read_only", READ_ONLY_HINT);
    }
    let hint = match e.sqlite_code() {
        Some(DatabaseBusy | DatabaseLocked) => {
            "another kebab is writing to the same --data-dir: retry once it finishes"
        }
        Some(DiskFull) => "free space on the disk holding the data directory",
        Some(SystemIoFailure) => "check the disk holding the data directory",
        _ => "`kebab doctor` checks the index; `kebab ingest` rebuilds its derived tables",
    };
    Classified::new("io_error", hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_hints_and_details_come_from_the_first_known_cause() {
        let e = ApiError::NotIndexed {
            data_dir: "/tmp/kb".into(),
            refusal: None,
        };
        let r = e.report();
        assert_eq!(r.code, "not_indexed");
        assert_eq!(r.details, Some(json!({ "data_dir": "/tmp/kb" })));
        assert!(r.hint.unwrap().contains("kebab ingest"));

        let e = ApiError::invalid("chunk_id", "required when kind is chunk");
        assert_eq!(e.code(), "invalid_input");
        assert_eq!(e.report().details, Some(json!({ "field": "chunk_id" })));

        let e: ApiError = FetchError::ChunkNotFound("abc".into()).into();
        let r = e.report();
        assert_eq!(r.code, "chunk_not_found");
        assert_eq!(r.details, Some(json!({ "chunk_id": "abc" })));

        let plain = std::io::Error::other("disk on fire");
        assert_eq!(report(&plain).code, "generic");
    }
}
