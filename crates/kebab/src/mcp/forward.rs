//! `kebab mcp` forwarding to a `kebab serve` on the same data directory:
//! the stdio client keeps talking to `kebab mcp`, which passes each tool
//! call on over Streamable HTTP (rmcp's client) to the server named in the
//! data directory's lock file ([`kebab::service::lock`]), so every client
//! on the machine shares one warm engine and this process loads nothing.
//!
//! When no server runs, it does not answer, or it refuses this client (a
//! token it wants and was not given), calls are served in process; the
//! log says which, once. When the server stops while forwarding, the call
//! that found it gone is served in process, and so are later calls until a
//! server answers again: one that starts later is looked for at most every
//! [`RETRY`], and calls go to it from then on (the log says so).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, RoleClient, ServiceExt};
use tokio::sync::Mutex;

use crate::cli::term::errln;

/// How long the handshake with a running server may take.
const CONNECT: Duration = Duration::from_secs(5);
/// How often, at most, calls served in process look for a server again.
pub(crate) const RETRY: Duration = Duration::from_secs(2);

/// Where calls go: the running `kebab serve` while one answers, else this
/// process (see the module doc).
pub(crate) struct Forwarding {
    data_dir: PathBuf,
    token: Option<String>,
    state: Mutex<Found>,
}

/// The server found last, and when one was last looked for.
struct Found {
    upstream: Option<Arc<Upstream>>,
    looked: Instant,
}

impl Forwarding {
    /// Look for the server running on `data_dir` (saying what was found).
    pub(crate) async fn start(data_dir: &Path, token: Option<String>) -> Forwarding {
        let upstream = connect(data_dir, token.clone(), true).await;
        Forwarding {
            data_dir: data_dir.to_path_buf(),
            token,
            state: Mutex::new(Found {
                upstream,
                looked: Instant::now(),
            }),
        }
    }

    /// The server to forward to now: the one found while it answers, else
    /// one found since (looked for at most every [`RETRY`], quietly unless
    /// found).
    async fn upstream(&self) -> Option<Arc<Upstream>> {
        let mut found = self.state.lock().await;
        if let Some(upstream) = &found.upstream
            && !upstream.gone.load(Ordering::Relaxed)
        {
            return Some(upstream.clone());
        }
        if found.looked.elapsed() < RETRY {
            return None;
        }
        found.looked = Instant::now();
        found.upstream = connect(&self.data_dir, self.token.clone(), false).await;
        found.upstream.clone()
    }

    /// Forward one call ([`Upstream::call`]); `None` when it is to be
    /// served in process.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        self.upstream().await?.call(request).await
    }

    /// End the session with the server in use, if any.
    pub(crate) async fn close(&self) {
        let upstream = self.state.lock().await.upstream.take();
        if let Some(upstream) = upstream {
            upstream.close().await;
        }
    }
}

/// A running `kebab serve` calls are forwarded to.
pub(crate) struct Upstream {
    url: String,
    pid: u32,
    peer: Peer<RoleClient>,
    /// The client session, closed (`DELETE`) when `kebab mcp` ends.
    service: Mutex<Option<RunningService<RoleClient, ()>>>,
    /// The server stopped answering: every call is served in process.
    gone: AtomicBool,
}

/// Say what `kebab mcp` does, on stderr (an MCP client's log of this
/// server) and in the log file.
fn say(line: &str) {
    errln!("kebab mcp: {line}");
    tracing::info!("{line}");
}

/// Connect to the `kebab serve` running on `data_dir`, if one runs and
/// answers; `None` when calls are to be served in process, with a log
/// line saying why when `tell`.
async fn connect(data_dir: &Path, token: Option<String>, tell: bool) -> Option<Arc<Upstream>> {
    let note = |line: &str| {
        if tell {
            say(line);
        }
    };
    let running = match kebab::service::lock::running(data_dir) {
        Ok(Some(running)) => running,
        Ok(None) => {
            note(&format!(
                "no kebab serve runs on {}; serving in-process",
                data_dir.display()
            ));
            return None;
        }
        Err(why) => {
            note(&format!(
                "not forwarding to a server: {why}; serving in-process (hint: make the data \
                 directory yours alone with `chmod 700`)"
            ));
            return None;
        }
    };
    let pid = running.pid;
    let Some(url) = running.url else {
        note(&format!(
            "kebab serve (pid {pid}) is starting and does not listen yet; serving in-process"
        ));
        return None;
    };
    let client = match kebab::http::async_builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT)
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            note(&format!(
                "cannot build an HTTP client ({e}); serving in-process"
            ));
            return None;
        }
    };
    // Nothing, least of all the token, goes to a server that cannot show
    // it serves this data directory.
    if let Err(why) = verify(&client, &url, running.secret.as_deref()).await {
        note(&format!(
            "kebab serve (pid {pid}) at {url} did not prove it serves {} ({why}); not forwarding \
             to it, serving in-process",
            data_dir.display()
        ));
        return None;
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{url}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let service = match tokio::time::timeout(CONNECT, ().serve(transport)).await {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            note(&format!(
                "kebab serve (pid {pid}) at {url} did not accept this client ({e}); serving \
                 in-process (hint: set KEBAB_SERVE_TOKEN when the server wants a token)"
            ));
            return None;
        }
        Err(_) => {
            note(&format!(
                "kebab serve (pid {pid}) at {url} did not answer within {} s; serving in-process",
                CONNECT.as_secs()
            ));
            return None;
        }
    };
    say(&format!("forwarding to kebab serve at {url} (pid {pid})"));
    Some(Arc::new(Upstream {
        url,
        pid,
        peer: service.peer().clone(),
        service: Mutex::new(Some(service)),
        gone: AtomicBool::new(false),
    }))
}

/// Check that the server at `url` knows `secret` (the data directory's
/// lock file's): it answers a fresh challenge with [`kebab::service::proof`].
async fn verify(client: &reqwest::Client, url: &str, secret: Option<&str>) -> Result<(), String> {
    let secret = secret.ok_or("its lock file holds no secret (an older kebab?)")?;
    let nonce = kebab::service::new_secret().map_err(|e| e.to_string())?;
    let expected = kebab::service::proof(secret, &nonce).ok_or("a malformed secret")?;
    let answer = tokio::time::timeout(
        CONNECT,
        client
            .get(format!("{url}{}?nonce={nonce}", kebab::service::PROVE_PATH))
            .send(),
    )
    .await
    .map_err(|_| "no answer in time".to_string())?
    .map_err(|e| e.to_string())?;
    let body: serde_json::Value = answer.json().await.map_err(|e| e.to_string())?;
    let given = body.get("proof").and_then(|p| p.as_str()).unwrap_or("");
    // Not a secret comparison: the proof is for this nonce only.
    if given == expected {
        Ok(())
    } else {
        Err("a wrong proof".into())
    }
}

impl Upstream {
    /// Forward one call: the server's answer (a tool result, or the
    /// JSON-RPC error it sent); `None` once the server is gone, and the
    /// call is to be served in process.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        if self.gone.load(Ordering::Relaxed) {
            return None;
        }
        match self.peer.call_tool_once(request).await {
            Ok(response) => Some(Ok(response)),
            Err(ServiceError::McpError(e)) => Some(Err(e)),
            Err(e) => {
                if !self.gone.swap(true, Ordering::Relaxed) {
                    say(&format!(
                        "kebab serve (pid {}) at {} stopped answering ({e}); serving in-process",
                        self.pid, self.url
                    ));
                }
                None
            }
        }
    }

    /// End the session with the server (briefly: it may be gone).
    pub(crate) async fn close(&self) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
    }
}
