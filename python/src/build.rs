//! `mancala_tb.build`: tables built from Python with the generator the
//! command line runs, the same files, with a progress display (or a
//! callback) and Ctrl-C stopping the build cleanly.
//!
//! The build runs on a thread of its own while the caller's thread waits
//! with the GIL released, waking every [`TICK`] to report progress and to
//! let Python see a pending signal: on `KeyboardInterrupt` the build is
//! asked to stop ([`BuildOptions::interrupt`]), which it does at its next
//! check without writing a partial file, and the exception is raised once
//! it has.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use mancala_core::Cycles;
use mancala_format::Encoding;
use mancala_gen::{BuildError, BuildObserver, BuildOptions, LevelReport, Progress};

use crate::errors::{core_error, with_hint, CorruptedTableError};
use crate::rules::rules_arg;

/// How often the waiting thread reports progress and looks for signals.
const TICK: Duration = Duration::from_millis(100);

/// Builds the tables of levels `0..=stones` under `directory` (files in its
/// subdirectory named by the rule set), reusing valid levels already
/// there unless `force`. `rules`, `pits` and `empty_capture` are as for
/// `open_tablebase`; `cycles` "even" or "forced"; `encoding` "full" (the
/// fastest probes) or "compact" (smaller files, slower probes);
/// `top_only` builds level `stones` and only the levels it needs (in the
/// Oware family, not the level just below it).
/// `progress`: True (the default) shows a progress line on stderr, False
/// nothing, a
/// callable is called as `progress(done, total, level)` (work units of the
/// whole build). Ctrl-C stops the build, keeping the levels written; the
/// same call then resumes. Returns one report per level.
#[pyfunction]
#[pyo3(signature = (directory, stones, rules = None, pits = 6, empty_capture = true, cycles = "even", encoding = "full", force = false, progress = None, top_only = false, depth = false))]
#[allow(clippy::too_many_arguments)]
pub fn build(
    py: Python<'_>,
    directory: PathBuf,
    stones: u32,
    rules: Option<&Bound<'_, PyAny>>,
    pits: usize,
    empty_capture: bool,
    cycles: &str,
    encoding: &str,
    force: bool,
    progress: Option<&Bound<'_, PyAny>>,
    top_only: bool,
    depth: bool,
) -> PyResult<Vec<PyLevelReport>> {
    let rules = rules_arg(rules, pits, empty_capture)?;
    let mut options = BuildOptions::new(directory, rules, stones);
    options.cycles = Cycles::from_name(cycles).map_err(core_error)?;
    options.encoding = Encoding::from_cli_name(encoding).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown encoding {encoding:?} (expected \"full\" or \"compact\")"
        ))
    })?;
    options.force = force;
    options.top_only = top_only;
    options.depths = depth;
    let stop = Arc::new(AtomicBool::new(false));
    options.interrupt = Some(stop.clone());
    options.validate().map_err(build_error)?;
    let mut display = Display::of(py, progress)?;
    let observer = Watched::default();
    let (done_tx, done_rx) = mpsc::channel();
    let (result, interrupted) = std::thread::scope(|scope| {
        let (options, observer) = (&options, &observer);
        scope.spawn(move || {
            let result = mancala_gen::build(options, observer);
            // The receiver lives until this thread is joined.
            let _ = done_tx.send(result);
        });
        let mut interrupted: Option<PyErr> = None;
        // A receiver is not `Sync`: it goes into each wait and comes back.
        let mut receiver = done_rx;
        loop {
            let (back, received) = py.detach(move || {
                let received = receiver.recv_timeout(TICK);
                (receiver, received)
            });
            receiver = back;
            match received {
                Ok(result) => return (Ok(result), interrupted),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let err = PyRuntimeError::new_err("the build thread failed");
                    return (Err(err), interrupted);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if interrupted.is_some() {
                continue;
            }
            let shown = display.show(py, observer);
            if let Err(e) = shown.and_then(|_| py.check_signals()) {
                stop.store(true, Relaxed);
                interrupted = Some(e);
            }
        }
    });
    display.finish(py, &observer)?;
    if let Some(e) = interrupted {
        return Err(e);
    }
    let reports = result?.map_err(build_error)?;
    Ok(reports.iter().map(PyLevelReport::from).collect())
}

/// What the build has done so far, as the waiting thread reads it.
#[derive(Default)]
struct Watched {
    total: AtomicU64,
    done: AtomicU64,
    level: AtomicU32,
}

impl Progress for Watched {
    fn started(&self, work: u64) {
        self.total.store(work, Relaxed);
    }

    fn level_started(&self, level: u32, _positions: u64, _work: u64) {
        self.level.store(level, Relaxed);
    }

    fn advanced(&self, units: u64) {
        self.done.fetch_add(units, Relaxed);
    }
}

impl BuildObserver for Watched {}

/// Where progress goes.
enum Display<'py> {
    None,
    /// A line on `sys.stderr`: rewritten in place on a terminal, one line
    /// a level elsewhere.
    Line {
        terminal: bool,
        /// The last text shown.
        shown: Option<String>,
    },
    Callback(Bound<'py, PyAny>),
}

impl<'py> Display<'py> {
    fn of(py: Python<'py>, progress: Option<&Bound<'py, PyAny>>) -> PyResult<Display<'py>> {
        match progress {
            Some(progress) if progress.is_callable() => Ok(Display::Callback(progress.clone())),
            Some(progress) if !progress.is_truthy()? => Ok(Display::None),
            _ => Ok(Display::Line {
                terminal: stderr(py)?.call_method0("isatty")?.is_truthy()?,
                shown: None,
            }),
        }
    }

    fn show(&mut self, py: Python<'py>, watched: &Watched) -> PyResult<()> {
        let (done, total) = (watched.done.load(Relaxed), watched.total.load(Relaxed));
        let level = watched.level.load(Relaxed);
        match self {
            Display::None => Ok(()),
            Display::Callback(callback) => callback.call1((done, total, level)).map(drop),
            Display::Line { terminal, shown } => {
                let text = if *terminal {
                    let percent = if total == 0 {
                        100.0
                    } else {
                        100.0 * done as f64 / total as f64
                    };
                    format!("\rbuilding: level {level}, {percent:5.1}% of the work done")
                } else {
                    format!("building: level {level}\n")
                };
                if shown.as_ref() != Some(&text) {
                    write_stderr(py, &text)?;
                    *shown = Some(text);
                }
                Ok(())
            }
        }
    }

    fn finish(&mut self, py: Python<'py>, watched: &Watched) -> PyResult<()> {
        match self {
            Display::Line {
                terminal: true,
                shown: Some(_),
            } => {
                self.show(py, watched)?;
                write_stderr(py, "\n")
            }
            Display::Callback(_) => self.show(py, watched),
            _ => Ok(()),
        }
    }
}

fn stderr(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("sys")?.getattr("stderr")
}

fn write_stderr(py: Python<'_>, text: &str) -> PyResult<()> {
    let stderr = stderr(py)?;
    stderr.call_method1("write", (text,))?;
    stderr.call_method0("flush").map(drop)
}

/// A build's error as the exception a Python caller expects, with the
/// call that answers it where there is one.
fn build_error(error: BuildError) -> PyErr {
    let message = error.to_string();
    match error {
        BuildError::Io { .. } | BuildError::ScratchDamaged { .. } => PyOSError::new_err(message),
        BuildError::Format(format) => CorruptedTableError::new_err(with_hint(message, &format)),
        BuildError::Mismatch { .. } => PyValueError::new_err(format!(
            "{message}; build with the encoding these tables were built with to extend them, or with force=True to rebuild them"
        )),
        BuildError::Locked { .. } => PyRuntimeError::new_err(format!(
            "{message}; wait for it to end, then call build again"
        )),
        BuildError::TooManyStones { .. }
        | BuildError::BlockSize { .. }
        | BuildError::NotAcrossRanks { .. } => PyValueError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// What the build did with one level.
#[pyclass(name = "LevelReport", module = "mancala_tb", frozen, get_all)]
pub struct PyLevelReport {
    /// Stones on the board.
    level: u32,
    /// Positions in the level.
    positions: u64,
    /// Seconds spent solving and writing it (0 if reused).
    seconds: f64,
    /// Bytes of its file.
    bytes: u64,
    /// Whether a valid file was there already and was kept.
    reused: bool,
    /// The share of the level (0 to 1) an earlier, interrupted build had
    /// done when this one went on from its checkpoint; `seconds` is then
    /// this build's part only.
    resumed: f64,
}

impl From<&LevelReport> for PyLevelReport {
    fn from(r: &LevelReport) -> Self {
        PyLevelReport {
            level: r.level,
            positions: r.positions,
            seconds: r.seconds,
            bytes: r.bytes,
            reused: r.reused,
            resumed: r.resumed,
        }
    }
}

#[pymethods]
impl PyLevelReport {
    fn __repr__(&self) -> String {
        format!(
            "LevelReport(level={}, positions={}, seconds={:.3}, bytes={}, reused={}, resumed={:.3})",
            self.level,
            self.positions,
            self.seconds,
            self.bytes,
            crate::engine::python_bool(self.reused),
            self.resumed
        )
    }
}
