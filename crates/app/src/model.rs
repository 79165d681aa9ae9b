//! `quire model`: the sentence models of quire-embed's catalog: list, install (downloaded from the model's public
//! repository, or `--from DIR`), use, remove. Installed models live in `quire/models` in the data directory; the
//! active one is `[index] model` in config.toml.

use std::path::Path;

use anyhow::bail;
use quire_embed::{CatalogModel, InstallProgress, ModelStore, catalog};
use serde_json::json;

use quire_host::embedder::{Active, catalog_model, store};

use crate::cli::ModelCommand;
use crate::output::Output;
use quire_host::settings::{config_dir, read_config};

pub(crate) fn run(command: ModelCommand, out: &Output) -> anyhow::Result<()> {
    let dir = config_dir()?;
    let config = read_config(&dir)?;
    let store = store()?;
    let active = Active::of(&config.index);
    match command {
        ModelCommand::List => list(out, &store, &active),
        ModelCommand::Install { name, from } => {
            let model = catalog_model(name.as_deref().unwrap_or(quire_embed::models::DEFAULT_MODEL))?;
            install(out, &store, model, from.as_deref())?;
            if active == Active::Builtin {
                quire_host::settings::set_index_model(&dir, Some(model.name))?;
                report(
                    out,
                    json!({"installed": model.name, "dir": store.dir(model), "active": true}),
                    &format!(
                        "installed {} in {}\nsearch by meaning now uses it; running `quire serve` or `quire mcp` \
                         embeds your notes in the background (or now: quire index rebuild)\n",
                        model.name,
                        store.dir(model).display()
                    ),
                )
            } else {
                let active_now = active.catalog_name() == Some(model.name);
                report(
                    out,
                    json!({"installed": model.name, "dir": store.dir(model), "active": active_now}),
                    &if active_now {
                        format!("installed {} in {}\n", model.name, store.dir(model).display())
                    } else {
                        format!(
                            "installed {} in {}\nsearch by meaning still uses {}; to switch: quire model use {}\n",
                            model.name,
                            store.dir(model).display(),
                            active.describe(),
                            model.name
                        )
                    },
                )
            }
        }
        ModelCommand::Use { name } => {
            if name.eq_ignore_ascii_case("builtin") {
                quire_host::settings::set_index_model(&dir, None)?;
                return report(
                    out,
                    json!({"active": null}),
                    &format!("{}\n", after_change(&Active::of(&read_config(&dir)?.index))),
                );
            }
            let model = catalog_model(&name)?;
            if !store.is_installed(model) {
                bail!(
                    "{} is not installed; install it first: quire model install {}",
                    model.name,
                    model.name
                );
            }
            quire_host::settings::set_index_model(&dir, Some(model.name))?;
            report(
                out,
                json!({"active": model.name}),
                &format!("{}\n", after_change(&Active::of(&read_config(&dir)?.index))),
            )
        }
        ModelCommand::Remove { name } => {
            let model = catalog_model(&name)?;
            let removed = store.remove(model)?;
            let was_active = active.catalog_name() == Some(model.name);
            if was_active {
                quire_host::settings::set_index_model(&dir, None)?;
            }
            let mut text = if removed {
                format!("removed {}\n", model.name)
            } else {
                format!("{} was not installed\n", model.name)
            };
            if was_active {
                text.push_str(&format!("{}\n", after_change(&Active::of(&read_config(&dir)?.index))));
            }
            report(out, json!({"removed": removed, "was_active": was_active}), &text)
        }
    }
}

fn after_change(active: &Active) -> String {
    let mut text = format!("search by meaning now uses {}", active.describe());
    if matches!(active, Active::Catalog(_)) {
        text.push_str(
            "; running `quire serve` or `quire mcp` embeds your notes again in the background (or now: quire index rebuild)",
        );
    }
    if let Active::Env(_) = active {
        text.push_str("; QUIRE_EMBED_MODEL wins over the configuration while it is set");
    }
    text
}

fn report(out: &Output, value: serde_json::Value, text: &str) -> anyhow::Result<()> {
    if out.json {
        crate::output::json_value(&value)
    } else {
        crate::output::text(text)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn list(out: &Output, store: &ModelStore, active: &Active) -> anyhow::Result<()> {
    let models: Vec<serde_json::Value> = catalog()
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "repository": m.repository,
                "revision": m.revision,
                "size": m.size(),
                "dimensions": m.dimensions,
                "max_tokens": m.max_tokens,
                "licence": m.licence,
                "summary": m.summary,
                "installed": store.is_installed(m),
                "active": active.catalog_name() == Some(m.name),
                "dir": store.dir(m),
            })
        })
        .collect();
    if out.json {
        return crate::output::json_value(&json!({
            "models": models,
            "active": active.catalog_name(),
            "search_by_meaning_uses": active.describe(),
        }));
    }
    let mut text = String::new();
    for m in catalog() {
        let state = match (store.is_installed(m), active.catalog_name() == Some(m.name)) {
            (true, true) => "installed, active",
            (true, false) => "installed",
            (false, true) => "active but not installed: quire model install",
            (false, false) => "not installed",
        };
        text.push_str(&format!(
            "{:<20} {:>8}  {} dimensions  {}  {}\n    {}\n",
            m.name,
            mib(m.size()),
            m.dimensions,
            m.licence,
            state,
            m.summary
        ));
    }
    text.push_str(&format!("\nsearch by meaning uses {}\n", active.describe()));
    if *active == Active::Builtin {
        text.push_str("for search that finds paraphrases: quire model install\n");
    }
    crate::output::text(&text)
}

fn install(out: &Output, store: &ModelStore, model: &CatalogModel, from: Option<&Path>) -> anyhow::Result<()> {
    let bar = if out.json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(model.size())
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg:18} {bar:40} {bytes}/{total_bytes}, {bytes_per_sec}, {eta} left")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |p: InstallProgress| {
        bar.set_position(p.done);
        bar.set_message(p.file.unwrap_or("checking"));
    };
    let result = match from {
        Some(folder) => store.install_from(model, folder, &progress),
        None => {
            let endpoint = quire_embed::hub_endpoint();
            if !out.json {
                crate::output::text(&format!(
                    "downloading {} ({}) from {}\n",
                    model.name,
                    mib(model.size()),
                    endpoint
                ))?;
            }
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(store.download(model, &endpoint, &progress))
        }
    };
    bar.finish_and_clear();
    result?;
    Ok(())
}
