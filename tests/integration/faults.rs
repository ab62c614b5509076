//! The fault-injection suite (issue 46): the promises of the guide's
//! "Reliability guarantees" (`docs/guide/reliability.md`) tried against
//! the faults that break programs, each case counted. Builds are killed with SIGKILL (or stopped by a
//! signal) at points read from their own progress lines in every solving
//! mode; table files are damaged, swapped and replaced by things that are
//! not files; builds run out of room; hostile clients attack the server;
//! the command line gets absurd input and a closed stdout.
//!
//! Each group is one test that runs its cases in a loop and records each
//! outcome instead of stopping at the first failure, so that one run
//! names every broken promise. It prints `fault injection (GROUP): N
//! cases, N survived` and then fails if any case did. `scripts/faults`
//! runs the groups alone (`cargo test --test integration faults --
//! --nocapture`) and adds their lines up into one: `fault injection: N
//! cases, N survived`.
//!
//! A case asserts the promise itself, never less: a killed build leaves no
//! level file but the clean build's and resumes to the clean build's bytes;
//! a damaged file is refused in one line or, where the damage is not read,
//! answered exactly as the intact file answers; a server under attack
//! answers its documented status and keeps answering others within a
//! second.

use std::any::Any;
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mancala_core::LevelIndex;
use mancala_format::{level_file_name, write_level, Even, Forced, Header, TableFile, TableKind};
use tempfile::TempDir;

use crate::edges::connect_from;
use crate::{binary, finished_within, Served};

/// A case's verdict: `Err` says which promise broke, and how.
pub(super) type Outcome = Result<(), String>;

/// The cases of one group, and the failures among them.
pub(super) struct Cases {
    group: &'static str,
    count: usize,
    failures: Vec<String>,
}

impl Cases {
    pub(super) fn new(group: &'static str) -> Cases {
        Cases {
            group,
            count: 0,
            failures: Vec::new(),
        }
    }

    /// Runs one case and records its outcome.
    pub(super) fn run(&mut self, name: impl Into<String>, case: impl FnOnce() -> Outcome) {
        self.record(name, caught(case));
    }

    fn record(&mut self, name: impl Into<String>, outcome: Outcome) {
        self.count += 1;
        if let Err(why) = outcome {
            self.failures.push(format!("{}: {why}", name.into()));
        }
    }

    /// Prints each failure and the group's line, then fails the test if
    /// any case failed.
    pub(super) fn finish(self) {
        for failure in &self.failures {
            println!("FAILED {failure}");
        }
        let survived = self.count - self.failures.len();
        println!(
            "fault injection ({}): {} cases, {survived} survived",
            self.group, self.count
        );
        assert!(
            self.failures.is_empty(),
            "{} of {} {} cases failed:\n{}",
            self.failures.len(),
            self.count,
            self.group,
            self.failures.join("\n")
        );
    }
}

/// Runs `case`; a panic in it (an unexpected error in the test's own
/// work) is its failure, not the end of the group.
fn caught(case: impl FnOnce() -> Outcome) -> Outcome {
    panic::catch_unwind(AssertUnwindSafe(case))
        .unwrap_or_else(|payload| Err(format!("the case panicked: {}", panic_text(&*payload))))
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(text), _) => text.to_string(),
        (_, Some(text)) => text.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// `Ok` if `holds`, else the failure `why` tells.
pub(super) fn ensure(holds: bool, why: impl FnOnce() -> String) -> Outcome {
    if holds {
        Ok(())
    } else {
        Err(why())
    }
}

pub(super) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binary with `args`, run to its end within `limit`.
fn run_within(args: &[&str], input: &[u8], limit: Duration) -> Result<Output, String> {
    finished_within(binary().args(args), input, limit)
}

/// A clean exit with one of `codes`: no signal, no panic, no backtrace.
fn exits_cleanly(out: &Output, codes: &[i32]) -> Outcome {
    let err = text(&out.stderr);
    ensure(out.status.signal().is_none(), || {
        format!("killed by signal {:?}: {err:.300}", out.status.signal())
    })?;
    ensure(
        !err.contains("panicked") && !err.contains("backtrace"),
        || format!("a panic: {err:.500}"),
    )?;
    let code = out.status.code().unwrap_or(-1);
    ensure(codes.contains(&code), || {
        format!("exit code {code}, expected one of {codes:?}: {err:.300}")
    })
}

/// A refusal as the guide promises it: exit code `code`, no panic, and
/// exactly one non-empty line on stderr, `mancala-tb: …`, of at most 400
/// bytes (the input it is about is cut to 60 characters).
fn refused(out: &Output, code: i32) -> Outcome {
    exits_cleanly(out, &[code])?;
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    ensure(lines.len() == 1, || {
        format!("{} lines on stderr, not one: {err:.500}", lines.len())
    })?;
    ensure(lines[0].starts_with("mancala-tb: "), || {
        format!("not a mancala-tb error line: {:.300}", lines[0])
    })?;
    ensure(lines[0].len() <= 400, || {
        format!(
            "an error line of {} bytes: {:.300}",
            lines[0].len(),
            lines[0]
        )
    })
}

/// The level files (`level-NNN.mtb`) directly in `dir`, by name.
fn level_files(dir: &Path) -> BTreeMap<String, PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let level = name.strip_prefix("level-")?.strip_suffix(".mtb")?;
            level
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| (name, e.path()))
        })
        .collect()
}

/// Every file and directory under `dir`, as paths relative to it.
fn tree(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = fs::read_dir(&at) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every level file in `dir` is the reference's, byte for byte: nothing
/// that looks like a finished table and is not one.
pub(super) fn levels_are_the_references(dir: &Path, reference: &Path) -> Outcome {
    for (name, path) in level_files(dir) {
        let ours = fs::read(&path).map_err(|e| format!("{name}: {e}"))?;
        let theirs = fs::read(reference.join(&name)).unwrap_or_default();
        ensure(ours == theirs, || {
            format!("{name} looks complete but is not the clean build's")
        })?;
    }
    Ok(())
}

/// `dir` holds exactly the files of `reference` (no temporary file,
/// checkpoint, list or scratch file left behind), its level files byte
/// for byte the same.
pub(super) fn same_tables(dir: &Path, reference: &Path) -> Outcome {
    let (ours, theirs) = (tree(dir), tree(reference));
    ensure(ours == theirs, || {
        format!("files {ours:?}, the clean build has {theirs:?}")
    })?;
    levels_are_the_references(dir, reference)
}

/// Copies the files of levels `0..below` from `from` into `to`.
pub(super) fn copy_levels(from: &Path, to: &Path, below: u32) {
    fs::create_dir_all(to).unwrap();
    for n in 0..below {
        let name = level_file_name(n);
        fs::copy(from.join(&name), to.join(&name)).unwrap();
    }
}

/// The one rule-set directory a build wrote under `root` (beside the
/// `--scratch` directory of a mode [`Mode::in_scratch`]).
pub(super) fn rule_set_dir(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("scratch"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// `verify --from FROM` of the tables under `root` passes.
pub(super) fn verified(root: &Path, from: u32) -> Outcome {
    let from = from.to_string();
    let args = ["verify", "--dir", root.to_str().unwrap(), "--from", &from];
    let out = run_within(&args, b"", Duration::from_secs(60))?;
    let said = text(&out.stdout);
    ensure(
        out.status.success() && said.ends_with("verify: all tables ok\n"),
        || format!("verify --from {from} failed: {said:.500}"),
    )
}

// --- Builds killed -------------------------------------------------------

/// A solving mode of the kill matrix: its build flags, the level it builds
/// to (small, so that each kill costs a moment), and the points of its top
/// level (percentages of its progress) where it is killed: spread over the
/// level's work, different in each mode so that together they cover it.
struct Mode {
    name: &'static str,
    flags: &'static [&'static str],
    top: u32,
    percents: &'static [f64],
    /// From this share of the top level on, a checkpoint of it has been
    /// saved: a build killed there must resume from it.
    checkpointed_from: Option<f64>,
    /// Whether its working files go to a `--scratch` directory of their
    /// own, which a build run again must find.
    in_scratch: bool,
}

/// Checkpoints every 30 ms of work: several in each small level, its
/// forward pass included, which a build killed after one of them must
/// resume from.
const CHECKPOINTS_OFTEN: &str = "0.0005";

/// The lean mode with [`CHECKPOINTS_OFTEN`].
const LEAN_CHECKPOINTS_OFTEN: &[&str] = &[
    "--memory",
    "lean",
    "--checkpoint-minutes",
    CHECKPOINTS_OFTEN,
];

const MODES: [Mode; 6] = [
    Mode {
        name: "in memory",
        flags: &[],
        top: 11,
        percents: &[0.0, 12.0, 33.0, 51.0, 68.0, 89.0],
        checkpointed_from: None,
        in_scratch: false,
    },
    Mode {
        name: "lean",
        flags: &["--memory", "lean"],
        top: 10,
        percents: &[0.0, 9.0, 27.0, 46.0, 64.0, 82.0],
        checkpointed_from: None,
        in_scratch: false,
    },
    Mode {
        name: "forced",
        flags: &["--cycles", "forced"],
        top: 10,
        percents: &[0.0, 15.0, 38.0, 55.0, 72.0, 93.0],
        checkpointed_from: None,
        in_scratch: false,
    },
    Mode {
        name: "compact",
        flags: &["--encoding", "compact"],
        top: 11,
        percents: &[0.0, 7.0, 24.0, 43.0, 61.0, 79.0],
        checkpointed_from: None,
        in_scratch: false,
    },
    Mode {
        name: "kalah",
        flags: &["--rules", "kalah"],
        top: 13,
        percents: &[0.0, 18.0, 36.0, 57.0, 75.0, 96.0],
        checkpointed_from: None,
        in_scratch: false,
    },
    Mode {
        name: "lean, checkpoints",
        flags: LEAN_CHECKPOINTS_OFTEN,
        top: 10,
        percents: &[30.0, 50.0, 78.0, 84.0, 90.0, 97.0],
        // The forward pass (three quarters of a level's progress) takes
        // longer than the checkpoints' interval and is saved when it ends.
        checkpointed_from: Some(78.0),
        in_scratch: true,
    },
];

/// A mode's clean build, built once and compared with every case's.
struct Reference {
    /// Where it is, removed with this value.
    _root: TempDir,
    /// Its rule-set directory.
    tables: PathBuf,
}

impl Mode {
    fn args(&self, root: &Path) -> Vec<String> {
        let mut args: Vec<String> = ["build", "--stones", &self.top.to_string(), "--dir"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(root.to_str().unwrap().to_string());
        args.extend(self.flags.iter().map(|s| s.to_string()));
        if self.in_scratch {
            let scratch = root.join("scratch");
            args.extend([
                "--scratch".to_string(),
                scratch.to_str().unwrap().to_string(),
            ]);
        }
        args
    }

    fn reference(&self) -> Reference {
        let root = TempDir::new().unwrap();
        let out = binary().args(self.args(root.path())).output().unwrap();
        assert!(out.status.success(), "{}: {}", self.name, text(&out.stderr));
        let tables = rule_set_dir(root.path());
        Reference {
            _root: root,
            tables,
        }
    }
}

/// Where a build is stopped: at its first progress line at or past
/// `percent` of level `level`, or of any later level.
#[derive(Clone, Copy)]
pub(super) struct StopPoint {
    pub(super) level: u32,
    pub(super) percent: f64,
}

impl StopPoint {
    /// Whether `line` of a build's stderr is at or past this point.
    fn reached_by(&self, line: &str) -> bool {
        let Some(rest) = line.strip_prefix("progress: level") else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let level = fields.first().and_then(|f| f.parse::<u32>().ok());
        let percent = fields
            .get(3)
            .and_then(|f| f.trim_end_matches([',', '%']).parse::<f64>().ok());
        match (level, percent) {
            (Some(level), _) if level > self.level => true,
            (Some(level), Some(percent)) => level == self.level && percent >= self.percent,
            _ => false,
        }
    }
}

/// A build that was stopped by a signal: how it ended, how long it took
/// to end after the signal, and what it wrote on stderr after that.
pub(super) struct Stopped {
    pub(super) status: ExitStatus,
    pub(super) ended_after: Duration,
    pub(super) said: String,
}

/// Which process of a build a signal goes to.
#[derive(Clone, Copy)]
pub(super) enum Target {
    /// The process started (the build, or `mpirun`).
    Started,
    /// The started process's `n`-th child (a rank under `mpirun`, in the
    /// order they were started).
    Child(usize),
}

/// Runs the build `args` (progress lines on) until its stderr reaches
/// `point`, then sends it `signals` (`KILL`, `TERM`, …) one after the
/// other; waits at most 10 s for it to end.
fn stopped_at(args: &[String], point: StopPoint, signals: &[&str]) -> Result<Stopped, String> {
    let mut build = binary();
    build.args(args);
    stopped_in(build, Target::Started, point, signals)
}

/// Runs `build` (progress lines on) until its stderr reaches `point`,
/// then sends `target` `signals` one after the other; waits at most 10 s
/// for `build` to end.
pub(super) fn stopped_in(
    mut build: Command,
    target: Target,
    point: StopPoint,
    signals: &[&str],
) -> Result<Stopped, String> {
    let mut child = build
        .args(["--progress-every", "0.000001"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !point.reached_by(&line) {
        line.clear();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            let status = child.wait().map_err(|e| e.to_string())?;
            return Err(format!("the build ended ({status}) before the stop point"));
        }
    }
    let started = child.id().to_string();
    let pid = match target {
        Target::Started => started.clone(),
        Target::Child(n) => {
            let children = Command::new("pgrep")
                .args(["-P", &started])
                .output()
                .map_err(|e| format!("cannot run pgrep: {e}"))?;
            let children = text(&children.stdout);
            children
                .lines()
                .nth(n)
                .ok_or_else(|| format!("no child {n} among {children:?}"))?
                .to_string()
        }
    };
    let signalled = Instant::now();
    for signal in signals {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status();
        ensure(sent.is_ok_and(|s| s.success()), || {
            format!("kill -{signal} failed")
        })?;
    }
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let mut said = String::new();
        let _ = stderr.read_to_string(&mut said);
        let _ = done.send((child.wait(), said));
    });
    match finished.recv_timeout(Duration::from_secs(10)) {
        Ok((status, said)) => Ok(Stopped {
            status: status.map_err(|e| e.to_string())?,
            ended_after: signalled.elapsed(),
            said,
        }),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &started]).status();
            Err(format!("still running 10 s after {signals:?}"))
        }
    }
}

/// One case of the kill matrix: a build of `mode` over the reference's
/// levels below `from` is stopped at `point` with `signals`; `ended`
/// checks how it ended. Then no level file but the clean build's may be
/// there; the same build run again must finish (from the level's
/// checkpoint, if the stopped one left one) with exactly the clean build's
/// files, and `verify` must pass.
fn stop_case(
    mode: &Mode,
    reference: &Reference,
    from: u32,
    point: StopPoint,
    signals: &[&str],
    ended: impl FnOnce(&Stopped) -> Outcome,
) -> Outcome {
    let root = TempDir::new().unwrap();
    let tables = root.path().join(reference.tables.file_name().unwrap());
    copy_levels(&reference.tables, &tables, from);
    let args = mode.args(root.path());
    let stopped = stopped_at(&args, point, signals)?;
    ended(&stopped)?;
    levels_are_the_references(&tables, &reference.tables)?;
    let written = tables.join(level_file_name(point.level)).exists();
    let checkpointed = !written
        && tables
            .join("checkpoints")
            .join(format!("level-{:03}.ckpt", point.level))
            .exists();
    let saved_by_now = point.level == mode.top
        && mode
            .checkpointed_from
            .is_some_and(|from| point.percent >= from);
    ensure(written || checkpointed || !saved_by_now, || {
        format!("no checkpoint of level {} was saved", point.level)
    })?;

    let rerun: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_within(&rerun, b"", Duration::from_secs(120))?;
    exits_cleanly(&out, &[0])?;
    let summary = text(&out.stdout);
    ensure(
        !checkpointed || summary.contains("went on from a checkpoint"),
        || format!("a checkpoint was left but not resumed from: {summary:.2000}"),
    )?;
    same_tables(&tables, &reference.tables)?;
    verified(root.path(), from)
}

/// Killed with SIGKILL: the signal, not an exit, ended it.
fn killed(stopped: &Stopped) -> Outcome {
    ensure(stopped.status.signal() == Some(9), || {
        format!(
            "ended with {} before the kill: {:.300}",
            stopped.status, stopped.said
        )
    })
}

/// Stopped by one SIGTERM or SIGHUP: within 2 s, exit code 1, one line
/// saying the build was interrupted.
fn interrupted(stopped: &Stopped) -> Outcome {
    ensure(stopped.status.code() == Some(1), || {
        format!("ended with {}: {:.300}", stopped.status, stopped.said)
    })?;
    ensure(stopped.ended_after < Duration::from_secs(2), || {
        format!("took {:?} to stop", stopped.ended_after)
    })?;
    let errors: Vec<&str> = stopped
        .said
        .lines()
        .filter(|l| l.starts_with("mancala-tb: "))
        .collect();
    ensure(
        errors.len() == 1 && errors[0].contains("build interrupted"),
        || format!("not one 'build interrupted' line: {:.500}", stopped.said),
    )
}

/// Stopped by a second signal: at once, exit code 130.
fn stopped_at_once(stopped: &Stopped) -> Outcome {
    ensure(stopped.status.code() == Some(130), || {
        format!("ended with {}: {:.300}", stopped.status, stopped.said)
    })?;
    ensure(stopped.ended_after < Duration::from_secs(1), || {
        format!("took {:?} to stop", stopped.ended_after)
    })
}

/// Builds killed with SIGKILL at points of their progress, in every
/// solving mode: inside the top level (its lower levels copied from the
/// clean build, so each kill costs one level), and inside the level below
/// it, as that is written and just after; then SIGTERM and SIGHUP, and a
/// second signal, which stops a build at once.
#[test]
fn kills() {
    let mut cases = Cases::new("kills");
    let references: Vec<Reference> = MODES.iter().map(Mode::reference).collect();
    for (mode, reference) in MODES.iter().zip(&references) {
        let top = mode.top;
        for &percent in mode.percents {
            let point = StopPoint {
                level: top,
                percent,
            };
            cases.run(
                format!("{}: SIGKILL at level {top} {percent}%", mode.name),
                || stop_case(mode, reference, top, point, &["KILL"], killed),
            );
        }
        // The level below the top solved too: killed inside it, as it is
        // written (all its progress made, a level still to come, so the
        // kill cannot come too late) and just after.
        for point in [
            StopPoint {
                level: top - 1,
                percent: 50.0,
            },
            StopPoint {
                level: top - 1,
                percent: 100.0,
            },
            StopPoint {
                level: top,
                percent: 0.0,
            },
        ] {
            let name = format!(
                "{}: SIGKILL at level {} {}%, two levels to build",
                mode.name, point.level, point.percent
            );
            cases.run(name, || {
                stop_case(mode, reference, top - 1, point, &["KILL"], killed)
            });
        }
        let point = StopPoint {
            level: top,
            percent: 40.0,
        };
        cases.run(format!("{}: SIGTERM at level {top} 40%", mode.name), || {
            stop_case(mode, reference, top, point, &["TERM"], interrupted)
        });
    }
    let (mode, reference) = (&MODES[0], &references[0]);
    let point = StopPoint {
        level: mode.top,
        percent: 60.0,
    };
    cases.run("in memory: SIGHUP at 60%", || {
        stop_case(mode, reference, mode.top, point, &["HUP"], interrupted)
    });
    // Two signals that arrive together, so that the first cannot have
    // stopped the build before the second: sent while it is stopped
    // (SIGSTOP), then let through at once (SIGCONT).
    let (mode, reference) = (&MODES[1], &references[1]);
    let point = StopPoint {
        level: mode.top,
        percent: 40.0,
    };
    cases.run("lean: SIGTERM and SIGHUP together at 40%", || {
        stop_case(
            mode,
            reference,
            mode.top,
            point,
            &["STOP", "TERM", "HUP", "CONT"],
            stopped_at_once,
        )
    });
    cases.finish();
}

// --- Damaged tables ------------------------------------------------------

/// The level every damage is done to: the top of a small oware set.
const DAMAGED: u32 = 8;

/// The intact tables the damaged sets are copies of: oware to level
/// [`DAMAGED`], and the kalah and forced tables that files are swapped in
/// from.
struct Intact {
    oware: TempDir,
    others: TempDir,
}

impl Intact {
    fn build() -> Intact {
        let (oware, others) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let stones = DAMAGED.to_string();
        for (root, flags) in [
            (&oware, &[][..]),
            (&others, &["--rules", "kalah"]),
            (&others, &["--cycles", "forced"]),
        ] {
            let mut args = vec!["build", "--stones", &stones, "--dir"];
            args.push(root.path().to_str().unwrap());
            args.extend_from_slice(flags);
            crate::cli::ok(&args);
        }
        Intact { oware, others }
    }

    fn tables(&self) -> PathBuf {
        self.oware.path().join("oware-6")
    }

    fn file(&self) -> PathBuf {
        self.tables().join(level_file_name(DAMAGED))
    }

    /// A copy of the oware set in a directory of its own.
    fn copy(&self) -> TempDir {
        let copy = TempDir::new().unwrap();
        copy_levels(&self.tables(), &copy.path().join("oware-6"), DAMAGED + 1);
        copy
    }
}

/// What a damage does to the level file at `path`.
type Harm = Box<dyn Fn(&Path, &Intact)>;

/// One damage of the matrix, and what a probe of the damaged level must do.
struct Damage {
    name: String,
    harm: Harm,
    probe: Probe,
}

/// What `query` must do with a damaged level.
#[derive(Clone, Copy)]
enum Probe {
    /// The file cannot be read as a table: a query of a position of the
    /// level is refused.
    Refused,
    /// A block is damaged: `query -` of every position of the level fails
    /// those whose answer reads it (one at least: a position's answer
    /// reads its children, which may lie in any block) and answers the
    /// others as the intact tables do.
    Block,
    /// The damage lies in bytes no probe reads: a query answers as the
    /// intact tables do, or is refused.
    Unread,
}

impl Probe {
    /// `query`'s input for this probe: one position, or every position
    /// of the level, a line each.
    fn input(self) -> String {
        let index = LevelIndex::new(6, DAMAGED);
        match self {
            Probe::Block => (0..index.count())
                .map(|rank| format!("{}\n", index.unrank(rank)))
                .collect(),
            _ => "2,2,2,0,0,0/0,0,0,0,1,1\n".to_string(),
        }
    }
}

/// The layout of the intact level file the byte damages aim at.
struct Layout {
    bytes: Vec<u8>,
    /// The header record's length (`H`).
    header: usize,
    /// Where the blocks begin (after the index and its checksum).
    blocks: usize,
    block_count: u64,
}

impl Layout {
    fn of(path: &Path) -> Layout {
        let bytes = fs::read(path).unwrap();
        let table = TableFile::open(path).unwrap();
        let header = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let h = table.header();
        let groups = h.block_count.div_ceil(1 << 16) as usize;
        let blocks = 16 + header + 8 * h.block_count as usize + 8 * groups + 4;
        Layout {
            bytes,
            header,
            blocks,
            block_count: h.block_count,
        }
    }

    /// Where block `b` begins: the index's offset plus its group's base.
    fn block_start(&self, b: u64) -> usize {
        let entry = 16 + self.header + 8 * b as usize;
        let offset = u32::from_le_bytes(self.bytes[entry..entry + 4].try_into().unwrap());
        let bases = 16 + self.header + 8 * self.block_count as usize;
        let base = u64::from_le_bytes(self.bytes[bases..bases + 8].try_into().unwrap());
        (base + offset as u64) as usize
    }
}

/// The intact bytes changed by `change`.
fn rewritten(change: impl Fn(&mut Vec<u8>) + 'static) -> Harm {
    Box::new(move |path, intact| {
        let mut bytes = fs::read(intact.file()).unwrap();
        change(&mut bytes);
        fs::write(path, bytes).unwrap();
    })
}

/// One bit of byte `at` flipped.
fn flipped(at: usize) -> Harm {
    rewritten(move |bytes| bytes[at] ^= 0x04)
}

/// The path replaced by what `make` makes there.
fn replaced(make: impl Fn(&Path, &Intact) + 'static) -> Harm {
    Box::new(move |path, intact| {
        fs::remove_file(path).unwrap();
        make(path, intact);
    })
}

/// The file `from` (given the intact tables) copied over the level.
fn copied_over(from: impl Fn(&Intact) -> PathBuf + 'static) -> Harm {
    Box::new(move |path, intact| {
        fs::copy(from(intact), path).unwrap();
    })
}

/// The intact file with its header changed by `forge` and every checksum
/// made right again: only the header's meaning is wrong.
fn forged(forge: impl Fn(&mut Header) + 'static) -> Harm {
    Box::new(move |path, intact| {
        let table = TableFile::open(&intact.file()).unwrap();
        let symbols = table.decode_all().unwrap();
        let blocks = mancala_format::encode_blocks(table.header(), &symbols, 0);
        let frames: Vec<_> = blocks
            .iter()
            .map(|b| mancala_format::BlockFrame::of(b))
            .collect();
        let mut header = table.header().clone();
        forge(&mut header);
        let mut bytes = mancala_format::table_head(&header, &frames);
        bytes.extend(blocks.concat());
        bytes.extend(crc32fast::hash(&bytes).to_le_bytes());
        bytes.extend(mancala_format::END_MARKER);
        fs::write(path, bytes).unwrap();
    })
}

/// Every damage of the matrix, to the intact level file described by
/// `layout`.
fn damages(layout: &Layout) -> Vec<Damage> {
    let len = layout.bytes.len();
    let (h, blocks) = (layout.header, layout.blocks);
    let middle = layout.block_count / 2;
    let middle_start = layout.block_start(middle);
    let cut = |at: usize| rewritten(move |bytes| bytes.truncate(at));
    let header_length =
        |value: u32| rewritten(move |bytes| bytes[12..16].copy_from_slice(&value.to_le_bytes()));
    let list: Vec<(String, Harm, Probe)> = vec![
        ("empty".into(), cut(0), Probe::Refused),
        ("cut in the magic".into(), cut(5), Probe::Refused),
        ("cut in the header length".into(), cut(14), Probe::Refused),
        ("cut in the header".into(), cut(16 + h / 2), Probe::Refused),
        (
            "cut in the block index".into(),
            cut(16 + h + 12),
            Probe::Refused,
        ),
        ("cut before the blocks".into(), cut(blocks), Probe::Refused),
        (
            "cut in the middle block".into(),
            cut(middle_start + 3),
            Probe::Refused,
        ),
        ("cut in the trailer".into(), cut(len - 6), Probe::Refused),
        ("last byte cut".into(), cut(len - 1), Probe::Refused),
        (
            "bytes appended".into(),
            rewritten(|bytes| bytes.extend([0u8; 100])),
            Probe::Refused,
        ),
        ("bit flip in the magic".into(), flipped(2), Probe::Refused),
        ("bit flip in the version".into(), flipped(8), Probe::Refused),
        (
            "header length 4 GiB".into(),
            header_length(u32::MAX),
            Probe::Refused,
        ),
        ("header length 0".into(), header_length(0), Probe::Refused),
        (
            "header length past the end".into(),
            header_length(len as u32),
            Probe::Refused,
        ),
        (
            "bit flip in the rule set's name".into(),
            flipped(17),
            Probe::Refused,
        ),
        (
            "bit flip mid-header".into(),
            flipped(16 + h / 2),
            Probe::Refused,
        ),
        (
            "bit flip in the model".into(),
            flipped(16 + h - 1),
            Probe::Refused,
        ),
        (
            "bit flip in the block index".into(),
            flipped(16 + h + 1),
            Probe::Refused,
        ),
        (
            "bit flip in the index checksum".into(),
            flipped(blocks - 2),
            Probe::Refused,
        ),
        (
            "bit flip in the first block".into(),
            flipped(blocks),
            Probe::Block,
        ),
        (
            "bit flip in the middle block".into(),
            flipped(middle_start + 1),
            Probe::Block,
        ),
        (
            "bit flip in the last block".into(),
            flipped(len - 9),
            Probe::Block,
        ),
        // The whole-file checksum and the end marker guard no value a
        // probe reads: a probe may answer, `verify` and `info` may not
        // pass the file.
        (
            "bit flip in the file checksum".into(),
            flipped(len - 7),
            Probe::Unread,
        ),
        (
            "bit flip in the end marker".into(),
            flipped(len - 2),
            Probe::Unread,
        ),
        (
            "forged header: 2^40 blocks".into(),
            forged(|h| h.block_count = 1 << 40),
            Probe::Refused,
        ),
        (
            "forged header: 2^62 positions".into(),
            forged(|h| h.positions = 1 << 62),
            Probe::Refused,
        ),
        (
            "forged header: level 9".into(),
            forged(|h| h.level = DAMAGED + 1),
            Probe::Refused,
        ),
        (
            "forged header: blocks of 1 position".into(),
            forged(|h| h.block_size = 1),
            Probe::Refused,
        ),
        (
            "a symbolic link to itself".into(),
            replaced(|path, _| std::os::unix::fs::symlink(path, path).unwrap()),
            Probe::Refused,
        ),
        (
            "a link to a missing file".into(),
            replaced(|path, _| {
                std::os::unix::fs::symlink(path.with_extension("gone"), path).unwrap()
            }),
            Probe::Refused,
        ),
        (
            "a link to /dev/zero".into(),
            replaced(|path, _| std::os::unix::fs::symlink("/dev/zero", path).unwrap()),
            Probe::Refused,
        ),
        (
            "a FIFO".into(),
            replaced(|path, _| {
                let made = Command::new("mkfifo").arg(path).status().unwrap();
                assert!(made.success(), "mkfifo");
            }),
            Probe::Refused,
        ),
        (
            "a directory".into(),
            replaced(|path, _| fs::create_dir(path).unwrap()),
            Probe::Refused,
        ),
        (
            "a socket".into(),
            replaced(|path, _| drop(std::os::unix::net::UnixListener::bind(path).unwrap())),
            Probe::Refused,
        ),
        (
            "level 7 copied over it".into(),
            copied_over(|intact| intact.tables().join(level_file_name(DAMAGED - 1))),
            Probe::Refused,
        ),
        (
            "a kalah table copied over it".into(),
            copied_over(|intact| {
                intact
                    .others
                    .path()
                    .join("kalah-6")
                    .join(level_file_name(DAMAGED))
            }),
            Probe::Refused,
        ),
        (
            "a forced table copied over it".into(),
            copied_over(|intact| {
                intact
                    .others
                    .path()
                    .join("oware-6-forced")
                    .join(level_file_name(DAMAGED))
            }),
            Probe::Refused,
        ),
    ];
    list.into_iter()
        .map(|(name, harm, probe)| Damage { name, harm, probe })
        .collect()
}

/// `command` against a copy of the intact set with `damage` done to its
/// top level. `info` and `verify` report each level on a line of its own:
/// exactly one must flag the level, and they must fail. `query` must do
/// what the damage's [`Probe`] says, given `input` and the intact tables'
/// `answer` to it. `build` must refuse in one line, or rebuild the level
/// to the clean build's bytes. Each within 2 s: nothing may block.
fn damaged_case(
    intact: &Intact,
    damage: &Damage,
    command: &str,
    (input, answer): (&str, &str),
) -> Outcome {
    let copy = intact.copy();
    let root = copy.path().to_str().unwrap();
    let file = copy.path().join("oware-6").join(level_file_name(DAMAGED));
    (damage.harm)(&file, intact);
    let stones = DAMAGED.to_string();
    let args: Vec<&str> = match (command, damage.probe) {
        ("query", Probe::Block) => vec!["query", "--dir", root, "-"],
        ("query", _) => vec!["query", "--dir", root, input.trim_end()],
        ("build", _) => vec!["build", "--stones", &stones, "--dir", root],
        _ => vec![command, "--dir", root],
    };
    let out = run_within(&args, input.as_bytes(), Duration::from_secs(2))?;
    match (command, damage.probe) {
        ("info" | "verify", _) => flags_the_damaged_level(&out),
        ("query", Probe::Block) => fails_only_what_reads_the_damage(&out, answer),
        ("query", Probe::Unread) if out.status.success() => {
            ensure(text(&out.stdout) == answer, || {
                format!(
                    "answered otherwise than the intact tables: {}",
                    text(&out.stdout)
                )
            })
        }
        ("build", _) if out.status.success() => ensure(
            fs::symlink_metadata(&file).is_ok_and(|m| m.is_file())
                && fs::read(&file).ok() == fs::read(intact.file()).ok(),
            || "the build succeeded without the clean build's file".to_string(),
        ),
        _ => refused(&out, 1),
    }
}

/// `query -` over a damaged block: an answer line per input line, each
/// either the intact tables' line or a `corrupted` error (one at least:
/// the damage was read), and a failed exit.
fn fails_only_what_reads_the_damage(out: &Output, answer: &str) -> Outcome {
    exits_cleanly(out, &[1])?;
    let said = text(&out.stdout);
    let (lines, intact): (Vec<&str>, Vec<&str>) =
        (said.lines().collect(), answer.lines().collect());
    ensure(lines.len() == intact.len(), || {
        format!(
            "{} answer lines for {} positions",
            lines.len(),
            intact.len()
        )
    })?;
    let mut failed = 0;
    for (line, intact) in lines.iter().zip(&intact) {
        if line.contains(" error: ") {
            ensure(line.contains("corrupted"), || {
                format!("not a corrupted-table error: {line}")
            })?;
            failed += 1;
        } else {
            ensure(line == intact, || {
                format!("{line} where the intact tables say {intact}")
            })?;
        }
    }
    ensure(failed > 0, || {
        "no answer read the damaged block".to_string()
    })
}

/// `info` or `verify` failed, and exactly one line of its report flags a
/// problem, naming the damaged level.
fn flags_the_damaged_level(out: &Output) -> Outcome {
    exits_cleanly(out, &[1])?;
    let report = text(&out.stdout);
    let flagged: Vec<&str> = report
        .lines()
        .filter(|l| *l != "verify: FAILED")
        .filter(|l| {
            ["FAILED", "misplaced", "error", "level-0"]
                .iter()
                .any(|w| l.contains(w))
        })
        .collect();
    let names_it = |line: &str| {
        line.contains(&level_file_name(DAMAGED))
            || line.split_whitespace().nth(1) == Some(&DAMAGED.to_string())
    };
    ensure(flagged.len() == 1 && names_it(flagged[0]), || {
        format!("not one line flagging level {DAMAGED}: {report:.1500}")
    })
}

/// The level file `file` of kind `K` written again by the library's own
/// writer with the value (symbols) of the position of rank `rank`
/// changed by `change`: header and checksums are right, so only a
/// recomputation of the values (`verify`) can tell.
fn change_one_value<K: TableKind>(file: &Path, rank: u64, change: fn(&mut [i8])) -> Outcome {
    let table = TableFile::open(file).map_err(|e| e.to_string())?;
    let header = table.header().clone();
    let mut symbols = table.decode_all().map_err(|e| e.to_string())?;
    drop(table);
    let rewrite = |symbols: &[i8]| {
        let fitted =
            Header::for_symbols::<K>(&header.rules, header.level, symbols, header.block_size);
        write_level(&fitted, symbols, file).map_err(|e| e.to_string())
    };
    let intact = fs::read(file).unwrap();
    rewrite(&symbols)?;
    ensure(fs::read(file).unwrap() == intact, || {
        "the writer does not give the file back byte for byte".to_string()
    })?;
    let width = header.symbols_per_position();
    let at = rank as usize * width;
    change(&mut symbols[at..at + width]);
    rewrite(&symbols).map(drop)
}

/// An even value moved one stone towards 0 (or away from it, if 0).
fn even_value_changed(value: &mut [i8]) {
    value[0] += if value[0] > 0 { -1 } else { 1 };
}

/// Forced bounds still a pair of bounds, but not the stored ones: the
/// mover's bound lowered with the gap widened, or raised into the gap.
fn forced_bounds_changed(pair: &mut [i8]) {
    if pair[1] == 0 && pair[0] > 0 {
        pair[0] -= 1;
        pair[1] = -1;
    } else if pair[1] < 0 {
        pair[0] += 1;
        pair[1] += 1;
    } else {
        pair[1] = -1;
    }
}

/// One value changed in a copy of `tables` (a rule-set directory) with
/// every checksum right: `verify` must fail and name the level.
fn changed_value_case<K: TableKind>(
    tables: &Path,
    level: u32,
    rank: u64,
    change: fn(&mut [i8]),
) -> Outcome {
    let copy = TempDir::new().unwrap();
    let dir = copy.path().join(tables.file_name().unwrap());
    copy_levels(tables, &dir, level + 1);
    change_one_value::<K>(&dir.join(level_file_name(level)), rank, change)?;
    let args = ["verify", "--dir", copy.path().to_str().unwrap()];
    let out = run_within(&args, b"", Duration::from_secs(20))?;
    exits_cleanly(&out, &[1])?;
    let report = text(&out.stdout);
    let named = format!("level {level:>3}:");
    ensure(
        report
            .lines()
            .any(|l| l.contains(&named) && l.contains("FAILED")),
        || format!("no FAILED line for level {level}: {report:.1500}"),
    )
}

/// Damaged, swapped and odd table files against every command that reads
/// them, and files whose checksums are right but one of whose values is
/// not, against `verify`.
#[test]
fn damaged_tables() {
    let mut cases = Cases::new("damaged tables");
    let intact = Intact::build();
    let root = intact.oware.path().to_str().unwrap();
    let layout = Layout::of(&intact.file());
    for damage in damages(&layout) {
        let input = damage.probe.input();
        let answer = crate::cli::with_stdin(&["query", "--dir", root, "-"], &input);
        let answer = text(&answer.stdout);
        let answer = match damage.probe {
            Probe::Block => answer,
            // The board view of one position, as `query POSITION` shows it.
            _ => crate::cli::ok(&["query", "--dir", root, input.trim_end()]),
        };
        for command in ["info", "verify", "query", "build"] {
            cases.run(format!("{}: {command}", damage.name), || {
                damaged_case(&intact, &damage, command, (&input, &answer))
            });
        }
    }
    let oware = intact.tables();
    let positions = LevelIndex::new(6, DAMAGED).count();
    for (level, rank) in [
        (DAMAGED, 0),
        (DAMAGED, positions / 2),
        (DAMAGED, positions - 1),
        (5, 1000),
    ] {
        cases.run(
            format!("oware level {level}, rank {rank}: one value changed"),
            || changed_value_case::<Even>(&oware, level, rank, even_value_changed),
        );
    }
    let kalah = intact.others.path().join("kalah-6");
    cases.run("kalah level 8: one value changed", || {
        changed_value_case::<Even>(&kalah, DAMAGED, positions / 3, even_value_changed)
    });
    let forced = intact.others.path().join("oware-6-forced");
    for rank in [7, positions / 2] {
        cases.run(
            format!("forced level 8, rank {rank}: bounds changed"),
            || changed_value_case::<Forced>(&forced, DAMAGED, rank, forced_bounds_changed),
        );
    }
    cases.finish();
}

// --- Hostile clients -----------------------------------------------------

/// What a hostile client sends, how, and what the server must answer.
struct Attack {
    name: &'static str,
    /// Sent at once on connecting.
    head: Vec<u8>,
    /// Then sent a byte at a time, every [`TRICKLE`].
    trickle: Vec<u8>,
    /// The status the server must answer with; `None`: it must close the
    /// connection without an answer.
    status: Option<u16>,
    /// When the answer (or the close) may come, from the first byte sent.
    between: (Duration, Duration),
    /// The longest answer allowed, in bytes: an error never echoes much of
    /// the input it is about.
    longest: usize,
}

/// The pause between two bytes of a trickled request.
const TRICKLE: Duration = Duration::from_millis(500);

impl Attack {
    /// A request sent whole, answered at once with `status`.
    fn whole(name: &'static str, request: impl Into<Vec<u8>>, status: u16) -> Attack {
        Attack {
            name,
            head: request.into(),
            trickle: Vec::new(),
            status: Some(status),
            between: (Duration::ZERO, Duration::from_secs(5)),
            longest: 4096,
        }
    }

    /// A request whose last part never comes whole: let go after the
    /// server's 10 s limit, with `status` (or none).
    fn slow(name: &'static str, head: &[u8], trickle: &[u8], status: Option<u16>) -> Attack {
        Attack {
            head: head.to_vec(),
            trickle: trickle.to_vec(),
            status,
            between: (Duration::from_secs(9), Duration::from_secs(15)),
            ..Attack::whole(name, Vec::new(), 0)
        }
    }

    /// A `GET` of `path`.
    fn get(name: &'static str, path: &str, status: u16) -> Attack {
        Attack::whole(
            name,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            status,
        )
    }

    /// A `POST` of `body` to the analysis endpoint.
    fn post(name: &'static str, body: &[u8], status: u16) -> Attack {
        let length = body.len();
        let head = format!("{ANALYZE}Connection: close\r\nContent-Length: {length}\r\n\r\n");
        Attack::whole(name, [head.as_bytes(), body].concat(), status)
    }

    /// At most `bytes` of answer.
    fn at_most(self, bytes: usize) -> Attack {
        Attack {
            longest: bytes,
            ..self
        }
    }
}

/// The start of a request to the analysis endpoint, its headers open.
const ANALYZE: &str = "POST /v1/analyze HTTP/1.1\r\nHost: x\r\n";

/// The attacks: slow bodies and headers, huge headers, path traversal,
/// huge batches and bodies, deep JSON, bad positions, malformed HTTP and
/// bytes that are not UTF-8.
fn attacks() -> Vec<Attack> {
    [
        slow_attacks(),
        oversized_attacks(),
        traversal_attacks(),
        malformed_attacks(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Requests that never come whole: answered 408 once the server's 10 s
/// for a body have passed, or closed unanswered once its 10 s for the
/// headers have.
fn slow_attacks() -> Vec<Attack> {
    let announced = |length: usize| format!("{ANALYZE}Content-Length: {length}\r\n\r\n");
    let chunked = format!("{ANALYZE}Transfer-Encoding: chunked\r\n\r\n");
    let half = announced(200) + &" ".repeat(100);
    vec![
        Attack::slow(
            "slow body, a byte every 500 ms",
            announced(1000).as_bytes(),
            &[b' '; 100],
            Some(408),
        ),
        Attack::slow(
            "body announced, never sent",
            announced(100).as_bytes(),
            b"",
            Some(408),
        ),
        Attack::slow("half a body, then nothing", half.as_bytes(), b"", Some(408)),
        Attack::slow(
            "chunked body trickled",
            chunked.as_bytes(),
            &b"1\r\n \r\n".repeat(20),
            Some(408),
        ),
        Attack::slow(
            "slow headers, a byte every 500 ms",
            ANALYZE.as_bytes(),
            &[b'a'; 100],
            None,
        ),
        Attack::slow("request line never finished", b"GET /hea", b"", None),
    ]
}

/// Requests over the limits: request lines, headers, bodies, batches and
/// game histories too large (414, 431, 413), JSON nested too deep and
/// positions too long (400, with a short answer), and a long position in
/// a batch, answered in place with its start only.
fn oversized_attacks() -> Vec<Attack> {
    let huge = "a".repeat(1 << 20);
    let batch = |positions: &[String]| {
        let quoted: Vec<String> = positions.iter().map(|p| format!("{p:?}")).collect();
        let positions = quoted.join(",");
        format!(r#"{{"rules":"oware","pits":6,"positions":[{positions}]}}"#).into_bytes()
    };
    let row = vec!["1"; 10_000].join(",");
    let move_ = r#"{"position":"1,0,0,0,0,0/0,0,0,0,0,1","to_move":"north"}"#;
    let history = vec![move_; 2_001].join(",");
    let state = format!(
        r#"{{"rules":"oware","pits":6,"state":{{"position":"1,0,0,0,0,0/0,0,0,0,0,1","to_move":"south","history":[{history}]}}}}"#
    );
    vec![
        Attack::whole(
            "a header line of 1 MiB",
            format!("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {huge}\r\n\r\n"),
            431,
        ),
        Attack::whole(
            "a request line of 1 MiB",
            format!("GET /{huge} HTTP/1.1\r\nHost: x\r\n\r\n"),
            431,
        ),
        Attack::whole(
            "a request line of 100 KB",
            format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", &huge[..100_000]),
            414,
        ),
        Attack::whole(
            "10,000 header lines",
            format!(
                "GET /health HTTP/1.1\r\n{}\r\n",
                "X-Many: y\r\n".repeat(10_000)
            ),
            431,
        ),
        Attack::post(
            "a batch of 10,001 positions",
            &batch(&vec!["1,0,0,0,0,0/0,0,0,0,0,1".to_string(); 10_001]),
            413,
        ),
        Attack::post("a body of 5 MiB", &vec![b' '; 5 << 20], 413),
        Attack::post("a history of 2,001 positions", state.as_bytes(), 413),
        Attack::post("JSON arrays nested 200,000 deep", &[b'['; 200_000], 400).at_most(400),
        Attack::post(
            "JSON objects nested 100,000 deep",
            &br#"{"a":"#.repeat(100_000),
            400,
        )
        .at_most(400),
        Attack::get(
            "a position of 20,000 pits",
            &format!("/v1/oware/6/position/{row}/{row}"),
            400,
        )
        .at_most(400),
        Attack::post(
            "a batch position of 900 KB",
            &batch(&["1".repeat(900_000)]),
            200,
        )
        .at_most(600),
    ]
}

/// Paths that climb out of the routes, raw and encoded: no such route
/// (404), or no such rule set or position (400); never a file.
fn traversal_attacks() -> Vec<Attack> {
    vec![
        Attack::get("traversal: ..", "/../../../etc/passwd", 404),
        Attack::get("traversal: %2e%2e", "/%2e%2e/%2e%2e/etc/passwd", 404),
        Attack::get(
            "traversal: .. after a file",
            "/app.js/../../etc/passwd",
            404,
        ),
        Attack::get(
            "traversal: absolute URI",
            "http://elsewhere/../etc/passwd",
            404,
        ),
        Attack::get(
            "traversal: %2f in a position",
            "/v1/oware/6/position/..%2f..%2f..%2fetc%2fpasswd",
            400,
        ),
        Attack::get(
            "traversal: .. in a position",
            "/v1/oware/6/position/../../../../etc/passwd",
            400,
        ),
        Attack::get(
            "traversal: %2e%2e as the rule set",
            "/v1/%2e%2e/6/levels",
            400,
        ),
        Attack::get(
            "traversal: %2f as the rule set",
            "/v1/..%2f..%2fetc/6/levels",
            400,
        ),
    ]
}

/// Input that is not what it claims: bad positions, numbers out of range,
/// bytes that are not UTF-8, broken HTTP framing.
fn malformed_attacks() -> Vec<Attack> {
    let mut non_utf8 =
        br#"{"rules":"oware","pits":6,"positions":["1,0,0,0,0,0/0,0,0,0,0,1"]}"#.to_vec();
    non_utf8[40] = 0xff;
    let store = br#"{"rules":"oware","pits":6,"state":{"position":"1,0,0,0,0,0/0,0,0,0,0,1","to_move":"south","stores":[100001,0]}}"#;
    let position = |notation: &str| format!("/v1/oware/6/position/{notation}");
    vec![
        Attack::get(
            "a pit of 10^20 stones",
            &position("100000000000000000000,0,0,0,0,0/0,0,0,0,0,0"),
            400,
        ),
        Attack::get("a negative pit", &position("-1,0,0,0,0,0/0,0,0,0,0,1"), 400),
        Attack::get(
            "8 pits a side for 6",
            &position("1,0,0,0,0,0,0,0/0,0,0,0,0,0,0,1"),
            400,
        ),
        Attack::get(
            "bytes that are not UTF-8 in the path",
            &position("%ff%fe"),
            400,
        ),
        Attack::get("0 pits", "/v1/oware/0/levels", 400),
        Attack::get("2^70 pits", "/v1/oware/1180591620717411303424/levels", 400),
        Attack::get("an unknown rule set", "/v1/chess/6/levels", 400),
        Attack::post("bytes that are not UTF-8 in the body", &non_utf8, 400),
        Attack::post("a store of 100,001 stones", store, 400),
        Attack::whole(
            "a body announced at 2^64 bytes",
            format!("{ANALYZE}Content-Length: 18446744073709551616\r\n\r\n"),
            400,
        ),
        Attack::whole(
            "a Content-Length that is no number",
            format!("{ANALYZE}Content-Length: abc\r\n\r\n"),
            400,
        ),
        Attack::whole(
            "two Content-Lengths",
            format!("{ANALYZE}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
            400,
        ),
        Attack::whole(
            "a chunk size that is no number",
            format!("{ANALYZE}Transfer-Encoding: chunked\r\n\r\nZZZ\r\n"),
            400,
        ),
        Attack::whole("a request line of garbage", "HELLO\r\n\r\n", 400),
        Attack::whole(
            "DELETE /health",
            "DELETE /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            405,
        ),
    ]
}

/// `GET /health` from another client address answers 200 within a
/// second.
fn health_answers(address: &str) -> Outcome {
    let started = Instant::now();
    let mut stream = connect_from("127.0.0.2", address);
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .map_err(|e| format!("/health: {e}"))?;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let took = started.elapsed();
    ensure(
        reply.starts_with(b"HTTP/1.1 200") && took < Duration::from_secs(1),
        || {
            format!(
                "/health during the attack: {:?} after {took:?}",
                text(&reply)
            )
        },
    )
}

/// Runs `attack` against the server at `address`; while it is under way,
/// `/health` must answer another client within a second. Then the
/// server's answer must be the attack's status (or a close without one),
/// in its time, and short.
fn attack_case(address: &str, attack: &Attack) -> Outcome {
    let started = Instant::now();
    let mut stream = TcpStream::connect(address).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(attack.between.1 + Duration::from_secs(5)))
        .unwrap();
    // The server may answer and close before it has read everything.
    let _ = stream.write_all(&attack.head);
    let mut writer = stream.try_clone().unwrap();
    let trickle = attack.trickle.clone();
    let trickling = std::thread::spawn(move || {
        for byte in trickle {
            std::thread::sleep(TRICKLE);
            if writer.write_all(&[byte]).is_err() {
                break;
            }
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    let health = health_answers(address);
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let took = started.elapsed();
    let _ = stream.shutdown(Shutdown::Both);
    trickling.join().unwrap();
    health?;
    let reply = text(&reply);
    let status = reply
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok());
    ensure(status == attack.status, || {
        format!("answered {:.300} where {:?} was due", reply, attack.status)
    })?;
    ensure(took >= attack.between.0 && took <= attack.between.1, || {
        format!("answered after {took:?}, not within {:?}", attack.between)
    })?;
    ensure(reply.len() <= attack.longest, || {
        format!("an answer of {} bytes: {:.300}", reply.len(), reply)
    })
}

/// Hostile clients on loopback, all at once (the slow ones take the
/// server's 10 s limits, so together they take about that): each gets its
/// documented answer, and the server keeps answering another client
/// within a second while each attack is under way.
#[test]
fn hostile_http() {
    let mut cases = Cases::new("hostile http");
    let (dir, _) = crate::cli::built(6);
    let server = Served::start(dir.path());
    let address = server.base.trim_start_matches("http://").to_string();
    let running: Vec<_> = attacks()
        .into_iter()
        .map(|attack| {
            let address = address.clone();
            std::thread::spawn(move || (attack.name, caught(|| attack_case(&address, &attack))))
        })
        .collect();
    for attack in running {
        let (name, outcome) = attack.join().unwrap();
        cases.record(name, outcome);
    }
    cases.record("/health after every attack", health_answers(&address));
    cases.finish();
}

// --- Damaged scratch files ----------------------------------------------

/// The lean mode saving checkpoints often (as the kill matrix's last
/// mode), a level above it, so that its forward pass saves checkpoints of its own (with
/// the state file) before the thresholds' replace them.
const LEAN_SCRATCH: Mode = Mode {
    name: "lean scratch",
    flags: LEAN_CHECKPOINTS_OFTEN,
    top: 11,
    percents: &[],
    checkpointed_from: None,
    in_scratch: false,
};

/// How a scratch file is damaged.
#[derive(Clone, Copy, Debug)]
enum Scratch {
    /// A byte in its middle changed.
    Flipped,
    /// Cut to half its length.
    Halved,
    /// Gone.
    Removed,
}

/// Copies the tree at `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    for name in tree(from) {
        let (source, target) = (from.join(&name), to.join(&name));
        if source.is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::create_dir_all(target.parent().unwrap()).unwrap();
            fs::copy(&source, &target).unwrap();
        }
    }
}

/// A killed build's tables (`killed`, a rule-set directory) copied, its
/// scratch file `file` damaged, and the build run again: it must either
/// finish with the clean build's files or refuse in one line naming the
/// damage, after which the next run finishes with them; `verify` passes.
fn damaged_scratch_case(
    killed: &Path,
    reference: &Reference,
    file: &str,
    damage: Scratch,
) -> Outcome {
    let root = TempDir::new().unwrap();
    let tables = root.path().join(killed.file_name().unwrap());
    copy_tree(killed, &tables);
    let path = tables.join(file);
    let bytes = fs::read(&path).unwrap();
    match damage {
        Scratch::Flipped => {
            let mut changed = bytes;
            let middle = changed.len() / 2;
            changed[middle] ^= 0x5a;
            fs::write(&path, changed).unwrap();
        }
        Scratch::Halved => fs::write(&path, &bytes[..bytes.len() / 2]).unwrap(),
        Scratch::Removed => fs::remove_file(&path).unwrap(),
    }
    let args = LEAN_SCRATCH.args(root.path());
    let rerun: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_within(&rerun, b"", Duration::from_secs(120))?;
    if !out.status.success() {
        refused(&out, 1)?;
        ensure(text(&out.stderr).contains("is damaged"), || {
            format!("not a damaged scratch file: {}", text(&out.stderr))
        })?;
        levels_are_the_references(&tables, &reference.tables)?;
        let out = run_within(&rerun, b"", Duration::from_secs(120))?;
        exits_cleanly(&out, &[0])?;
    }
    same_tables(&tables, &reference.tables)?;
    verified(root.path(), LEAN_SCRATCH.top)
}

/// The scratch files of a killed lean build (lists, the state file, the
/// checkpoint) damaged one at a time before it resumes: inside the
/// forward pass, and among the thresholds. Every file is flipped and
/// halved where there are few, a spread of them where there are many, and
/// a few are removed.
#[test]
fn damaged_scratch_files() {
    let mut cases = Cases::new("damaged scratch files");
    let reference = LEAN_SCRATCH.reference();
    let top = LEAN_SCRATCH.top;
    for percent in [30.0, 90.0] {
        let killed = TempDir::new().unwrap();
        let tables = killed.path().join(reference.tables.file_name().unwrap());
        copy_levels(&reference.tables, &tables, top);
        let point = StopPoint {
            level: top,
            percent,
        };
        if let Err(why) = stopped_at(&LEAN_SCRATCH.args(killed.path()), point, &["KILL"]) {
            cases.record(format!("killed at level {top} {percent}%"), Err(why));
            continue;
        }
        let scratch: Vec<String> = tree(&tables)
            .into_iter()
            .filter(|name| name.starts_with("lean/") || name.starts_with("checkpoints/"))
            .filter(|name| tables.join(name).is_file())
            .filter(|name| fs::metadata(tables.join(name)).unwrap().len() > 0)
            .collect();
        let spread = scratch.len().div_ceil(5).max(1);
        let chosen = scratch.iter().enumerate().filter(|&(k, name)| {
            k % spread == 0 || name.ends_with("state") || name.ends_with(".ckpt")
        });
        for (k, name) in chosen {
            let damages: &[Scratch] = if k % (2 * spread) == 0 {
                &[Scratch::Flipped, Scratch::Halved, Scratch::Removed]
            } else {
                &[Scratch::Flipped, Scratch::Halved]
            };
            for &damage in damages {
                cases.run(
                    format!("killed at level {top} {percent}%: {name} {damage:?}"),
                    || damaged_scratch_case(&tables, &reference, name, damage),
                );
            }
        }
    }
    cases.finish();
}

// --- Out of room ---------------------------------------------------------

/// The in-memory mode saving checkpoints often, so that a checkpoint is
/// what runs out of room.
const IN_MEMORY_CHECKPOINTS: Mode = Mode {
    name: "in memory, checkpoints",
    flags: &["--checkpoint-minutes", "0.0005"],
    top: 11,
    percents: &[],
    checkpointed_from: None,
    in_scratch: false,
};

/// Levels every out-of-room build finds already there (copied from the
/// clean build): the limits bite above them.
const PRESENT_BELOW: u32 = 8;

/// How a build is kept short of room.
#[derive(Clone, Copy)]
enum Room {
    /// A file-size limit of this many KiB (RLIMIT_FSIZE, which fails a
    /// write as a full disk does; SIGXFSZ ignored so the write fails
    /// instead of killing).
    FileSize(u64),
    /// A tmpfs of this many KiB holding the table directory: a real full
    /// disk, `ENOSPC`.
    Tmpfs(u64),
}

impl Room {
    /// What the one error line must name.
    fn error(self) -> &'static str {
        match self {
            Room::FileSize(_) => "File too large",
            Room::Tmpfs(_) => "No space left on device",
        }
    }
}

/// A tmpfs mounted on a new directory, unmounted when dropped.
struct SmallDisk {
    dir: TempDir,
}

impl SmallDisk {
    /// Mounts a tmpfs of `kib` KiB, or says why this process cannot (not
    /// root, no `mount`, a container without the right to mount).
    fn mount(kib: u64) -> Result<SmallDisk, String> {
        let dir = TempDir::new().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!("mount -t tmpfs: {}", text(&out.stderr).trim()));
        }
        Ok(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Grows the tmpfs to `kib` KiB, keeping its files.
    fn resize(&self, kib: u64) -> Outcome {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(self.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        ensure(out.status.success(), || {
            format!("cannot grow the tmpfs: {}", text(&out.stderr))
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A build of `mode` kept short of `room`: it must fail with one line
/// naming the failed write, and not reach its top level. It must leave no
/// partial file: nothing but the levels it finished (the clean build's),
/// its lock, and a checkpoint it saved whole before (with its lean lists),
/// which the same build, given room, must then resume from. That build
/// must finish with exactly the clean build's files, and `verify` pass.
fn out_of_room_case(mode: &Mode, reference: &Reference, room: Room) -> Outcome {
    let (root, disk) = match room {
        Room::FileSize(_) => (TempDir::new().unwrap(), None),
        Room::Tmpfs(kib) => {
            let disk = SmallDisk::mount(kib)?;
            (TempDir::new_in(disk.path()).unwrap(), Some(disk))
        }
    };
    let tables = root.path().join(reference.tables.file_name().unwrap());
    copy_levels(&reference.tables, &tables, PRESENT_BELOW);
    let args = mode.args(root.path());
    let mut command = match room {
        Room::FileSize(kib) => {
            let mut command = Command::new("sh");
            command
                .args(["-c", r#"trap '' XFSZ; exec prlimit --fsize="$0" -- "$@""#])
                .arg((kib << 10).to_string())
                .arg(env!("CARGO_BIN_EXE_mancala-tb"));
            command
        }
        Room::Tmpfs(_) => binary(),
    };
    let out = finished_within(command.args(&args), b"", Duration::from_secs(60))?;
    refused(&out, 1)?;
    ensure(text(&out.stderr).contains(room.error()), || {
        format!("not the write that failed: {}", text(&out.stderr))
    })?;
    ensure(!tables.join(level_file_name(mode.top)).exists(), || {
        "the limit did not bite".to_string()
    })?;
    levels_are_the_references(&tables, &reference.tables)?;
    let levels = level_files(&tables);
    let left: Vec<String> = tree(&tables)
        .into_iter()
        .filter(|name| tables.join(name).is_file())
        .filter(|name| name != "build.lock" && !levels.contains_key(name))
        .collect();
    let checkpointed = left
        .iter()
        .any(|name| name.starts_with("checkpoints/") && name.ends_with(".ckpt"));
    ensure(
        (left.is_empty() || checkpointed) && !left.iter().any(|name| name.ends_with(".tmp")),
        || format!("left behind: {left:?}"),
    )?;
    if let Some(disk) = &disk {
        disk.resize(64 << 10)?;
    }
    let rerun: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_within(&rerun, b"", Duration::from_secs(120))?;
    exits_cleanly(&out, &[0])?;
    ensure(
        !checkpointed || text(&out.stdout).contains("went on from a checkpoint"),
        || format!("a checkpoint was left but not resumed from: {left:?}"),
    )?;
    same_tables(&tables, &reference.tables)?;
    verified(root.path(), PRESENT_BELOW)
}

/// Builds that run out of room at several sizes in every mode: their
/// table files, lean lists and checkpoints each hit the limit somewhere.
/// First under file-size limits, which any user can set; then on a real
/// full disk, a small tmpfs, where this process may mount one (root, as in
/// CI), skipped with a loud line otherwise.
#[test]
fn full_disk() {
    let mut cases = Cases::new("full disk");
    let limits: [(&Mode, &[u64], &[u64]); 7] = [
        (&MODES[0], &[16, 64, 200], &[100, 400]),
        (&IN_MEMORY_CHECKPOINTS, &[300], &[500]),
        (&MODES[1], &[24, 100], &[120, 300]),
        (&MODES[5], &[150], &[300]),
        (&MODES[2], &[16, 64], &[100]),
        (&MODES[3], &[64], &[]),
        (&MODES[4], &[16, 64], &[100]),
    ];
    let tmpfs = SmallDisk::mount(64).map(drop);
    if let Err(why) = &tmpfs {
        println!("SKIPPED (full tmpfs): cannot mount a tmpfs here: {why}");
    }
    for (mode, file_sizes, disks) in limits {
        let reference = mode.reference();
        for &kib in file_sizes {
            cases.run(format!("{}: files of at most {kib} KiB", mode.name), || {
                out_of_room_case(mode, &reference, Room::FileSize(kib))
            });
        }
        for &kib in disks.iter().filter(|_| tmpfs.is_ok()) {
            cases.run(format!("{}: a full disk of {kib} KiB", mode.name), || {
                out_of_room_case(mode, &reference, Room::Tmpfs(kib))
            });
        }
    }
    cases.finish();
}

// --- Bad command lines ---------------------------------------------------

/// Positions that are no position: each is refused in one line (exit 1),
/// showing at most the start of what was typed.
const BAD_NOTATIONS: [&str; 21] = [
    "",
    " ",
    "1,2",
    "1,0,0,0,0,0",
    "1,0,0,0,0,0/0,0,0,0,0",
    "1,0,0,0,0,0/0,0,0,0,0,0,0",
    "a,b,c,d,e,f/0,0,0,0,0,0",
    "1;0;0;0;0;0/0;0;0;0;0;1",
    "99999999999999999999,0,0,0,0,0/0,0,0,0,0,1",
    "4294967296,0,0,0,0,0/0,0,0,0,0,1",
    "1.5,0,0,0,0,0/0,0,0,0,0,1",
    "\u{661},\u{660},\u{660},\u{660},\u{660},\u{660}/\u{660},\u{660},\u{660},\u{660},\u{660},\u{661}",
    "1,0,0,0,0,0/0,0,0,0,0,1/1",
    "/",
    "1,,0,0,0,0/0,0,0,0,0,1",
    "0x1,0,0,0,0,0/0,0,0,0,0,1",
    "1e3,0,0,0,0,0/0,0,0,0,0,1",
    "+1,0,0,0,0,0/0,0,0,0,0,1",
    "255,0,0,0,0,0/0,0,0,0,0,0",
    "1,0,0,0,0,0 0,0,0,0,0,1",
    "1,0,0,0,0,0/0,0,0,0,0,1\n2,0,0,0,0,0/0,0,0,0,0,1",
];

/// Options out of range or of the wrong kind, with the exit code each
/// must give: 2 for what the argument parser refuses, 1 for what the
/// command finds wrong. `T` stands for a table directory.
const BAD_OPTIONS: [(&[&str], i32); 32] = [
    (&["query", "--dir", "T", "-1,0,0,0,0,0/0,0,0,0,0,1"], 2),
    (&["query", "--dir", "T", "--pits", "0", "1/1"], 1),
    (&["query", "--dir", "T", "--pits", "9", "1/1"], 1),
    (
        &[
            "query",
            "--dir",
            "T",
            "--pits",
            "99999999999999999999",
            "1/1",
        ],
        2,
    ),
    (
        &[
            "query", "--dir", "T", "--rules", "kalah", "--pits", "9", "1/1",
        ],
        1,
    ),
    (
        &[
            "query",
            "--dir",
            "T",
            "--cache-mib=-1",
            "1,0,0,0,0,0/0,0,0,0,0,1",
        ],
        2,
    ),
    (
        &[
            "query",
            "--dir",
            "T",
            "--captured",
            "1,2,3",
            "1,0,0,0,0,0/0,0,0,0,0,1",
        ],
        2,
    ),
    (
        &[
            "query",
            "--dir",
            "T",
            "--captured",
            "99999999999,0",
            "1,0,0,0,0,0/0,0,0,0,0,1",
        ],
        2,
    ),
    (&["query", "--dir"], 2),
    (&["build", "--dir", "T", "--stones", "-1"], 2),
    (&["build", "--dir", "T", "--stones", "4294967296"], 2),
    (&["build", "--dir", "T", "--stones", "128"], 1),
    (&["build", "--dir", "T", "--stones", "1e3"], 2),
    (
        &["build", "--dir", "T", "--stones", "3", "--stones", "4"],
        2,
    ),
    (
        &["build", "--dir", "T", "--stones", "3", "--threads", "0"],
        2,
    ),
    (
        &["build", "--dir", "T", "--stones", "3", "--block-size", "0"],
        1,
    ),
    (
        &[
            "build",
            "--dir",
            "T",
            "--stones",
            "3",
            "--block-size",
            "16385",
        ],
        1,
    ),
    (
        &["build", "--dir", "T", "--stones", "3", "--max-memory", "0"],
        1,
    ),
    (
        &[
            "build",
            "--dir",
            "T",
            "--stones",
            "3",
            "--checkpoint-minutes=-1",
        ],
        2,
    ),
    (
        &[
            "build",
            "--dir",
            "T",
            "--stones",
            "3",
            "--checkpoint-minutes",
            "NaN",
        ],
        2,
    ),
    (
        &[
            "build",
            "--dir",
            "T",
            "--stones",
            "3",
            "--progress-every",
            "inf",
        ],
        2,
    ),
    (
        &["build", "--dir", "T", "--stones", "3", "--rules", "chess"],
        2,
    ),
    (
        &["build", "--dir", "T", "--stones", "3", "--cycles", "odd"],
        2,
    ),
    (&["verify", "--dir", "T", "--from", "4294967296"], 2),
    (&["verify", "--dir", "T", "--to=-1"], 2),
    (&["solve", "--dir", "T", "--seeds", "200"], 1),
    (
        &["solve", "--dir", "T", "--seeds", "1", "--seconds", "0"],
        2,
    ),
    (&["play", "--dir", "T", "--side", "east"], 1),
    (&["play", "--dir", "T", "--position", "1,2"], 1),
    (
        &[
            "export",
            "--dir",
            "T",
            "--format",
            "xyz",
            "--out",
            "/nonexistent",
        ],
        2,
    ),
    (&["serve", "--dir", "T", "--addr", "nonsense"], 1),
    (&["serve", "--dir", "T", "--addr", "127.0.0.1:99999"], 1),
];

const SUBCOMMANDS: [&str; 9] = [
    "build", "query", "info", "verify", "export", "import", "solve", "play", "serve",
];

/// `args` with `T` replaced by `dir`.
fn with_dir<'a>(args: &[&'a str], dir: &'a str) -> Vec<&'a str> {
    args.iter()
        .map(|a| if *a == "T" { dir } else { a })
        .collect()
}

/// `query -` answers every line of `input` (`lines` of them) with one
/// error line, in valid UTF-8, that shows at most 60 characters of it, and
/// fails.
fn answers_each_line_briefly(dir: &str, input: &[u8], lines: usize) -> Outcome {
    let out = run_within(
        &["query", "--dir", dir, "-"],
        input,
        Duration::from_secs(10),
    )?;
    exits_cleanly(&out, &[1])?;
    ensure(out.stderr.is_empty(), || {
        format!("stderr: {:.300}", text(&out.stderr))
    })?;
    let said = String::from_utf8(out.stdout).map_err(|_| "stdout is not UTF-8".to_string())?;
    let answers: Vec<&str> = said.lines().collect();
    ensure(answers.len() == lines, || {
        format!(
            "{} answer lines for {lines} input lines: {said:.300}",
            answers.len()
        )
    })?;
    for answer in answers {
        let shown = answer.split(" error: ").next().unwrap_or_default();
        ensure(
            answer.contains(" error: ") && shown.chars().count() <= 61 && answer.len() <= 400,
            || format!("an answer of {} bytes: {answer:.500}", answer.len()),
        )?;
    }
    Ok(())
}

/// The binary with `args` and its stdout a pipe whose reader is gone (as
/// `mancala-tb … | head -c 1` once head has its byte): it must stop with
/// exit code 1, without a panic and with at most one line on stderr.
fn stdout_closed(args: &[&str], input: &[u8]) -> Outcome {
    let (reader, writer) = std::io::pipe().map_err(|e| e.to_string())?;
    drop(reader);
    let mut command = binary();
    command.args(args).stdout(writer).stderr(Stdio::piped());
    let out = crate::ended_within(&mut command, input, Duration::from_secs(10))?;
    exits_cleanly(&out, &[1])?;
    ensure(text(&out.stderr).lines().count() <= 1, || {
        format!("stderr: {:.300}", text(&out.stderr))
    })
}

/// Absurd command lines: positions that are none, options out of range,
/// unknown flags, `query -` lines far too long or not text, and a stdout
/// closed under every command that prints.
#[test]
fn bad_input() {
    let mut cases = Cases::new("bad input");
    let (tables, dir) = crate::cli::built(6);
    let dir = dir.as_str();
    for notation in BAD_NOTATIONS {
        cases.run(format!("query {notation:.40?}"), || {
            refused(
                &run_within(
                    &["query", "--dir", dir, notation],
                    b"",
                    Duration::from_secs(5),
                )?,
                1,
            )
        });
    }
    let long: String = "\u{e9}".repeat(5000);
    cases.run("query of 5,000 two-byte characters", || {
        refused(
            &run_within(&["query", "--dir", dir, &long], b"", Duration::from_secs(5))?,
            1,
        )
    });
    for (args, code) in BAD_OPTIONS {
        let args = with_dir(args, dir);
        cases.run(args.join(" "), || {
            refused(&run_within(&args, b"", Duration::from_secs(5))?, code)
        });
    }
    for subcommand in SUBCOMMANDS {
        cases.run(format!("{subcommand} --bogus"), || {
            refused(
                &run_within(&[subcommand, "--bogus"], b"", Duration::from_secs(5))?,
                2,
            )
        });
    }
    let broken = format!("{dir}/a\nline break");
    for args in [["info", "--dir", &broken], ["play", "--side", "so\nuth"]] {
        cases.run(format!("{args:?}"), || {
            refused(&run_within(&args, b"", Duration::from_secs(5))?, 1)
        });
    }
    cases.run("an argument that is not UTF-8", || {
        use std::os::unix::ffi::OsStrExt;
        let bytes = std::ffi::OsStr::from_bytes(b"1,0,0,0,0,0/0,0,0,0,0,\xff");
        let out = finished_within(
            binary().args(["query", "--dir", dir]).arg(bytes),
            b"",
            Duration::from_secs(5),
        )?;
        refused(&out, 2)
    });

    let mut lines: Vec<(&str, Vec<u8>, usize)> = vec![
        (
            "a line of 4,097 bytes",
            [vec![b'1'; 4097], b"\n".to_vec()].concat(),
            1,
        ),
        (
            "a line of 4,096 bytes",
            [vec![b'1'; 4096], b"\n".to_vec()].concat(),
            1,
        ),
        (
            "1 MiB of two-byte characters",
            "\u{e9}".repeat(1 << 19).into_bytes(),
            1,
        ),
        ("1 MiB that is not UTF-8", vec![0xff; 1 << 20], 1),
        ("1 MiB of NUL bytes, no line end", vec![0; 1 << 20], 1),
        ("100,000 empty lines", vec![b'\n'; 100_000], 100_000),
    ];
    for (name, input, count) in lines.drain(..) {
        cases.run(format!("query -: {name}"), || {
            answers_each_line_briefly(dir, &input, count)
        });
    }

    let empty = TempDir::new().unwrap();
    let fresh = empty.path().to_str().unwrap();
    let position = "1,0,3,0,2,0/0,2,0,0,0,0";
    let batch = format!("{position}\n").repeat(1000);
    let closed: [(&str, Vec<&str>, &[u8]); 10] = [
        ("query", vec!["query", "--dir", dir, position], b""),
        (
            "query --json",
            vec!["query", "--json", "--dir", dir, position],
            b"",
        ),
        (
            "query -",
            vec!["query", "--dir", dir, "-"],
            batch.as_bytes(),
        ),
        ("info", vec!["info", "--dir", dir], b""),
        ("info --json", vec!["info", "--json", "--dir", dir], b""),
        ("verify", vec!["verify", "--dir", dir], b""),
        ("build", vec!["build", "--stones", "6", "--dir", fresh], b""),
        (
            "solve",
            vec!["solve", "--seeds", "1", "--seconds", "0.2", "--dir", dir],
            b"",
        ),
        (
            "play",
            vec!["play", "--dir", dir, "--position", position],
            b"a\n",
        ),
        (
            "serve",
            vec!["serve", "--addr", "127.0.0.1:0", "--dir", dir],
            b"",
        ),
    ];
    for (name, args, input) in closed {
        cases.run(format!("{name} with its stdout closed"), || {
            stdout_closed(&args, input)
        });
    }
    drop(tables);
    cases.finish();
}
