//! Semantic search: notes cut into chunks, embedded by an [`Embedder`], stored as vectors in the workspace file,
//! kept up to date by following the change log, and searched by cosine similarity (optionally fused with FTS).

mod chunk;
mod hashed;
mod index;
mod search;
mod slot;
mod vectors;

use serde::{Deserialize, Serialize};

use crate::entity::NoteSummary;

pub use chunk::{Chunk, chunk_note, chunk_note_for};
pub use hashed::HashedNgramEmbedder;
pub use index::{Indexer, SEARCH_CATCH_UP};
pub(crate) use slot::EmbedderSlot;
pub(crate) use vectors::VectorCache;

/// Why an embedder failed: any error its runtime reports (a model file, a network call), shown to the user as is.
pub type EmbedError = Box<dyn std::error::Error + Send + Sync>;

/// Turns texts into vectors. Implementations live where their runtime lives: quire-core has the file-free
/// [`HashedNgramEmbedder`]; quire-embed has a local sentence model and an HTTP client.
///
/// `embed` is synchronous and may be slow: quire-core only ever calls it outside a transaction.
pub trait Embedder: Send + Sync {
    /// A stable name of the embedder and its model (`hashed-ngrams-v1`, `minilm-l6-v2`, ...). Vectors are stored
    /// under it; a different id means a different vector space, and the notes are embedded again.
    fn id(&self) -> String;
    /// The length of every vector.
    fn dimensions(&self) -> usize;
    /// One vector per text, in order. Vectors need not be normalised.
    fn embed(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, EmbedError>;
    /// The cosine similarity a match needs at each relevance preset. The defaults suit sentence-embedding models
    /// such as all-MiniLM-L6-v2, where a paraphrase scores about 0.3 to 0.6 and an unrelated text under 0.2.
    fn floor(&self, relevance: Relevance) -> f32 {
        match relevance {
            Relevance::Strict => 0.45,
            Relevance::Normal => 0.28,
            Relevance::Loose => 0.15,
        }
    }
    /// How many tokens the model makes of one word; notes are chunked so that each chunk fits
    /// [`Embedder::max_tokens`]. The default estimate suits WordPiece and BPE vocabularies of English: a token per
    /// six letters, and one per punctuation mark.
    fn count_tokens(&self, word: &str) -> usize {
        let letters = word.chars().filter(|c| c.is_alphanumeric()).count();
        let marks = word.chars().count() - letters;
        letters.div_ceil(6).max(1) + marks
    }
    /// The longest input, in tokens, that the model embeds without cutting it. Chunks never exceed 256 tokens in any
    /// case.
    fn max_tokens(&self) -> usize {
        256
    }
    /// One line for `quire index status`: what this embedder is and, for a fallback, how to get a better one.
    fn describe(&self) -> String {
        self.id()
    }
}

/// How close a semantic match must be. Presets rather than raw thresholds: every embedder maps them to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    /// Only close matches.
    Strict,
    /// The default.
    #[default]
    Normal,
    /// Loosely related notes too.
    Loose,
}

/// What to look for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SemanticTarget {
    /// Notes about this text.
    Text(String),
    /// Notes like this note.
    LikeNote(String),
}

/// A semantic search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticQuery {
    /// Text or a note to match.
    pub target: SemanticTarget,
    /// Only notes in this notebook or below it.
    pub notebook_id: Option<String>,
    /// Only notes with this tag (ignoring case).
    pub tag: Option<String>,
    /// How close a match must be.
    pub relevance: Relevance,
    /// Fuse the vector ranking with full-text search ranks (reciprocal rank fusion).
    pub hybrid: bool,
    /// How many notes to return.
    pub limit: u64,
}

/// One note found by meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticHit {
    /// The note.
    pub note: NoteSummary,
    /// The best-matching chunk of it.
    pub snippet: String,
    /// Cosine similarity of that chunk; in hybrid mode the fused rank score, 1.0 for first place in both rankings.
    pub score: f64,
}

/// How far the index is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexStatus {
    /// The active embedder.
    pub embedder: String,
    /// Its description.
    pub description: String,
    /// Notes that have chunks in the index.
    pub indexed_notes: u64,
    /// Chunks in the index.
    pub chunks: u64,
    /// Notes changed since the index last caught up (an estimate: changes not yet followed).
    pub pending_changes: u64,
}

/// The words of a query that say what it is about: letters and digits only, lower-cased, longer than two
/// characters, common English function words left out. Hybrid search looks for notes holding all of them.
///
/// ```
/// assert_eq!(quire_core::content_words("How do I renew the passport?"), ["renew", "passport"]);
/// ```
pub fn content_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| w.chars().count() > 2 && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Words too common to say anything in a hybrid query's full-text half.
const STOPWORDS: &[&str] = &[
    "about", "after", "all", "and", "any", "are", "before", "but", "can", "for", "from", "had", "has", "have", "her",
    "his", "how", "into", "its", "not", "our", "out", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "was", "were", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
];

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    v
}

/// The dot product of a vector with one stored as little-endian f32 bytes, without decoding it into a vector.
fn dot_bytes(a: &[f32], bytes: &[u8]) -> f32 {
    a.iter()
        .zip(bytes.chunks_exact(4))
        .map(|(x, b)| x * f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .sum()
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
