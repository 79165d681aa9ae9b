//! End to end: `quire mcp` serves until the end of its input whatever its stdin and stdout are: a pipe, a regular
//! file or a terminal, in every combination (a pipe in and a file out once stopped after the first answer).
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use quire_tests::Quire;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Pipe,
    File,
    Terminal,
}

const REQUESTS: [&str; 5] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-test","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
];

/// A pseudo-terminal: the master end stays here, the slave end becomes the child's stdin or stdout. Echo is off, so
/// what the test types does not come back as output.
struct Terminal {
    master: File,
    slave_path: std::path::PathBuf,
}

impl Terminal {
    fn open() -> Terminal {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave_path = std::path::PathBuf::from(name.to_str().unwrap());
        let terminal = Terminal {
            master: File::from(master),
            slave_path,
        };
        let slave = terminal.slave();
        let mut modes = rustix::termios::tcgetattr(&slave).unwrap();
        modes.local_modes.remove(rustix::termios::LocalModes::ECHO);
        rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &modes).unwrap();
        terminal
    }

    fn slave(&self) -> File {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.slave_path)
            .unwrap()
    }
}

/// Runs `quire mcp` with the given ends, feeds it [`REQUESTS`] and the end of input, and returns what it wrote.
fn serve(input: End, output: End) -> String {
    let q = Quire::new();
    let dir = q.dir().to_path_buf();
    let requests: String = REQUESTS.iter().map(|r| format!("{r}\n")).collect();
    let mut command = q.command();
    command.arg("--workspace").arg(q.workspace()).arg("mcp");
    let terminal = (input == End::Terminal || output == End::Terminal).then(Terminal::open);
    match input {
        End::Pipe => command.stdin(Stdio::piped()),
        End::File => {
            std::fs::write(dir.join("in.jsonl"), &requests).unwrap();
            command.stdin(File::open(dir.join("in.jsonl")).unwrap())
        }
        End::Terminal => command.stdin(terminal.as_ref().unwrap().slave()),
    };
    let out_path = dir.join("out.jsonl");
    match output {
        End::Pipe => command.stdout(Stdio::piped()),
        End::File => command.stdout(File::create(&out_path).unwrap()),
        End::Terminal => command.stdout(terminal.as_ref().unwrap().slave()),
    };
    let mut child = command.spawn().unwrap();
    // The command holds the slave ends it was given; drop it so the terminal closes when the child exits.
    drop(command);
    let reader = match (output, &terminal) {
        (End::Terminal, Some(t)) => {
            let mut master = t.master.try_clone().unwrap();
            Some(std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // Until the child's end closes (EIO). Reading must go on to the end: a terminal holds little, and a
                // server whose output is not read blocks.
                while let Ok(n @ 1..) = master.read(&mut buf) {
                    seen.extend_from_slice(&buf[..n]);
                }
                String::from_utf8_lossy(&seen).replace('\r', "")
            }))
        }
        (End::Pipe, _) => {
            let mut stdout = child.stdout.take().unwrap();
            Some(std::thread::spawn(move || {
                let mut text = String::new();
                stdout.read_to_string(&mut text).unwrap();
                text
            }))
        }
        _ => None,
    };
    match input {
        End::Pipe => {
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(requests.as_bytes()).unwrap();
        }
        End::Terminal => {
            let mut master = terminal.as_ref().unwrap().master.try_clone().unwrap();
            master.write_all(requests.as_bytes()).unwrap();
            // Ctrl-D at the start of a line: the end of input on a terminal.
            master.write_all(&[4]).unwrap();
        }
        End::File => {}
    }
    let status = wait(&mut child, Duration::from_secs(20));
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let written = match reader {
        Some(reader) => reader.join().unwrap(),
        None => std::fs::read_to_string(&out_path).unwrap(),
    };
    assert!(
        status.is_some_and(|s| s.success()),
        "{input:?} -> {output:?}: quire mcp did not exit cleanly at the end of input ({status:?}); stderr: {stderr}"
    );
    assert!(
        !stderr.contains("Resource temporarily unavailable"),
        "{input:?} -> {output:?}: {stderr}"
    );
    written
}

fn wait(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

#[test]
fn mcp_serves_every_combination_of_pipe_file_and_terminal_until_the_end_of_input() {
    for input in [End::Pipe, End::File, End::Terminal] {
        for output in [End::Pipe, End::File, End::Terminal] {
            let written = serve(input, output);
            let answered: Vec<u64> = written
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line.trim()).ok())
                .filter_map(|message| message["id"].as_u64())
                .collect();
            let mut sorted = answered.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                [1, 2, 3, 4],
                "{input:?} -> {output:?} answered {answered:?}:\n{written}"
            );
        }
    }
}
