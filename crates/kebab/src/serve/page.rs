//! The web page for people, at `/` on `kebab serve`'s listener: search as
//! you type, each hit with its score, root, heading path, snippet (the
//! query's words marked) and citation. Its files are part of the binary
//! (no CDN, no external fonts) and served under a strict
//! Content-Security-Policy; the page only calls `/v1` on its own origin,
//! with the server's token when it has one (asked once, kept for the
//! tab). The files hold no data, so they are served without the token,
//! under the same Host and Origin checks as everything else.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

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

/// Whether `path` is one of the page's files (served without the token).
pub(super) fn is_page_file(path: &str) -> bool {
    FILES.iter().any(|(p, _, _)| *p == path)
}

/// The page's routes.
pub(super) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, media_type, body)| {
            router.route(path, get(move || async move { file(media_type, body) }))
        })
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
