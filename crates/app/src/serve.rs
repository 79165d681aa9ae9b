//! `quire serve`: the web app of quire-web on loopback, with a key of its own in the address it prints.

use std::sync::Arc;

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_tools::ToolRegistry;

use crate::cli::ServeArgs;
use quire_host::background::{Background, Components};
use quire_host::mcp::McpFlags;
use quire_host::settings::config_dir;

pub(crate) fn run(ws: Workspace, args: ServeArgs) -> anyhow::Result<()> {
    if !is_loopback(&args.addr) && !args.allow_remote {
        bail!(
            "{} is reachable from other machines; pass --allow-remote if that is what you want",
            args.addr
        );
    }
    // Separate from the MCP token: a web session and an MCP client are different doors.
    let key_file = config_dir()?.join("web-key");
    let key = quire_host::secrets::secret(&config_dir()?, "web-key", args.rotate_key)?;
    let mut models = web_models()?;
    models.semantic = Some(semantic_models(&ws)?);
    models.add = Some(add_model(config_dir()?));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The plugins' tools join the built-in ones; the Settings screen lists and manages them.
    let tools = Arc::new(ToolRegistry::builtin());
    let components = Components {
        indexer: true,
        sync: Some(quire_host::settings::sync_interval()?),
        plugins: Some(tools.clone()),
    };
    let background = Background::start(&ws, components, runtime.handle())?;
    let plugin_host = background.plugins().cloned().context("the plugins did not start")?;
    let plugins = Arc::new(quire_host::plugins::managed(&ws, plugin_host.clone(), tools.clone())?);
    // With a public address, the MCP endpoint for hosted assistants is served here too (`quire mcp`'s settings).
    let mcp = match &args.public_url {
        Some(_) => Some(quire_host::mcp::build_server(&ws, &McpFlags::default())?),
        None => None,
    };
    let app = quire_web::WebApp::new(
        ws.clone(),
        tools,
        quire_web::WebOptions {
            key_file: Some(key_file),
            allow_remote: args.allow_remote,
            lock_timeout: quire_host::settings::lock_timeout()?,
            sync: background.sync(),
            plugins: Some(plugins),
            ..quire_web::WebOptions::new(key.clone())
        },
        models,
    );
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.addr).await {
            Ok(listener) => listener,
            // A server already running there reads the key file again when a session is opened: the new key
            // works there now, and the old one opens nothing.
            Err(e) if args.rotate_key && e.kind() == std::io::ErrorKind::AddrInUse => {
                let host = if args.addr.ip().is_loopback() {
                    format!("127.0.0.1:{}", args.addr.port())
                } else {
                    args.addr.to_string()
                };
                crate::output::line(&format!("The web key was replaced: http://{host}/?token={key}"))?;
                bail!(
                    "cannot listen on {} ({e}). If quire serve is already running there, it now opens sessions only \
                     with the address above; addresses printed before open nothing, and sessions already open stay \
                     open until it stops",
                    args.addr
                );
            }
            Err(e) => return Err(e).with_context(|| format!("cannot listen on {}", args.addr)),
        };
        let bound = listener.local_addr()?;
        let host = if bound.ip().is_loopback() {
            format!("127.0.0.1:{}", bound.port())
        } else {
            bound.to_string()
        };
        let address = format!("http://{host}/?token={key}");
        crate::output::line(&format!("quire is at {address}"))?;
        if args.open
            && let Err(e) = open::that_detached(&address)
        {
            eprintln!("Could not open a browser ({e}); open the address above yourself.");
        }
        eprintln!("Open the address above in your browser (it starts a session); Ctrl+C stops the server.");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let beside = match (mcp, &args.public_url) {
            (Some(server), Some(url)) => {
                let options = quire_host::mcp::http_options(Some(url), args.allow_remote)?;
                Some(quire_mcp::http::router(server, options))
            }
            _ => None,
        };
        let served = quire_web::serve_with(listener, app, beside, shutdown).await;
        // The plugins' processes end with the server.
        plugin_host.shutdown().await;
        served?;
        Ok(())
    })
}

/// The chat models as `quire chat` finds them (flags aside), the default first; one that cannot be used (a missing
/// key) is left out and said why, on the terminal and in the sidebar's setup hint.
fn web_models() -> anyhow::Result<quire_web::WebModels> {
    let mut models = quire_web::WebModels {
        max_turn_tokens: quire_host::settings::max_turn_tokens()?,
        note_view_tokens: Some(quire_host::settings::note_view_tokens()?),
        ..quire_web::WebModels::default()
    };
    let mut problems = Vec::new();
    for choice in quire_host::chat_models::configured_models(None, None)? {
        match crate::chat::build_model(&choice) {
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
    problems.push(how_to_configure(&config_dir()?.join("config.toml")));
    models.setup_hint = format!("No model is configured for the assistant. {}", problems.join(" "));
    Ok(models)
}

/// Adding a chat model from the page: [`quire_host::chat_models::keep_chat_model`] checks and keeps it.
fn add_model(dir: std::path::PathBuf) -> quire_web::AddModel {
    Arc::new(move |new: quire_web::NewModel| {
        let name = new.name.trim().to_owned();
        let clean = |text: Option<String>| text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        let settings = quire_agent::ModelSettings {
            model: new.model.trim().to_owned(),
            base_url: clean(new.base_url),
            api_key: clean(new.api_key),
        };
        let chat = quire_host::chat_models::keep_chat_model(&dir, &name, &settings).map_err(|e| format!("{e:#}"))?;
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
fn how_to_configure(config: &std::path::Path) -> String {
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
fn semantic_models(ws: &Workspace) -> anyhow::Result<quire_web::SemanticModels> {
    let dir = config_dir()?;
    let active = quire_host::embedder::Active::of(&quire_host::settings::read_config(&dir)?.index);
    let store = quire_host::embedder::store()?;
    let activate_store = store.clone();
    let workspace = ws.clone();
    let activate: quire_web::Activate = Arc::new(move |model| {
        quire_host::settings::set_index_model(&dir, Some(model.name)).map_err(|e| format!("{e:#}"))?;
        let folder = activate_store.dir(model);
        workspace.set_embedder_loader(move || {
            let loaded = quire_embed::LocalEmbedder::load(&folder).map_err(|e| e.to_string())?;
            Ok(Arc::new(loaded) as Arc<dyn quire_core::Embedder>)
        });
        // Loaded now, so the first search by meaning does not wait for it.
        workspace.embedder().map_err(|e| e.to_string())?;
        Ok(quire_host::embedder::Active::Catalog(model.name.to_owned()).describe())
    });
    Ok(quire_web::SemanticModels {
        store,
        endpoint: quire_embed::hub_endpoint(),
        active: active.catalog_name().map(str::to_owned),
        uses: active.describe(),
        builtin: active == quire_host::embedder::Active::Builtin,
        activate,
    })
}

fn is_loopback(addr: &std::net::SocketAddr) -> bool {
    addr.ip().is_loopback()
}
