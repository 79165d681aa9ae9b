//! Choosing a model from a `provider:model` string, a base URL and keys from the environment or configuration.

use crate::anthropic::AnthropicClient;
use crate::model::{ChatModel, ModelError};
use crate::openai::OpenAiClient;
use quire_embed::http::ClientConfig;

/// How to reach a model, as a user configures it.
#[derive(Clone, Default)]
pub struct ModelSettings {
    /// `provider:model`: `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`, `ollama:qwen3`, or
    /// `openai-compatible:NAME` with a base URL (llama.cpp, vLLM, LM Studio, OpenRouter).
    pub model: String,
    /// Overrides the provider's base URL.
    pub base_url: Option<String>,
    /// The API key; when absent, `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` as the provider needs.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for ModelSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSettings")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// How to tell quire which model to use; shown when none is configured or a setting is wrong.
pub const HOW_TO_CONFIGURE: &str = "Choose a model with --model PROVIDER:MODEL (or QUIRE_MODEL, or `model = \"...\"` \
under [chat] in config.toml): openai:gpt-4.1-mini (with OPENAI_API_KEY), anthropic:claude-sonnet-4-5 (with \
ANTHROPIC_API_KEY), ollama:qwen3 (a local Ollama), or openai-compatible:NAME with --base-url for llama.cpp, vLLM, \
LM Studio or OpenRouter. To choose among several, list them as [[chat.models]] entries (name, model, base_url) in \
config.toml.";

/// Builds the client the settings name. `env` reads an environment variable (passed in, so that nothing global is
/// read here).
pub fn model_from_settings(
    settings: &ModelSettings,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Box<dyn ChatModel>, ModelError> {
    let (provider, name) = settings
        .model
        .split_once(':')
        .filter(|(p, n)| !p.is_empty() && !n.is_empty())
        .ok_or_else(|| {
            ModelError::new(
                "settings",
                format!("'{}' is not PROVIDER:MODEL. {HOW_TO_CONFIGURE}", settings.model),
            )
        })?;
    let key = |var: &str| {
        settings
            .api_key
            .clone()
            .or_else(|| env(var))
            .filter(|k| !k.trim().is_empty())
    };
    let base = |default: &str| settings.base_url.clone().unwrap_or_else(|| default.to_owned());
    match provider {
        "openai" => {
            let api_key = key("OPENAI_API_KEY")
                .ok_or_else(|| ModelError::new("settings", "openai needs an API key: set OPENAI_API_KEY."))?;
            Ok(Box::new(OpenAiClient::new(ClientConfig::new(
                base("https://api.openai.com/v1"),
                name,
                Some(api_key),
            ))?))
        }
        "anthropic" => {
            let api_key = key("ANTHROPIC_API_KEY")
                .ok_or_else(|| ModelError::new("settings", "anthropic needs an API key: set ANTHROPIC_API_KEY."))?;
            Ok(Box::new(AnthropicClient::new(ClientConfig::new(
                base("https://api.anthropic.com"),
                name,
                Some(api_key),
            ))?))
        }
        "ollama" => Ok(Box::new(OpenAiClient::new(ClientConfig::new(
            base("http://localhost:11434/v1"),
            name,
            key("OLLAMA_API_KEY"),
        ))?)),
        "openai-compatible" => {
            let base_url = settings.base_url.clone().ok_or_else(|| {
                ModelError::new(
                    "settings",
                    "openai-compatible needs --base-url, such as http://localhost:8080/v1.",
                )
            })?;
            Ok(Box::new(OpenAiClient::new(ClientConfig::new(
                base_url,
                name,
                key("OPENAI_API_KEY"),
            ))?))
        }
        other => Err(ModelError::new(
            "settings",
            format!("unknown provider '{other}'. {HOW_TO_CONFIGURE}"),
        )),
    }
}
