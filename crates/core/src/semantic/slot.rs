//! The workspace's embedder, set up lazily: a loader that runs on the first embedding, its failure kept.

use std::sync::{Arc, Mutex, OnceLock};

use super::{EmbedError, Embedder};
use crate::error::{Error, Result};

type Loader = Box<dyn FnOnce() -> std::result::Result<Arc<dyn Embedder>, EmbedError> + Send>;

/// Holds an embedder, or the loader that makes it on first use. A loader that fails is not retried: its message is
/// what every later semantic search reports, while everything else in the workspace works as before.
pub(crate) struct EmbedderSlot {
    loader: Mutex<Option<Loader>>,
    loaded: OnceLock<std::result::Result<Arc<dyn Embedder>, String>>,
}

impl EmbedderSlot {
    pub(crate) fn ready(embedder: Arc<dyn Embedder>) -> EmbedderSlot {
        EmbedderSlot {
            loader: Mutex::new(None),
            loaded: OnceLock::from(Ok(embedder)),
        }
    }

    pub(crate) fn lazy(loader: Loader) -> EmbedderSlot {
        EmbedderSlot {
            loader: Mutex::new(Some(loader)),
            loaded: OnceLock::new(),
        }
    }

    /// The embedder, loading it on the first call; concurrent first callers wait for the one load.
    pub(crate) fn get(&self) -> Result<Arc<dyn Embedder>> {
        let loaded = self.loaded.get_or_init(|| {
            let loader = self.loader.lock().unwrap_or_else(|e| e.into_inner()).take();
            match loader {
                Some(load) => load().map_err(|e| e.to_string()),
                None => Err("no embedder was configured".to_owned()),
            }
        });
        loaded.clone().map_err(Error::EmbedderUnavailable)
    }
}
