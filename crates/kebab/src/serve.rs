//! `kebab serve`: one warm, shared local service. It serves the MCP
//! Streamable HTTP transport at `/mcp` (rmcp: sessions with
//! `Mcp-Session-Id` and `DELETE`, SSE and JSON responses) with the tools
//! of `kebab mcp` ([`crate::mcp::KebabServer`]), and a small read-only
//! JSON API beside it ([`http_api`]: `/v1/<tool>`, `/healthz`), and a
//! web page for people at `/` ([`page`]: search over `/v1`), all
//! answered by one [`crate::engine`], so every client shares one loaded
//! index, model and analyser, and searches from many sessions run at once
//! on its reader threads. With `--watch`, a watcher thread keeps the roots
//! fresh as `kebab watch` does; it takes the writer lock per batch and no
//! reader ever waits for it (it loads its own embedding model, so a batch
//! being embedded holds up no query).
//!
//! Safety ([`kebab::service`] holds the rules): every request passes the
//! [`guard`] (Host, Origin, bearer token) before anything else; a
//! non-loopback address without a token is refused before binding; the
//! data directory's lock makes one server per index and tells `kebab mcp`
//! where it listens. Bounds: request bodies (4 MiB), `k` and bulk sizes
//! (the use cases'), calls running and waiting (the engine's queues:
//! `overloaded` beyond), each call's time (`timeout`), and MCP sessions
//! ([`sessions`]: idle ones closed to make room, 503 beyond).
//!
//! SIGTERM or Ctrl-C stops accepting connections, lets the calls in
//! flight finish and their answers reach their clients, ends the MCP
//! sessions, stops the watcher after its current document, and exits: 0
//! after SIGTERM (a service manager stopping the service), 130 after
//! Ctrl-C or SIGHUP, as every interrupted command.
//!
//! Slow clients hold nothing for long: a connection whose request headers
//! have not all arrived within [`HEADER_TIMEOUT`] is closed, and a request
//! body that stalls for [`BODY_TIMEOUT`] between pieces is refused.

mod guard;
mod http_api;
mod page;
mod sessions;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cli::term::errln;
use crate::engine::{Engine, Limits};
use crate::mcp::transport::MAX_MESSAGE_BYTES;
use crate::mcp::{KebabServer, tools};
use kebab::api::{ApiError, Session};
use kebab::app::Paths;
use kebab::config::Config;
use kebab::service::lock::ServerLock;
use kebab::service::{Access, Bounds};

/// How long the open connections get to close after the calls in flight
/// were answered and the sessions ended.
const HARD_STOP: Duration = Duration::from_secs(5);
/// Longest wait for a request's headers on an open connection.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the next piece of a request body.
pub(crate) const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// `kebab serve`'s flags.
pub(crate) struct Options {
    pub(crate) listen: SocketAddr,
    pub(crate) watch: bool,
    /// Roots to watch (every root when empty).
    pub(crate) roots: Vec<String>,
    pub(crate) token_file: Option<PathBuf>,
    pub(crate) readers: Option<usize>,
    pub(crate) queue: Option<usize>,
    pub(crate) timeout_secs: Option<u64>,
    /// No MCP sessions (`--stateless`).
    pub(crate) stateless: bool,
    /// `watch_event.v1` lines on stdout instead of human lines.
    pub(crate) json: bool,
}

/// Run the server until SIGTERM or Ctrl-C (see the module doc).
pub(crate) fn serve(config: Config, paths: Paths, options: Options) -> Result<u8> {
    let token =
        kebab::service::load_token(options.token_file.as_deref()).map_err(ApiError::from)?;
    let users = kebab::service::users(&config.serve, |var| std::env::var(var).ok())
        .map_err(ApiError::from)?;
    kebab::service::check_listen(options.listen, token.is_some() || !users.is_empty())
        .map_err(ApiError::from)?;
    let bounds = Bounds::resolve(
        options.readers,
        options.queue,
        options.timeout_secs,
        config.models.llm.timeout_secs,
    )
    .map_err(ApiError::from)?;
    let mut lock = ServerLock::acquire(&paths.data_dir).map_err(ApiError::from)?;
    kebab::interrupt::install_handler();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kebab-http")
        .enable_all()
        .build()
        .context("starting the server runtime")?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(options.listen))
        .map_err(|source| kebab::service::ServeError::Bind {
            addr: options.listen,
            source,
        })
        .map_err(ApiError::from)?;
    let bound = listener.local_addr().context("the address listened on")?;
    let url = format!("http://{}", connect_address(bound));
    lock.announce(&url).map_err(ApiError::from)?;

    let session = Session::new(config.clone(), paths.clone()).keep_fresh(true);
    let limits = Limits {
        readers: bounds.readers,
        read_queue: bounds.read_queue,
        model_queue: bounds.model_queue,
        timeout: Some(bounds.timeout),
    };
    let (engine, workers) = Engine::start(&session, limits, tools::dispatch)?;
    drop(session);

    // Stopped by a signal, or by the watcher when it fails.
    let stop = CancellationToken::new();
    let watcher = match options.watch {
        true => Some(start_watcher(
            Session::new(config, paths.clone()),
            options.roots,
            options.json,
            stop.clone(),
        )?),
        false => None,
    };
    errln!(
        "kebab serve: listening on {url} (MCP at {url}/mcp, JSON API at {url}/v1/; pid {}, {} \
         readers, {} s per call{}{})",
        std::process::id(),
        bounds.readers,
        bounds.timeout.as_secs(),
        match (token.is_some(), users.len()) {
            (_, 0) if token.is_none() => String::new(),
            (_, 0) => ", bearer token required".into(),
            (_, n) => format!(", bearer token required; {n} users, each reading their roots"),
        },
        if watcher.is_some() {
            ", watching roots"
        } else {
            ""
        },
    );
    tracing::info!(%url, data_dir = %paths.data_dir.display(), "kebab serve listening");

    let access = users
        .into_iter()
        .fold(Access::new(bound, token), |access, (digest, scope)| {
            access.with(digest, scope)
        });
    let state = http_api::State {
        engine: engine.clone(),
        started: Instant::now(),
        watching: watcher.is_some(),
        secret: lock.secret().into(),
    };
    let served = runtime.block_on(run(
        listener,
        engine.clone(),
        access,
        state,
        (stop, options.stateless),
        bounds,
    ));
    // Every call was answered or abandoned: the engine's threads end once
    // the last handle goes.
    drop(runtime);
    drop(engine);
    workers.join();
    // A server that failed exits with its watcher still running.
    served?;
    let watched = watcher.map(|w| w.join());
    drop(lock);
    match watched {
        Some(Ok(Err(e))) => Err(e).context("the watcher stopped"),
        Some(Err(_)) => anyhow::bail!("the watcher panicked"),
        _ => {
            errln!("kebab serve: stopped");
            Ok(
                match kebab::interrupt::requested() && !kebab::interrupt::by_terminate() {
                    true => kebab::interrupt::EXIT_INTERRUPTED,
                    false => crate::EXIT_OK,
                },
            )
        }
    }
}

/// The address a client on this machine connects to: the one listened
/// on, or loopback when that is every address.
fn connect_address(bound: SocketAddr) -> SocketAddr {
    let mut addr = bound;
    if bound.ip().is_unspecified() {
        addr.set_ip(match bound {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    addr
}

/// The watcher thread: `kebab watch` in this process, until the interrupt
/// flag is raised. When it ends by itself (an error), it stops the server.
fn start_watcher(
    session: Session,
    roots: Vec<String>,
    json: bool,
    stop: CancellationToken,
) -> Result<std::thread::JoinHandle<Result<(), ApiError>>> {
    std::thread::Builder::new()
        .name("kebab-watch".into())
        .spawn(move || {
            let mut note = |w: String| {
                errln!("warning: {}", kebab::sanitize::escape_control(&w));
            };
            let mut on_event = crate::cli::watch::show_event(json);
            let watched = session.watch(&roots, kebab::interrupt::flag(), &mut note, &mut on_event);
            if !kebab::interrupt::requested() {
                if let Err(e) = &watched {
                    errln!("kebab serve: the watcher stopped: {e}; stopping the server");
                }
                stop.cancel();
            }
            watched
        })
        .context("starting the watcher thread")
}

/// Serve on `listener` until `stop` or the interrupt flag, then drain.
async fn run(
    listener: tokio::net::TcpListener,
    engine: Arc<Engine>,
    access: Access,
    state: http_api::State,
    (stop, stateless): (CancellationToken, bool),
    bounds: Bounds,
) -> Result<()> {
    // Cancelled once the calls in flight are answered: ends every MCP
    // session and its event streams.
    let sessions = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        // The guard checks Host and Origin for every route, /mcp included.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES)
        .with_json_response(true)
        .with_legacy_session_mode(!stateless)
        .with_cancellation_token(sessions.child_token());
    let handler = KebabServer::new(engine);
    let sessions_open = Arc::new(sessions::BoundedSessions::new(kebab::service::MAX_SESSIONS));
    let mcp =
        StreamableHttpService::new(move || Ok(handler.clone()), sessions_open.clone(), config);
    let in_flight = TaskTracker::new();
    let access = Arc::new(access);
    let app = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn(guard::session_end))
        .layer(middleware::from_fn_with_state(
            sessions_open,
            guard::admit_session,
        ))
        .merge(http_api::routes(state))
        .merge(page::routes(access.clone()))
        // Every POST (an MCP call, an ask streaming over /v1) is answered
        // before a shutdown ends.
        .layer(middleware::from_fn_with_state(
            in_flight.clone(),
            guard::track_posts,
        ))
        .layer(DefaultBodyLimit::max(MAX_MESSAGE_BYTES))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            BODY_TIMEOUT,
        ))
        .layer(middleware::from_fn(guard::announced_size))
        .layer(middleware::from_fn_with_state(access, guard::check));

    let (stop_accepting, accepting_stopped) = tokio::sync::oneshot::channel::<()>();
    let drain = {
        let sessions = sessions.clone();
        async move {
            tokio::select! {
                () = interrupted() => {}
                () = stop.cancelled() => {}
            }
            errln!("kebab serve: stopping; answering the calls in flight first");
            let _ = stop_accepting.send(());
            in_flight.close();
            // No call runs longer than its timeout.
            let grace = bounds.timeout + Duration::from_secs(1);
            if tokio::time::timeout(grace, in_flight.wait()).await.is_err() {
                tracing::warn!("calls still in flight after {} s", grace.as_secs());
            }
            sessions.cancel();
        }
    };
    tokio::spawn(drain);
    let server = serve_connections(listener, app, async move {
        let _ = accepting_stopped.await;
    });
    let deadline = async {
        sessions.cancelled().await;
        tokio::time::sleep(HARD_STOP).await;
    };
    tokio::select! {
        served = server => served.context("serving HTTP")?,
        () = deadline => tracing::warn!("connections still open {} s after the sessions ended", HARD_STOP.as_secs()),
    }
    Ok(())
}

/// Accept connections on `listener` and serve `app` on each (HTTP/1.1,
/// headers within [`HEADER_TIMEOUT`]) until `stop` resolves; then ask
/// every open connection to finish the request it is answering and close,
/// and wait for them.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let closing = CancellationToken::new();
    let connections = TaskTracker::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors, a connection reset before accept:
                // the listener itself is fine.
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let closing = closing.clone();
        connections.spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = closing.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
    // New clients are refused from here on, not left hanging.
    drop(listener);
    closing.cancel();
    connections.close();
    connections.wait().await;
    Ok(())
}

/// Resolves once SIGTERM, SIGINT or SIGHUP raised the interrupt flag.
async fn interrupted() {
    while !kebab::interrupt::requested() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
