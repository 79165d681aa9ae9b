//! The fallback embedder: hashed word and character n-grams. No files, no network, deterministic; it finds notes
//! that share words and word pieces, not paraphrases, so `quire index status` suggests a real model.

use super::{Embedder, Relevance};

const DIMENSIONS: usize = 384;

/// Hashed word unigrams and bigrams plus character trigrams of each word, signed into 384 dimensions.
#[derive(Debug, Clone, Copy, Default)]
pub struct HashedNgramEmbedder;

impl Embedder for HashedNgramEmbedder {
    fn id(&self) -> String {
        "hashed-ngrams-v1".to_owned()
    }

    fn dimensions(&self) -> usize {
        DIMENSIONS
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::EmbedError> {
        Ok(texts.iter().map(|t| embed_one(t)).collect())
    }

    fn floor(&self, relevance: Relevance) -> f32 {
        match relevance {
            Relevance::Strict => 0.35,
            Relevance::Normal => 0.2,
            Relevance::Loose => 0.1,
        }
    }

    fn describe(&self) -> String {
        "hashed-ngrams-v1: the built-in fallback, which matches shared words and word pieces but not paraphrases. \
         For search by meaning, install a sentence model with `quire model install`, or set `[index] embed_url` \
         and `embed_model` for an OpenAI-compatible /v1/embeddings endpoint (Ollama, llama.cpp, vLLM, OpenAI)."
            .to_owned()
    }
}

fn embed_one(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; DIMENSIONS];
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect();
    let mut add = |feature: &str, weight: f32| {
        let h = fnv(feature);
        let index = (h % DIMENSIONS as u64) as usize;
        let sign = if (h >> 32) & 1 == 0 { 1.0 } else { -1.0 };
        vector[index] += sign * weight;
    };
    for (i, word) in words.iter().enumerate() {
        add(&format!("w:{word}"), 1.0);
        if let Some(next) = words.get(i + 1) {
            add(&format!("b:{word} {next}"), 0.5);
        }
        let chars: Vec<char> = format!("<{word}>").chars().collect();
        for gram in chars.windows(3) {
            add(&format!("c:{}", gram.iter().collect::<String>()), 0.3);
        }
    }
    // Dampen frequent features: sign-preserving square root.
    for x in &mut vector {
        *x = x.signum() * x.abs().sqrt();
    }
    vector
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
