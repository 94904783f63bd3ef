//! `kebab serve`'s read-only JSON API, for scripts and editor plugins that
//! do not speak MCP: the reading MCP tools under their own names, each
//! answered by the same dispatch on the same engine and returning the same
//! `*.v1` JSON as the tool's structured content (and `--json` of the CLI):
//!
//! - `GET /v1/search?q=…&k=&mode=&path=&tag=&kind=&code_lang=&repo=&root=`
//!   (`root` repeatable) → `search_response.v1`
//! - `POST /v1/bulk_search` with `{"queries": [...]}` → `bulk_search_response.v1`
//! - `GET /v1/fetch?kind=chunk&chunk_id=…&context=` (or `kind=doc&doc_id=…`,
//!   `kind=span&doc_id=…&line_start=&line_end=`) → `fetch_result.v1`
//! - `GET /v1/list_docs?root=` → `{"docs": [doc_summary.v1, …]}`
//! - `GET /v1/list_sessions` → `session_list.v1`; `GET
//!   /v1/show_session?session_id=…` → `session.v1`
//! - `GET /v1/schema` → `schema.v1`; `GET /v1/doctor` → `doctor.v1`
//! - `GET /healthz` → `health.v1`
//! - `GET /v1/prove?nonce=<64 hex>` → `{"proof": …}`: the server shows it
//!   serves this data directory ([`kebab::service::proof`]); asked by
//!   `kebab mcp` before it forwards, so it wants no token
//!
//! `ask` and `delete_session` write into the index, so they are taken as
//! `POST` with a JSON body only (a cross-site page can send neither the
//! content type without the server's consent nor, past the guard, its
//! `Origin`):
//!
//! - `POST /v1/ask` with `ask`'s arguments → `answer.v1`; with `Accept:
//!   text/event-stream` the answer streams as the model writes it: `token`
//!   events (`{"text": …}`), then one `answer` event (`answer.v1`) or one
//!   `error` event (`error.v1`). A client that goes away stops the ask.
//! - `POST /v1/delete_session` with `{"session_id": …}` → `session_delete.v1`
//!
//! A failure is its `error.v1` body with a status: 400 `invalid_input`, 404 for what is
//! not there (`not_indexed`, `chunk_not_found`, `doc_not_found`, and an
//! unknown tool, as `invalid_input` naming `tool`), 503 `overloaded` (with `Retry-After`), 504 `timeout`, 500
//! for the rest.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Extension, Path, Query};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value};

use super::guard::refusal;
use crate::engine::{Engine, Lane, error_value};
use crate::mcp::tools;
use crate::mcp::transport::MAX_MESSAGE_BYTES;
use kebab::api::{ApiError, Scope};
use kebab::service::Health;

/// What the API's handlers share.
#[derive(Clone)]
pub(super) struct State {
    pub(super) engine: Arc<Engine>,
    pub(super) started: Instant,
    pub(super) watching: bool,
    /// The secret of the data directory's lock file.
    pub(super) secret: Arc<str>,
}

/// The tools the API serves to `GET` and `POST`.
const READ_TOOLS: &[&str] = &[
    "search",
    "bulk_search",
    "fetch",
    "list_docs",
    "list_sessions",
    "show_session",
    "schema",
    "doctor",
];

/// The tools that write to the index, served to `POST` only.
const WRITE_TOOLS: &[&str] = &["ask", "delete_session"];

/// Query parameters whose values are numbers.
const NUMBERS: &[&str] = &["k", "line_start", "line_end", "context", "max_tokens"];

/// The API's routes.
pub(super) fn routes(state: State) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route(kebab::service::PROVE_PATH, get(prove))
        .route("/v1/{tool}", get(from_query).post(from_body))
        .with_state(state)
}

async fn healthz(axum::extract::State(state): axum::extract::State<State>) -> Json<Health> {
    let (running, queued) = state.engine.load();
    Json(Health {
        schema_version: "health.v1",
        status: "ok",
        kebab_version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        uptime_secs: state.started.elapsed().as_secs(),
        readers: state.engine.readers(),
        running,
        queued,
        watching: state.watching,
    })
}

/// `GET /v1/prove?nonce=…`: the proof that this server knows the secret of
/// the data directory's lock file.
async fn prove(
    axum::extract::State(state): axum::extract::State<State>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Response {
    let nonce = pairs
        .iter()
        .find(|(k, _)| k == "nonce")
        .map(|(_, v)| v.as_str());
    match nonce.and_then(|n| kebab::service::proof(&state.secret, n)) {
        Some(proof) => Json(serde_json::json!({ "proof": proof })).into_response(),
        None => failure(&ApiError::invalid("nonce", "a nonce is 64 hex digits")),
    }
}

/// `GET /v1/<tool>?…`: the tool with its arguments from the query string.
async fn from_query(
    axum::extract::State(state): axum::extract::State<State>,
    Extension(scope): Extension<Scope>,
    Path(tool): Path<String>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Response {
    if tool == "bulk_search" {
        return failure(&ApiError::invalid(
            "queries",
            "bulk_search takes its queries as a JSON body: POST /v1/bulk_search",
        ));
    }
    if WRITE_TOOLS.contains(&tool.as_str()) {
        let why = format!("{tool} writes to the index: POST /v1/{tool} with a JSON body");
        return refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            &ApiError::invalid("method", why),
        );
    }
    match arguments(pairs) {
        Ok(arguments) => call(&state, (&tool, arguments), scope, false).await,
        Err(e) => failure(&e),
    }
}

/// `POST /v1/<tool>` with the tool's arguments as a JSON object (what
/// `bulk_search` takes; the other reading tools too).
async fn from_body(
    axum::extract::State(state): axum::extract::State<State>,
    Extension(scope): Extension<Scope>,
    Path(tool): Path<String>,
    headers: HeaderMap,
    body: Result<Json<Map<String, Value>>, axum::extract::rejection::JsonRejection>,
) -> Response {
    match body {
        Ok(Json(arguments)) if tool == "ask" && wants_events(&headers) => {
            ask_streaming(state.engine, Value::Object(arguments), scope)
        }
        Ok(Json(arguments)) => call(&state, (&tool, Value::Object(arguments)), scope, true).await,
        // A body over the bound keeps its own status, as on /mcp.
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let message = format!(
                "request body over {MAX_MESSAGE_BYTES} bytes; send a bulk_search's queries in \
                 several calls"
            );
            refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                &ApiError::invalid("body", message),
            )
        }
        // A body that is not JSON (what a cross-site form sends) is 415.
        Err(rejection) => {
            let status = match rejection.status() {
                StatusCode::UNSUPPORTED_MEDIA_TYPE => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                _ => StatusCode::BAD_REQUEST,
            };
            refusal(status, &ApiError::invalid("body", rejection.body_text()))
        }
    }
}

/// Run a tool the API serves (a writing one only when `posted`) for
/// `scope`'s caller on the engine and answer with what it returned.
async fn call(
    state: &State,
    (tool, arguments): (&str, Value),
    scope: Scope,
    posted: bool,
) -> Response {
    let served = READ_TOOLS.contains(&tool) || (posted && WRITE_TOOLS.contains(&tool));
    if !served {
        let why = format!(
            "no API call `{tool}`; there are {} (and {} by POST)",
            READ_TOOLS.join(", "),
            WRITE_TOOLS.join(", ")
        );
        return refusal(StatusCode::NOT_FOUND, &ApiError::invalid("tool", why));
    }
    answer(
        state
            .engine
            .call(tools::lane(tool), tool, arguments, scope)
            .await,
    )
}

/// A tool's result as an API answer.
fn answer(result: Result<Value, Value>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(error) => answer_error(error),
    }
}

/// Whether the client asked for an event stream (`Accept:
/// text/event-stream`).
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"))
}

/// Pieces of a streamed answer an event stream may hold unread; a client
/// that reads slower than this holds up the ask, never the server's memory.
const EVENTS_BUFFERED: usize = 256;

/// `ask` as an event stream: a `token` event per piece the model writes,
/// then the `answer` (or `error`) event. The ask runs on the engine's model
/// lane like any other; when the client goes away the stream's end drops
/// the call, which stops the ask.
fn ask_streaming(engine: Arc<Engine>, arguments: Value, scope: Scope) -> Response {
    let (events, stream) = tokio::sync::mpsc::channel::<Bytes>(EVENTS_BUFFERED);
    tokio::spawn(async move {
        let (tokens, mut pieces) = tokio::sync::mpsc::unbounded_channel();
        let call = engine.call_streaming(Lane::Model, ("ask", arguments), scope, Some(tokens));
        tokio::pin!(call);
        let result = loop {
            tokio::select! {
                biased;
                Some(piece) = pieces.recv() => {
                    if events.send(token_event(&piece)).await.is_err() {
                        return;
                    }
                }
                result = &mut call => break result,
                () = events.closed() => return,
            }
        };
        while let Ok(piece) = pieces.try_recv() {
            let _ = events.send(token_event(&piece)).await;
        }
        let last = match &result {
            Ok(answer) => event("answer", answer),
            Err(error) => event("error", error),
        };
        let _ = events.send(last).await;
    });
    let body = futures_util::stream::unfold(stream, |mut stream| async move {
        let next = stream.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(next), stream))
    });
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The event of one piece of a streamed answer.
fn token_event(piece: &str) -> Bytes {
    event("token", &serde_json::json!({ "text": piece }))
}

/// One server-sent event: its name and its data as one line of JSON.
fn event(name: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// Query pairs as a tool's JSON arguments: `q` is `query`, each `root`
/// adds to `roots`, the number parameters are numbers; a name given twice
/// (other than `root`) is refused. Names the tool does not take are
/// refused by the tool itself.
fn arguments(pairs: Vec<(String, String)>) -> Result<Value, ApiError> {
    let mut arguments = Map::new();
    let mut roots = Vec::new();
    for (name, value) in pairs {
        if name == "root" {
            roots.push(Value::String(value));
            continue;
        }
        let name = if name == "q" {
            "query".to_string()
        } else {
            name
        };
        let value = match NUMBERS.iter().find(|n| **n == name) {
            Some(field) => Value::Number(
                value
                    .parse::<u64>()
                    .map_err(|_| {
                        ApiError::invalid(field, format!("`{value}` is not a whole number"))
                    })?
                    .into(),
            ),
            None => Value::String(value),
        };
        if arguments.contains_key(&name) {
            return Err(ApiError::invalid(
                "query string",
                format!("`{name}` is given more than once"),
            ));
        }
        arguments.insert(name, value);
    }
    if !roots.is_empty() {
        arguments.insert("roots".into(), Value::Array(roots));
    }
    Ok(Value::Object(arguments))
}

/// `error` as an API answer.
fn failure(error: &ApiError) -> Response {
    answer_error(error_value(error))
}

/// An `error.v1` body with the status its code calls for.
fn answer_error(report: Value) -> Response {
    let status = match report["code"].as_str().unwrap_or("") {
        "invalid_input" => StatusCode::BAD_REQUEST,
        "not_indexed" | "chunk_not_found" | "doc_not_found" | "session_not_found" => {
            StatusCode::NOT_FOUND
        }
        "forbidden" => StatusCode::FORBIDDEN,
        "overloaded" => StatusCode::SERVICE_UNAVAILABLE,
        "timeout" => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let mut response = (status, Json(report)).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn query_strings_become_tool_arguments() {
        let args = arguments(pairs(&[
            ("q", "raft"),
            ("k", "3"),
            ("root", "notes"),
            ("root", "code"),
            ("mode", "lexical"),
        ]))
        .unwrap();
        assert_eq!(
            args,
            json!({"query": "raft", "k": 3, "mode": "lexical", "roots": ["notes", "code"]})
        );
        let e = arguments(pairs(&[("k", "-1")])).unwrap_err();
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains("k:"), "{e}");
        let e = arguments(pairs(&[("q", "a"), ("query", "b")])).unwrap_err();
        assert!(e.to_string().contains("more than once"), "{e}");
    }

    #[test]
    fn errors_get_the_status_their_code_calls_for() {
        let status = |code: &str| answer_error(json!({ "code": code })).status();
        assert_eq!(status("invalid_input"), StatusCode::BAD_REQUEST);
        assert_eq!(status("doc_not_found"), StatusCode::NOT_FOUND);
        assert_eq!(status("session_not_found"), StatusCode::NOT_FOUND);
        assert_eq!(status("overloaded"), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(status("timeout"), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(status("internal_error"), StatusCode::INTERNAL_SERVER_ERROR);
        let busy = answer_error(json!({ "code": "overloaded" }));
        assert_eq!(busy.headers()[header::RETRY_AFTER], "1");
    }
}
