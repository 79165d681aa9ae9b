//! quire-web: the web app behind `quire serve`: a JSON API over the workspace, behind a session cookie that only the
//! URL `quire serve` prints can set, with Host and Origin checks and a strict Content-Security-Policy, and the UI's
//! assets embedded in the binary.
//!
//! Notes are described with the tools' own shapes (the API runs the read-only tools with the user's view through
//! [`quire_tools::ToolRegistry::read_as_user_typed`]); writes are the user's, and a save from the editor follows
//! core's rules ([`quire_core::Writer::save_user_edit`]: a revision per typing session, and a save based on an older
//! version of the note refused with 409, so nobody's text is lost). Every refusal is one error type whose status
//! comes from its kind, and every answer is a Rust type the UI's TypeScript is generated from ([`ui_schemas`]).
//!
//! Sealed notes (protected notes encrypted at rest, see [`quire_core::seal`]) open while the workspace is unlocked:
//! `POST /api/lock/unlock` with the passphrase keeps the key in memory, and every read or write of a note's content
//! goes through it, until no request has used it for [`WebOptions::lock_timeout`] or the page locks again. While
//! locked, a sealed note's content answers `locked` (423) with the note's title.
//!
//! It may depend on `quire-agent`, `quire-embed`, `quire-loopback`, `quire-tools` and `quire-core`; only the app
//! depends on it. It must not depend on `rusqlite`, `r2d2` or `rmcp`.

mod access;
mod api;
pub mod devices;
mod error;
mod lock;
mod note;
mod pairing;
mod passkeys;
mod plugins;
mod pwa;
mod schemas;
mod security;
mod semantic;
mod turns;
mod webauthn;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use quire_agent::ChatModel;
use quire_core::Workspace;
use quire_tools::ToolRegistry;
use serde::Deserialize;

pub use security::{SESSION_COOKIE, SESSION_HEADER};

/// What can go wrong when serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Binding or serving the listener failed.
    #[error("web server: {0}")]
    Io(#[from] std::io::Error),
    /// No randomness for a session id.
    #[error("cannot make a session id: {0}")]
    Random(String),
}

/// How to serve.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// The secret of the URL that opens a session (`/?token=...`); separate from the MCP tokens. Never empty.
    pub token: String,
    /// The file the key is kept in. When set, it is read again each time someone opens a session, so a key replaced
    /// while the server runs (`quire serve --rotate-key`) takes effect at once and the old one opens nothing.
    pub key_file: Option<PathBuf>,
    /// Accept requests whose `Host` is not a loopback name (the caller binds a non-loopback address on purpose).
    pub allow_remote: bool,
    /// A connection with no request in progress that sends no complete request for this long is closed (this also
    /// bounds how long a request's header may take to arrive).
    pub idle_timeout: Duration,
    /// How long the workspace stays unlocked (sealed notes open) after the last request that used a note's content;
    /// then the key is dropped and the passphrase is asked again (`[lock] timeout`).
    pub lock_timeout: Duration,
    /// The app's background sync, whose state the page shows; `None`: the page says nothing of sync.
    pub sync: Option<Arc<quire_sync::background::SyncState>>,
    /// The app's plugins, which the Settings screen lists and manages; `None`: the page has none.
    pub plugins: Option<Arc<Plugins>>,
    /// Where the day's and the week's notes and the templates are, read at each use.
    pub periodic: PeriodicSource,
    /// The configuration directory whose `devices.json` lists the paired devices (`quire device`); `None`: no
    /// device can pair or sign in.
    pub devices_dir: Option<PathBuf>,
    /// The page is served over https (quire's own TLS, or a proxy's in front of it): cookies are marked `Secure`,
    /// and the page's `https://` origin is its own.
    pub secure_cookies: bool,
    /// The address other devices reach this server at (`--public-url`, or the `--listen` address), which pairing
    /// links point to; `None`: the server answers on this computer only.
    pub device_url: Option<String>,
    /// The automations the Settings screen lists, adds and runs (quire-host's); `None`: the page has none.
    pub automations: Option<api::Automations>,
    /// The external agents' entries the Settings screen lists, adds, tests and removes (quire-host's); `None`: none.
    pub agent_admin: Option<api::AgentAdmins>,
}

/// Where the day's and the week's notes go and what they are made from, and where templates are kept: the
/// configuration as it is now (`[daily]`, `[weekly]`, `[templates]` in config.toml).
#[derive(Debug, Clone)]
pub struct Periodic {
    /// The day's notes.
    pub daily: quire_core::PeriodicSettings,
    /// The week's notes.
    pub weekly: quire_core::PeriodicSettings,
    /// The templates' notebook path.
    pub templates_notebook: String,
}

impl Default for Periodic {
    fn default() -> Periodic {
        Periodic {
            daily: quire_core::PeriodicSettings::default_for(quire_core::Period::Day),
            weekly: quire_core::PeriodicSettings::default_for(quire_core::Period::Week),
            templates_notebook: quire_core::DEFAULT_TEMPLATES_NOTEBOOK.to_owned(),
        }
    }
}

/// The configuration is not one quire reads; the text says where and why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Reads [`Periodic`] at each use, so that an edited configuration applies without a restart.
#[derive(Clone)]
pub struct PeriodicSource(pub Arc<dyn Fn() -> Result<Periodic, ConfigError> + Send + Sync>);

impl Default for PeriodicSource {
    /// quire-core's defaults, always.
    fn default() -> PeriodicSource {
        PeriodicSource(Arc::new(|| Ok(Periodic::default())))
    }
}

impl std::fmt::Debug for PeriodicSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeriodicSource")
    }
}

impl WebOptions {
    /// How long an idle connection stays open unless told otherwise.
    pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

    /// How long the workspace stays unlocked without use unless told otherwise: 10 minutes.
    pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

    /// Options for a server opened by `token`, on loopback only, with the default idle and lock timeouts.
    pub fn new(token: impl Into<String>) -> WebOptions {
        WebOptions {
            token: token.into(),
            key_file: None,
            allow_remote: false,
            idle_timeout: WebOptions::IDLE_TIMEOUT,
            lock_timeout: WebOptions::LOCK_TIMEOUT,
            sync: None,
            plugins: None,
            periodic: PeriodicSource::default(),
            devices_dir: None,
            secure_cookies: false,
            device_url: None,
            automations: None,
            agent_admin: None,
        }
    }
}

/// A chat model the sidebar offers. The key it holds never reaches the browser: only the name, the model and the
/// base URL do.
#[derive(Clone)]
pub struct WebModel {
    /// What the picker shows.
    pub name: String,
    /// `provider:model`.
    pub model: String,
    /// The base URL, when not the provider's own.
    pub base_url: Option<String>,
    /// The client.
    pub chat: Arc<dyn ChatModel>,
    /// Its prices, to show what each turn cost; `None`: no estimate.
    pub prices: Option<quire_agent::Prices>,
}

impl std::fmt::Debug for WebModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebModel")
            .field("name", &self.name)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// The models of the sidebar, the default first, and why there are none when there are none.
#[derive(Clone, Default)]
pub struct WebModels {
    /// The external agents (ACP) the sidebar offers beside the models.
    pub agents: turns::agent::AgentSource,
    /// The models, the default first.
    pub models: Vec<WebModel>,
    /// Shown instead of the chat when `models` is empty: how to configure one (and what went wrong, if a
    /// configured one could not be used).
    pub setup_hint: String,
    /// Search by meaning's model: which is in use, and how to install one (`None`: the page says which embedder is
    /// in use but offers no install).
    pub semantic: Option<SemanticModels>,
    /// Adds a chat model from the page (Settings, or the "Set up a model" card): the caller checks it can be used,
    /// keeps it in its configuration and gives back the model. `None`: the page offers no form.
    pub add: Option<AddModel>,
    /// The most tokens one turn may use before it stops (see [`quire_agent::TurnOptions::max_turn_tokens`]).
    pub max_turn_tokens: Option<u64>,
    /// The focused note's budget in a turn's first request, in tokens (`None`: quire-agent's default).
    pub note_view_tokens: Option<usize>,
}

impl std::fmt::Debug for WebModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebModels")
            .field("models", &self.models)
            .field("setup_hint", &self.setup_hint)
            .field("semantic", &self.semantic)
            .field("add", &self.add.is_some())
            .field("max_turn_tokens", &self.max_turn_tokens)
            .field("note_view_tokens", &self.note_view_tokens)
            .finish()
    }
}

/// A chat model the person adds from the page. The key is kept by the server (in its configuration) and never sent
/// back to the page.
#[derive(Clone, Deserialize, schemars::JsonSchema)]
pub struct NewModel {
    /// What the picker shows; unique among the models.
    pub name: String,
    /// `provider:model`, such as `ollama:qwen3` or `openai-compatible:NAME`.
    pub model: String,
    /// The base URL, when not the provider's own (required for `openai-compatible`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The API key, when the provider needs one.
    #[serde(default)]
    pub api_key: Option<String>,
}

impl std::fmt::Debug for NewModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewModel")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

/// What [`WebModels::add`] does: check a new model, keep it, and make its client; an `Err` is said to the person.
pub type AddModel = Arc<dyn Fn(NewModel) -> Result<WebModel, SetupError> + Send + Sync>;

/// Why the app could not add a model or put one in use, said to the person as it is.
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// The shared state of the web app: one workspace, one registry, the key sessions are derived from.
pub struct WebApp {
    workspace: Workspace,
    tools: Arc<ToolRegistry>,
    options: WebOptions,
    /// The key that opens a session now (it changes when the key file does); each session's cookie and secret are
    /// derived from it (`security.rs`), so a restarted server knows them again and a new key ends them.
    key: Mutex<String>,
    /// The chat models (the sidebar says how to set one up when there is none).
    /// The chat models, the default first: the configured ones, and those added from the page since.
    models: std::sync::RwLock<Vec<WebModel>>,
    /// Shown instead of the chat when there is no model.
    setup_hint: String,
    add_model: Option<AddModel>,
    /// The most tokens one turn may use.
    max_turn_tokens: Option<u64>,
    /// The focused note's budget in a turn's first request.
    note_view_tokens: Option<usize>,
    turns: turns::Turns,
    semantic: semantic::Semantic,
    /// The unlock period of sealed notes: the key while the workspace is unlocked.
    lock: lock::Lock,
    /// The `ui://` pages of plugin results, served to the page's frames.
    app_views: plugins::AppViews,
    /// Cancelled when the server begins to shut down: long answers (the change stream) end at once, so that a
    /// graceful shutdown does not wait for them.
    stopping: tokio_util::sync::CancellationToken,
    /// The paired devices, when the server pairs any.
    devices: Option<devices::DeviceStore>,
    /// Failed sign-ins lately.
    attempts: access::Attempts,
    /// The passkey challenges' key and the answers used (`None` without system randomness: no passkeys).
    challenges: Option<webauthn::Challenges>,
    /// The offline saves applied lately, by their ids (a save sent again is not applied twice).
    offline_saves: api::Applied,
    /// The external agents the sidebar may run, and their sessions by chat.
    agents: turns::agent::AgentSource,
    agent_sessions: turns::agent::Sessions,
}

impl std::fmt::Debug for WebApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebApp")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl WebApp {
    /// The app for `workspace`, with the tools of `tools`, and the chat models configured.
    pub fn new(workspace: Workspace, tools: Arc<ToolRegistry>, options: WebOptions, models: WebModels) -> Arc<WebApp> {
        let devices = options.devices_dir.as_deref().map(devices::DeviceStore::in_dir);
        Arc::new(WebApp {
            workspace,
            tools,
            key: Mutex::new(options.token.clone()),
            lock: lock::Lock::new(options.lock_timeout),
            options,
            semantic: semantic::Semantic::new(models.semantic.clone()),
            models: std::sync::RwLock::new(models.models),
            setup_hint: models.setup_hint,
            add_model: models.add,
            max_turn_tokens: models.max_turn_tokens,
            note_view_tokens: models.note_view_tokens,
            turns: turns::Turns::default(),
            app_views: plugins::AppViews::default(),
            stopping: tokio_util::sync::CancellationToken::new(),
            devices,
            attempts: access::Attempts::default(),
            challenges: webauthn::Challenges::new(),
            offline_saves: api::Applied::default(),
            agents: models.agents,
            agent_sessions: turns::agent::Sessions::default(),
        })
    }
}

impl WebApp {
    /// The chat models now, the default first.
    fn models(&self) -> Vec<WebModel> {
        self.models
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The key as last read, without reading the file (what every request's session is checked against).
    fn known_key(&self) -> String {
        self.key.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The key that opens a session: the key file's when it holds one (it may have been replaced since the server
    /// started), else the last one known.
    fn current_key(&self) -> String {
        let mut key = self.key.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(path) = &self.options.key_file {
            match std::fs::read_to_string(path) {
                Ok(text) if text.trim().len() >= 32 => {
                    let fresh = text.trim();
                    if *key != fresh {
                        tracing::info!(
                            "the web key changed on disk; addresses with the old key no longer open sessions"
                        );
                        *key = fresh.to_owned();
                    }
                }
                Ok(_) => tracing::warn!(path = %path.display(), "the web key file holds no key; keeping the last one"),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot read the web key file; keeping the last key")
                }
            }
        }
        key.clone()
    }
}

pub use access::DEVICE_COOKIE;
pub use api::{
    AddedAttachment, AutomationEntry, AutomationHost, AutomationList, AutomationView, Automations, ChangeEvent,
    ChangeNews, ChangeSetEntry, ChangeView, ChatHistory, ChatList, ChatSummary, ConflictResolved, CreatedNotebook,
    Deleted, FieldRequest, FromTemplateRequest, History, LedgerView, LockInitialized, LockState, ModelChoice, Note,
    NoteLink, NoteLinks, NotebookChanged, OfflineSave, OfflineSaved, OpenedNote, QueryRequest, ReviewDecision,
    ReviewList, RevisionList, RevisionView, SavedNote, Settings, SyncConflictView, SyncSettings, TaskChanged,
    TaskRequest, TemplateEntry, TemplateList, TodayRequest, TrashState, Undone,
};
pub use api::{
    AgentAdmin, AgentAdmins, AgentList, AgentTested, AgentView, EnabledRequest, HostError, HostFuture, NewAgent,
};
pub use error::{ErrorBody, ErrorKind};
pub use pairing::{DeviceList, DevicePaired, DeviceView, PairRequest, PairingCode, pairing_link, qr_svg, qr_text};
pub use passkeys::PasskeyStatus;
pub use plugins::PluginList;
pub use quire_plugins::{NewPlugin, PluginToolView, PluginView, Plugins};
pub use quire_sync::background::{SyncPhase, SyncState, SyncView};
pub use schemas::{TurnEvent, ui_schemas};
pub use semantic::{Activate, CatalogEntry, InstallState, SemanticModels, SemanticSettings};
pub use turns::agent::{AgentSource, WebAgent};
pub use turns::{TurnDone, TurnStarted};

/// The router: the page and its assets, `/api/...`, and the security layer around all of it.
pub fn router(app: Arc<WebApp>) -> Router {
    let api = api::routes()
        .merge(semantic::routes())
        .merge(turns::routes())
        .route("/plugins", axum::routing::get(plugins::list).post(plugins::add))
        .route("/plugins/{name}", axum::routing::delete(plugins::remove))
        .route("/devices", axum::routing::get(pairing::list).post(pairing::pair))
        .route("/devices/{name}", axum::routing::delete(pairing::revoke))
        .route("/passkeys", axum::routing::get(passkeys::status).post(passkeys::add))
        .route("/passkeys/options", axum::routing::post(passkeys::add_options));
    Router::new()
        .route("/", axum::routing::get(security::index))
        .route("/pair", axum::routing::get(pairing::page).post(pairing::redeem))
        .route("/pair/passkey", axum::routing::post(passkeys::sign_in))
        .route("/pair/passkey/options", axum::routing::post(passkeys::sign_in_options))
        .route("/assets/pair.js", axum::routing::get(pairing::script))
        .merge(pwa::routes())
        .route("/assets/app.js", axum::routing::get(security::script))
        .route("/assets/app.css", axum::routing::get(security::stylesheet))
        .route("/assets/math.js", axum::routing::get(security::math_script))
        .route("/assets/boot.js", axum::routing::get(security::boot_script))
        .route("/plugin-ui/{id}", axum::routing::get(plugins::view))
        .nest("/api", api)
        .layer(axum::middleware::from_fn_with_state(app.clone(), security::guard))
        .with_state(app)
}

/// Serves the app on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<WebApp>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    serve_with(listener, app, None, shutdown).await
}

/// [`serve`], with more routes beside the app's, each behind its own checks (the app's security layer is not theirs):
/// `quire serve --public-url` puts the MCP endpoint and its authorization server there.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    app: Arc<WebApp>,
    beside: Option<Router>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    serve_over(listener, None, app, beside, shutdown).await
}

/// [`serve_with`], over TLS when `tls` is given (`quire serve --listen`).
pub async fn serve_over(
    listener: tokio::net::TcpListener,
    tls: Option<&quire_loopback::Tls>,
    app: Arc<WebApp>,
    beside: Option<Router>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let idle = app.options.idle_timeout;
    let stopping = app.stopping.clone();
    let service = router(app)
        .merge(beside.unwrap_or_default())
        .into_make_service_with_connect_info::<quire_loopback::Activity>();
    let shutdown = async move {
        shutdown.await;
        stopping.cancel();
    };
    match tls {
        Some(tls) => {
            let listener = quire_loopback::TlsListener::new(listener, tls, idle)?;
            axum::serve(listener, service).with_graceful_shutdown(shutdown).await?;
        }
        None => {
            let listener = quire_loopback::IdleListener { inner: listener, idle };
            axum::serve(listener, service).with_graceful_shutdown(shutdown).await?;
        }
    }
    Ok(())
}
