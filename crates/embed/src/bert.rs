//! A BERT encoder, the architecture of all-MiniLM-L6-v2 and the other sentence models quire runs, on candle-nn's
//! layers: token, position and segment embeddings, then per layer multi-head self-attention and a GELU feed-forward
//! block, each added to its input and layer-normalised. Written here instead of taking candle-transformers, whose
//! hundreds of architectures took four minutes of a clean release build for the one used (docs/performance.md,
//! "Clean build").

use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};

/// The sizes a BERT `config.json` gives.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Config {
    vocab: usize,
    pub(crate) hidden: usize,
    layers: usize,
    heads: usize,
    intermediate: usize,
    positions: usize,
    segments: usize,
    eps: f64,
}

impl Config {
    /// Reads a Hugging Face BERT `config.json`; refuses what this encoder does not implement.
    pub(crate) fn parse(json: &[u8]) -> std::result::Result<Config, String> {
        let value: serde_json::Value =
            serde_json::from_slice(json).map_err(|e| format!("config.json is not JSON: {e}"))?;
        let size = |key: &str| {
            value[key]
                .as_u64()
                .map(|n| n as usize)
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("config.json is not a BERT config: no {key}"))
        };
        for (key, supported) in [("hidden_act", "gelu"), ("position_embedding_type", "absolute")] {
            if let Some(found) = value[key].as_str().filter(|found| *found != supported) {
                return Err(format!(
                    "config.json asks for {key} {found}; only {supported} is supported"
                ));
            }
        }
        let config = Config {
            vocab: size("vocab_size")?,
            hidden: size("hidden_size")?,
            layers: size("num_hidden_layers")?,
            heads: size("num_attention_heads")?,
            intermediate: size("intermediate_size")?,
            positions: size("max_position_embeddings")?,
            segments: value["type_vocab_size"].as_u64().map_or(2, |n| n as usize),
            eps: value["layer_norm_eps"].as_f64().unwrap_or(1e-12),
        };
        if !config.hidden.is_multiple_of(config.heads) {
            return Err(format!(
                "config.json: hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden, config.heads
            ));
        }
        Ok(config)
    }
}

/// The encoder's weights.
pub(crate) struct Bert {
    words: Embedding,
    positions: Embedding,
    segments: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    max_tokens: usize,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

impl Bert {
    /// Loads the weights by their Hugging Face names, with or without the `bert.` prefix.
    pub(crate) fn load(vb: VarBuilder, config: &Config) -> Result<Bert> {
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let e = vb.pp("embeddings");
        let h = config.hidden;
        let layers = (0..config.layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                Ok(Layer {
                    query: linear(h, h, l.pp("attention.self.query"))?,
                    key: linear(h, h, l.pp("attention.self.key"))?,
                    value: linear(h, h, l.pp("attention.self.value"))?,
                    attention_out: linear(h, h, l.pp("attention.output.dense"))?,
                    attention_norm: layer_norm(h, config.eps, l.pp("attention.output.LayerNorm"))?,
                    intermediate: linear(h, config.intermediate, l.pp("intermediate.dense"))?,
                    output: linear(config.intermediate, h, l.pp("output.dense"))?,
                    output_norm: layer_norm(h, config.eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            words: embedding(config.vocab, h, e.pp("word_embeddings"))?,
            positions: embedding(config.positions, h, e.pp("position_embeddings"))?,
            segments: embedding(config.segments, h, e.pp("token_type_embeddings"))?,
            norm: layer_norm(h, config.eps, e.pp("LayerNorm"))?,
            layers,
            heads: config.heads,
            max_tokens: config.positions,
        })
    }

    /// The last hidden states, `(batch, tokens, hidden)`, of token ids `(batch, tokens)` in one segment; `mask` is 1
    /// for a token and 0 for padding, which no token attends to.
    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (_, tokens) = ids.dims2()?;
        if tokens > self.max_tokens {
            candle_core::bail!("{tokens} tokens, the model reads at most {}", self.max_tokens);
        }
        let positions = Tensor::arange(0u32, tokens as u32, ids.device())?;
        let embedded = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .broadcast_add(&self.segments.forward(&ids.zeros_like()?)?)?;
        let mut x = self.norm.forward(&embedded)?;
        // 0 where a token is, the lowest float where padding is: added to the attention scores before the softmax.
        let max = f64::from(f32::MAX);
        let padding = mask
            .to_dtype(DType::F32)?
            .affine(max, -max)?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        for layer in &self.layers {
            x = layer.forward(&x, &padding, self.heads)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn forward(&self, x: &Tensor, padding: &Tensor, heads: usize) -> Result<Tensor> {
        let (batch, tokens, hidden) = x.dims3()?;
        let width = hidden / heads;
        // (batch, tokens, hidden) to (batch, heads, tokens, width).
        let split = |y: Tensor| y.reshape((batch, tokens, heads, width))?.transpose(1, 2)?.contiguous();
        let query = split(self.query.forward(x)?)?;
        let key = split(self.key.forward(x)?)?;
        let value = split(self.value.forward(x)?)?;
        let scores = (query.matmul(&key.t()?.contiguous()?)? / (width as f64).sqrt())?.broadcast_add(padding)?;
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = weights
            .matmul(&value)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, tokens, hidden))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        let inner = self.intermediate.forward(&attended)?.gelu_erf()?;
        self.output_norm.forward(&(self.output.forward(&inner)? + &attended)?)
    }
}

#[cfg(test)]
mod tests {
    use super::Config;

    const MINILM: &str = r#"{"hidden_act": "gelu", "hidden_size": 384, "intermediate_size": 1536,
        "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 6,
        "position_embedding_type": "absolute", "type_vocab_size": 2, "vocab_size": 30522}"#;

    #[test]
    fn configs_this_encoder_cannot_run_are_refused_by_name() {
        let config = Config::parse(MINILM.as_bytes()).unwrap();
        assert_eq!((config.hidden, config.heads, config.layers), (384, 12, 6));
        for (from, to, error) in [
            ("\"gelu\"", "\"relu\"", "hidden_act relu"),
            (
                "\"absolute\"",
                "\"relative_key\"",
                "position_embedding_type relative_key",
            ),
            (
                "\"num_attention_heads\": 12",
                "\"num_attention_heads\": 7",
                "not a multiple",
            ),
            ("\"vocab_size\": 30522", "\"vocab\": 30522", "no vocab_size"),
        ] {
            let message = Config::parse(MINILM.replace(from, to).as_bytes()).unwrap_err();
            assert!(message.contains(error), "{message}");
        }
        assert!(Config::parse(b"not json").unwrap_err().contains("not JSON"));
    }
}
