//! quire-embed: the embedders that need a model runtime or the network, for quire-core's semantic index.
//!
//! [`HttpEmbedder`] calls an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp, vLLM), and
//! [`LocalEmbedder`] (feature `candle`) runs a BERT-style sentence model such as all-MiniLM-L6-v2 in-process. Both
//! implement [`quire_core::Embedder`]; the app hands one to the workspace with
//! [`quire_core::Workspace::with_embedder_loader`], so it is loaded on first use. [`http`] is the HTTP plumbing
//! (timeouts, retries with backoff, error excerpts, server-sent events) that quire-agent's model clients share.
//!
//! It depends on `quire-core` only. It must not depend on `quire-tools`, `quire-agent`, `quire-mcp`, `quire-web` or
//! the app, nor on `rusqlite`, `r2d2`, `rmcp` or `axum`. It is the only crate that may use `candle`.
//!
//! ```
//! use quire_core::Embedder;
//! use quire_embed::{ClientConfig, HttpEmbedder};
//!
//! let embedder = HttpEmbedder::new(ClientConfig::new("http://localhost:11434/v1", "all-minilm", None), 384);
//! assert_eq!(embedder.id(), "http:all-minilm:384");
//! ```

pub mod http;
#[cfg(feature = "candle")]
mod local;
mod remote;

pub use http::{ClientConfig, ModelError};
#[cfg(feature = "candle")]
pub use local::LocalEmbedder;
pub use remote::HttpEmbedder;
