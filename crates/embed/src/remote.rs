//! An [`Embedder`] for OpenAI-compatible `/v1/embeddings` endpoints (OpenAI, Ollama, llama.cpp, vLLM), batched,
//! with the same retries as the chat clients.

use quire_core::Embedder;
use serde_json::{Value, json};

use crate::http::{ClientConfig, ModelError, client, excerpt, send};

const PROVIDER: &str = "embeddings";
/// Texts per request.
const BATCH: usize = 64;

/// Embeds through `POST {base_url}/embeddings`.
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    config: ClientConfig,
    dimensions: usize,
}

impl HttpEmbedder {
    /// An embedder for this endpoint and model; `dimensions` is the model's vector length.
    pub fn new(config: ClientConfig, dimensions: usize) -> HttpEmbedder {
        HttpEmbedder { config, dimensions }
    }

    async fn embed_async(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let http = client(&self.config, PROVIDER)?;
        let url = format!("{}/embeddings", self.config.base_url);
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let body = json!({"model": self.config.model, "input": batch});
            let response = send(&self.config, PROVIDER, || {
                let builder = http.post(&url).json(&body);
                match &self.config.api_key {
                    Some(key) => builder.bearer_auth(key),
                    None => builder,
                }
            })
            .await?;
            let text = response
                .text()
                .await
                .map_err(|e| ModelError::new(PROVIDER, format!("cannot read the answer: {e}")))?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| ModelError::new(PROVIDER, format!("unreadable answer ({e}): {}", excerpt(&text))))?;
            let mut data: Vec<&Value> = value["data"].as_array().map(|d| d.iter().collect()).unwrap_or_default();
            data.sort_by_key(|d| d["index"].as_u64().unwrap_or(0));
            if data.len() != batch.len() {
                return Err(ModelError::new(
                    PROVIDER,
                    format!("{} vectors for {} texts: {}", data.len(), batch.len(), excerpt(&text)),
                ));
            }
            for item in data {
                let vector: Vec<f32> = item["embedding"]
                    .as_array()
                    .map(|v| v.iter().filter_map(Value::as_f64).map(|x| x as f32).collect())
                    .unwrap_or_default();
                if vector.len() != self.dimensions {
                    return Err(ModelError::new(
                        PROVIDER,
                        format!("a vector of {} dimensions, expected {}", vector.len(), self.dimensions),
                    ));
                }
                vectors.push(vector);
            }
        }
        Ok(vectors)
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> String {
        format!("http:{}:{}", self.config.model, self.dimensions)
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Runs the request on a thread of its own with a small runtime, so it works from any caller: a plain thread,
    /// the background indexer, or a blocking task of an async runtime.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, quire_core::EmbedError> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| format!("cannot start a runtime: {e}"))?;
                    runtime
                        .block_on(self.embed_async(texts))
                        .map_err(|e| crate::Error::Http(e).to_string())
                })
                .join()
                .unwrap_or_else(|_| Err("the embedding thread failed".to_owned()))
        })
        .map_err(Into::into)
    }

    fn describe(&self) -> String {
        format!("{} at {}", self.id(), self.config.base_url)
    }
}
