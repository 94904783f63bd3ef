//! The web page for people, at `/` on `kebab serve`'s listener: search as
//! you type, each hit with its score, root, heading path, snippet (the
//! query's words marked) and citation. Its files are part of the binary
//! (no CDN, no external fonts) and served under a strict
//! Content-Security-Policy; the page only calls `/v1` on its own origin.
//! The files hold no data, so they are served without the token, under
//! the same Host and Origin checks as everything else. A server with a
//! token lets the page in once it shows it knows it ([`TOKEN_PATH`]): the
//! answer sets the page's cookie ([`kebab::service::PAGE_COOKIE`],
//! `HttpOnly`, `SameSite=Strict`), so the token is in no URL and no
//! script's reach.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use kebab::service::{Access, PAGE_COOKIE, Refusal};

/// Where the page sends the token it was given (`POST`, `{"token": …}`).
pub(super) const TOKEN_PATH: &str = "/page/token";

/// The page's files: path, media type, content.
const FILES: &[(&str, &str, &str)] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("page/index.html"),
    ),
    (
        "/page/app.js",
        "text/javascript; charset=utf-8",
        include_str!("page/app.js"),
    ),
    (
        "/page/app.css",
        "text/css; charset=utf-8",
        include_str!("page/app.css"),
    ),
];

/// Everything from this origin, nothing inline, no framing.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'self'";

/// Whether `path` is served without the token: the page's files, and
/// where it sends the token.
pub(super) fn is_public(path: &str) -> bool {
    path == TOKEN_PATH || FILES.iter().any(|(p, _, _)| *p == path)
}

/// The page's routes.
pub(super) fn routes(access: Arc<Access>) -> Router {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, media_type, body)| {
            router.route(path, get(move || async move { file(media_type, body) }))
        })
        .route(TOKEN_PATH, post(let_in).with_state(access))
}

/// What the page sends to be let in.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Given {
    token: String,
}

/// `POST /page/token`: the right token gets the page's cookie (204); a
/// wrong one `401 unauthorized`.
async fn let_in(State(access): State<Arc<Access>>, Json(given): Json<Given>) -> Response {
    let Ok(cookie) = access.page_cookie_for(given.token.trim()) else {
        tracing::warn!("the page sent a wrong token");
        return (StatusCode::UNAUTHORIZED, Json(Refusal::Token.report())).into_response();
    };
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Some(value) = cookie {
        let cookie = format!("{PAGE_COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/");
        if let Ok(cookie) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
    }
    response
}

fn file(media_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
