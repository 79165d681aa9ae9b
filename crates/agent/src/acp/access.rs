//! What an external agent may reach on the computer besides quire's notes, when the person turned it on for that agent
//! (`quire agent add --files DIR --terminal`): ACP's client file system (text files inside one folder) and terminals
//! (commands run in that folder). Both are off by default: the agent is then told it has neither (its
//! `clientCapabilities` say so) and any such request is refused.
//!
//! A path is checked after the file system resolved it (symbolic links followed): a file outside the folder, or a link
//! that leads out of it, is refused. A terminal runs in a process group of its own, with the agent's environment
//! only, and is ended with the session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

/// What an agent may reach besides quire's MCP server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentAccess {
    /// The folder whose text files it may read and write (its working directory then); `None`: no file system.
    pub folder: Option<PathBuf>,
    /// Whether it may run commands (in its folder, or its own data folder without one).
    pub terminal: bool,
}

impl AgentAccess {
    /// The `clientCapabilities` quire announces.
    pub(crate) fn capabilities(&self) -> Value {
        let files = self.folder.is_some();
        json!({ "fs": { "readTextFile": files, "writeTextFile": files }, "terminal": self.terminal })
    }

    /// Whether `method` is one this agent may call.
    pub(crate) fn allows(&self, method: &str) -> bool {
        match method {
            "fs/read_text_file" | "fs/write_text_file" => self.folder.is_some(),
            m if m.starts_with("terminal/") => self.terminal,
            _ => false,
        }
    }
}

/// The most output a terminal keeps when the agent names no limit.
const OUTPUT_LIMIT: usize = 1024 * 1024;

/// The file system and terminals one session serves.
pub(crate) struct Served {
    access: AgentAccess,
    /// Where commands run: the folder, or the agent's own.
    cwd: PathBuf,
    env: Vec<(String, String)>,
    terminals: Arc<Mutex<HashMap<String, Terminal>>>,
    next: AtomicU64,
}

struct Terminal {
    output: Arc<Mutex<Output>>,
    exit: watch::Receiver<Option<Value>>,
    pid: Option<u32>,
}

#[derive(Default)]
struct Output {
    text: String,
    truncated: bool,
    limit: usize,
}

impl Output {
    fn push(&mut self, bytes: &[u8]) {
        self.text.push_str(&String::from_utf8_lossy(bytes));
        if self.text.len() > self.limit {
            let cut = self.text.len() - self.limit;
            let cut = (cut..self.text.len())
                .find(|&i| self.text.is_char_boundary(i))
                .unwrap_or(cut);
            self.text.drain(..cut);
            self.truncated = true;
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let terminals = std::mem::take(&mut *self.terminals.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for terminal in terminals.into_values() {
            kill(terminal.pid);
        }
    }
}

fn kill(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Why quire did not do what the agent asked, in words sent back to it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub(crate) String);

impl From<String> for Refused {
    fn from(why: String) -> Refused {
        Refused(why)
    }
}

impl From<&str> for Refused {
    fn from(why: &str) -> Refused {
        Refused(why.to_owned())
    }
}

type Answer = Result<Value, Refused>;

impl Served {
    pub(crate) fn new(access: AgentAccess, cwd: PathBuf, env: Vec<(String, String)>) -> Served {
        Served {
            access,
            cwd,
            env,
            terminals: Arc::default(),
            next: AtomicU64::new(1),
        }
    }

    pub(crate) fn access(&self) -> &AgentAccess {
        &self.access
    }

    /// Answers an fs/ or terminal/ request the agent may make (see [`AgentAccess::allows`]).
    pub(crate) fn answer(
        &self,
        method: &str,
        params: &Value,
    ) -> std::pin::Pin<Box<dyn Future<Output = Answer> + Send>> {
        let folder = self.access.folder.clone();
        match method {
            "fs/read_text_file" => {
                let params = params.clone();
                Box::pin(async move { read(folder.as_deref(), &params).await })
            }
            "fs/write_text_file" => {
                let params = params.clone();
                Box::pin(async move { write(folder.as_deref(), &params).await })
            }
            "terminal/create" => Box::pin(std::future::ready(self.create(params))),
            "terminal/output" => Box::pin(std::future::ready(self.with(params, |t| {
                let output = t.output.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                Ok(json!({ "output": output.text, "truncated": output.truncated, "exitStatus": *t.exit.borrow() }))
            }))),
            "terminal/wait_for_exit" => {
                let exit = self.with(params, |t| Ok(t.exit.clone()));
                Box::pin(async move {
                    let mut exit = exit?;
                    let status = exit
                        .wait_for(Option::is_some)
                        .await
                        .map_err(|_| "the terminal ended without an exit status".to_owned())?;
                    Ok(status.clone().unwrap_or(Value::Null))
                })
            }
            "terminal/kill" => Box::pin(std::future::ready(self.with(params, |t| {
                kill(t.pid);
                Ok(json!({}))
            }))),
            "terminal/release" => {
                let id = params["terminalId"].as_str().unwrap_or_default();
                let gone = self
                    .terminals
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(id);
                Box::pin(std::future::ready(match gone {
                    Some(t) => {
                        kill(t.pid);
                        Ok(json!({}))
                    }
                    None => Err(format!("no terminal {id}").into()),
                }))
            }
            _ => Box::pin(std::future::ready(Err(format!("quire does not serve {method}").into()))),
        }
    }

    fn with<T>(&self, params: &Value, f: impl FnOnce(&Terminal) -> Result<T, Refused>) -> Result<T, Refused> {
        let id = params["terminalId"].as_str().unwrap_or_default();
        let terminals = self.terminals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(terminals.get(id).ok_or_else(|| Refused(format!("no terminal {id}")))?)
    }

    fn create(&self, params: &Value) -> Answer {
        let command = params["command"]
            .as_str()
            .filter(|c| !c.is_empty())
            .ok_or("no command")?;
        let cwd = match params["cwd"].as_str() {
            Some(cwd) => {
                let root = self.access.folder.as_deref().unwrap_or(&self.cwd);
                inside(root, Path::new(cwd))?
            }
            None => self.cwd.clone(),
        };
        let args: Vec<String> = params["args"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let env: Vec<(String, String)> = params["env"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| Some((v["name"].as_str()?.to_owned(), v["value"].as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let limit = params["outputByteLimit"]
            .as_u64()
            .and_then(|l| usize::try_from(l).ok())
            .unwrap_or(OUTPUT_LIMIT)
            .min(OUTPUT_LIMIT);
        let mut process = tokio::process::Command::new(command);
        #[cfg(unix)]
        process.process_group(0);
        process
            .args(&args)
            .env_clear()
            .envs(self.env.iter().cloned())
            .envs(env)
            .current_dir(&cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = process.spawn().map_err(|e| format!("cannot run {command}: {e}"))?;
        let output = Arc::new(Mutex::new(Output {
            limit,
            ..Output::default()
        }));
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        ]
        .into_iter()
        .flatten()
        {
            let output = output.clone();
            tokio::spawn(async move {
                let mut stream = stream;
                let mut buffer = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    output
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(&buffer[..n]);
                }
            });
        }
        let (set_exit, exit) = watch::channel(None);
        let pid = child.id();
        tokio::spawn(async move {
            let status = child.wait().await;
            let status = match status {
                Ok(status) => {
                    #[cfg(unix)]
                    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
                    #[cfg(not(unix))]
                    let signal: Option<i32> = None;
                    json!({ "exitCode": status.code(), "signal": signal.map(|s| format!("signal {s}")) })
                }
                Err(_) => json!({ "exitCode": null, "signal": null }),
            };
            let _ = set_exit.send(Some(status));
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed));
        self.terminals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.clone(), Terminal { output, exit, pid });
        Ok(json!({ "terminalId": id }))
    }
}

/// `path` as the file system resolves it, when it is inside `root`; a refusal that says why otherwise.
fn inside(root: &Path, path: &Path) -> Result<PathBuf, Refused> {
    if !path.is_absolute() {
        return Err(format!("{}: ACP paths are absolute", path.display()).into());
    }
    let root = std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
    // A file that does not exist yet (a write) is resolved through its folder.
    let resolved = match std::fs::canonicalize(path) {
        Ok(resolved) => resolved,
        Err(_) => {
            let parent = path.parent().ok_or_else(|| format!("{}: no folder", path.display()))?;
            let name = path
                .file_name()
                .ok_or_else(|| format!("{}: no file name", path.display()))?;
            std::fs::canonicalize(parent)
                .map_err(|e| format!("{}: {e}", parent.display()))?
                .join(name)
        }
    };
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(Refused(format!(
            "{} is outside the folder this agent was given ({})",
            path.display(),
            root.display()
        )))
    }
}

async fn read(folder: Option<&Path>, params: &Value) -> Answer {
    let folder = folder.ok_or("this agent has no file system")?;
    let path = inside(folder, Path::new(params["path"].as_str().unwrap_or_default()))?;
    let text = tokio::fs::read_to_string(&path)
        .await
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let from = params["line"].as_u64().map_or(0, |l| l.saturating_sub(1));
    let content = match (params["line"].as_u64(), params["limit"].as_u64()) {
        (None, None) => text,
        (_, limit) => text
            .lines()
            .skip(usize::try_from(from).unwrap_or(usize::MAX))
            .take(limit.and_then(|l| usize::try_from(l).ok()).unwrap_or(usize::MAX))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Ok(json!({ "content": content }))
}

async fn write(folder: Option<&Path>, params: &Value) -> Answer {
    let folder = folder.ok_or("this agent has no file system")?;
    let path = inside(folder, Path::new(params["path"].as_str().unwrap_or_default()))?;
    let content = params["content"].as_str().ok_or("no content")?;
    tokio::fs::write(&path, content)
        .await
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(json!({}))
}
