//! quire-embed: the embedders that need a model runtime or the network, for quire-core's semantic index.
//!
//! [`HttpEmbedder`] calls an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp, vLLM), and
//! [`LocalEmbedder`] (feature `candle`) runs a BERT-style sentence model such as all-MiniLM-L6-v2 in-process. Both
//! implement [`quire_core::Embedder`]; the app hands one to the workspace with
//! [`quire_core::Workspace::with_embedder_loader`], so it is loaded on first use. [`http`] is the HTTP plumbing
//! (timeouts, retries with backoff, error excerpts, server-sent events) that quire-agent's model clients share.
//!
//! [`models`] is the catalog of sentence models quire can run and their installer (`quire model install`, the web
//! app's install button): files pinned to a revision with SHA-256 sums, resumable downloads, atomic installs.
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

#[cfg(feature = "candle")]
mod bert;
pub mod http;
#[cfg(feature = "candle")]
mod local;
pub mod models;
mod remote;

pub use http::{ClientConfig, ModelError};

/// Everything that can go wrong in quire-embed (an HTTP call's failure is a [`ModelError`], which it carries).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The local model's files could not be loaded.
    #[error("cannot load the embedding model in {dir}: {reason}")]
    Load {
        /// The model's folder.
        dir: String,
        /// What was wrong.
        reason: String,
    },
    /// The local model failed while running.
    #[error("the embedding model failed: {0}")]
    Model(String),
    /// An HTTP embedding service failed.
    #[error("{0}")]
    Http(#[from] ModelError),
}
#[cfg(feature = "candle")]
pub use local::LocalEmbedder;
pub use models::{CatalogModel, InstallError, InstallProgress, ModelStore, catalog, find_model, hub_endpoint};
pub use remote::HttpEmbedder;
