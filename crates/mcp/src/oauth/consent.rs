//! The authorization endpoint: the consent page. The person who owns quire signs in with quire's key first (once per
//! browser for 12 hours; nothing of the workspace is shown before), sees which client asks and where it will be sent
//! back, chooses the notebooks it reaches, read-only and whether its changes wait for review, and allows or refuses.
//! A request that is wrong in any way is refused on the page, never redirected (anyone can register a client, so a
//! redirect on error would make quire's address an open redirector); only the person's answer goes back.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use quire_core::Actor;

use super::{AuthServer, Choices, Code, OWNER_TTL, Pending, random};
use crate::tokens::token_hash;

/// How long the person has to answer the consent page.
const PENDING_TTL: Duration = Duration::from_secs(10 * 60);
/// The sign-in cookie.
const OWNER_COOKIE: &str = "quire_owner";

/// The page, with what keeps it out of frames, caches and other sites' referrers (`same-origin`: with
/// `no-referrer`, browsers send the form's `Origin` as `null`, and the answer could not be told from a forged one).
fn page(status: StatusCode, body: String, cookie: Option<String>) -> Response {
    let mut response = (status, Html(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn shell(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width\"><title>{}</title><style>body{{font:15px/1.45 system-ui,sans-serif;max-width:34rem;\
         margin:2rem auto;padding:0 1rem;color:#1d1d1f}}fieldset{{border:1px solid #ddd;border-radius:6px;margin:0.8rem 0}}\
         label{{display:block;margin:0.25rem 0}}.error{{color:#a01010}}.hint{{color:#555;font-size:13px}}\
         button{{font:inherit;padding:0.3rem 0.9rem;margin-right:0.5rem}}.notebook{{margin-left:1.4rem}}\
         fieldset:has(input[value=all]:checked) .notebook{{opacity:0.45;pointer-events:none}}</style></head><body>{}</body></html>",
        escape(title),
        body
    )
}

/// A refusal shown on the page (the request is not trusted enough to redirect anywhere).
fn refused(why: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        shell(
            "quire: request refused",
            &format!(
                "<h1>This request cannot be allowed</h1><p class=\"error\">{}</p>\
                 <p class=\"hint\">Nothing was granted. Start again from your assistant.</p>",
                escape(why)
            ),
        ),
        None,
    )
}

/// Back to the client with an error (once its redirect URI is known to be its own).
fn back_with_error(
    server: &AuthServer,
    redirect_uri: &str,
    state: Option<&str>,
    error: &str,
    description: &str,
) -> Response {
    let mut params = vec![("error", error), ("error_description", description)];
    if let Some(state) = state {
        params.push(("state", state));
    }
    redirect(server, redirect_uri, &params, None)
}

fn redirect(server: &AuthServer, redirect_uri: &str, params: &[(&str, &str)], cookie: Option<String>) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return refused("the redirect URI is not a URL");
    };
    {
        let mut query = url.query_pairs_mut();
        for (key, value) in params {
            query.append_pair(key, value);
        }
        query.append_pair("iss", &server.options.public_url);
    }
    let mut response = (StatusCode::FOUND, [(header::LOCATION, url.to_string())]).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Whether this browser signed in with quire's key (and lately).
fn signed_in(server: &AuthServer, headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(&format!("{OWNER_COOKIE}=")).map(str::to_owned))
    else {
        return false;
    };
    let mut owners = server.owners.lock().unwrap_or_else(|e| e.into_inner());
    owners.retain(|_, at| at.elapsed() < OWNER_TTL);
    owners.contains_key(&token_hash(&value))
}

/// `GET /oauth/authorize`: the request checked, then the consent page.
pub(crate) async fn show(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let get = |k: &str| query.get(k).map(String::as_str);
    let Some(client_id) = get("client_id") else {
        return refused("client_id is missing");
    };
    let client = match server.client(client_id).await {
        Ok(client) => client,
        Err(why) => return refused(&why.to_string()),
    };
    let redirect_uri = match get("redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| redirect_matches(r, uri)) => uri.to_owned(),
        Some(uri) => return refused(&format!("'{uri}' is not a redirect URI this client registered")),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => return refused("redirect_uri is missing"),
    };
    let state = get("state");
    if get("response_type") != Some("code") {
        return refused("unsupported_response_type: only response_type=code is supported");
    }
    let Some(challenge) = get("code_challenge").filter(|c| (43..=128).contains(&c.len())) else {
        return refused("invalid_request: code_challenge is required (PKCE with S256)");
    };
    if get("code_challenge_method") != Some("S256") {
        return refused("invalid_request: code_challenge_method must be S256");
    }
    if let Some(resource) = get("resource")
        && resource.trim_end_matches('/') != server.options.resource()
    {
        return refused(&format!("invalid_target: this server is {}", server.options.resource()));
    }
    let Ok(id) = random() else {
        return refused("no random bytes");
    };
    let pending = Pending {
        client,
        redirect_uri,
        state: state.map(str::to_owned),
        challenge: challenge.to_owned(),
        scope: get("scope").unwrap_or("notes").to_owned(),
        expires: Instant::now() + PENDING_TTL,
    };
    let body = consent_page(&server, &id, &pending, signed_in(&server, &headers), None);
    let mut all = server.pending.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|_, p| p.expires > Instant::now());
    if all.len() >= MOST_PENDING {
        // Anyone can open this page: the oldest unanswered requests make room.
        let oldest = all.iter().min_by_key(|(_, p)| p.expires).map(|(k, _)| k.clone());
        if let Some(oldest) = oldest {
            all.remove(&oldest);
        }
    }
    all.insert(id, pending);
    page(StatusCode::OK, body, None)
}

/// The most consent pages waiting for an answer at once.
const MOST_PENDING: usize = 500;

/// Whether a redirect URI is the one registered: exactly, or (RFC 8252) HTTP to this machine on any port, since a
/// desktop client listens on whatever port is free.
fn redirect_matches(registered: &str, given: &str) -> bool {
    if registered == given {
        return true;
    }
    let (Ok(a), Ok(b)) = (url::Url::parse(registered), url::Url::parse(given)) else {
        return false;
    };
    let loopback =
        |u: &url::Url| u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"));
    loopback(&a) && loopback(&b) && a.host_str() == b.host_str() && a.path() == b.path() && a.query() == b.query()
}

fn consent_page(server: &AuthServer, id: &str, pending: &Pending, signed_in: bool, error: Option<&str>) -> String {
    let client = &pending.client;
    let back_to = url::Url::parse(&pending.redirect_uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let error = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e)))
        .unwrap_or_default();
    if !signed_in {
        // Nothing of the workspace before the person shows it is them.
        return shell(
            "quire: sign in",
            &format!(
                "<h1>Sign in to quire</h1>{error}<p>A client calling itself <strong>{name}</strong> asks to use your \
                 notes; it would be sent back to <strong>{back}</strong>. Sign in to see what it asks and to answer.</p>\
                 <form method=\"post\" action=\"/oauth/authorize\"><input type=\"hidden\" name=\"request\" value=\"{id}\">\
                 <label>quire's key <input type=\"password\" name=\"key\" autocomplete=\"off\" required></label>\
                 <p class=\"hint\">Run <code>quire mcp token</code> on your computer and paste what it prints. This \
                 browser stays signed in for 12 hours.</p>\
                 <button type=\"submit\" name=\"decision\" value=\"signin\">Sign in</button></form>",
                name = escape(&client.client_name),
                back = escape(&back_to),
            ),
        );
    }
    let notebooks = server
        .workspace
        .read(&Actor::User, |r| {
            let mut out = Vec::new();
            for notebook in r.notebooks()? {
                if notebook.id == quire_core::ROOT_NOTEBOOK_ID || notebook.effectively_protected {
                    continue;
                }
                out.push((notebook.id.clone(), r.notebook_path_text(&notebook.id)?));
            }
            Ok::<_, quire_core::Error>(out)
        })
        .unwrap_or_default();
    let boxes = notebook_boxes(notebooks);
    let plugins = plugin_choice(&offered_plugins(server));
    shell(
        "quire: allow access?",
        &format!(
            "<h1>Allow {name} to use your notes?</h1>{error}\
             <p>A client calling itself <strong>{name}</strong> (a name it chose; quire cannot check it) asks to reach \
             quire at {resource}. If you allow, you go back to <strong>{back}</strong>: allow only if that is your \
             assistant's. Protected notes stay out of its reach whatever you choose, and you can revoke it any time \
             with <code>quire mcp token revoke</code>.</p>\
             <form method=\"post\" action=\"/oauth/authorize\"><input type=\"hidden\" name=\"request\" value=\"{id}\">\
             <fieldset><legend>What it reaches</legend>\
             <label><input type=\"radio\" name=\"reach\" value=\"all\" checked> All my notebooks</label>\
             <label><input type=\"radio\" name=\"reach\" value=\"some\"> Only the notebooks ticked below</label>{boxes}\
             </fieldset><fieldset><legend>What it may do</legend>\
             <label><input type=\"checkbox\" name=\"read_only\"> Read only: search and read, never change</label>\
             <label><input type=\"checkbox\" name=\"review\" checked> Its changes wait for my review in quire</label>\
             </fieldset>{plugins}\
             <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
             <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
            name = escape(&client.client_name),
            resource = escape(&server.options.resource()),
            back = escape(&back_to),
        ),
    )
}

/// The notebooks' boxes, by path (a parent before its children, ux-2 #27), each indented under the "only these"
/// choice and greyed out while "All my notebooks" is chosen (CSS alone: the page runs no script).
fn notebook_boxes(mut notebooks: Vec<(String, String)>) -> String {
    notebooks.sort_by(|a, b| {
        let key = |path: &str| path.split('/').map(str::to_lowercase).collect::<Vec<_>>();
        key(&a.1).cmp(&key(&b.1))
    });
    notebooks
        .iter()
        .map(|(id, path)| {
            format!(
                "<label class=\"notebook\"><input type=\"checkbox\" name=\"notebook\" value=\"{}\"> {}</label>",
                escape(id),
                escape(path)
            )
        })
        .collect()
}

/// The plugins whose tools the server offers MCP clients, by name.
fn offered_plugins(server: &AuthServer) -> Vec<String> {
    let mut plugins: Vec<String> = server
        .tools
        .list()
        .into_iter()
        .filter(|t| t.exposure == quire_tools::Exposure::All)
        .filter_map(|t| t.plugin)
        .collect();
    plugins.sort();
    plugins.dedup();
    plugins
}

/// The plugins' part of the form: every plugin (those added later too), or only the ones ticked. Nothing when the
/// server has no plugin: the grant then reaches every plugin added later, as a named token does.
fn plugin_choice(plugins: &[String]) -> String {
    if plugins.is_empty() {
        return String::new();
    }
    let boxes: String = plugins
        .iter()
        .map(|name| {
            format!(
                "<label class=\"notebook\"><input type=\"checkbox\" name=\"plugin\" value=\"{name}\"> {name}</label>",
                name = escape(name)
            )
        })
        .collect();
    format!(
        "<fieldset><legend>Plugins it may use</legend><p class=\"hint\">Plugins are programs you added to quire; \
         what they do happens outside your notes and cannot be reviewed.</p>\
         <label><input type=\"radio\" name=\"plugins\" value=\"all\" checked> All my plugins, and those I add \
         later</label><label><input type=\"radio\" name=\"plugins\" value=\"some\"> Only the plugins ticked below \
         (none: no plugin)</label>{boxes}</fieldset>"
    )
}

/// Whether the form came from this server's own page (not posted by another site).
fn same_origin(server: &AuthServer, headers: &HeaderMap) -> bool {
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    let public = url::Url::parse(&server.options.public_url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default();
    match origin {
        Some(origin) => origin == public || quire_loopback::origin_allowed(Some(origin), host),
        None => false,
    }
}

/// `POST /oauth/authorize`: the person's answer.
pub(crate) async fn decide(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    if !same_origin(&server, &headers) {
        return refused("the answer did not come from quire's own page");
    }
    let field = |k: &str| form.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let Some(id) = field("request") else {
        return refused("the request is missing");
    };
    let Some(pending) = server
        .pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(id)
        .filter(|p| p.expires > Instant::now())
    else {
        return refused("this request expired or was answered already");
    };
    let mut cookie = None;
    if !signed_in(&server, &headers) {
        let typed = field("key").unwrap_or_default().trim();
        if !quire_loopback::constant_time_eq(typed.as_bytes(), server.options.owner_key.as_bytes()) {
            tracing::warn!("the consent page was sent with a wrong key");
            let body = consent_page(
                &server,
                id,
                &pending,
                false,
                Some("That is not quire's key. Nothing was granted."),
            );
            server
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id.to_owned(), pending);
            return page(StatusCode::UNAUTHORIZED, body, None);
        }
        if let Ok(session) = random() {
            server
                .owners
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(token_hash(&session), Instant::now());
            let secure = if server.options.public_url.starts_with("https://") {
                "; Secure"
            } else {
                ""
            };
            cookie = Some(format!(
                "{OWNER_COOKIE}={session}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
                OWNER_TTL.as_secs()
            ));
        }
    }
    if field("decision") == Some("signin") {
        // Signed in: now the page with the choices.
        let body = consent_page(&server, id, &pending, true, None);
        server
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), pending);
        return page(StatusCode::OK, body, cookie);
    }
    let state = pending.state.as_deref();
    if field("decision") != Some("allow") {
        tracing::info!(client = %pending.client.client_name, "access refused on the consent page");
        let mut response = back_with_error(
            &server,
            &pending.redirect_uri,
            state,
            "access_denied",
            "the person refused",
        );
        if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        return response;
    }
    let notebooks: Vec<String> = if field("reach") == Some("some") {
        form.iter()
            .filter(|(k, _)| k == "notebook")
            .map(|(_, v)| v.clone())
            .collect()
    } else {
        Vec::new()
    };
    if field("reach") == Some("some") && notebooks.is_empty() {
        let body = consent_page(
            &server,
            id,
            &pending,
            true,
            Some("Tick at least one notebook, or choose all of them."),
        );
        server
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), pending);
        return page(StatusCode::BAD_REQUEST, body, cookie);
    }
    let Ok(code) = random() else {
        return refused("no random bytes");
    };
    server.codes.lock().unwrap_or_else(|e| e.into_inner()).insert(
        token_hash(&code),
        Code {
            client_id: pending.client.client_id.clone(),
            client_name: pending.client.client_name.clone(),
            redirect_uri: pending.redirect_uri.clone(),
            challenge: pending.challenge.clone(),
            scope: pending.scope.clone(),
            choices: Choices {
                notebooks,
                read_only: field("read_only").is_some(),
                review: field("review").is_some(),
                plugins: (field("plugins") == Some("some")).then(|| {
                    form.iter()
                        .filter(|(k, _)| k == "plugin")
                        .map(|(_, v)| v.clone())
                        .collect()
                }),
            },
            expires: Instant::now() + super::CODE_TTL,
            exchanged: None,
        },
    );
    tracing::info!(client = %pending.client.client_name, "access allowed on the consent page");
    let mut params = vec![("code", code.as_str())];
    if let Some(state) = state {
        params.push(("state", state));
    }
    redirect(&server, &pending.redirect_uri, &params, cookie)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notebooks_are_listed_parents_first_and_greyed_while_all_are_chosen() {
        let boxes = notebook_boxes(vec![
            ("p".into(), "Personal".into()),
            ("wp".into(), "Work/Projects".into()),
            ("w".into(), "Work".into()),
            ("a".into(), "archive".into()),
        ]);
        let at = |path: &str| boxes.find(&format!("> {path}<")).unwrap();
        assert!(at("archive") < at("Personal") && at("Personal") < at("Work") && at("Work") < at("Work/Projects"));
        assert!(shell("t", "").contains("fieldset:has(input[value=all]:checked) .notebook"));
    }
}
