//! Generated notes for the benchmarks: a deterministic vocabulary drawn with a Zipf-like skew, and workspaces
//! filled with it.

use quire_core::{Actor, Error, NewNote, NewNotebook, Workspace};

/// Deterministic note text: a made-up vocabulary drawn with a Zipf-like skew, as words are in real notes.
pub(crate) struct TextGen {
    state: u64,
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl TextGen {
    pub(crate) fn new(seed: u64) -> TextGen {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "qu", "ber", "don", "fel", "gri", "hal", "jor",
            "mun", "pel", "tor", "vin", "wes", "xan", "yor",
        ];
        let mut text = TextGen {
            state: seed.max(1),
            words: Vec::new(),
            cumulative: Vec::new(),
        };
        let mut seen = std::collections::HashSet::new();
        while text.words.len() < 5_000 {
            let n = 2 + text.below(3);
            let word: String = (0..n).map(|_| SYLLABLES[text.below(SYLLABLES.len())]).collect();
            if seen.insert(word.clone()) {
                text.words.push(word);
            }
        }
        let mut total = 0.0;
        for rank in 0..text.words.len() {
            total += 1.0 / (rank as f64 + 1.0);
            text.cumulative.push(total);
        }
        text
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn word(&mut self) -> String {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let x = (self.next() % 1_000_000) as f64 / 1_000_000.0 * total;
        let rank = self.cumulative.partition_point(|c| *c < x).min(self.words.len() - 1);
        self.words[rank].clone()
    }

    /// Draws other notes from here on, with the same vocabulary.
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.state = seed.max(1);
    }

    pub(crate) fn word_at(&self, rank: usize) -> String {
        self.words[rank].clone()
    }

    pub(crate) fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    pub(crate) fn note(&mut self, notebooks: &[String]) -> NewNote {
        let n = 2 + self.below(5);
        let title = self.words(n);
        let paragraphs = 1 + self.below(4);
        let body = (0..paragraphs)
            .map(|i| {
                let heading = if i > 0 && self.below(2) == 0 {
                    format!("## {}\n\n", self.words(2))
                } else {
                    String::new()
                };
                let n = 20 + self.below(60);
                format!("{heading}{}.", self.words(n))
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        let tags = (0..self.below(4)).map(|_| format!("tag{}", self.below(50))).collect();
        let notebook = notebooks[self.below(notebooks.len())].clone();
        NewNote {
            notebook_id: Some(notebook),
            tags,
            ..NewNote::new(title, body)
        }
    }

    /// One or two words of middling frequency (ranks 50 to 2,000), the kind people search for.
    pub(crate) fn query_terms(&mut self) -> Vec<String> {
        let n = 1 + self.below(2);
        (0..n)
            .map(|_| {
                let rank = 50 + self.below(1_950);
                self.word_at(rank)
            })
            .collect()
    }
}

/// Creates `notebooks` notebooks and `notes` generated notes (in transactions of 1,000) as the user.
pub(crate) fn fill(ws: &Workspace, text: &mut TextGen, notebooks: usize, notes: usize) -> anyhow::Result<Vec<String>> {
    let ids: Vec<String> = ws.write(&Actor::User, |w| {
        (0..notebooks)
            .map(|i| {
                w.create_notebook(NewNotebook {
                    title: format!("Notebook {i}"),
                    ..Default::default()
                })
                .map(|nb| nb.id)
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    for start in (0..notes).step_by(1_000) {
        let batch: Vec<NewNote> = (start..(start + 1_000).min(notes)).map(|_| text.note(&ids)).collect();
        ws.write(&Actor::User, |w| {
            for note in batch {
                w.create_note(note)?;
            }
            Ok::<_, Error>(())
        })?;
        if (start + 1_000) % 20_000 == 0 {
            eprintln!("  generated {} notes", start + 1_000);
        }
    }
    Ok(ids)
}
