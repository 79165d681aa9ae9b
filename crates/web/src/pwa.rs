//! What makes the web app an installable app that opens offline (a progressive web app): its manifest (name,
//! icons, the share target a phone's share sheet sends to), its icons, and its service worker, which keeps the
//! app's shell. None of them needs a session: they hold nothing of the workspace.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const MANIFEST: &str = include_str!("../assets/manifest.webmanifest");
const WORKER: &str = include_str!("../assets/sw.js");
const ICON_SVG: &str = include_str!("../assets/icon.svg");
const ICON_192: &[u8] = include_bytes!("../assets/icon-192.png");
const ICON_512: &[u8] = include_bytes!("../assets/icon-512.png");

pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    use axum::routing::get;
    axum::Router::new()
        .route("/manifest.webmanifest", get(manifest))
        .route("/sw.js", get(worker))
        .route(
            "/assets/icon.svg",
            get(|| async { ([(header::CONTENT_TYPE, "image/svg+xml")], ICON_SVG) }),
        )
        .route(
            "/assets/icon-192.png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], ICON_192) }),
        )
        .route(
            "/assets/icon-512.png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], ICON_512) }),
        )
}

async fn manifest() -> Response {
    ([(header::CONTENT_TYPE, "application/manifest+json")], MANIFEST).into_response()
}

async fn worker() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], WORKER).into_response()
}
