//! `quire mcp`: configuration (file, flags, token) and starting the MCP server of quire-mcp on stdio or HTTP.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use quire_core::{Actor, Scope, Timestamp, Workspace};
use quire_mcp::http::NamedToken;
use quire_mcp::{Grant, QuireServer, ServerOptions};
use quire_tools::{ToolFilter, ToolRegistry};
use serde::{Deserialize, Serialize};

use crate::cli::{McpArgs, TokenAction};
use crate::lookup::{find_notebook, path_of};
use crate::settings::{config_dir, read_config};

/// The file of named tokens, beside the default token (mode 0600): names, hashes and grants, never a token.
const TOKENS_FILE: &str = "mcp-tokens.json";

/// The named tokens as stored, with what OAuth keeps (clients, and grants with their tokens' hashes).
#[derive(Debug, Default, Serialize, Deserialize)]
struct TokenFile {
    tokens: Vec<StoredToken>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    oauth_clients: Vec<quire_mcp::oauth::OAuthClient>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    oauth_grants: Vec<quire_mcp::oauth::OAuthGrant>,
}

/// OAuth's clients and grants in the token file, so `quire mcp token list` shows the grants and `revoke` ends them.
struct FileStore {
    dir: std::path::PathBuf,
    /// One change of the file at a time.
    lock: std::sync::Mutex<()>,
}

impl FileStore {
    fn change(&self, f: impl FnOnce(&mut TokenFile)) -> Result<(), String> {
        let _one = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut file = read_tokens(&self.dir).map_err(|e| format!("{e:#}"))?;
        f(&mut file);
        write_tokens(&self.dir, &file).map_err(|e| format!("{e:#}"))
    }
}

impl quire_mcp::oauth::OAuthStore for FileStore {
    fn clients(&self) -> Result<Vec<quire_mcp::oauth::OAuthClient>, String> {
        Ok(read_tokens(&self.dir).map_err(|e| format!("{e:#}"))?.oauth_clients)
    }

    fn add_client(&self, client: &quire_mcp::oauth::OAuthClient) -> Result<(), String> {
        self.change(|file| file.oauth_clients.push(client.clone()))
    }

    fn grants(&self) -> Result<Vec<quire_mcp::oauth::OAuthGrant>, String> {
        Ok(read_tokens(&self.dir).map_err(|e| format!("{e:#}"))?.oauth_grants)
    }

    fn put_grant(&self, grant: &quire_mcp::oauth::OAuthGrant) -> Result<(), String> {
        self.change(|file| {
            file.oauth_grants.retain(|g| g.name != grant.name);
            file.oauth_grants.push(grant.clone());
        })
    }

    fn remove_grant(&self, name: &str) -> Result<(), String> {
        self.change(|file| file.oauth_grants.retain(|g| g.name != name))
    }

    fn remove_client(&self, client_id: &str) -> Result<(), String> {
        self.change(|file| file.oauth_clients.retain(|c| c.client_id != client_id))
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredToken {
    name: String,
    /// `quire_mcp::http::token_hash` of the token.
    hash: String,
    /// The notebooks it reaches (ids, which survive renames and moves), with their paths when it was made.
    notebooks: Vec<StoredNotebook>,
    read_only: bool,
    disabled_tools: Vec<String>,
    /// Its writes are staged for review.
    #[serde(default)]
    review: bool,
    created: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredNotebook {
    id: String,
    path: String,
}

fn read_tokens(dir: &Path) -> anyhow::Result<TokenFile> {
    let path = dir.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_tokens(dir: &Path, file: &TokenFile) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::secrets::write_private(&dir.join(TOKENS_FILE), &serde_json::to_string_pretty(file)?)
}

/// Notebooks by title or path, as (id, path), for a scope.
fn resolve_notebooks(ws: &Workspace, names: &[String]) -> anyhow::Result<Vec<StoredNotebook>> {
    names
        .iter()
        .map(|name| {
            let id = find_notebook(ws, name).with_context(|| format!("--notebook {name}"))?;
            let path = ws.read(&Actor::User, |r| path_of(r, &id))?;
            Ok(StoredNotebook { id, path })
        })
        .collect()
}

pub(crate) fn token_action(ws: &Workspace, action: TokenAction, json: bool) -> anyhow::Result<()> {
    let dir = config_dir()?;
    let mut file = read_tokens(&dir)?;
    match action {
        TokenAction::Add {
            name,
            notebooks,
            read_only,
            disabled_tools,
            review,
        } => {
            let valid = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid {
                bail!("'{name}' is not a valid token name: use 1 to 64 of A-Z a-z 0-9 - _ .");
            }
            if file.tokens.iter().any(|t| t.name == name) {
                bail!("a token named '{name}' exists already; revoke it first (`quire mcp token revoke {name}`)");
            }
            let tools = ToolRegistry::builtin();
            let filter = ToolFilter {
                read_only,
                disabled: disabled_tools.iter().cloned().collect(),
            };
            if let Some(unknown) = filter.unknown_names(&tools).first() {
                bail!("--disable-tool {unknown}: there is no such tool (see `quire tools list`)");
            }
            let notebooks = resolve_notebooks(ws, &notebooks)?;
            let token = crate::secrets::new_secret()?;
            file.tokens.push(StoredToken {
                name: name.clone(),
                hash: quire_mcp::http::token_hash(&token),
                notebooks,
                read_only,
                disabled_tools,
                review,
                created: Timestamp::now().to_rfc3339(),
            });
            write_tokens(&dir, &file)?;
            if json {
                return crate::output::line(&serde_json::json!({"name": name, "token": token}).to_string());
            }
            crate::output::line(&token)?;
            eprintln!("This is the only time the token '{name}' is shown: copy it into the client's settings now.");
            Ok(())
        }
        TokenAction::List => {
            // Paths as they are now (the scope follows a notebook by id through renames and moves).
            for token in &mut file.tokens {
                for notebook in &mut token.notebooks {
                    notebook.path = match ws.read(&Actor::User, |r| path_of(r, &notebook.id)) {
                        Ok(path) => path,
                        Err(_) => format!("{} (deleted)", notebook.path),
                    };
                }
            }
            let path = |id: &String| {
                ws.read(&Actor::User, |r| path_of(r, id))
                    .unwrap_or_else(|_| format!("{id} (deleted)"))
            };
            if json {
                let mut list: Vec<serde_json::Value> = file
                    .tokens
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "name": t.name, "notebooks": t.notebooks.iter().map(|n| &n.path).collect::<Vec<_>>(),
                            "read_only": t.read_only, "disabled_tools": t.disabled_tools, "review": t.review,
                            "created": t.created
                        })
                    })
                    .collect();
                list.extend(file.oauth_grants.iter().map(|g| {
                    serde_json::json!({
                        "name": g.name, "oauth_client": g.client_name, "notebooks": g.notebooks.iter().map(path).collect::<Vec<_>>(),
                        "read_only": g.read_only, "review": g.review, "created": Timestamp(g.created * 1000).to_rfc3339()
                    })
                }));
                return crate::output::line(&serde_json::to_string_pretty(&list)?);
            }
            for g in &file.oauth_grants {
                let reach = if g.notebooks.is_empty() {
                    "the whole workspace".to_owned()
                } else {
                    g.notebooks.iter().map(path).collect::<Vec<_>>().join(", ")
                };
                let mut line = format!("{}  OAuth grant to {}, reaches {reach}", g.name, g.client_name);
                if g.read_only {
                    line.push_str(", read-only");
                }
                if g.review {
                    line.push_str(", writes staged for review");
                }
                line.push_str(&format!("  (granted {})", Timestamp(g.created * 1000).to_rfc3339()));
                crate::output::line(&line)?;
            }
            if file.tokens.is_empty() && !file.oauth_grants.is_empty() {
                return Ok(());
            }
            if file.tokens.is_empty() {
                return crate::output::line("No named tokens. `quire mcp token add NAME --notebook Work` makes one.");
            }
            for t in &file.tokens {
                let reach = if t.notebooks.is_empty() {
                    "the whole workspace".to_owned()
                } else {
                    t.notebooks
                        .iter()
                        .map(|n| n.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let mut line = format!("{}  reaches {reach}", t.name);
                if t.read_only {
                    line.push_str(", read-only");
                }
                if t.review {
                    line.push_str(", writes staged for review");
                }
                if !t.disabled_tools.is_empty() {
                    line.push_str(&format!(", without {}", t.disabled_tools.join(", ")));
                }
                line.push_str(&format!("  (created {})", t.created));
                crate::output::line(&line)?;
            }
            Ok(())
        }
        TokenAction::Revoke { name } => {
            let before = file.tokens.len() + file.oauth_grants.len();
            file.tokens.retain(|t| t.name != name);
            file.oauth_grants.retain(|g| g.name != name);
            if file.tokens.len() + file.oauth_grants.len() == before {
                bail!("there is no token named '{name}' (see `quire mcp token list`)");
            }
            write_tokens(&dir, &file)?;
            crate::output::line(&format!("Revoked '{name}'."))
        }
    }
}

/// Reloads the named tokens whenever their file changes (checked every half second), so a revoked token stops
/// working at once. A damaged file keeps the tokens as they were, with a warning.
async fn follow_tokens(dir: std::path::PathBuf, tokens: quire_mcp::http::NamedTokens) {
    let path = dir.join(TOKENS_FILE);
    let stamp = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let mut seen = stamp(&path);
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let now = stamp(&path);
        if now == seen {
            continue;
        }
        seen = now;
        match named_tokens(&dir) {
            Ok(list) => {
                let mut current = tokens.write().unwrap_or_else(|e| e.into_inner());
                // A token that is gone (or changed) is revoked: its open streams stop too. One that stayed keeps its
                // grant, so its streams go on.
                let mut kept = Vec::with_capacity(list.len());
                for new in list {
                    match current
                        .iter()
                        .find(|old| old.hash == new.hash && old.grant.name == new.grant.name)
                    {
                        Some(old) => kept.push(old.clone()),
                        None => kept.push(new),
                    }
                }
                for old in current.iter() {
                    if !kept.iter().any(|k| Arc::ptr_eq(&k.grant.revoked, &old.grant.revoked)) {
                        old.grant.revoked.store(true, std::sync::atomic::Ordering::Release);
                    }
                }
                *current = kept;
            }
            Err(e) => tracing::warn!("named tokens not reloaded: {e:#}"),
        }
    }
}

/// The named tokens as the HTTP server takes them.
/// Makes the named token a plugin reaches quire's MCP server with (`plugin-NAME`), replacing one of that name:
/// limited to `notebooks` (never protected notes, which no MCP client reads), read-only if asked. Returns the token.
pub(crate) fn plugin_token(
    ws: &Workspace,
    dir: &Path,
    name: &str,
    notebooks: &[String],
    read_only: bool,
) -> anyhow::Result<String> {
    let mut file = read_tokens(dir)?;
    let notebooks = resolve_notebooks(ws, notebooks)?;
    file.tokens.retain(|t| t.name != name);
    let token = crate::secrets::new_secret()?;
    file.tokens.push(StoredToken {
        name: name.to_owned(),
        hash: quire_mcp::http::token_hash(&token),
        notebooks,
        read_only,
        disabled_tools: Vec::new(),
        review: false,
        created: Timestamp::now().to_rfc3339(),
    });
    write_tokens(dir, &file)?;
    Ok(token)
}

/// Revokes a named token if there is one; returns whether there was.
pub(crate) fn revoke_token(dir: &Path, name: &str) -> anyhow::Result<bool> {
    let mut file = read_tokens(dir)?;
    let before = file.tokens.len();
    file.tokens.retain(|t| t.name != name);
    if file.tokens.len() == before {
        return Ok(false);
    }
    write_tokens(dir, &file)?;
    Ok(true)
}

fn named_tokens(dir: &Path) -> anyhow::Result<Vec<NamedToken>> {
    let file = read_tokens(dir)?;
    let oauth: Vec<NamedToken> = file
        .oauth_grants
        .iter()
        .map(quire_mcp::oauth::OAuthGrant::named_token)
        .collect();
    Ok(file
        .tokens
        .into_iter()
        .map(|t| NamedToken {
            hash: t.hash,
            grant: Grant {
                name: t.name,
                scope: (!t.notebooks.is_empty()).then(|| Scope::notebooks(t.notebooks.into_iter().map(|n| n.id))),
                read_only: t.read_only,
                disabled_tools: t.disabled_tools.into_iter().collect(),
                stage: t.review,
                revoked: Arc::default(),
            },
            expires: None,
            resource: None,
        })
        .chain(oauth)
        .collect())
}

/// OAuth for `--public-url`: quire's own token is what the person types on the consent page; clients and grants live
/// in the token file; client metadata documents are read with the app's HTTP client.
fn oauth_options(dir: &Path, public_url: &str, owner_key: String) -> anyhow::Result<quire_mcp::oauth::OAuthOptions> {
    let store = Arc::new(FileStore {
        dir: dir.to_owned(),
        lock: std::sync::Mutex::new(()),
    });
    quire_mcp::oauth::OAuthOptions::new(public_url, owner_key, store, Some(Arc::new(PinnedFetch)))
        .map_err(|e| anyhow::anyhow!("--public-url: {e}"))
}

/// Reads OAuth clients' metadata documents with quire's HTTP client, from the addresses the server checked only.
struct PinnedFetch;

impl quire_mcp::oauth::MetadataFetch for PinnedFetch {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        addresses: &'a [std::net::SocketAddr],
        max_bytes: usize,
    ) -> quire_mcp::oauth::FetchFuture<'a> {
        Box::pin(async move {
            quire_embed::http::pinned_get(url, addresses, max_bytes, std::time::Duration::from_secs(5))
                .await
                .map_err(|e| quire_mcp::oauth::FetchError(e.to_string()))
        })
    }
}

/// The HTTP bearer token, created (mode 0600) on first use or when rotated.
pub(crate) fn token(dir: &Path, rotate: bool) -> anyhow::Result<String> {
    crate::secrets::secret(dir, "mcp-token", rotate)
}

pub(crate) fn token_command(rotate: bool) -> anyhow::Result<()> {
    let token = token(&config_dir()?, rotate)?;
    crate::output::line(&token)
}

/// `quire mcp`: serves MCP over stdio or HTTP (its `token` subcommands are dispatched before, by
/// [`crate::commands::run`]).
/// The MCP server as the configuration and the flags make it: its tools, scope, confirmations and write policy.
pub(crate) fn build_server(ws: &Workspace, args: &McpArgs) -> anyhow::Result<QuireServer> {
    let dir = config_dir()?;
    let config = read_config(&dir)?;
    let mut scope_names = config.mcp.notebooks.clone();
    scope_names.extend(args.notebooks.iter().cloned());
    let scope = resolve_notebooks(ws, &scope_names)?;
    let tools = Arc::new(ToolRegistry::builtin());
    let mut disabled: BTreeSet<String> = config.mcp.disabled_tools.into_iter().collect();
    disabled.extend(args.disabled_tools.iter().cloned());
    let filter = ToolFilter {
        read_only: args.read_only || config.mcp.read_only,
        disabled,
    };
    if let Some(unknown) = filter.unknown_names(&tools).first() {
        bail!("--disable-tool {unknown}: there is no such tool (see `quire tools list`)");
    }
    let options = ServerOptions {
        filter,
        confirm_destructive: config.mcp.confirm_destructive.policy(),
        writes: if args.review || config.mcp.writes == crate::settings::WritesSetting::Stage {
            quire_mcp::WritePolicy::Stage
        } else {
            quire_mcp::WritePolicy::Apply
        },
        inline_review: config.mcp.inline_review.unwrap_or(false),
        ..ServerOptions::default()
    };
    let served = if scope.is_empty() {
        ws.clone()
    } else {
        let paths: Vec<&str> = scope.iter().map(|n| n.path.as_str()).collect();
        eprintln!("quire MCP: clients reach only {}", paths.join(", "));
        ws.scoped(Scope::notebooks(scope.into_iter().map(|n| n.id)))
    };
    Ok(QuireServer::new(served, tools, options))
}

/// What HTTP serving needs: the token, the named tokens (followed in their file from then on: spawn this inside
/// the runtime) and, with a public address, OAuth.
pub(crate) fn http_options(
    public_url: Option<&str>,
    allow_remote: bool,
) -> anyhow::Result<quire_mcp::http::HttpOptions> {
    let dir = config_dir()?;
    let token = token(&dir, false)?;
    let named_tokens: quire_mcp::http::NamedTokens = Arc::new(std::sync::RwLock::new(named_tokens(&dir)?));
    // `quire mcp token add` and `revoke` count at once: the file is read again when it changes.
    tokio::spawn(follow_tokens(dir.clone(), named_tokens.clone()));
    let oauth = match public_url {
        Some(url) => {
            let oauth = oauth_options(&dir, url, token.clone())?;
            eprintln!(
                "Hosted assistants: {}{} with OAuth (you consent at {}/oauth/authorize with quire's key; grants in \
                 `quire mcp token list`)",
                oauth.public_url,
                quire_mcp::http::ENDPOINT,
                oauth.public_url
            );
            Some(oauth)
        }
        None => None,
    };
    Ok(quire_mcp::http::HttpOptions {
        token: Some(token),
        allow_remote,
        named_tokens,
        oauth,
        ..Default::default()
    })
}

pub(crate) fn run(ws: Workspace, args: McpArgs) -> anyhow::Result<()> {
    let server = build_server(&ws, &args)?;
    // Keeps the semantic index caught up while the server runs; stops with it.
    let _indexer = ws.spawn_indexer(std::time::Duration::from_millis(500));
    let _sync = crate::sync_loop::start(&ws, crate::settings::sync_interval()?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match args.http {
        None => runtime.block_on(quire_mcp::serve_stdio(server)).map_err(Into::into),
        Some(addr) => {
            if !quire_mcp::http::is_loopback(&addr) && !args.allow_remote {
                bail!("{addr} is reachable from other machines; pass --allow-remote if that is what you want");
            }
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
                let bound = listener.local_addr()?;
                if !quire_mcp::http::is_loopback(&bound) {
                    tracing::warn!("serving on {bound}, reachable from other machines; every request still needs the token");
                    eprintln!("warning: quire MCP is reachable from other machines at http://{bound}{}", quire_mcp::http::ENDPOINT);
                }
                eprintln!(
                    "quire MCP server on http://{bound}{} (send Authorization: Bearer <token>; `quire mcp token` prints it)",
                    quire_mcp::http::ENDPOINT
                );
                let options = http_options(args.public_url.as_deref(), args.allow_remote)?;
                let shutdown = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                quire_mcp::http::serve(listener, server, options, shutdown).await.map_err(anyhow::Error::from)
            })
        }
    }
}
