//! A local sentence-embedding model run in-process with candle: BERT-style safetensors weights, `tokenizer.json`,
//! mean pooling over the attention mask and L2 normalisation (all-MiniLM-L6-v2 and its kind).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use quire_core::Embedder;

use crate::Error;
use crate::bert::{Bert, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Tokens per text at most: sentence-transformers' `max_seq_length` for MiniLM (the shipped tokenizer.json says 128).
const MAX_TOKENS: usize = 256;
/// Texts per forward pass: attention memory grows with batch × length².
const BATCH: usize = 16;

/// A sentence-embedding model loaded from a directory with `config.json`, `tokenizer.json` and `model.safetensors`.
pub struct LocalEmbedder {
    model: Bert,
    tokenizer: Mutex<Tokenizer>,
    dimensions: usize,
    name: String,
    dir: PathBuf,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("name", &self.name)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir` (read once; nothing is fetched from the network).
    pub fn load(dir: &Path) -> Result<LocalEmbedder, Error> {
        LocalEmbedder::load_files(dir).map_err(|reason| Error::Load {
            dir: dir.display().to_string(),
            reason,
        })
    }

    fn load_files(dir: &Path) -> Result<LocalEmbedder, String> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| format!("cannot read {}: {e}", dir.join(name).display()))
        };
        let config = Config::parse(&read("config.json")?)?;
        let hidden = config.hidden;
        let mut tokenizer =
            Tokenizer::from_bytes(read("tokenizer.json")?).map_err(|e| format!("tokenizer.json: {e}"))?;
        // Override what the file ships (fixed padding to 128, truncation at 128): pad to the longest in a batch and
        // truncate at 256, as sentence-transformers does.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| format!("tokenizer: {e}"))?;
        let weights = read("model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| format!("model.safetensors: {e}"))?;
        let model = Bert::load(vb, &config).map_err(|e| format!("cannot load the model: {e}"))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "local".into());
        Ok(LocalEmbedder {
            model,
            tokenizer: Mutex::new(tokenizer),
            dimensions: hidden,
            name,
            dir: dir.to_path_buf(),
        })
    }

    /// The token ids of a text, as the model sees it (for tests against a reference).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        let tokenizer = self
            .tokenizer
            .lock()
            .map_err(|_| Error::Model("the tokenizer lock is poisoned".to_owned()))?;
        Ok(tokenizer
            .encode(text, true)
            .map_err(|e| Error::Model(e.to_string()))?
            .get_ids()
            .to_vec())
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let model = |e: &dyn std::fmt::Display| Error::Model(e.to_string());
        let encodings = {
            let tokenizer = self.tokenizer.lock().map_err(|_| model(&"tokenizer lock poisoned"))?;
            tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| model(&e))?
        };
        let device = Device::Cpu;
        let tensor = |rows: Vec<&[u32]>| -> Result<Tensor, Error> {
            let rows: Vec<Tensor> = rows
                .into_iter()
                .map(|r| Tensor::new(r, &device))
                .collect::<Result<_, _>>()
                .map_err(|e| model(&e))?;
            Tensor::stack(&rows, 0).map_err(|e| model(&e))
        };
        let ids = tensor(encodings.iter().map(|e| e.get_ids()).collect())?;
        let mask = tensor(encodings.iter().map(|e| e.get_attention_mask()).collect())?;
        let hidden = self.model.forward(&ids, &mask).map_err(|e| model(&e))?;
        let pooled = (|| -> candle_core::Result<Vec<Vec<f32>>> {
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?;
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        })()
        .map_err(|e| model(&e))?;
        Ok(pooled)
    }
}

impl Embedder for LocalEmbedder {
    fn id(&self) -> String {
        format!("local:{}:{}", self.name, self.dimensions)
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, quire_core::EmbedError> {
        // Batches of texts of similar length: a batch is padded to its longest text, so mixing a long chunk with
        // short ones makes the short ones cost as much. Padding is masked, so the vectors do not depend on it.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|i| texts[*i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let batch_texts: Vec<String> = batch.iter().map(|i| texts[*i].clone()).collect();
            for (i, vector) in batch.iter().zip(self.embed_batch(&batch_texts)?) {
                out[*i] = vector;
            }
        }
        Ok(out)
    }

    fn count_tokens(&self, word: &str) -> usize {
        self.tokenizer
            .lock()
            .ok()
            .and_then(|t| t.encode(word, false).ok())
            .map_or(1, |e| e.get_ids().len())
    }

    fn max_tokens(&self) -> usize {
        MAX_TOKENS
    }

    fn describe(&self) -> String {
        format!("{}: a local sentence model from {}", self.id(), self.dir.display())
    }
}
