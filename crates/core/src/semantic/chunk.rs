//! Cutting a note into chunks for embedding: along headings and paragraphs, bounded in size, with a small overlap,
//! and the title in front of every chunk.

use serde::{Deserialize, Serialize};

/// Words per chunk at most (about 250 tokens for a BERT-style tokenizer, under MiniLM's 256).
const MAX_WORDS: usize = 180;
/// Words repeated from the end of one chunk at the start of the next.
const OVERLAP_WORDS: usize = 24;

/// One piece of a note to embed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The text embedded: the title, the heading path, then the passage.
    pub text: String,
}

/// Cuts a note into chunks. Every note gives at least one chunk (its title), so a note is findable by meaning
/// even when its body is empty.
pub fn chunk_note(title: &str, body: &str) -> Vec<Chunk> {
    let mut chunker = Chunker {
        title,
        heading: String::new(),
        words: Vec::new(),
        carried: 0,
        chunks: Vec::new(),
    };
    for paragraph in body.split("\n\n") {
        let trimmed = paragraph.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(text) = trimmed.strip_prefix('#') {
            // A heading starts a new chunk: no overlap across sections.
            chunker.flush(false);
            chunker.words.clear();
            chunker.carried = 0;
            chunker.heading = text
                .trim_start_matches('#')
                .trim()
                .lines()
                .next()
                .unwrap_or("")
                .to_owned();
            chunker
                .words
                .extend(trimmed.lines().skip(1).flat_map(str::split_whitespace));
            continue;
        }
        let paragraph_words: Vec<&str> = trimmed.split_whitespace().collect();
        if chunker.words.len() + paragraph_words.len() > MAX_WORDS && chunker.words.len() > chunker.carried {
            chunker.flush(true);
        }
        for word in paragraph_words {
            chunker.words.push(word);
            if chunker.words.len() >= MAX_WORDS {
                chunker.flush(true);
            }
        }
    }
    chunker.flush(false);
    if chunker.chunks.is_empty() {
        chunker.chunks.push(Chunk { text: title.to_owned() });
    }
    chunker.chunks
}

struct Chunker<'a> {
    title: &'a str,
    heading: String,
    words: Vec<&'a str>,
    /// How many of `words` were carried over from the previous chunk as overlap.
    carried: usize,
    chunks: Vec<Chunk>,
}

impl Chunker<'_> {
    /// Emits the words gathered so far as a chunk, unless they are only the overlap of the previous one; keeps the
    /// last few words for the next chunk when `overlap` is set.
    fn flush(&mut self, overlap: bool) {
        if self.words.len() <= self.carried {
            return;
        }
        let title = self.title;
        let prefix = if self.heading.is_empty() || self.heading.eq_ignore_ascii_case(title) {
            title.to_owned()
        } else {
            format!("{title} — {}", self.heading)
        };
        self.chunks.push(Chunk {
            text: format!("{prefix}\n{}", self.words.join(" ")),
        });
        let keep = if overlap {
            OVERLAP_WORDS.min(self.words.len())
        } else {
            0
        };
        let drop = self.words.len() - keep;
        self.words.drain(..drop);
        self.carried = self.words.len();
    }
}

#[cfg(test)]
mod tests {
    use super::chunk_note;

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
        assert!(chunks.iter().all(|c| c.text.split_whitespace().count() <= 180 + 4));
        assert_eq!(chunks.last().unwrap().text, "Trip — Food\nBread and cheese.");
        assert!(chunks.len() >= 4, "400 words need several chunks: {}", chunks.len());
    }
}
