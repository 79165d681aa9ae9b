//! Cutting a note into chunks for embedding: along headings and paragraphs, bounded in tokens of the embedder's
//! model, with a small overlap, and the title in front of every chunk.

use serde::{Deserialize, Serialize};

use super::Embedder;

/// Tokens per chunk at most, whatever the model accepts: passages of about 180 words retrieve well.
const TARGET_TOKENS: usize = 256;
/// Tokens repeated from the end of one chunk at the start of the next.
const OVERLAP_TOKENS: usize = 32;
/// Tokens a BERT-style model adds around every input (`[CLS]` and `[SEP]`).
const SPECIAL_TOKENS: usize = 2;
/// The fewest tokens left for the passage, however long the title and heading.
const MIN_PASSAGE_TOKENS: usize = 64;

/// One piece of a note to embed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The text embedded: the title, the heading path, then the passage.
    pub text: String,
}

/// Cuts a note into chunks sized for the file-free embedder's token estimate. Every note gives at least one chunk
/// (its title), so a note is findable by meaning even when its body is empty.
pub fn chunk_note(title: &str, body: &str) -> Vec<Chunk> {
    chunk_note_for(&super::HashedNgramEmbedder, title, body)
}

/// Cuts a note into chunks that `embedder`'s model sees whole: each chunk, title and heading included, stays
/// within `min(embedder.max_tokens(), 256)` tokens as [`Embedder::count_tokens`] counts them.
pub fn chunk_note_for(embedder: &dyn Embedder, title: &str, body: &str) -> Vec<Chunk> {
    let limit = embedder.max_tokens().min(TARGET_TOKENS).saturating_sub(SPECIAL_TOKENS);
    let mut chunker = Chunker {
        embedder,
        limit,
        title,
        heading: String::new(),
        budget: limit,
        words: Vec::new(),
        tokens: 0,
        carried: 0,
        chunks: Vec::new(),
    };
    chunker.set_heading(String::new());
    // Headings as quire-core's Markdown scanner sees them: never a `#` line inside a code block, nor a #hashtag.
    let headings = crate::markdown::headings(body);
    let mut start = 0;
    for paragraph in body.split("\n\n") {
        let at = start + (paragraph.len() - paragraph.trim_start().len());
        start += paragraph.len() + 2;
        let trimmed = paragraph.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(heading) = headings.iter().find(|h| h.byte <= at && at <= h.byte + 3) {
            // A heading starts a new chunk: no overlap across sections.
            chunker.flush(false);
            chunker.words.clear();
            chunker.tokens = 0;
            chunker.carried = 0;
            chunker.set_heading(heading.text.clone());
            for word in trimmed.lines().skip(1).flat_map(str::split_whitespace) {
                chunker.push(word);
            }
            continue;
        }
        let paragraph_words: Vec<(&str, usize)> = trimmed
            .split_whitespace()
            .map(|w| (w, embedder.count_tokens(w).max(1)))
            .collect();
        let paragraph_tokens: usize = paragraph_words.iter().map(|(_, t)| t).sum();
        // A paragraph that does not fit starts a new chunk rather than being cut, when it fits in one on its own.
        if chunker.tokens + paragraph_tokens > chunker.budget && chunker.words.len() > chunker.carried {
            chunker.flush(true);
        }
        for (word, tokens) in paragraph_words {
            chunker.push_counted(word, tokens);
        }
    }
    chunker.flush(false);
    if chunker.chunks.is_empty() {
        chunker.chunks.push(Chunk { text: title.to_owned() });
    }
    chunker.chunks
}

struct Chunker<'a> {
    embedder: &'a dyn Embedder,
    /// Tokens a whole chunk may have.
    limit: usize,
    title: &'a str,
    heading: String,
    /// Tokens left for the passage once the title and heading are counted.
    budget: usize,
    /// The passage so far, with each word's token count.
    words: Vec<(&'a str, usize)>,
    tokens: usize,
    /// How many of `words` were carried over from the previous chunk as overlap.
    carried: usize,
    chunks: Vec<Chunk>,
}

impl<'a> Chunker<'a> {
    fn prefix(&self) -> String {
        if self.heading.is_empty() || self.heading.eq_ignore_ascii_case(self.title) {
            self.title.to_owned()
        } else {
            format!("{} — {}", self.title, self.heading)
        }
    }

    fn set_heading(&mut self, heading: String) {
        self.heading = heading;
        let prefix_tokens: usize = self
            .prefix()
            .split_whitespace()
            .map(|w| self.embedder.count_tokens(w).max(1))
            .sum();
        self.budget = self.limit.saturating_sub(prefix_tokens).max(MIN_PASSAGE_TOKENS);
    }

    fn push(&mut self, word: &'a str) {
        let tokens = self.embedder.count_tokens(word).max(1);
        self.push_counted(word, tokens);
    }

    fn push_counted(&mut self, word: &'a str, tokens: usize) {
        if self.tokens + tokens > self.budget && self.words.len() > self.carried {
            self.flush(true);
        }
        self.words.push((word, tokens));
        self.tokens += tokens;
    }

    /// Emits the words gathered so far as a chunk, unless they are only the overlap of the previous one; keeps the
    /// last few words for the next chunk when `overlap` is set.
    fn flush(&mut self, overlap: bool) {
        if self.words.len() <= self.carried {
            return;
        }
        let passage: Vec<&str> = self.words.iter().map(|(w, _)| *w).collect();
        self.chunks.push(Chunk {
            text: format!("{}\n{}", self.prefix(), passage.join(" ")),
        });
        let mut keep = 0;
        if overlap {
            let mut kept_tokens = 0;
            for (_, tokens) in self.words.iter().rev() {
                if kept_tokens + tokens > OVERLAP_TOKENS {
                    break;
                }
                kept_tokens += tokens;
                keep += 1;
            }
        }
        let drop = self.words.len() - keep;
        self.words.drain(..drop);
        self.tokens = self.words.iter().map(|(_, t)| t).sum();
        self.carried = self.words.len();
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_note, chunk_note_for};
    use crate::semantic::{Embedder, HashedNgramEmbedder};

    #[test]
    fn code_comments_and_hashtags_are_not_headings() {
        let body = "# Setup\n\nInstall it.\n\n```sh\n\n# not a heading\nmake\n```\n\n#todo later\n\n## Use\n\nRun it.";
        let chunks = chunk_note("Tool", body);
        let prefixes: Vec<&str> = chunks.iter().map(|c| c.text.split(':').next().unwrap_or("")).collect();
        assert!(
            chunks
                .iter()
                .all(|c| !c.text.contains("Tool — not a heading") && !c.text.starts_with("Tool — todo")),
            "{chunks:?}"
        );
        assert!(chunks.iter().any(|c| c.text.starts_with("Tool — Use")), "{prefixes:?}");
    }

    #[test]
    fn chunks_follow_headings_and_stay_bounded() {
        assert_eq!(chunk_note("Empty", "").len(), 1);
        let body = format!(
            "Intro line.\n\n# Packing\n\n{}\n\n## Food\n\nBread and cheese.",
            "word ".repeat(400)
        );
        let chunks = chunk_note("Trip", &body);
        assert_eq!(chunks[0].text, "Trip\nIntro line.");
        assert!(chunks[1].text.starts_with("Trip — Packing\nword word"));
        let embedder = HashedNgramEmbedder;
        for chunk in &chunks {
            let tokens: usize = chunk.text.split_whitespace().map(|w| embedder.count_tokens(w)).sum();
            assert!(tokens + 2 <= 256, "{tokens} tokens: {}", chunk.text);
        }
        assert_eq!(chunks.last().unwrap().text, "Trip — Food\nBread and cheese.");
        assert!(chunks.len() >= 4, "400 words need several chunks: {}", chunks.len());
    }

    /// A model whose tokenizer cuts every word into as many tokens as it has letters, with a small window.
    struct LetterModel;

    impl Embedder for LetterModel {
        fn id(&self) -> String {
            "letters".into()
        }
        fn dimensions(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::EmbedError> {
            Ok(texts.iter().map(|_| vec![1.0]).collect())
        }
        fn count_tokens(&self, word: &str) -> usize {
            word.chars().count()
        }
        fn max_tokens(&self) -> usize {
            100
        }
    }

    #[test]
    fn the_bound_is_the_models_tokens_with_an_overlap() {
        let body = "abcdefghij ".repeat(30);
        let chunks = chunk_note_for(&LetterModel, "T", &body);
        for chunk in &chunks {
            let tokens: usize = chunk.text.split_whitespace().map(|w| w.chars().count()).sum();
            assert!(tokens + 2 <= 100, "{tokens}: {}", chunk.text);
        }
        // 30 words of 10 tokens, 97 tokens per passage: 9 words, then 3 carried over (30 tokens) and 6 new ones.
        assert_eq!(chunks.len(), 5, "{chunks:?}");
        assert!(chunks[1].text.starts_with("T\nabcdefghij abcdefghij abcdefghij "));
        // Every word is somewhere.
        let words: usize = chunks.iter().map(|c| c.text.matches("abcdefghij").count()).sum();
        assert!(words >= 30);
    }
}
