//! MCP in the binary: the server as config.toml and the flags make it, its tokens (the default one, named ones and
//! OAuth's clients and grants, kept in `mcp-tokens.json` beside config.toml: names, hashes and grants, never a
//! token), the named tokens followed in their file while a server runs, and plugins' grants kept there too.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use quire_core::{Actor, Scope, Timestamp, Workspace};
use quire_mcp::http::NamedToken;
use quire_mcp::oauth::OAuthError;
use quire_mcp::{Grant, QuireServer, ServerOptions};
use quire_tools::{ToolFilter, ToolRegistry};
use serde::{Deserialize, Serialize};

use crate::settings::{config_dir, read_config};

/// The file of named tokens, beside the default token (mode 0600): names, hashes and grants, never a token.
pub const TOKENS_FILE: &str = "mcp-tokens.json";

/// The named tokens as stored, with what OAuth keeps (clients, and grants with their tokens' hashes).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TokenFile {
    /// Named tokens.
    pub tokens: Vec<StoredToken>,
    /// OAuth's registered clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oauth_clients: Vec<quire_mcp::oauth::OAuthClient>,
    /// OAuth's grants, each a named token with an expiry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub oauth_grants: Vec<quire_mcp::oauth::OAuthGrant>,
}

/// OAuth's clients and grants in the token file, so `quire mcp token list` shows the grants and `revoke` ends them.
struct FileStore {
    dir: std::path::PathBuf,
    /// One change of the file at a time.
    lock: std::sync::Mutex<()>,
}

impl FileStore {
    fn change(&self, f: impl FnOnce(&mut TokenFile)) -> Result<(), OAuthError> {
        let _one = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut file = read_tokens(&self.dir).map_err(|e| OAuthError::Store(format!("{e:#}")))?;
        f(&mut file);
        write_tokens(&self.dir, &file).map_err(|e| OAuthError::Store(format!("{e:#}")))
    }
}

impl quire_mcp::oauth::OAuthStore for FileStore {
    fn clients(&self) -> Result<Vec<quire_mcp::oauth::OAuthClient>, OAuthError> {
        Ok(read_tokens(&self.dir)
            .map_err(|e| OAuthError::Store(format!("{e:#}")))?
            .oauth_clients)
    }

    fn add_client(&self, client: &quire_mcp::oauth::OAuthClient) -> Result<(), OAuthError> {
        self.change(|file| file.oauth_clients.push(client.clone()))
    }

    fn grants(&self) -> Result<Vec<quire_mcp::oauth::OAuthGrant>, OAuthError> {
        Ok(read_tokens(&self.dir)
            .map_err(|e| OAuthError::Store(format!("{e:#}")))?
            .oauth_grants)
    }

    fn put_grant(&self, grant: &quire_mcp::oauth::OAuthGrant) -> Result<(), OAuthError> {
        self.change(|file| {
            file.oauth_grants.retain(|g| g.name != grant.name);
            file.oauth_grants.push(grant.clone());
        })
    }

    fn remove_grant(&self, name: &str) -> Result<(), OAuthError> {
        self.change(|file| file.oauth_grants.retain(|g| g.name != name))
    }

    fn remove_client(&self, client_id: &str) -> Result<(), OAuthError> {
        self.change(|file| file.oauth_clients.retain(|c| c.client_id != client_id))
    }
}

/// A named token as kept.
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredToken {
    /// Its name.
    pub name: String,
    /// `quire_mcp::http::token_hash` of the token.
    pub hash: String,
    /// The notebooks it reaches (ids, which survive renames and moves), with their paths when it was made.
    pub notebooks: Vec<StoredNotebook>,
    /// Whether it may only read.
    pub read_only: bool,
    /// Tools it may not call.
    pub disabled_tools: Vec<String>,
    /// Its writes are staged for review.
    #[serde(default)]
    pub review: bool,
    /// The plugins whose tools it may call; `None`: every plugin offered over MCP, including ones added later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<Vec<String>>,
    /// The plugin whose grant it is, for a plugin's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// When it was made (RFC 3339).
    pub created: String,
}

/// A notebook a token reaches.
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredNotebook {
    /// Its id.
    pub id: String,
    /// Its path when the token was made.
    pub path: String,
}

/// The token file of the configuration directory `dir` (empty when there is none).
pub fn read_tokens(dir: &Path) -> anyhow::Result<TokenFile> {
    let path = dir.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Replaces the token file (mode 0600).
pub fn write_tokens(dir: &Path, file: &TokenFile) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::secrets::write_private(&dir.join(TOKENS_FILE), &serde_json::to_string_pretty(file)?)
}

/// Notebooks by title or path (quire-core's rule, [`quire_core::Reader::find_notebook`]), as (id, path), for a
/// scope; each must exist.
pub fn resolve_notebooks(ws: &Workspace, names: &[String]) -> anyhow::Result<Vec<StoredNotebook>> {
    names
        .iter()
        .map(|name| {
            let found = ws.read(&Actor::User, |r| {
                let Some(notebook) = r.find_notebook(name)? else {
                    return Ok::<_, quire_core::Error>(None);
                };
                let path = r.notebook_path_text(&notebook.id)?;
                Ok(Some(StoredNotebook {
                    id: notebook.id,
                    path: if path.is_empty() { "(top level)".into() } else { path },
                }))
            })?;
            let titled = !name.trim().trim_matches('/').contains('/');
            found.with_context(|| match titled {
                true => format!("--notebook {name}: no notebook is titled '{name}' (see `quire notebook list`)"),
                false => format!("--notebook {name}: no notebook '{name}' (see `quire notebook list`)"),
            })
        })
        .collect()
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
pub fn plugin_token(
    ws: &Workspace,
    dir: &Path,
    name: &str,
    notebooks: &[String],
    read_only: bool,
) -> anyhow::Result<String> {
    let plugin = name.strip_prefix(PLUGIN_TOKEN_PREFIX).unwrap_or(name);
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
        // A plugin reaching quire never calls plugins through it (nor itself, round and round).
        plugins: Some(Vec::new()),
        plugin: Some(plugin.to_owned()),
        created: Timestamp::now().to_rfc3339(),
    });
    write_tokens(dir, &file)?;
    Ok(token)
}

/// Which plugins a new token may call: `None` for every one; each named plugin must be configured.
pub fn plugin_limit(dir: &Path, plugins: Vec<String>, none: bool) -> anyhow::Result<Option<Vec<String>>> {
    if none {
        return Ok(Some(Vec::new()));
    }
    if plugins.is_empty() {
        return Ok(None);
    }
    let configured: Vec<String> = quire_plugins::config::read_entries(dir)?
        .into_iter()
        .map(|e| e.name)
        .collect();
    for plugin in &plugins {
        if !configured.contains(plugin) {
            bail!("--plugin {plugin}: there is no such plugin (see `quire plugin list`)");
        }
    }
    let mut plugins = plugins;
    plugins.sort();
    plugins.dedup();
    Ok(Some(plugins))
}

/// What a token's plugin limit adds to its line in `quire mcp token list`.
pub fn plugins_said(plugins: Option<&[String]>) -> String {
    match plugins {
        None => String::new(),
        Some([]) => ", no plugins".to_owned(),
        Some(names) => format!(", plugins {}", names.join(", ")),
    }
}

/// The start of a plugin's own token's name (`plugin-NAME`, quire-plugins' `token_name`): reserved for them.
const PLUGIN_TOKEN_PREFIX: &str = "plugin-";

/// A named token to make (`quire mcp token add`).
#[derive(Debug, Clone, Default)]
pub struct NewToken {
    /// Its name: 1 to 64 of `A-Z a-z 0-9 - _ .`, not taken.
    pub name: String,
    /// The notebooks it reaches (titles or paths); none: the whole workspace.
    pub notebooks: Vec<String>,
    /// Only read-only tools.
    pub read_only: bool,
    /// Tools it does not offer.
    pub disabled_tools: Vec<String>,
    /// Its writes are staged for review.
    pub review: bool,
    /// The plugins it may call (see [`plugin_limit`]).
    pub plugins: Option<Vec<String>>,
}

/// Makes a named token in the token file of `dir`; returns the token (shown once: only its hash is kept).
pub fn add_token(ws: &Workspace, dir: &Path, new: NewToken) -> anyhow::Result<String> {
    let name = &new.name;
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        bail!("'{name}' is not a valid token name: use 1 to 64 of A-Z a-z 0-9 - _ .");
    }
    if name.starts_with(PLUGIN_TOKEN_PREFIX) {
        bail!("'{name}': names starting with {PLUGIN_TOKEN_PREFIX} are the plugins' own tokens; choose another");
    }
    let mut file = read_tokens(dir)?;
    if file.tokens.iter().any(|t| &t.name == name) {
        bail!("a token named '{name}' exists already; revoke it first (`quire mcp token revoke {name}`)");
    }
    let filter = ToolFilter {
        read_only: new.read_only,
        disabled: new.disabled_tools.iter().cloned().collect(),
        ..ToolFilter::default()
    };
    if let Some(unknown) = filter.unknown_names(&ToolRegistry::builtin()).first() {
        bail!("--disable-tool {unknown}: there is no such tool (see `quire tools list`)");
    }
    let notebooks = resolve_notebooks(ws, &new.notebooks)?;
    let token = crate::secrets::new_secret()?;
    file.tokens.push(StoredToken {
        name: new.name,
        hash: quire_mcp::http::token_hash(&token),
        notebooks,
        read_only: new.read_only,
        disabled_tools: new.disabled_tools,
        review: new.review,
        plugins: new.plugins,
        plugin: None,
        created: Timestamp::now().to_rfc3339(),
    });
    write_tokens(dir, &file)?;
    Ok(token)
}

/// `quire mcp token revoke NAME`: a named token or an OAuth grant ends (clients using it stop at once). A plugin's own
/// token is refused: it is made again at every start while its entry has a grant.
pub fn revoke_named(dir: &Path, name: &str) -> anyhow::Result<()> {
    let mut file = read_tokens(dir)?;
    if let Some(plugin) = name.strip_prefix(PLUGIN_TOKEN_PREFIX)
        && file.tokens.iter().any(|t| t.name == name)
    {
        bail!(
            "'{name}' is the plugin {plugin}'s own token, made again at every start while its entry has a grant: \
             remove the grant from its entry in config.toml, or the plugin (`quire plugin remove {plugin}`)"
        );
    }
    let before = file.tokens.len() + file.oauth_grants.len();
    file.tokens.retain(|t| t.name != name);
    file.oauth_grants.retain(|g| g.name != name);
    if file.tokens.len() + file.oauth_grants.len() == before {
        bail!("there is no token named '{name}' (see `quire mcp token list`)");
    }
    write_tokens(dir, &file)
}

/// Revokes a named token if there is one; returns whether there was.
pub fn revoke_token(dir: &Path, name: &str) -> anyhow::Result<bool> {
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
        .map(|t| {
            let plugin = t
                .plugin
                .clone()
                .or_else(|| t.name.strip_prefix(PLUGIN_TOKEN_PREFIX).map(str::to_owned));
            NamedToken {
                hash: t.hash,
                grant: Grant {
                    name: t.name,
                    scope: (!t.notebooks.is_empty()).then(|| Scope::notebooks(t.notebooks.into_iter().map(|n| n.id))),
                    read_only: t.read_only,
                    disabled_tools: t.disabled_tools.into_iter().collect(),
                    // A plugin's own token (one made before tokens said whose they are too) reaches no plugin.
                    plugins: match &plugin {
                        Some(_) => Some(std::collections::BTreeSet::new()),
                        None => t.plugins.map(|p| p.into_iter().collect()),
                    },
                    plugin,
                    stage: t.review,
                    revoked: Arc::default(),
                },
                expires: None,
                resource: None,
            }
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
pub fn token(dir: &Path, rotate: bool) -> anyhow::Result<String> {
    crate::secrets::secret(dir, "mcp-token", rotate)
}

/// What the command line adds to `[mcp]` of config.toml.
#[derive(Debug, Clone, Default)]
pub struct McpFlags {
    /// Notebooks the clients reach (titles or paths), besides `[mcp] notebooks`.
    pub notebooks: Vec<String>,
    /// Tools clients may not call, besides `[mcp] disabled_tools`.
    pub disabled_tools: Vec<String>,
    /// Offer only read-only tools.
    pub read_only: bool,
    /// Stage every write for review.
    pub review: bool,
    /// The name the client is recorded under, whatever it calls itself (`--client-name`).
    pub client_name: Option<String>,
}

/// The MCP server as the configuration and the flags make it over `tools` (the built-in ones, and the plugins'
/// as they come up): its scope, confirmations and write policy.
pub fn build_server(ws: &Workspace, args: &McpFlags, tools: Arc<ToolRegistry>) -> anyhow::Result<QuireServer> {
    let dir = config_dir()?;
    let config = read_config(&dir)?;
    let mut scope_names = config.mcp.notebooks.clone();
    scope_names.extend(args.notebooks.iter().cloned());
    let scope = resolve_notebooks(ws, &scope_names)?;
    let mut disabled: BTreeSet<String> = config.mcp.disabled_tools.into_iter().collect();
    disabled.extend(args.disabled_tools.iter().cloned());
    let filter = ToolFilter {
        read_only: args.read_only || config.mcp.read_only,
        disabled,
        ..ToolFilter::default()
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
        client_name: args.client_name.clone(),
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
pub fn http_options(public_url: Option<&str>, allow_remote: bool) -> anyhow::Result<quire_mcp::http::HttpOptions> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A plugin's token made before tokens said whose they are reaches no plugin, and is known as the plugin's.
    #[test]
    fn an_older_plugin_token_reaches_no_plugin_and_names_are_reserved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(TOKENS_FILE),
            r#"{"tokens": [
                {"name": "plugin-probe", "hash": "h1", "notebooks": [], "read_only": false, "disabled_tools": [],
                 "created": "2026-12-01T00:00:00Z"},
                {"name": "laptop", "hash": "h2", "notebooks": [], "read_only": false, "disabled_tools": [],
                 "created": "2026-12-01T00:00:00Z"}]}"#,
        )
        .unwrap();
        let tokens = named_tokens(dir.path()).unwrap();
        assert_eq!(tokens[0].grant.plugin.as_deref(), Some("probe"));
        assert_eq!(tokens[0].grant.plugins, Some(BTreeSet::new()));
        assert_eq!(
            (tokens[1].grant.plugin.as_ref(), tokens[1].grant.plugins.as_ref()),
            (None, None)
        );
        let ws = Workspace::open_in_memory().unwrap();
        let taken = add_token(
            &ws,
            dir.path(),
            NewToken {
                name: "plugin-mail".into(),
                ..NewToken::default()
            },
        );
        assert!(taken.unwrap_err().to_string().contains("the plugins' own tokens"));
    }
}
