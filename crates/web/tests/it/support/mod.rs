//! What the web API's tests share: a real `quire serve` app on a loopback port, and a client holding a session (the
//! cookie and the secret of the redirect's fragment), as the page holds one.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::sync::Arc;

use quire_core::Workspace;
use quire_tools::ToolRegistry;
use quire_web::{WebApp, WebModels, WebOptions};

/// Serves `ws` with `options` and `models` on a free loopback port; returns the base URL.
pub(crate) async fn serve(ws: Workspace, options: WebOptions, models: WebModels) -> String {
    let app = WebApp::new(ws, Arc::new(ToolRegistry::builtin()), options, models);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(quire_web::serve(listener, app, std::future::pending()));
    base
}

/// A client that does not follow redirects (the session's redirect carries its secret).
pub(crate) fn client() -> reqwest::Client {
    quire_embed::http::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A client with an open session on a server.
pub(crate) struct Session {
    pub(crate) base: String,
    pub(crate) http: reqwest::Client,
    /// `quire_session=...`, as the `Cookie` header carries it.
    pub(crate) cookie: String,
    /// The secret the page sends as `X-Quire-Session`.
    pub(crate) secret: String,
}

impl Session {
    /// Opens a session on `base` with `key`, as opening the address `quire serve` prints does.
    pub(crate) async fn open(base: &str, key: &str) -> Session {
        let http = client();
        let opened = http.get(format!("{base}/?token={key}")).send().await.unwrap();
        assert_eq!(opened.status(), 303);
        let cookie = opened.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let location = opened.headers()["location"].to_str().unwrap();
        let secret = location.strip_prefix("/#session=").unwrap().to_owned();
        assert_eq!(secret.len(), 64, "{location}");
        Session {
            base: base.to_owned(),
            http,
            cookie,
            secret,
        }
    }

    /// A request to `/api{path}` with both credentials of the session.
    pub(crate) fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}/api{path}", self.base))
            .header("cookie", &self.cookie)
            .header("x-quire-session", &self.secret)
    }
}
