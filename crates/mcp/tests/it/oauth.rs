//! MCP authorization on a real HTTP server on loopback, spoken by hand as a client would (reqwest): the metadata
//! documents, registration, the consent page (signed in with quire's key), the code with PKCE, tokens used on the
//! MCP endpoint with the consent's choices, refresh rotation, revocation; and everything that must be refused: an
//! unregistered redirect URI, a missing or wrong verifier, a token for another resource, an expired token, a code
//! used twice, a rotated or revoked refresh token, a consent posted by another site, a wrong key.
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use quire_core::{Actor, Workspace};
use quire_mcp::http::{HttpOptions, NamedToken, NamedTokens, token_hash};
use quire_mcp::oauth::{MemoryStore, OAuthOptions, OAuthStore};
use quire_mcp::{Grant, QuireServer, ServerOptions};
use quire_tools::ToolRegistry;
use reqwest::redirect::Policy;
use serde_json::{Value, json};
use sha2::Digest as _;

const KEY: &str = "the owners key";
const VERIFIER: &str = "a-verifier-of-enough-length-for-pkce-0123456789abcdef";

fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

struct Server {
    base: String,
    tokens: NamedTokens,
    store: Arc<MemoryStore>,
    ws: Workspace,
    http: reqwest::Client,
}

/// Reads metadata documents as the binary does (quire-host's fetch is this over the same function).
struct Fetch;

impl quire_mcp::oauth::MetadataFetch for Fetch {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        addresses: &'a [std::net::SocketAddr],
        max_bytes: usize,
    ) -> quire_mcp::oauth::FetchFuture<'a> {
        Box::pin(async move {
            quire_embed::http::pinned_get(url, addresses, max_bytes, Duration::from_secs(5))
                .await
                .map_err(|e| quire_mcp::oauth::FetchError(e.to_string()))
        })
    }
}

async fn serve(access_ttl: Duration) -> Server {
    serve_with(access_ttl, Arc::new(ToolRegistry::builtin())).await
}

/// The server over `tools`.
async fn serve_with(access_ttl: Duration, tools: Arc<ToolRegistry>) -> Server {
    // reqwest has no TLS provider of its own (quire installs ring's); the test's clients need one too.
    quire_test_support::install_tls();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let ws = Workspace::open_in_memory().unwrap();
    ws.write(&Actor::User, |w| {
        w.create_notebook_path(None, "Work")?;
        w.create_notebook_path(None, "Home")
    })
    .unwrap();
    let store = Arc::new(MemoryStore::default());
    let mut oauth = OAuthOptions::new(&base, KEY.into(), store.clone(), Some(Arc::new(Fetch))).unwrap();
    oauth.access_ttl = access_ttl;
    let server = QuireServer::new(ws.clone(), tools, ServerOptions::default());
    let tokens = NamedTokens::default();
    let options = HttpOptions {
        token: Some(KEY.into()),
        oauth: Some(oauth),
        named_tokens: tokens.clone(),
        ..HttpOptions::default()
    };
    tokio::spawn(quire_mcp::http::serve(
        listener,
        server,
        options,
        std::future::pending(),
    ));
    let http = reqwest::Client::builder().redirect(Policy::none()).build().unwrap();
    Server {
        base,
        tokens,
        store,
        ws,
        http,
    }
}

impl Server {
    async fn register(&self, redirect: &str) -> String {
        let answer: Value = self
            .http
            .post(format!("{}/oauth/register", self.base))
            .json(&json!({"client_name": "Claude", "redirect_uris": [redirect], "token_endpoint_auth_method": "none"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["client_id"].as_str().unwrap().to_owned()
    }

    /// The consent page for a request; its status and HTML.
    async fn authorize<K: serde::Serialize, V: serde::Serialize>(&self, params: &[(K, V)]) -> reqwest::Response {
        self.http
            .get(format!("{}/oauth/authorize", self.base))
            .query(params)
            .send()
            .await
            .unwrap()
    }

    /// Posts the consent form (from the page's own origin unless told otherwise); the response.
    async fn consent(&self, page: &str, fields: &[(&str, &str)], origin: &str) -> reqwest::Response {
        let request = page
            .split("name=\"request\" value=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_owned();
        let mut form = vec![("request".to_owned(), request)];
        form.extend(fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        self.http
            .post(format!("{}/oauth/authorize", self.base))
            .header("origin", origin)
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    /// The whole dance up to a code: register, authorize, consent with `fields`; the client id and the code.
    async fn code(&self, redirect: &str, fields: &[(&str, &str)]) -> (String, String) {
        let client = self.register(redirect).await;
        let page = self
            .authorize(&[
                ("response_type", "code"),
                ("client_id", &client),
                ("redirect_uri", redirect),
                ("code_challenge", &challenge(VERIFIER)),
                ("code_challenge_method", "S256"),
                ("state", "xyz"),
                ("resource", &format!("{}/mcp", self.base)),
            ])
            .await;
        assert_eq!(page.status(), 200);
        let page = page.text().await.unwrap();
        assert!(page.contains("Sign in to quire") && page.contains("Claude"), "{page}");
        assert!(
            !page.contains("Work") && !page.contains("Home"),
            "nothing of the workspace before signing in"
        );
        let answer = self.consent(&page, fields, &self.base).await;
        assert_eq!(answer.status(), 302, "{:?}", answer.text().await);
        let location = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
        let get = |k: &str| {
            location
                .query_pairs()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.into_owned())
        };
        assert_eq!(get("state").as_deref(), Some("xyz"));
        assert_eq!(get("iss").as_deref(), Some(self.base.as_str()));
        (client, get("code").unwrap())
    }

    /// The usual exchange of a code: this test's redirect URI and verifier.
    async fn exchange(&self, client: &str, code: &str) -> (u16, Value) {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client),
            ("code_verifier", VERIFIER),
        ])
        .await
    }

    async fn token(&self, form: &[(&str, &str)]) -> (u16, Value) {
        let answer = self
            .http
            .post(format!("{}/oauth/token", self.base))
            .form(form)
            .send()
            .await
            .unwrap();
        (answer.status().as_u16(), answer.json().await.unwrap_or(Value::Null))
    }

    /// An MCP `initialize` with `token`: the status, and the `WWW-Authenticate` header when refused.
    async fn mcp(&self, token: &str, body: Value) -> (u16, String, String) {
        let answer = self
            .http
            .post(format!("{}/mcp", self.base))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        let challenge = answer
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (status, challenge, answer.text().await.unwrap())
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
           "capabilities": {}, "clientInfo": {"name": "Claude", "version": "1"}}})
}

const REDIRECT: &str = "https://claude.example/api/mcp/auth_callback";

#[tokio::test]
async fn metadata_point_from_the_resource_to_the_authorization_server() {
    let server = serve(Duration::from_secs(3600)).await;
    let (status, challenge, _) = server.mcp("no such token", initialize()).await;
    assert_eq!(status, 401);
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", server.base);
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    let resource: Value = server
        .http
        .get(&metadata_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resource["resource"], format!("{}/mcp", server.base));
    assert_eq!(resource["authorization_servers"], json!([server.base]));
    let issuer: Value = server
        .http
        .get(format!("{}/.well-known/oauth-authorization-server", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(issuer["issuer"], server.base);
    assert_eq!(issuer["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(issuer["client_id_metadata_document_supported"], true);
    assert_eq!(issuer["token_endpoint"], format!("{}/oauth/token", server.base));
    // A registration with a redirect URI that could leak codes is refused.
    let refused = server
        .http
        .post(format!("{}/oauth/register", server.base))
        .json(&json!({"client_name": "x", "redirect_uris": ["http://evil.example/cb"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
}

#[tokio::test]
async fn the_code_flow_gives_tokens_with_the_consents_choices_and_refresh_rotates() {
    let server = serve(Duration::from_secs(3600)).await;
    let work = server
        .ws
        .read(&Actor::User, |r| r.notebook_at_path("Work"))
        .unwrap()
        .unwrap()
        .id;
    let (client, code) = server
        .code(
            REDIRECT,
            &[
                ("key", KEY),
                ("reach", "some"),
                ("notebook", &work),
                ("read_only", "on"),
                ("decision", "allow"),
            ],
        )
        .await;
    let resource = format!("{}/mcp", server.base);
    let (status, tokens) = server
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
            ("resource", &resource),
        ])
        .await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    // The grant is named and holds the choices; only hashes are kept.
    let grants = server.store.grants().unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(
        (grants[0].name.as_str(), grants[0].read_only, grants[0].review),
        ("oauth-claude", true, false)
    );
    assert_eq!(grants[0].notebooks, vec![work]);
    assert!(!format!("{grants:?}").contains(&access) && !format!("{grants:?}").contains(&refresh));
    // The token opens the MCP endpoint (what it may do there is its grant's: tests/tests/oauth.rs calls tools).
    let (status, _, _) = server.mcp(&access, initialize()).await;
    assert_eq!(status, 200);
    // The code works once: used again, it is refused and the grant it gave is revoked.
    let again = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("client_id", client.as_str()),
        ("code_verifier", VERIFIER),
    ];
    let (status, error) = server.token(&again).await;
    assert_eq!((status, error["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(
        server.mcp(&access, initialize()).await.0,
        401,
        "the replayed code's grant is revoked"
    );
    assert!(server.store.grants().unwrap().is_empty());
    let (status, _) = server
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(status, 400, "its refresh token went with it");

    // A fresh grant: refresh rotates both tokens, and the old refresh token then revokes the grant.
    let (client, code) = server
        .code(REDIRECT, &[("key", KEY), ("decision", "allow"), ("review", "on")])
        .await;
    let (_, tokens) = server.exchange(&client, &code).await;
    let first_refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    let (status, rotated) = server
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &first_refresh),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(status, 200, "{rotated}");
    assert_ne!(rotated["refresh_token"], first_refresh.as_str());
    assert_eq!(
        server
            .mcp(tokens["access_token"].as_str().unwrap(), initialize())
            .await
            .0,
        401,
        "the old access token ends"
    );
    let new_access = rotated["access_token"].as_str().unwrap().to_owned();
    assert_eq!(server.mcp(&new_access, initialize()).await.0, 200);
    let (status, _) = server
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &first_refresh),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(status, 400);
    // Presented again at once (a client retrying a refresh whose answer it lost): refused, the grant kept.
    assert_eq!(server.mcp(&new_access, initialize()).await.0, 200);
    // Later, it means two parties hold it: the grant is revoked.
    let mut grant = server.store.grants().unwrap().remove(0);
    grant.rotated_at -= 120_000;
    server.store.put_grant(&grant).unwrap();
    let (status, _) = server
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &first_refresh),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        server.mcp(&new_access, initialize()).await.0,
        401,
        "reuse of a rotated refresh token revokes the grant"
    );

    // Revocation (RFC 7009) ends a grant by either token.
    let (client, code) = server.code(REDIRECT, &[("key", KEY), ("decision", "allow")]).await;
    let (_, tokens) = server.exchange(&client, &code).await;
    let revoked = server
        .http
        .post(format!("{}/oauth/revoke", server.base))
        .form(&[("token", tokens["refresh_token"].as_str().unwrap())])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_eq!(
        server
            .mcp(tokens["access_token"].as_str().unwrap(), initialize())
            .await
            .0,
        401
    );
    let (status, _) = server
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(status, 400, "a revoked refresh token is refused");
}

#[tokio::test]
async fn wrong_redirects_verifiers_resources_and_consents_are_refused() {
    let server = serve(Duration::from_secs(3600)).await;
    let client = server.register(REDIRECT).await;
    let code_challenge = challenge(VERIFIER);
    let base_params = |redirect: &str| -> Vec<(String, String)> {
        [
            ("response_type", "code"),
            ("client_id", client.as_str()),
            ("redirect_uri", redirect),
            ("code_challenge", code_challenge.as_str()),
            ("code_challenge_method", "S256"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    };
    // A redirect URI the client did not register: refused on the page, never redirected.
    let page = server.authorize(&base_params("https://attacker.example/cb")).await;
    assert_eq!(page.status(), 400);
    assert!(page.headers().get("location").is_none());
    // An unknown client: the same.
    let mut unknown = base_params(REDIRECT);
    unknown[1].1 = "nobody".into();
    assert_eq!(server.authorize(&unknown).await.status(), 400);
    // No PKCE, plain PKCE, another resource: refused on the page, never redirected (anyone can register a client:
    // redirecting on errors would make quire's address an open redirector).
    let mut no_pkce = base_params(REDIRECT);
    no_pkce.retain(|(k, _)| !k.starts_with("code_challenge"));
    let mut plain = base_params(REDIRECT);
    plain[4].1 = "plain".into();
    let mut other = base_params(REDIRECT);
    other.push(("resource".into(), "https://other.example/mcp".into()));
    for (params, error) in [
        (no_pkce, "invalid_request"),
        (plain, "invalid_request"),
        (other, "invalid_target"),
    ] {
        let answer = server.authorize(&params).await;
        assert_eq!(answer.status(), 400);
        assert!(answer.headers().get("location").is_none());
        assert!(answer.text().await.unwrap().contains(error));
    }

    // The consent page: a wrong key grants nothing; a form posted from another site is refused; deny redirects.
    let page = server.authorize(&base_params(REDIRECT)).await.text().await.unwrap();
    let wrong = server
        .consent(&page, &[("key", "guess"), ("decision", "allow")], &server.base)
        .await;
    assert_eq!(wrong.status(), 401);
    let page = wrong.text().await.unwrap();
    assert!(page.contains("That is not quire"), "the page is shown again: {page}");
    let forged = server
        .consent(&page, &[("key", KEY), ("decision", "allow")], "https://evil.example")
        .await;
    assert_eq!(forged.status(), 400);
    let page = server.authorize(&base_params(REDIRECT)).await.text().await.unwrap();
    let denied = server
        .consent(&page, &[("key", KEY), ("decision", "deny")], &server.base)
        .await;
    assert!(
        denied.headers()["location"]
            .to_str()
            .unwrap()
            .contains("error=access_denied")
    );

    // With a code: a wrong or missing verifier, another redirect URI, another client, another resource.
    let (client, code) = server.code(REDIRECT, &[("key", KEY), ("decision", "allow")]).await;
    for (form, why) in [
        (vec![("code_verifier", "x".repeat(50))], "wrong verifier"),
        (vec![], "no verifier"),
        (
            vec![
                ("code_verifier", VERIFIER.to_owned()),
                ("redirect_uri", "https://claude.example/other".to_owned()),
            ],
            "other redirect",
        ),
        (
            vec![
                ("code_verifier", VERIFIER.to_owned()),
                ("client_id", "someone".to_owned()),
            ],
            "other client",
        ),
        (
            vec![
                ("code_verifier", VERIFIER.to_owned()),
                ("resource", "https://other.example/mcp".to_owned()),
            ],
            "other resource",
        ),
    ] {
        let mut full: Vec<(&str, String)> = vec![
            ("grant_type", "authorization_code".into()),
            ("code", code.clone()),
            ("redirect_uri", REDIRECT.into()),
            ("client_id", client.clone()),
        ];
        for (k, v) in form {
            full.retain(|(key, _)| *key != k);
            full.push((k, v));
        }
        let borrowed: Vec<(&str, &str)> = full.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, error) = server.token(&borrowed).await;
        assert_eq!(status, 400, "{why}: {error}");
    }
    // The code still works after those refusals (none of them used it).
    let (status, tokens) = server.exchange(&client, &code).await;
    assert_eq!(status, 200, "{tokens}");
}

#[tokio::test]
async fn an_expired_token_and_a_token_for_another_server_are_refused() {
    let server = serve(Duration::ZERO).await;
    let (client, code) = server.code(REDIRECT, &[("key", KEY), ("decision", "allow")]).await;
    let (_, tokens) = server.exchange(&client, &code).await;
    let (status, challenge, body) = server.mcp(tokens["access_token"].as_str().unwrap(), initialize()).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body.contains("expired") && challenge.contains("invalid_token"),
        "{body} {challenge}"
    );
    // A token issued for another server (another resource) is refused here, whoever presents it.
    server.tokens.write().unwrap().push(NamedToken {
        hash: token_hash("foreign"),
        grant: Grant {
            name: "oauth-elsewhere".into(),
            ..Grant::default()
        },
        expires: None,
        resource: Some("https://elsewhere.example/mcp".into()),
    });
    let (status, _, body) = server.mcp("foreign", initialize()).await;
    assert_eq!(status, 401);
    assert!(body.contains("issued for another server"), "{body}");
}

#[tokio::test]
async fn a_client_named_by_its_metadata_document_needs_no_registration() {
    let server = serve(Duration::from_secs(3600)).await;
    // The client's document, served on this machine (quire accepts http:// documents only when it is itself local).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let doc_url = format!("http://{}/client.json", listener.local_addr().unwrap());
    let document = json!({"client_id": doc_url, "client_name": "Doc Client", "redirect_uris": [REDIRECT]});
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || async move { axum::Json(document) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let page = server
        .authorize(&[
            ("response_type", "code"),
            ("client_id", doc_url.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", challenge(VERIFIER).as_str()),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    assert!(page.contains("Doc Client"), "{page}");
    let answer = server
        .consent(&page, &[("key", KEY), ("decision", "allow")], &server.base)
        .await;
    let location = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let code = location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let (status, tokens) = server
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &doc_url),
            ("code_verifier", VERIFIER),
        ])
        .await;
    assert_eq!(status, 200, "{tokens}");
    // A document whose client_id is not its own address is refused.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let liar_url = format!("http://{}/client.json", listener.local_addr().unwrap());
    let lie = json!({"client_id": "http://127.0.0.1:1/other.json", "client_name": "Liar", "redirect_uris": [REDIRECT]});
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || async move { axum::Json(lie) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let refused = server
        .authorize(&[
            ("response_type", "code"),
            ("client_id", liar_url.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", challenge(VERIFIER).as_str()),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(refused.status(), 400);
}

#[tokio::test]
async fn a_desktop_client_comes_back_to_any_port_of_its_loopback_address() {
    let server = serve(Duration::from_secs(3600)).await;
    let client = server.register("http://127.0.0.1:33418/callback").await;
    let code_challenge = challenge(VERIFIER);
    let params = |redirect: &str| -> Vec<(String, String)> {
        [
            ("response_type", "code"),
            ("client_id", client.as_str()),
            ("redirect_uri", redirect),
            ("code_challenge", code_challenge.as_str()),
            ("code_challenge_method", "S256"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    };
    // RFC 8252: the port may differ; the host and the path may not.
    assert_eq!(
        server
            .authorize(&params("http://127.0.0.1:50123/callback"))
            .await
            .status(),
        200
    );
    assert_eq!(
        server.authorize(&params("http://127.0.0.1:50123/other")).await.status(),
        400
    );
    assert_eq!(
        server
            .authorize(&params("http://localhost:33418/callback"))
            .await
            .status(),
        400
    );
    // Registrations are bounded.
    let many: Vec<String> = (0..11).map(|i| format!("http://127.0.0.1/{i}")).collect();
    let refused = server
        .http
        .post(format!("{}/oauth/register", server.base))
        .json(&json!({"client_name": "many", "redirect_uris": many}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let huge = server
        .http
        .post(format!("{}/oauth/register", server.base))
        .json(&json!({"client_name": "x".repeat(100_000), "redirect_uris": [REDIRECT]}))
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), 413);
}

mod plugins;
