//! The workspace's embedder, set up lazily: a loader that runs on the first embedding, its failure kept.

use std::sync::{Arc, Mutex};

use super::{EmbedError, Embedder};
use crate::error::{Error, Result};

pub(crate) type Loader = Box<dyn FnOnce() -> std::result::Result<Arc<dyn Embedder>, EmbedError> + Send>;

/// Holds an embedder, or the loader that makes it on first use. A loader that fails is not retried: its message is
/// what every later semantic search reports, while everything else in the workspace works as before. The content
/// can be replaced while the workspace is in use ([`EmbedderSlot::replace`]): every handle shares the slot.
pub(crate) struct EmbedderSlot {
    state: Mutex<State>,
}

enum State {
    Waiting(Loader),
    Loaded(std::result::Result<Arc<dyn Embedder>, String>),
}

impl EmbedderSlot {
    pub(crate) fn ready(embedder: Arc<dyn Embedder>) -> EmbedderSlot {
        EmbedderSlot {
            state: Mutex::new(State::Loaded(Ok(embedder))),
        }
    }

    pub(crate) fn lazy(loader: Loader) -> EmbedderSlot {
        EmbedderSlot {
            state: Mutex::new(State::Waiting(loader)),
        }
    }

    /// The embedder, loading it on the first call; concurrent first callers wait for the one load.
    pub(crate) fn get(&self) -> Result<Arc<dyn Embedder>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let current = std::mem::replace(
            &mut *state,
            State::Loaded(Err("the embedder's loader stopped".to_owned())),
        );
        *state = match current {
            State::Waiting(load) => State::Loaded(load().map_err(|e| e.to_string())),
            loaded => loaded,
        };
        match &*state {
            State::Loaded(loaded) => loaded.clone().map_err(Error::EmbedderUnavailable),
            State::Waiting(_) => Err(Error::EmbedderUnavailable("no embedder was configured".to_owned())),
        }
    }

    /// Puts another loader in place of whatever was there.
    pub(crate) fn replace(&self, loader: Loader) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = State::Waiting(loader);
    }
}
