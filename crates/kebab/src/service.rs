//! The rules of `kebab serve`, the long-running local service, apart from
//! its networking (which is the binary's): who may talk to it, where it
//! may listen, and that one data directory has one server ([`lock`]).
//!
//! - **DNS rebinding**: a web page can make a browser send requests to
//!   `127.0.0.1` under a name the page's attacker controls. Such a request
//!   names that domain in `Host` and its page in `Origin`, so [`Access`]
//!   accepts a `Host` only when it names the listening address
//!   (`127.0.0.1:PORT`, `localhost:PORT`, or the IP literal listened on),
//!   and an `Origin`, when one is sent, only when it is the server's own
//!   loopback origin (`http://127.0.0.1:PORT`, `http://localhost:PORT`,
//!   `http://[::1]:PORT`). Clients that are not browsers send no `Origin`.
//! - **Bearer token**: when one is set (`KEBAB_SERVE_TOKEN` or a token
//!   file), every request must carry `Authorization: Bearer <token>`, or
//!   the web page's cookie ([`PAGE_COOKIE`], set once the page showed it
//!   knows the token; `HttpOnly`, `SameSite=Strict`, so no other site's
//!   request carries it); the comparisons take the same time wherever the
//!   first difference is.
//! - **No open network port**: listening on an address other than
//!   loopback without a token is refused before anything is bound.

pub mod lock;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use kebab_core::bounds::{MAX_TIMEOUT_SECS, OutOfBounds, at_most};
use kebab_core::wire::ErrorReport;

use kebab_core::scope::Scope;

/// Where `kebab serve` listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7474";
/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "KEBAB_SERVE_TOKEN";
/// Largest token file read.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;
/// Most reader threads (`--readers`).
pub const MAX_READERS: usize = 64;
/// Most calls waiting for a reader (`--queue`).
pub const MAX_QUEUE: usize = 10_000;
/// Calls waiting for a reader unless told otherwise.
pub const DEFAULT_QUEUE: usize = 64;
/// Most calls waiting for the model thread (`ask`, `doctor`).
const MAX_MODEL_QUEUE: usize = 16;
/// Seconds a call may take, waiting included, unless told otherwise (or
/// the model's own timeout asks for more).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// MCP sessions one server keeps open at once (rmcp holds ~62 KB a session,
/// so ~64 MB at the bound); past it, idle sessions make room or a new one is
/// refused with 503.
pub const MAX_SESSIONS: usize = 1024;
/// Longest MCP session id a request may carry (the server's are UUIDs).
pub const MAX_SESSION_ID_BYTES: usize = 128;

/// How much a server takes on at once, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Threads answering reading calls.
    pub readers: usize,
    /// Reading calls waiting for a reader, at most; beyond it `overloaded`.
    pub read_queue: usize,
    /// `ask` / `doctor` calls waiting for the model thread, at most.
    pub model_queue: usize,
    /// How long a call may take, waiting included; then `timeout`.
    pub timeout: Duration,
}

impl Bounds {
    /// The bounds from `kebab serve`'s flags: `readers` (default: the CPU
    /// count, 2 to 8), `queue` ([`DEFAULT_QUEUE`]) and `timeout_secs`
    /// ([`DEFAULT_TIMEOUT_SECS`], or 30 s more than the model server's
    /// `llm_timeout_secs` when that is longer, so an answer ends by its
    /// own deadline first). Each is refused over its bound.
    pub fn resolve(
        readers: Option<usize>,
        queue: Option<usize>,
        timeout_secs: Option<u64>,
        llm_timeout_secs: u64,
    ) -> Result<Bounds, OutOfBounds> {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let readers = readers.unwrap_or(cores.clamp(2, 8)).max(1);
        at_most("readers", readers, MAX_READERS)?;
        let queue = queue.unwrap_or(DEFAULT_QUEUE).max(1);
        at_most("queue", queue, MAX_QUEUE)?;
        let secs = timeout_secs
            .unwrap_or(DEFAULT_TIMEOUT_SECS.max(llm_timeout_secs.saturating_add(30)))
            .max(1);
        at_most("timeout", secs, MAX_TIMEOUT_SECS)?;
        Ok(Bounds {
            readers,
            read_queue: queue,
            model_queue: queue.min(MAX_MODEL_QUEUE),
            timeout: Duration::from_secs(secs),
        })
    }
}

/// Why `kebab serve` does not start (or `kebab mcp` cannot reach it).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to listen on {addr} without a bearer token: anyone who can reach it could read the index"
    )]
    OpenNetwork { addr: SocketAddr },
    /// Another server holds the data directory.
    #[error("another kebab serve (pid {pid}) already serves {data_dir}{}", at.as_ref().map(|u| format!(" at {u}")).unwrap_or_default())]
    AlreadyServing {
        pid: u32,
        at: Option<String>,
        data_dir: PathBuf,
    },
    /// The token file cannot be read, or holds no token.
    #[error("cannot use the token file {path}: {reason}")]
    TokenFile { path: PathBuf, reason: String },
    /// The token is not something an `Authorization` header can carry.
    #[error("the bearer token must be visible ASCII without spaces (1 to 1024 characters)")]
    BadToken,
    /// A `[[serve.users]]` user whose token cannot be had.
    #[error("the token of [[serve.users]] `{user}`: {reason}")]
    UserToken { user: String, reason: String },
    /// The token variable is set but blank: a server meant to be closed
    /// would be open.
    #[error(
        "{TOKEN_ENV} is set but blank: refusing to serve without the token it was meant to hold"
    )]
    BlankToken,
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// Another user's process holds the lock of the data directory.
    #[error("the server lock {path} is held by pid {pid} of another user (uid {uid})")]
    LockedByOtherUser { path: PathBuf, pid: u32, uid: u32 },
    /// The lock file of the data directory.
    #[error("cannot use the server lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ServeError {
    /// The `error.v1` code.
    pub fn code(&self) -> &'static str {
        match self {
            ServeError::OpenNetwork { .. }
            | ServeError::BadToken
            | ServeError::BlankToken
            | ServeError::UserToken { .. } => "invalid_input",
            ServeError::AlreadyServing { .. } => "already_serving",
            ServeError::LockedByOtherUser { .. } => "locked_by_other_user",
            ServeError::TokenFile { .. } | ServeError::Bind { .. } | ServeError::Lock { .. } => {
                "io_error"
            }
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            ServeError::OpenNetwork { .. } => format!(
                "set a token ({TOKEN_ENV}=… or --token-file FILE), or listen on loopback \
                 (--listen {DEFAULT_LISTEN})"
            ),
            ServeError::AlreadyServing { .. } => "use the running server (`kebab mcp` forwards \
                 to it), stop it, or give this one another --data-dir"
                .into(),
            ServeError::TokenFile { .. } | ServeError::BadToken => {
                "put the token alone in a regular file readable by you (e.g. `openssl rand -hex \
                 32 > ~/.config/kebab/serve.token; chmod 600 …`)"
                    .into()
            }
            ServeError::UserToken { .. } => "set the variable its `token_env` names before \
                 starting the server, or give `token_blake3` (`printf %s \"$TOKEN\" | b3sum`)"
                .into(),
            ServeError::BlankToken => format!(
                "put the token in {TOKEN_ENV} (e.g. `export {TOKEN_ENV}=$(openssl rand -hex 32)`) \
                 or unset it to serve on loopback without one"
            ),
            ServeError::Bind { .. } => {
                "pick another port (--listen 127.0.0.1:PORT; port 0 picks a free one)".into()
            }
            ServeError::Lock { .. } => "check the data directory's permissions".into(),
            ServeError::LockedByOtherUser { .. } => "make the data directory yours alone (`chmod \
                 700 DATA_DIR`; kebab makes new ones so) and have that process stopped"
                .into(),
        }
    }
}

/// The bearer token clients must present: from `file` when given, else
/// from [`TOKEN_ENV`]; `None` when neither is set. A variable set to
/// nothing but spaces is an error, not an open server.
pub fn load_token(file: Option<&Path>) -> Result<Option<String>, ServeError> {
    let token = match file {
        Some(path) => {
            let refuse = |reason: String| ServeError::TokenFile {
                path: path.to_path_buf(),
                reason,
            };
            let real = path.canonicalize().map_err(|e| refuse(e.to_string()))?;
            use kebab_core::paths::ReadRefusal;
            let bytes =
                kebab_core::paths::read_regular_file(&real, MAX_TOKEN_FILE_BYTES).map_err(|e| {
                    refuse(match e {
                        ReadRefusal::NotRegular(what) => format!("it is a {what}"),
                        ReadRefusal::TooLarge(n) => {
                            format!("{n} bytes; a token file holds at most {MAX_TOKEN_FILE_BYTES}")
                        }
                        ReadRefusal::Io(e) => e.to_string(),
                        ReadRefusal::Outside(to) => format!("it leads to {to}"),
                    })
                })?;
            let text = String::from_utf8(bytes).map_err(|_| refuse("not UTF-8".into()))?;
            let token = text.trim().to_string();
            if token.is_empty() {
                return Err(refuse("it is empty".into()));
            }
            Some(token)
        }
        None => match std::env::var_os(TOKEN_ENV) {
            None => None,
            Some(value) => {
                let token = value.to_string_lossy().trim().to_string();
                if token.is_empty() {
                    return Err(ServeError::BlankToken);
                }
                Some(token)
            }
        },
    };
    if let Some(t) = &token
        && (t.len() > 1024 || !t.bytes().all(|b| b.is_ascii_graphic()))
    {
        return Err(ServeError::BadToken);
    }
    Ok(token)
}

/// Where a server proves it serves this data directory ([`proof`]); the
/// one route that wants no token.
pub const PROVE_PATH: &str = "/v1/prove";

/// A fresh secret for a server to prove it serves this data directory:
/// 32 random bytes from the OS, hex.
pub fn new_secret() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a server answers to a client's challenge `nonce` (64 hex digits):
/// blake3 keyed by its secret over the nonce, hex. Only a process that
/// read the data directory's lock file can compute it; `None` for a
/// malformed secret or nonce.
pub fn proof(secret: &str, nonce: &str) -> Option<String> {
    let key: [u8; 32] = hex32(secret)?;
    let nonce: [u8; 32] = hex32(nonce)?;
    Some(blake3::keyed_hash(&key, &nonce).to_hex().to_string())
}

/// 64 hex digits as 32 bytes.
fn hex32(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Refuse to listen on `addr` when it is not loopback and no token is set.
pub fn check_listen(addr: SocketAddr, has_token: bool) -> Result<(), ServeError> {
    if addr.ip().is_loopback() || has_token {
        Ok(())
    } else {
        Err(ServeError::OpenNetwork { addr })
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `Host` does not name the listening address (403).
    Host,
    /// `Origin` is not the server's own loopback origin (403).
    Origin,
    /// No bearer token, or the wrong one (401).
    Token,
}

impl Refusal {
    /// The sentence a refused client reads.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::Host => "Host does not name this server's listening address",
            Refusal::Origin => "Origin is not this server's own loopback origin",
            Refusal::Token => "missing or wrong bearer token (Authorization: Bearer <token>)",
        }
    }

    /// The HTTP status it is answered with.
    pub fn status(self) -> u16 {
        match self {
            Refusal::Host | Refusal::Origin => 403,
            Refusal::Token => 401,
        }
    }

    /// Its `error.v1` body (`forbidden` or `unauthorized`).
    pub fn report(self) -> ErrorReport {
        let (code, hint) = match self {
            Refusal::Host | Refusal::Origin => (
                "forbidden",
                "connect to the address the server listens on (127.0.0.1 or localhost); web \
                 pages of other origins may not call it",
            ),
            Refusal::Token => (
                "unauthorized",
                "send the server's token: `Authorization: Bearer <token>` (KEBAB_SERVE_TOKEN)",
            ),
        };
        ErrorReport {
            schema_version: "error.v1",
            code,
            message: self.message().to_string(),
            hint: Some(hint.to_string()),
            details: None,
        }
    }
}

/// Who may talk to a server listening on one address (see the module doc).
#[derive(Debug, Clone)]
pub struct Access {
    listen: SocketAddr,
    /// The tokens accepted and whose they are; none: no token is needed.
    principals: Vec<Principal>,
}

/// One accepted token: its blake3 (the token itself is not kept), the
/// value of the page's cookie that stands for it, and what its bearer may
/// read.
#[derive(Debug, Clone)]
struct Principal {
    digest: [u8; 32],
    cookie: String,
    scope: Scope,
}

impl Access {
    /// The rules for a server bound to `listen` (the port it really got),
    /// with `token` (which reads everything) required when set.
    pub fn new(listen: SocketAddr, token: Option<String>) -> Access {
        let access = Access {
            listen,
            principals: Vec::new(),
        };
        match token {
            Some(token) => access.with(token_digest(&token), Scope::Everything),
            None => access,
        }
    }

    /// Accept also the token whose blake3 is `digest`, for `scope`.
    pub fn with(mut self, digest: [u8; 32], scope: Scope) -> Access {
        let cookie = blake3::derive_key("kebab serve page cookie v1", &digest)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        self.principals.push(Principal {
            digest,
            cookie,
            scope,
        });
        self
    }

    /// Whether a token is needed at all.
    pub fn needs_token(&self) -> bool {
        !self.principals.is_empty()
    }

    /// Check one request's `Host`, `Origin`, `Authorization` and `Cookie`
    /// headers (`None`: the header is absent or not text): whose call it
    /// is, or why it is refused.
    pub fn check(
        &self,
        host: Option<&str>,
        origin: Option<&str>,
        authorization: Option<&str>,
        cookie: Option<&str>,
    ) -> Result<Scope, Refusal> {
        self.check_public(host, origin)?;
        if !self.needs_token() {
            return Ok(Scope::Everything);
        }
        let bearer = authorization.and_then(|a| a.strip_prefix("Bearer "));
        if let Some(p) = bearer.and_then(|b| self.principal_of_token(b)) {
            return Ok(p.scope.clone());
        }
        let cookie = cookie.and_then(|c| cookie_value(c, PAGE_COOKIE));
        // Every entry compared, each in constant time.
        let by_cookie =
            cookie.and_then(|c| self.matching(|p| same_secret(c.as_bytes(), p.cookie.as_bytes())));
        by_cookie.map(|p| p.scope.clone()).ok_or(Refusal::Token)
    }

    /// The value of [`PAGE_COOKIE`] that stands for `given`: `Ok(None)`
    /// when the server needs no token, [`Refusal::Token`] for a token it
    /// does not accept.
    pub fn page_cookie_for(&self, given: &str) -> Result<Option<String>, Refusal> {
        if !self.needs_token() {
            return Ok(None);
        }
        self.principal_of_token(given)
            .map(|p| Some(p.cookie.clone()))
            .ok_or(Refusal::Token)
    }

    /// The principal whose token `given` is (every entry compared, each
    /// in constant time).
    fn principal_of_token(&self, given: &str) -> Option<&Principal> {
        let digest = token_digest(given);
        self.matching(|p| same_secret(&digest, &p.digest))
    }

    /// The principal `is` picks, every one asked (no early return: how
    /// long a check takes says nothing about which entry matched).
    fn matching(&self, is: impl Fn(&Principal) -> bool) -> Option<&Principal> {
        self.principals
            .iter()
            .fold(None, |found, p| if is(p) { Some(p) } else { found })
    }

    /// `Host` and `Origin` only: what [`PROVE_PATH`] asks (a client checks
    /// who serves before it sends any token).
    pub fn check_public(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), Refusal> {
        if !host.is_some_and(|h| self.host_allowed(h)) {
            return Err(Refusal::Host);
        }
        if let Some(origin) = origin
            && !self.origin_allowed(origin)
        {
            return Err(Refusal::Origin);
        }
        Ok(())
    }

    /// `host:port` names the listening address: the port is ours, and the
    /// host is `localhost` (on a loopback or any-address listener) or an
    /// IP literal we listen on. A name other than `localhost` is what a
    /// rebinding attack sends, so none is accepted.
    fn host_allowed(&self, authority: &str) -> bool {
        let Some((host, port)) = authority.rsplit_once(':') else {
            return false;
        };
        if port.parse::<u16>().ok() != Some(self.listen.port()) {
            return false;
        }
        let ip = self.listen.ip();
        if host.eq_ignore_ascii_case("localhost") {
            return ip.is_loopback() || ip.is_unspecified();
        }
        let literal = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        match literal.parse::<IpAddr>() {
            Ok(asked) if ip.is_unspecified() => asked.is_ipv4() == ip.is_ipv4() || ip.is_ipv6(),
            Ok(asked) => asked == ip,
            Err(_) => false,
        }
    }

    /// `origin` is one of the server's loopback origins.
    fn origin_allowed(&self, origin: &str) -> bool {
        let port = self.listen.port();
        [
            format!("http://127.0.0.1:{port}"),
            format!("http://localhost:{port}"),
            format!("http://[::1]:{port}"),
        ]
        .iter()
        .any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// The name of the cookie the web page is let in by.
pub const PAGE_COOKIE: &str = "kebab_token";

/// The value of the cookie `name` in a `Cookie` header.
fn cookie_value<'h>(header: &'h str, name: &str) -> Option<&'h str> {
    header.split(';').find_map(|pair| {
        let (n, v) = pair.trim().split_once('=')?;
        (n == name).then_some(v)
    })
}

/// What a token is known by: its blake3.
pub fn token_digest(token: &str) -> [u8; 32] {
    *blake3::hash(token.as_bytes()).as_bytes()
}

/// The scopes of `[[serve.users]]`: each user's token digest (from the
/// environment variable it names, or the hash it gives) and roots. A
/// variable that is unset or blank is an error naming it.
pub fn users(
    config: &crate::config::ServeConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<([u8; 32], Scope)>, ServeError> {
    config
        .users
        .iter()
        .map(|u| {
            let refuse = |reason: String| ServeError::UserToken {
                user: u.name.clone(),
                reason,
            };
            let digest = match (&u.token_env, &u.token_blake3) {
                (Some(var), _) => {
                    let token = env(var).unwrap_or_default();
                    let token = token.trim();
                    if token.is_empty() {
                        return Err(refuse(format!("{var} is unset or blank")));
                    }
                    token_digest(token)
                }
                (None, Some(hex)) => parse_digest(hex)
                    .ok_or_else(|| refuse("token_blake3 is not 64 hex digits".into()))?,
                (None, None) => return Err(refuse("no token_env or token_blake3".into())),
            };
            Ok((digest, Scope::user(&u.name, &u.roots)))
        })
        .collect()
}

/// 64 hex digits as 32 bytes.
fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim();
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// `a == b`, in a time that depends on their lengths only.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `health.v1`: `GET /healthz` of `kebab serve`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Health {
    pub schema_version: &'static str,
    /// Always `ok` while the server answers.
    pub status: &'static str,
    pub kebab_version: &'static str,
    pub pid: u32,
    /// Seconds since the server started.
    pub uptime_secs: u64,
    /// Threads answering reading calls (search, fetch, …).
    pub readers: usize,
    /// Calls running now.
    pub running: usize,
    /// Calls waiting for a thread.
    pub queued: usize,
    /// Whether a watcher keeps the roots fresh (`--watch`).
    pub watching: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback(token: Option<&str>) -> Access {
        Access::new("127.0.0.1:7000".parse().unwrap(), token.map(String::from))
    }

    #[test]
    fn host_must_name_the_listening_address() {
        let a = loopback(None);
        for ok in ["127.0.0.1:7000", "localhost:7000", "LOCALHOST:7000"] {
            assert_eq!(
                a.check(Some(ok), None, None, None),
                Ok(Scope::Everything),
                "{ok}"
            );
        }
        for bad in [
            None,
            Some("evil.example:7000"),
            Some("127.0.0.1:7001"),
            Some("127.0.0.1"),
            Some("[::1]:7000"),
            Some("10.0.0.1:7000"),
            Some("localhost.evil.example:7000"),
        ] {
            assert_eq!(
                a.check(bad, None, None, None),
                Err(Refusal::Host),
                "{bad:?}"
            );
        }
        let any = Access::new("0.0.0.0:7000".parse().unwrap(), Some("t".into()));
        let auth = Some("Bearer t");
        assert_eq!(
            any.check(Some("192.168.1.5:7000"), None, auth, None),
            Ok(Scope::Everything)
        );
        assert_eq!(
            any.check(Some("localhost:7000"), None, auth, None),
            Ok(Scope::Everything)
        );
        assert_eq!(
            any.check(Some("kebab.example:7000"), None, auth, None),
            Err(Refusal::Host)
        );
        let v6 = Access::new("[::1]:7000".parse().unwrap(), None);
        assert_eq!(
            v6.check(Some("[::1]:7000"), None, None, None),
            Ok(Scope::Everything)
        );
    }

    #[test]
    fn only_the_loopback_origin_is_accepted() {
        let a = loopback(None);
        let host = Some("127.0.0.1:7000");
        for ok in [
            "http://127.0.0.1:7000",
            "http://localhost:7000",
            "http://[::1]:7000",
        ] {
            assert_eq!(
                a.check(host, Some(ok), None, None),
                Ok(Scope::Everything),
                "{ok}"
            );
        }
        for bad in [
            "http://evil.example",
            "http://127.0.0.1:7001",
            "https://127.0.0.1:7000",
            "null",
            "http://127.0.0.1:7000.evil.example",
        ] {
            assert_eq!(
                a.check(host, Some(bad), None, None),
                Err(Refusal::Origin),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_token_once_set_is_required() {
        let a = loopback(Some("s3cret"));
        let host = Some("127.0.0.1:7000");
        assert_eq!(
            a.check(host, None, Some("Bearer s3cret"), None),
            Ok(Scope::Everything)
        );
        for bad in [
            None,
            Some("Bearer s3cre"),
            Some("Bearer s3cret2"),
            Some("bearer s3cret"),
            Some("s3cret"),
            Some("Basic czNjcmV0"),
        ] {
            assert_eq!(
                a.check(host, None, bad, None),
                Err(Refusal::Token),
                "{bad:?}"
            );
        }
        // Host and Origin are checked before the token.
        assert_eq!(
            a.check(Some("evil:7000"), None, Some("Bearer s3cret"), None),
            Err(Refusal::Host)
        );
    }

    #[test]
    fn the_page_cookie_stands_for_the_token() {
        let a = loopback(Some("s3cret"));
        let host = Some("127.0.0.1:7000");
        let cookie = a.page_cookie_for("s3cret").unwrap().unwrap();
        assert!(!cookie.contains("s3cret") && cookie.len() == 64, "{cookie}");
        assert_eq!(a.page_cookie_for("s3cre"), Err(Refusal::Token));
        assert_ne!(
            Some(cookie.clone()),
            loopback(Some("other")).page_cookie_for("other").unwrap()
        );
        let header = format!("theme=dark; {PAGE_COOKIE}={cookie}");
        assert_eq!(
            a.check(host, None, None, Some(&header)),
            Ok(Scope::Everything)
        );
        for bad in [
            format!("{PAGE_COOKIE}=s3cret"),
            format!("{PAGE_COOKIE}={}", &cookie[1..]),
            format!("x{PAGE_COOKIE}={cookie}"),
            String::new(),
        ] {
            assert_eq!(
                a.check(host, None, None, Some(&bad)),
                Err(Refusal::Token),
                "{bad}"
            );
        }
        assert_eq!(loopback(None).page_cookie_for("anything"), Ok(None));
    }

    #[test]
    fn each_user_token_gets_its_users_scope_and_the_servers_token_everything() {
        let ana = Scope::user("ana", &["wiki".to_string()]);
        let a = loopback(Some("admin"))
            .with(token_digest("ana-token"), ana.clone())
            .with(token_digest("bo-token"), Scope::user("bo", &[]));
        let host = Some("127.0.0.1:7000");
        let bearer = |t: &str| a.check(host, None, Some(&format!("Bearer {t}")), None);
        assert_eq!(bearer("admin"), Ok(Scope::Everything));
        assert_eq!(bearer("ana-token"), Ok(ana.clone()));
        assert_eq!(bearer("bo-token").unwrap().user_name(), Some("bo"));
        assert_eq!(bearer("ana-token2"), Err(Refusal::Token));
        let cookie = a.page_cookie_for("ana-token").unwrap().unwrap();
        let header = format!("{PAGE_COOKIE}={cookie}");
        assert_eq!(a.check(host, None, None, Some(&header)), Ok(ana));
        // Users alone (no server token) still need a token.
        let users_only = loopback(None).with(token_digest("t"), Scope::user("u", &[]));
        assert!(users_only.needs_token());
        assert_eq!(
            users_only.check(host, None, None, None),
            Err(Refusal::Token)
        );
    }

    #[test]
    fn users_take_their_token_from_the_environment_or_a_hash() {
        let config = crate::config::ServeConfig {
            users: vec![
                crate::config::ServeUser {
                    name: "ana".into(),
                    token_env: Some("ANA_TOKEN".into()),
                    roots: vec!["wiki".into()],
                    ..Default::default()
                },
                crate::config::ServeUser {
                    name: "bo".into(),
                    token_blake3: Some(blake3::hash(b"bo-token").to_hex().to_string()),
                    ..Default::default()
                },
            ],
        };
        let env = |var: &str| (var == "ANA_TOKEN").then(|| " ana-token\n".to_string());
        let users = users(&config, env).unwrap();
        assert_eq!(users[0].0, token_digest("ana-token"));
        assert_eq!(users[0].1, Scope::user("ana", &["wiki".to_string()]));
        assert_eq!(users[1].0, token_digest("bo-token"));
        let e = super::users(&config, |_| None).unwrap_err();
        assert!(e.to_string().contains("ANA_TOKEN is unset"), "{e}");
    }

    #[test]
    fn a_network_address_needs_a_token() {
        let lan: SocketAddr = "0.0.0.0:7000".parse().unwrap();
        assert!(matches!(
            check_listen(lan, false),
            Err(ServeError::OpenNetwork { .. })
        ));
        assert!(check_listen(lan, true).is_ok());
        assert!(check_listen("127.0.0.1:0".parse().unwrap(), false).is_ok());
        assert!(check_listen("[::1]:0".parse().unwrap(), false).is_ok());
    }

    #[test]
    fn bounds_default_from_the_machine_and_are_refused_past_their_limit() {
        let b = Bounds::resolve(None, None, None, 120).unwrap();
        assert!((2..=8).contains(&b.readers));
        assert_eq!(b.read_queue, DEFAULT_QUEUE);
        assert_eq!(b.model_queue, MAX_MODEL_QUEUE);
        // The model's own deadline comes first.
        assert_eq!(b.timeout, Duration::from_secs(150));
        let b = Bounds::resolve(Some(3), Some(5), Some(10), 120).unwrap();
        assert_eq!((b.readers, b.read_queue, b.model_queue), (3, 5, 5));
        assert_eq!(b.timeout, Duration::from_secs(10));
        assert_eq!(
            Bounds::resolve(None, None, None, 5).unwrap().timeout,
            Duration::from_secs(DEFAULT_TIMEOUT_SECS)
        );
        for (field, r, q, t) in [
            ("readers", Some(MAX_READERS + 1), None, None),
            ("queue", None, Some(usize::MAX), None),
            ("timeout", None, None, Some(u64::MAX)),
        ] {
            assert_eq!(Bounds::resolve(r, q, t, 120).unwrap_err().field, field);
        }
    }

    #[test]
    fn token_files_hold_one_visible_token() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "  abc123\n").unwrap();
        assert_eq!(load_token(Some(&file)).unwrap().as_deref(), Some("abc123"));
        std::fs::write(&file, "\n").unwrap();
        assert!(matches!(
            load_token(Some(&file)),
            Err(ServeError::TokenFile { .. })
        ));
        std::fs::write(&file, "two words").unwrap();
        assert!(matches!(load_token(Some(&file)), Err(ServeError::BadToken)));
        assert!(matches!(
            load_token(Some(&dir.path().join("missing"))),
            Err(ServeError::TokenFile { .. })
        ));
    }
}
