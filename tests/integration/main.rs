//! Integration tests of the `mancala-tb` binary: the command line, the
//! HTTP server and the web board, each driven as a user would.

mod charts;
mod cli;
mod cluster;
mod edges;
mod faults;
mod schema;
mod server;
mod web;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::Duration;

/// The binary, ready to be given arguments.
fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mancala-tb"))
}

/// Runs the binary with `args` and waits for it.
fn mancala_tb(args: &[&str]) -> Output {
    binary().args(args).output().expect("the binary runs")
}

/// Runs `command` with `input` on its stdin and its output captured,
/// killing it if it has not ended within `limit`: a command that blocks
/// fails its test with `Err` instead of hanging it.
fn finished_within(command: &mut Command, input: &[u8], limit: Duration) -> Result<Output, String> {
    ended_within(
        command.stdout(Stdio::piped()).stderr(Stdio::piped()),
        input,
        limit,
    )
}

/// [`finished_within`] for a command whose stdout and stderr are already
/// set (what is not piped comes back empty).
fn ended_within(command: &mut Command, input: &[u8], limit: Duration) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_vec();
    // A command that ends early may close its stdin before reading it all.
    std::thread::spawn(move || stdin.write_all(&input));
    let pid = child.id().to_string();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    match finished.recv_timeout(limit) {
        Ok(out) => out.map_err(|e| format!("cannot wait for {command:?}: {e}")),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            Err(format!("still running after {limit:?}: {command:?}"))
        }
    }
}

/// `mancala-tb serve` on a free loopback port, for as long as this value
/// lives. A shell stands between: it starts the server, waits for its own
/// stdin to close (this value dropped, or the test process gone, however it
/// ended) and then stops the server, so no server outlives the tests.
struct Served {
    /// `http://127.0.0.1:PORT`.
    base: String,
    _shell: Child,
    _stdin: ChildStdin,
}

impl Served {
    fn start(root: &Path) -> Served {
        Served::start_at(root, "127.0.0.1:0")
    }

    /// The server on `addr` (`HOST:PORT`).
    fn start_at(root: &Path, addr: &str) -> Served {
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg(r#""$0" serve --addr "$2" --dir "$1" & server=$!; read -r _; kill $server"#)
            .arg(env!("CARGO_BIN_EXE_mancala-tb"))
            .arg(root)
            .arg(addr)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh runs the server");
        let stdin = shell.stdin.take().expect("piped stdin");
        let mut line = String::new();
        BufReader::new(shell.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("the server's first line");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not a startup line: {line:?}"))
            .to_string();
        Served {
            base,
            _shell: shell,
            _stdin: stdin,
        }
    }
}
