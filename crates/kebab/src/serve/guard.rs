//! The middleware in front of every route of `kebab serve`: [`check`]
//! refuses a request whose `Host`, `Origin` or bearer token
//! [`kebab::service::Access`] does not accept (403, or 401 with
//! `WWW-Authenticate: Bearer`, each with an `error.v1` body), before any
//! handler sees it; [`track_posts`] counts each POST (`/mcp`, `/v1`) until its
//! response — an event stream that carries the call's result — is sent,
//! so a shutdown waits for the answers in flight; [`session_end`] answers
//! the `DELETE` that ends an MCP session with 204; [`announced_size`]
//! answers 413 at once to a request whose headers announce a body over the
//! bound; [`admit_session`] bounds MCP sessions (503 with `Retry-After`
//! when none can be made room for) and their ids.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use tokio_util::task::TaskTracker;

use kebab::api::ApiError;
use kebab::service::{Access, MAX_SESSION_ID_BYTES};

use super::sessions::BoundedSessions;
use crate::mcp::transport::MAX_MESSAGE_BYTES;

/// Seconds a client refused a session is asked to wait.
const RETRY_AFTER_SECS: u64 = 5;

/// Refuse what `access` does not accept; pass the rest on.
pub(super) async fn check(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    // An unreadable Origin is still an Origin: it must not pass as none.
    let origin = headers
        .get(header::ORIGIN)
        .map(|v| v.to_str().unwrap_or("\u{fffd}"));
    let path = request.uri().path();
    let verdict = if path == kebab::service::PROVE_PATH || super::page::is_public(path) {
        access
            .check_public(text(header::HOST), origin)
            .map(|()| kebab::api::Scope::Everything)
    } else {
        access.check(
            text(header::HOST),
            origin,
            text(header::AUTHORIZATION),
            text(header::COOKIE),
        )
    };
    match verdict {
        // Whose call it is goes with the request, to the handler that
        // runs it (the public paths read nothing of the index).
        Ok(scope) => {
            let mut request = request;
            request.extensions_mut().insert(scope);
            next.run(request).await
        }
        Err(refusal) => {
            tracing::warn!(
                refusal = refusal.message(),
                method = %request.method(),
                path = request.uri().path(),
                "request refused"
            );
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::FORBIDDEN);
            let mut response = (status, axum::Json(refusal.report())).into_response();
            if status == StatusCode::UNAUTHORIZED {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            response
        }
    }
}

/// Hold a token of `in_flight` from a POST's arrival until its response
/// body is finished or dropped.
pub(super) async fn track_posts(
    State(in_flight): State<TaskTracker>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let token = in_flight.token();
    next.run(request).await.map(|body| {
        Body::from_stream(body.into_data_stream().map(move |chunk| {
            let _held = &token;
            chunk
        }))
    })
}

/// Answer a `DELETE` that ended an MCP session `204 No Content`: rmcp
/// answers 202, which the official Python SDK logs as a failed
/// termination (it expects 200 or 204).
pub(super) async fn session_end(request: Request, next: Next) -> Response {
    let delete = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = Body::empty();
    }
    response
}

/// `413 Payload Too Large` before any body is read, when `Content-Length`
/// announces more than a request may carry.
pub(super) async fn announced_size(request: Request, next: Next) -> Response {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match announced {
        Some(n) if n > MAX_MESSAGE_BYTES as u64 => {
            let e = ApiError::invalid(
                "body",
                format!(
                    "request body of {n} bytes is over the {MAX_MESSAGE_BYTES} bytes a request may carry"
                ),
            );
            refusal(StatusCode::PAYLOAD_TOO_LARGE, &e)
        }
        _ => next.run(request).await,
    }
}

/// Refuse an MCP session id no session could have (too long, or not
/// visible ASCII), and a new session when `sessions` has no room (503 with
/// `Retry-After`).
pub(super) async fn admit_session(
    State(sessions): State<Arc<BoundedSessions>>,
    request: Request,
    next: Next,
) -> Response {
    match request.headers().get("mcp-session-id") {
        Some(id) => {
            let bytes = id.as_bytes();
            if bytes.len() > MAX_SESSION_ID_BYTES || !bytes.iter().all(u8::is_ascii_graphic) {
                let e = ApiError::invalid(
                    "Mcp-Session-Id",
                    format!(
                        "a session id is at most {MAX_SESSION_ID_BYTES} visible ASCII characters"
                    ),
                );
                return refusal(StatusCode::BAD_REQUEST, &e);
            }
        }
        None if request.method() == Method::POST && !sessions.admit().await => {
            let e = ApiError::TooManySessions {
                open: sessions.open(),
            };
            let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, &e);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
            return response;
        }
        None => {}
    }
    next.run(request).await
}

/// `status` with `error`'s `error.v1` body.
pub(super) fn refusal(status: StatusCode, error: &ApiError) -> Response {
    (status, axum::Json(error.report())).into_response()
}
