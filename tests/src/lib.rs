//! quire-tests: helpers for the end-to-end tests that run the real `quire` binary on a temporary workspace.
//!
//! Everything here runs inside tests, so it panics with the whole context instead of returning errors.
#![expect(clippy::panic, reason = "test helpers fail the test that called them")]

pub mod servers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// A temporary home for one test: its own workspace file and data directory.
pub struct Quire {
    dir: Home,
}

enum Home {
    Owned(tempfile::TempDir),
    Borrowed(PathBuf),
}

impl Home {
    fn path(&self) -> &Path {
        match self {
            Home::Owned(dir) => dir.path(),
            Home::Borrowed(path) => path,
        }
    }
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output parsed as JSON; panics with the whole run when it is not.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, 0, "quire failed: {self:#?}");
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:#?}"))
    }
}

impl Default for Quire {
    fn default() -> Self {
        Quire::new()
    }
}

impl Quire {
    /// A fresh temporary directory; the workspace file inside it does not exist yet.
    pub fn new() -> Quire {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("cannot make a temporary directory: {e}"));
        Quire { dir: Home::Owned(dir) }
    }

    /// A handle on an existing directory (another `Quire`'s), which it does not remove.
    pub fn at(dir: PathBuf) -> Quire {
        Quire {
            dir: Home::Borrowed(dir),
        }
    }

    /// The workspace file the `run` helpers pass with `--workspace`.
    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace.quire")
    }

    /// The temporary directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `quire --workspace <tmp> args...`.
    pub fn run(&self, args: &[&str]) -> Run {
        let workspace = self.workspace();
        let mut full = vec!["--workspace", workspace.to_str().unwrap_or_default()];
        full.extend_from_slice(args);
        self.run_raw(&full, None)
    }

    /// Runs `quire --workspace <tmp> args...` with the variables `env` set.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.command();
        command
            .arg("--workspace")
            .arg(self.workspace())
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        to_run(command.output().unwrap_or_else(|e| panic!("cannot start quire: {e}")))
    }

    /// Runs `quire args...` with a home and data directory inside the temporary directory, and optional stdin.
    pub fn run_raw(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let mut command = self.command();
        command.args(args);
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot start quire: {e}"));
        if let Some(text) = stdin {
            use std::io::Write;
            let mut pipe = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
            pipe.write_all(text.as_bytes())
                .unwrap_or_else(|e| panic!("cannot write stdin: {e}"));
        }
        let output = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("quire did not finish: {e}"));
        to_run(output)
    }

    /// A `Command` for the binary with a clean environment pointing into the temporary directory.
    pub fn command(&self) -> Command {
        let mut command = Command::new(binary());
        let home = self.dir.path().join("home");
        command
            .env_remove("QUIRE_WORKSPACE")
            .env_remove("QUIRE_LOG")
            .env_remove("QUIRE_MODEL")
            .env_remove("QUIRE_EMBED_MODEL")
            .env_remove("QUIRE_BASE_URL")
            .env_remove("HF_ENDPOINT")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("QUIRE_TESSERACT")
            .env_remove("QUIRE_OCR_LANGUAGES")
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }
}

fn to_run(output: Output) -> Run {
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The `quire` binary of this build, built first so a test never runs a stale one; or the one `QUIRE_BIN` names,
/// which `cargo xtask test` and CI built with everything else before the tests started (a test process each, under
/// nextest, would otherwise each ask cargo whether it is current).
pub fn binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            if let Some(named) = std::env::var_os("QUIRE_BIN") {
                return PathBuf::from(named);
            }
            // The test executable lives in `<target>/<profile>/deps/`; the binary in `<target>/<profile>/`.
            let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no current exe: {e}"));
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .unwrap_or_else(|| panic!("unexpected test location {}", exe.display()))
                .to_path_buf();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = Command::new(cargo);
            build.args(["build", "--quiet", "--package", "quire", "--bin", "quire"]);
            // Into the target directory of this test executable (coverage runs use one of their own).
            if let Some(target_dir) = profile_dir.parent() {
                build.arg("--target-dir").arg(target_dir);
            }
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                build.arg("--release");
            }
            let status = build.status().unwrap_or_else(|e| panic!("cannot run cargo build: {e}"));
            assert!(status.success(), "building quire failed");
            profile_dir.join(format!("quire{}", std::env::consts::EXE_SUFFIX))
        })
        .clone()
}

/// Every file of a workspace that can hold its text: the file, its WAL (and journal, shm) and the word index folder
/// beside it, for searches of the raw bytes (sealed notes).
pub fn workspace_files(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        files.push(PathBuf::from(p));
    }
    let mut dir = path.as_os_str().to_owned();
    dir.push(".search");
    files.extend(files_below(Path::new(&dir)));
    files.into_iter().filter(|p| p.is_file()).collect()
}

/// Every file below `dir`, at any depth.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_below(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The files (of `files`) whose raw bytes hold `needle`.
pub fn files_holding(files: &[PathBuf], needle: &str) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|p| {
            let bytes = std::fs::read(p).unwrap_or_default();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .cloned()
        .collect()
}

/// `quire mcp --http` of a test's workspace on a free loopback port, killed when dropped; what it writes on standard
/// error is kept (read all the while, so that it never blocks on a full pipe).
pub struct McpHttp {
    child: std::process::Child,
    /// Its MCP endpoint, as it printed it.
    pub url: String,
    said: std::sync::Arc<std::sync::Mutex<String>>,
}

impl McpHttp {
    /// Starts it and waits until it listens.
    pub fn start(q: &Quire) -> McpHttp {
        use std::io::{BufRead, BufReader};
        let mut command = q.command();
        command
            .arg("--workspace")
            .arg(q.workspace())
            .args(["mcp", "--http", "127.0.0.1:0"]);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start quire mcp: {e}"));
        let mut stderr = BufReader::new(child.stderr.take().unwrap_or_else(|| panic!("no standard error")));
        let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut line = String::new();
        while !line.contains("quire MCP server on ") {
            line.clear();
            let read = stderr.read_line(&mut line).unwrap_or(0);
            assert!(
                read > 0,
                "the server stopped before listening: {}",
                said.lock().unwrap_or_else(|e| e.into_inner())
            );
            said.lock().unwrap_or_else(|e| e.into_inner()).push_str(&line);
        }
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        let kept = said.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                kept.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_str(&format!("{line}\n"));
            }
        });
        McpHttp { child, url, said }
    }

    /// What it wrote on standard error so far.
    pub fn stderr(&self) -> String {
        self.said.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for McpHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
