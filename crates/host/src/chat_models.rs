//! The chat models of config.toml: which the agent uses by precedence (the flags, then `QUIRE_MODEL` and
//! `QUIRE_BASE_URL`, then `[chat] model`, then each `[[chat.models]]` entry), their prices, and a model added from the
//! web page kept as an entry.

use std::path::Path;

use anyhow::Context;
use quire_agent::{ChatModel, ModelSettings, Prices};

use crate::settings::{NamedModel, config_dir, edit_config, read_config};

/// A model the user can choose: its name, how to reach it, and its prices if the configuration gives them.
pub struct ModelChoice {
    /// Its name.
    pub name: String,
    /// How to reach it.
    pub settings: ModelSettings,
    /// Its prices, when the configuration gives them.
    pub prices: Option<Prices>,
}

/// Connects to a configured model, with its key from the environment where the configuration names none; why it
/// cannot be used (an unknown provider, a missing key) otherwise.
pub fn connect(choice: &ModelChoice) -> Result<Box<dyn ChatModel>, quire_agent::ModelError> {
    quire_agent::model_from_settings(&choice.settings, |var| std::env::var(var).ok())
}

/// The models the configuration offers, the default first: the one the flags, the environment (`QUIRE_MODEL`,
/// `QUIRE_BASE_URL`) or `[chat] model` name, then each `[[chat.models]]` entry. `model` may also be an entry's name,
/// which makes that entry the default. Empty when nothing is configured. `[chat]`'s prices go with the model chosen
/// outside the entries, each entry's with its model.
pub fn configured_models(model: Option<String>, base_url: Option<String>) -> anyhow::Result<Vec<ModelChoice>> {
    configured_models_in(&config_dir()?, |name| std::env::var(name).ok(), model, base_url)
}

/// [`configured_models`] for the configuration in `dir` and the environment `env` gives.
pub fn configured_models_in(
    dir: &Path,
    env: impl Fn(&str) -> Option<String>,
    model: Option<String>,
    base_url: Option<String>,
) -> anyhow::Result<Vec<ModelChoice>> {
    let file = dir.join("config.toml");
    let config = read_config(dir)?.chat;
    let mut choices: Vec<ModelChoice> = config
        .models
        .iter()
        .map(|m| {
            let name = m.name.clone().unwrap_or_else(|| m.model.clone());
            let what = format!("{}: the [[chat.models]] entry {name}", file.display());
            Ok(ModelChoice {
                prices: prices(&what, m.price_in, m.price_out, m.price_cached_in)?,
                name,
                settings: ModelSettings {
                    model: m.model.clone(),
                    base_url: m.base_url.clone(),
                    api_key: m.api_key.clone(),
                },
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let chat_prices = prices(
        &format!("{}: [chat]", file.display()),
        config.price_in,
        config.price_out,
        config.price_cached_in,
    )?;
    let wanted = model.or_else(|| env("QUIRE_MODEL"));
    let base_url = base_url.or_else(|| env("QUIRE_BASE_URL"));
    if let Some(at) = wanted.as_ref().and_then(|w| choices.iter().position(|c| &c.name == w)) {
        let mut chosen = choices.remove(at);
        if base_url.is_some() {
            chosen.settings.base_url = base_url;
        }
        choices.insert(0, chosen);
    } else if let Some(model) = wanted.or(config.model) {
        choices.insert(
            0,
            ModelChoice {
                name: model.clone(),
                settings: ModelSettings {
                    model,
                    base_url: base_url.or(config.base_url),
                    api_key: config.api_key,
                },
                prices: chat_prices,
            },
        );
    }
    Ok(choices)
}

/// Keeps a chat model added from the web page, once it is usable now (a known provider, its key when it needs
/// one): a `[[chat.models]]` entry of config.toml (the key with it, in a file only its owner reads), so `quire chat`
/// and the next `quire serve` offer it too. Returns the connected model; an `Err` is said to the person.
pub fn keep_chat_model(dir: &Path, name: &str, settings: &ModelSettings) -> anyhow::Result<Box<dyn ChatModel>> {
    let chat = quire_agent::model_from_settings(settings, |var| std::env::var(var).ok()).map_err(|e| {
        // The agent's advice names `--model`, which the page has no use for.
        let reason = e.message.replace(quire_agent::HOW_TO_CONFIGURE, "");
        anyhow::anyhow!(
            "{} cannot be used: {} Give provider:model with ollama, openai, anthropic or openai-compatible (with its \
             base URL).",
            settings.model,
            reason.trim()
        )
    })?;
    let entry = NamedModel {
        name: Some(name.to_owned()),
        model: settings.model.clone(),
        base_url: settings.base_url.clone(),
        api_key: settings.api_key.clone(),
        price_in: None,
        price_out: None,
        price_cached_in: None,
    };
    add_chat_model(dir, &entry).map_err(|e| anyhow::anyhow!("The model could not be kept: {e:#}"))?;
    Ok(chat)
}

/// Adds a `[[chat.models]]` entry to config.toml, or replaces the one of the same name, keeping the rest of the file
/// as it was. The file holds the key, so it is written readable by its owner only.
pub fn add_chat_model(dir: &Path, model: &NamedModel) -> anyhow::Result<()> {
    edit_config(dir, |doc, path| {
        let chat = doc
            .entry("chat")
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .with_context(|| format!("{}: `chat` is not a table", path.display()))?;
        let models = chat
            .entry("models")
            .or_insert(toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .with_context(|| {
                format!(
                    "{}: `chat.models` is not a list of [[chat.models]] entries",
                    path.display()
                )
            })?;
        let name = model.name.clone().unwrap_or_else(|| model.model.clone());
        let mut entry = toml_edit::Table::new();
        entry.insert("name", toml_edit::value(name.as_str()));
        entry.insert("model", toml_edit::value(model.model.as_str()));
        if let Some(base_url) = &model.base_url {
            entry.insert("base_url", toml_edit::value(base_url.as_str()));
        }
        if let Some(key) = &model.api_key {
            entry.insert("api_key", toml_edit::value(key.as_str()));
        }
        for (key, price) in [
            ("price_in", model.price_in),
            ("price_out", model.price_out),
            ("price_cached_in", model.price_cached_in),
        ] {
            if let Some(price) = price {
                entry.insert(key, toml_edit::value(price));
            }
        }
        let same = models.iter().position(|t| {
            t.get("name")
                .and_then(|n| n.as_str())
                .or_else(|| t.get("model").and_then(|m| m.as_str()))
                == Some(&name)
        });
        match same.and_then(|at| models.get_mut(at)) {
            Some(existing) => *existing = entry,
            None => models.push(entry),
        }
        Ok(())
    })
}

/// The prices a `[chat]` table or a `[[chat.models]]` entry gives: none when it gives none, both `price_in` and
/// `price_out` otherwise (an estimate needs both), none negative.
fn prices(
    what: &str,
    price_in: Option<f64>,
    price_out: Option<f64>,
    price_cached_in: Option<f64>,
) -> anyhow::Result<Option<Prices>> {
    let given = [
        ("price_in", price_in),
        ("price_out", price_out),
        ("price_cached_in", price_cached_in),
    ];
    if let Some((key, value)) = given.iter().find(|(_, v)| v.is_some_and(|v| !v.is_finite() || v < 0.0)) {
        anyhow::bail!(
            "{what}: {key} = {} is not a price; give currency units per million tokens, such as 2.5",
            value.unwrap_or_default()
        );
    }
    match (price_in, price_out) {
        (Some(input), Some(output)) => Ok(Some(Prices {
            input,
            output,
            cached_input: price_cached_in,
        })),
        (None, None) if price_cached_in.is_none() => Ok(None),
        _ => anyhow::bail!(
            "{what}: give both price_in and price_out (currency units per million tokens sent and generated) to \
             see what turns cost, or neither"
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::settings::NamedModel;

    fn names(dir: &Path, env: &[(&str, &str)], model: Option<&str>) -> Vec<(String, String, Option<String>)> {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        configured_models_in(dir, lookup, model.map(str::to_owned), None)
            .unwrap()
            .into_iter()
            .map(|c| (c.name, c.settings.model, c.settings.base_url))
            .collect()
    }

    #[test]
    fn the_chat_model_comes_from_the_flag_then_the_environment_then_the_file_then_its_entries() {
        let dir = tempfile::tempdir().unwrap();
        assert!(names(dir.path(), &[], None).is_empty(), "nothing configured: no model");
        std::fs::write(
            dir.path().join("config.toml"),
            "[chat]\nmodel = \"ollama:llama3\"\nbase_url = \"http://file\"\n\n[[chat.models]]\nname = \"work\"\n\
             model = \"openai:gpt-4o\"\nbase_url = \"http://work\"\n",
        )
        .unwrap();
        let file = names(dir.path(), &[], None);
        assert_eq!(
            file[0],
            (
                "ollama:llama3".into(),
                "ollama:llama3".into(),
                Some("http://file".into())
            )
        );
        assert_eq!(file[1].0, "work", "the entries follow");
        let env = names(
            dir.path(),
            &[("QUIRE_MODEL", "anthropic:claude"), ("QUIRE_BASE_URL", "http://env")],
            None,
        );
        assert_eq!(
            env[0],
            (
                "anthropic:claude".into(),
                "anthropic:claude".into(),
                Some("http://env".into())
            )
        );
        let flag = names(dir.path(), &[("QUIRE_MODEL", "anthropic:claude")], Some("openai:o3"));
        assert_eq!(flag[0].1, "openai:o3", "the flag wins over the environment");
        assert_eq!(
            flag[0].2,
            Some("http://file".into()),
            "with [chat]'s address when none is given"
        );
        let entry = names(dir.path(), &[("QUIRE_BASE_URL", "http://env")], Some("work"));
        assert_eq!(
            entry.len(),
            1,
            "naming an entry makes it the default, not a second model"
        );
        assert_eq!(
            entry[0],
            ("work".into(), "openai:gpt-4o".into(), Some("http://env".into()))
        );
    }

    fn entry(name: &str, model: &str, key: Option<&str>) -> NamedModel {
        NamedModel {
            name: Some(name.into()),
            model: model.into(),
            base_url: None,
            api_key: key.map(str::to_owned),
            price_in: None,
            price_out: None,
            price_cached_in: None,
        }
    }

    #[test]
    fn a_model_added_from_the_page_keeps_the_file_and_replaces_its_namesake() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my settings\n[chat]\nmodel = \"ollama:qwen3\"\n\n[index]\nmodel = \"m\"\n",
        )
        .unwrap();
        add_chat_model(dir.path(), &entry("Work", "openai:gpt-4.1-mini", Some("sk-1"))).unwrap();
        add_chat_model(dir.path(), &entry("Local", "ollama:llama3", None)).unwrap();
        add_chat_model(dir.path(), &entry("Work", "openai:gpt-4.1", Some("sk-2"))).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\n"), "{text}");
        let config = read_config(dir.path()).unwrap();
        assert_eq!(config.chat.model.as_deref(), Some("ollama:qwen3"));
        assert_eq!(config.index.model.as_deref(), Some("m"));
        let models: Vec<(Option<String>, String, Option<String>)> = config
            .chat
            .models
            .into_iter()
            .map(|m| (m.name, m.model, m.api_key))
            .collect();
        assert_eq!(
            models,
            [
                (Some("Work".into()), "openai:gpt-4.1".into(), Some("sk-2".into())),
                (Some("Local".into()), "ollama:llama3".into(), None),
            ]
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600,
                "it holds keys"
            );
        }
    }

    #[test]
    fn a_configuration_from_before_prices_still_loads_and_prices_come_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[chat]\nmodel = \"ollama:qwen3\"\n\n[[chat.models]]\nname = \"Work\"\nmodel = \"openai:gpt-4.1\"\n",
        )
        .unwrap();
        let config = read_config(dir.path()).unwrap();
        assert_eq!(
            (
                config.chat.price_in,
                config.chat.max_turn_tokens,
                config.chat.models[0].price_out
            ),
            (None, None, None)
        );
        assert_eq!(
            crate::settings::note_view_tokens_in(dir.path()).unwrap(),
            quire_agent::DEFAULT_VIEW_TOKENS
        );
        std::fs::write(dir.path().join("config.toml"), "[chat]\nnote_view_tokens = 500\n").unwrap();
        assert_eq!(crate::settings::note_view_tokens_in(dir.path()).unwrap(), 500);
        std::fs::write(dir.path().join("config.toml"), "[chat]\nnote_view_tokens = 10\n").unwrap();
        assert!(
            crate::settings::note_view_tokens_in(dir.path())
                .unwrap_err()
                .to_string()
                .contains("give 200 or more")
        );
        let priced = prices("x", Some(2.0), Some(8.0), None).unwrap().unwrap();
        assert_eq!((priced.input, priced.output, priced.cached_input), (2.0, 8.0, None));
        assert_eq!(prices("x", None, None, None).unwrap(), None);
        for (input, output, cached) in [
            (Some(2.0), None, None),
            (None, None, Some(0.5)),
            (Some(-1.0), Some(1.0), None),
        ] {
            assert!(
                prices("x", input, output, cached).is_err(),
                "{input:?} {output:?} {cached:?}"
            );
        }
    }
}
