//! The web app as `quire serve` runs it, assembled: the chat models of the configuration (and the form that adds
//! one), search by meaning's model and its install, the background components (the indexer, the sync loop, the
//! plugins and their Settings), and with a public address the MCP endpoint beside it. The command line binds,
//! prints the address and waits; everything it serves is decided here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_core::Workspace;
use quire_plugins::PluginHost;
use quire_tools::ToolRegistry;

use crate::background::{Background, Components};
use crate::mcp::McpFlags;
use crate::settings::config_dir;

/// What `quire serve` was asked for, beyond the workspace.
#[derive(Debug, Clone, Default)]
pub struct ServeFlags {
    /// Listening beyond loopback was asked for.
    pub allow_remote: bool,
    /// The address hosted assistants reach this server at: the MCP endpoint is served beside the web app.
    pub public_url: Option<String>,
    /// Replace the web key before starting.
    pub rotate_key: bool,
    /// The address it listens on.
    pub address: Option<std::net::SocketAddr>,
    /// Its TLS, when it serves over https itself (`--listen` with a certificate).
    pub tls: Option<crate::devices::TlsChoice>,
}

/// The web app, ready to serve, with what runs beside it.
pub struct Served {
    /// The web app.
    pub app: Arc<quire_web::WebApp>,
    /// Its key, which the address it is opened at carries.
    pub key: String,
    /// The MCP endpoint to serve beside the web app, when a public address was given.
    pub mcp: Option<axum::Router>,
    /// The components beside the server; they stop when this is dropped.
    pub background: Background,
    /// The plugins' host, to shut down (ending their processes) when the server stops.
    pub plugins: Arc<PluginHost>,
    /// Its TLS, when it serves over https itself.
    pub tls: Option<quire_loopback::Tls>,
    /// The address other devices reach it at, when they can.
    pub device_url: Option<String>,
}

/// Assembles the web app for `ws` on `runtime` (where the plugins start, in the background) from the configuration
/// and the flags. A chat model that cannot be used is said on standard error and in the sidebar's setup hint.
pub fn assemble(ws: &Workspace, flags: &ServeFlags, runtime: &tokio::runtime::Handle) -> anyhow::Result<Served> {
    // What starts tasks here (the token file followed for MCP's endpoint, the plugins) starts them on `runtime`.
    let _entered = runtime.enter();
    let dir = config_dir()?;
    // Separate from the MCP token: a web session and an MCP client are different doors.
    let key = crate::secrets::secret(&dir, "web-key", flags.rotate_key)?;
    let mut models = web_models(&dir)?;
    models.semantic = Some(semantic_models(ws, &dir)?);
    models.add = Some(add_model(dir.clone()));
    let agents_of = ws.clone();
    models.agents = quire_web::AgentSource(Arc::new(move || crate::agents::web_agents(&agents_of)));
    // The plugins' tools join the built-in ones; the Settings screen lists and manages them.
    let tools = Arc::new(ToolRegistry::builtin());
    let components = Components {
        indexer: true,
        sync: Some(crate::settings::sync_interval()?),
        plugins: Some(tools.clone()),
        // The page's plugins, sidebar-only ones too (its MCP endpoint leaves those out).
        plugins_for_clients: false,
        automations: true,
        capture: Some(crate::settings::capture()?.ocr()),
    };
    let background = Background::start(ws, components, runtime)?;
    let plugins = background
        .plugins()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the plugins did not start"))?;
    let managed = Arc::new(crate::plugins::managed(ws, plugins.clone(), tools.clone())?);
    // A plugin added or removed in a terminal (`quire plugin add`) reaches this server, and the page's Settings.
    managed.follow_config(std::time::Duration::from_secs(2));
    // With a public address, the MCP endpoint for hosted assistants is served here too (`quire mcp`'s settings).
    let mcp = match &flags.public_url {
        Some(url) => {
            // One plugin process per plugin in this process: MCP's clients call the page's plugins.
            let server = crate::mcp::build_server(ws, &McpFlags::default(), tools.clone())?;
            let options = crate::mcp::http_options(Some(url), flags.allow_remote)?;
            Some(quire_mcp::http::router(server, options))
        }
        None => None,
    };
    let tls = match (&flags.tls, flags.address) {
        (Some(choice), Some(address)) => Some(crate::devices::tls(choice, address, flags.public_url.as_deref())?),
        _ => None,
    };
    let device_url = flags.public_url.clone().or_else(|| {
        let address = flags.address?;
        tls.as_ref().map(|_| format!("https://{}", reachable(address)))
    });
    let app = quire_web::WebApp::new(
        ws.clone(),
        tools.clone(),
        quire_web::WebOptions {
            key_file: Some(dir.join("web-key")),
            allow_remote: flags.allow_remote,
            lock_timeout: crate::settings::lock_timeout()?,
            sync: background.sync(),
            plugins: Some(managed),
            periodic: periodic_source(),
            devices_dir: Some(dir.clone()),
            secure_cookies: tls.is_some() || flags.public_url.as_deref().is_some_and(|u| u.starts_with("https://")),
            device_url: device_url.clone(),
            automations: Some(quire_web::Automations(Arc::new(
                crate::automations::page::PageAutomations {
                    registry: tools.clone(),
                },
            ))),
            agent_admin: Some(quire_web::AgentAdmins(Arc::new(crate::agents::page::PageAgents))),
            ..quire_web::WebOptions::new(key.clone())
        },
        models,
    );
    Ok(Served {
        app,
        key,
        mcp,
        background,
        plugins,
        tls,
        device_url,
    })
}

/// `address` as another device reaches it: an address that means every network (`0.0.0.0`) is given as this
/// computer's address on the network its default route leaves by (found without sending anything).
fn reachable(address: std::net::SocketAddr) -> std::net::SocketAddr {
    if !address.ip().is_unspecified() {
        return address;
    }
    let probe = std::net::UdpSocket::bind(("0.0.0.0", 0)).and_then(|socket| {
        // A documentation address (TEST-NET-1): connecting a UDP socket only chooses the route.
        socket.connect(("192.0.2.1", 9))?;
        socket.local_addr()
    });
    match probe {
        Ok(local) if !local.ip().is_unspecified() => std::net::SocketAddr::new(local.ip(), address.port()),
        _ => std::net::SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), address.port()),
    }
}

/// The chat models as `quire chat` finds them (flags aside), the default first; one that cannot be used (a missing
/// key) is left out and said why, on standard error and in the sidebar's setup hint.
fn web_models(dir: &Path) -> anyhow::Result<quire_web::WebModels> {
    let mut models = quire_web::WebModels {
        max_turn_tokens: crate::settings::max_turn_tokens()?,
        note_view_tokens: Some(crate::settings::note_view_tokens()?),
        ..quire_web::WebModels::default()
    };
    let mut problems = Vec::new();
    for choice in crate::chat_models::configured_models(None, None)? {
        match crate::chat_models::connect(&choice) {
            Ok(chat) => models.models.push(quire_web::WebModel {
                name: choice.name,
                model: choice.settings.model,
                base_url: choice.settings.base_url,
                chat: Arc::from(chat),
                prices: choice.prices,
            }),
            Err(e) => {
                eprintln!("The model {} cannot be used: {e}", choice.name);
                problems.push(format!("{}: {e}.", choice.name));
            }
        }
    }
    problems.push(how_to_configure(&dir.join("config.toml")));
    models.setup_hint = format!("No model is configured for the assistant. {}", problems.join(" "));
    Ok(models)
}

/// Adding a chat model from the page: [`crate::chat_models::keep_chat_model`] checks and keeps it.
fn add_model(dir: PathBuf) -> quire_web::AddModel {
    Arc::new(move |new: quire_web::NewModel| {
        let name = new.name.trim().to_owned();
        let clean = |text: Option<String>| text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        let settings = quire_agent::ModelSettings {
            model: new.model.trim().to_owned(),
            base_url: clean(new.base_url),
            api_key: clean(new.api_key),
        };
        let chat = crate::chat_models::keep_chat_model(&dir, &name, &settings).map_err(|e| format!("{e:#}"))?;
        Ok(quire_web::WebModel {
            name,
            model: settings.model,
            base_url: settings.base_url,
            chat: Arc::from(chat),
            prices: None,
        })
    })
}

/// How to give `quire serve` a model: it takes no `--model` flag (the agent's own advice names it), so the advice
/// here names the configuration file, where it is, and that the server reads it when it starts.
fn how_to_configure(config: &Path) -> String {
    format!(
        "Add one to {}: under [chat], set model = \"ollama:qwen3\" (a local Ollama), \"openai:gpt-4.1-mini\" \
         (with OPENAI_API_KEY set), \"anthropic:claude-sonnet-4-5\" (with ANTHROPIC_API_KEY set), or \
         \"openai-compatible:NAME\" with base_url = \"http://...\" for llama.cpp, vLLM, LM Studio or OpenRouter; list \
         several as [[chat.models]] entries (name, model, base_url). Starting quire serve with QUIRE_MODEL (and \
         QUIRE_BASE_URL) set works too. A change made to the file by hand counts once quire serve is started again \
         (Ctrl+C, start it, reload this page); one added with the form above counts at once.",
        config.display()
    )
}

/// Search by meaning's model for the page: what is in use, and an install that, once done, writes `[index] model`
/// and gives the running workspace the new model (the indexer then embeds the notes again in the background).
fn semantic_models(ws: &Workspace, dir: &Path) -> anyhow::Result<quire_web::SemanticModels> {
    let active = crate::embedder::Active::of(&crate::settings::read_config(dir)?.index);
    let store = crate::embedder::store()?;
    let activate_store = store.clone();
    let workspace = ws.clone();
    let dir = dir.to_owned();
    let activate: quire_web::Activate = Arc::new(move |model| {
        crate::settings::set_index_model(&dir, Some(model.name)).map_err(|e| format!("{e:#}"))?;
        let folder = activate_store.dir(model);
        workspace.set_embedder_loader(move || {
            let loaded = quire_embed::LocalEmbedder::load(&folder).map_err(|e| e.to_string())?;
            Ok(Arc::new(loaded) as Arc<dyn quire_core::Embedder>)
        });
        // Loaded now, so the first search by meaning does not wait for it.
        workspace.embedder().map_err(|e| e.to_string())?;
        Ok(crate::embedder::Active::Catalog(model.name.to_owned()).describe())
    });
    Ok(quire_web::SemanticModels {
        store,
        endpoint: quire_embed::hub_endpoint(),
        active: active.catalog_name().map(str::to_owned),
        uses: active.describe(),
        builtin: active == crate::embedder::Active::Builtin,
        activate,
    })
}

/// The day's and week's notes' settings and the templates' notebook, read from config.toml at each use (an edit
/// applies to the next click of Today, no restart).
fn periodic_source() -> quire_web::PeriodicSource {
    quire_web::PeriodicSource(Arc::new(|| {
        let read = || -> anyhow::Result<quire_web::Periodic> {
            let config = crate::settings::read_config(&config_dir()?)?;
            Ok(quire_web::Periodic {
                daily: crate::settings::periodic_from(&config, quire_core::Period::Day),
                weekly: crate::settings::periodic_from(&config, quire_core::Period::Week),
                templates_notebook: crate::settings::templates_notebook_from(&config),
            })
        };
        read().map_err(|e| quire_web::ConfigError(format!("{e:#}")))
    }))
}
