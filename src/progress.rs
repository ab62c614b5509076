//! The command line's progress display for every long job (`build`,
//! `verify`, `export`, `import`): bars with ETAs on a terminal, a progress
//! line now and then elsewhere, and lines printed with the bars out of the
//! way. It implements the libraries' one progress trait, so that any job
//! reports to it the same way.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{HumanDuration, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The share of a bar done before a progress line gives its ETA.
const MIN_SHARE_FOR_ETA: f64 = 0.005;

/// Progress bars with ETAs on stderr, one for the level being solved and
/// one for the whole build, hidden when stderr is not a terminal (where a
/// build may write a progress line now and then instead:
/// [`Progress::with_lines`]); and lines on stdout printed with the bars
/// out of the way ([`Progress::print`]: a build's summary row per level,
/// `cmd/build.rs`). An export or a comparison of VU files shows the
/// level's bar only.
pub(crate) struct Progress {
    bars: MultiProgress,
    total: Mutex<Option<ProgressBar>>,
    level: Mutex<Option<ProgressBar>>,
    /// Units of each bar done by an earlier run ([`mancala_core::Progress::resumed`]),
    /// which its ETA leaves out of the rate.
    total_resumed: AtomicU64,
    level_resumed: AtomicU64,
    /// What the whole run's bar is called.
    total_label: String,
    terminal: bool,
    lines: Option<Lines>,
}

/// Progress lines for a stderr that is not a terminal: at most one every
/// `every`.
struct Lines {
    every: Duration,
    last: Mutex<Instant>,
}

impl Progress {
    pub(crate) fn new() -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let target = if terminal {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Progress {
            bars: MultiProgress::with_draw_target(target),
            total: Mutex::new(None),
            level: Mutex::new(None),
            total_resumed: AtomicU64::new(0),
            level_resumed: AtomicU64::new(0),
            total_label: "all levels".to_string(),
            terminal,
            lines: None,
        }
    }

    /// This progress, its whole run's bar called `label`: a command that
    /// goes over several rule sets, one run each, names the one its
    /// overall share and ETA are of.
    pub(crate) fn with_total_label(mut self, label: String) -> Progress {
        self.total_label = label;
        self
    }

    /// This progress, writing a line to stderr at most once every `every`
    /// (if given) when stderr is not a terminal: the bars' shares and
    /// ETAs, which a build running in the background otherwise keeps to
    /// itself.
    pub(crate) fn with_lines(mut self, every: Option<Duration>) -> Progress {
        self.lines = every.filter(|_| !self.terminal).map(|every| Lines {
            every,
            last: Mutex::new(Instant::now()),
        });
        self
    }

    /// Whether the bars are kept: shown, or told in lines.
    fn tracked(&self) -> bool {
        self.terminal || self.lines.is_some()
    }

    /// Writes a progress line if one is due.
    fn maybe_write_line(&self) {
        let Some(lines) = &self.lines else { return };
        let Ok(mut last) = lines.last.try_lock() else {
            return;
        };
        if last.elapsed() < lines.every {
            return;
        }
        *last = Instant::now();
        // Each bar as its name, the share done and its ETA.
        let parts: Vec<String> = [
            (&self.level, &self.level_resumed),
            (&self.total, &self.total_resumed),
        ]
        .into_iter()
        .filter_map(|(slot, resumed)| {
            Progress::bar(slot).as_ref().map(|bar| {
                let length = bar.length().unwrap_or(1).max(1) as f64;
                let done = bar.position() as f64 / length;
                // From the average rate since the start: a level's
                // passes go at different speeds, so the recent rate
                // (the bar's own estimate) swings from minutes to
                // hours; and the first few units say too little. Units
                // an earlier run did are not this run's rate.
                let fresh = done - resumed.load(Relaxed) as f64 / length;
                let eta = if fresh < MIN_SHARE_FOR_ETA {
                    "not known yet".to_string()
                } else {
                    let left = bar.elapsed().as_secs_f64() * (1.0 - done) / fresh;
                    HumanDuration(Duration::from_secs_f64(left)).to_string()
                };
                format!(
                    "{} {:.1}%, ETA {eta}",
                    bar.message().trim_end(),
                    100.0 * done
                )
            })
        })
        .collect();
        if parts.is_empty() {
            return;
        }
        // Best effort: a closed stderr loses the line, the build goes on.
        let _ = writeln!(std::io::stderr(), "progress: {}", parts.join("; "));
    }

    /// Writes `lines` to stdout with the bars out of the way, after the
    /// level's bar is taken off (best effort: a closed stdout only loses
    /// the lines, the work goes on).
    pub(crate) fn print(&self, lines: &str) {
        self.clear(&self.level);
        self.bars.suspend(|| {
            let _ = writeln!(std::io::stdout(), "{lines}");
        });
    }

    /// Takes the bars off the terminal.
    pub(crate) fn finish(&self) {
        self.clear(&self.level);
        self.clear(&self.total);
    }

    /// Takes the bar in `slot`, if any, off the terminal.
    fn clear(&self, slot: &Mutex<Option<ProgressBar>>) {
        if let Some(bar) = Progress::bar(slot).take() {
            bar.finish_and_clear();
            self.bars.remove(&bar);
        }
    }

    fn bar(slot: &Mutex<Option<ProgressBar>>) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn styled(&self, work: u64, message: String) -> ProgressBar {
        let bar = self.bars.add(ProgressBar::new(work));
        bar.set_style(
            ProgressStyle::with_template("{msg:<28} [{bar:40}] {percent:>3}%, ETA {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(message);
        bar
    }
}

/// One display for every long job: builds, verifications, exports and
/// comparisons.
impl mancala_core::Progress for Progress {
    fn started(&self, work: u64) {
        if self.tracked() && work > 0 {
            *Progress::bar(&self.total) = Some(self.styled(work, self.total_label.clone()));
        }
    }

    fn level_started(&self, level: u32, positions: u64, work: u64) {
        if !self.tracked() {
            return;
        }
        self.clear(&self.level);
        let message = format!("level {level:>3} ({positions} positions)");
        *Progress::bar(&self.level) = Some(self.styled(work, message));
        self.level_resumed.store(0, Relaxed);
        // The whole build's clock starts with its first level solved: the
        // levels reused before it (checked, decoded, held) would otherwise
        // count as slow work and stretch its ETA.
        if let Some(total) = &*Progress::bar(&self.total) {
            if total.position() == 0 {
                total.reset_elapsed();
            }
        }
    }

    fn advanced(&self, units: u64) {
        for slot in [&self.level, &self.total] {
            if let Some(bar) = &*Progress::bar(slot) {
                bar.inc(units);
            }
        }
        self.maybe_write_line();
    }

    fn resumed(&self, units: u64) {
        for (slot, resumed) in [
            (&self.level, &self.level_resumed),
            (&self.total, &self.total_resumed),
        ] {
            if let Some(bar) = &*Progress::bar(slot) {
                bar.inc(units);
                bar.reset_eta();
                resumed.fetch_add(units, Relaxed);
            }
        }
    }
}
