//! `mancala-tb build`: solve levels 0..=N and write their tables.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{HumanDuration, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mancala_core::{Cycles, LevelIndex};
use mancala_format::Encoding;
use mancala_gen::{BuildObserver, BuildOptions, LevelReport, MemoryMode};

use crate::args::{
    parse_cycles, parse_encoding, parse_memory, parse_mib, parse_minutes, parse_threads,
    ProgressArgs, RulesArgs,
};
use crate::cluster::Job;
use crate::levels::level_ranges;
use crate::plot::profile::LevelCost;
use crate::plot::{self, SvgPath};
use crate::signal::stop_on_signal;

#[derive(Args)]
pub struct BuildArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Build every level up to this many stones on the board.
    #[arg(long)]
    stones: u32,
    /// Build level --stones and only the levels it needs: those its moves
    /// can reach, and theirs. In the Oware family captures take 2 stones
    /// or more, so the level just below it is skipped: `--stones 36
    /// --top-only` answers the 3-seed start without building level 35.
    /// Queries answer every level built.
    #[arg(long)]
    top_only: bool,
    /// Which tables: `even` (one value, endless play an even split) or
    /// `forced` (what each side can be sure to win without repetitions).
    #[arg(long, default_value = "even", value_parser = parse_cycles)]
    cycles: Cycles,
    /// Also write each level's depth table (`depth-NNN.mtb`): how many
    /// plies each position is from realizing its value when both sides
    /// keep it, or with `--cycles forced` the mover his bound
    /// (docs/RULES.md, "Depth to conversion"). Levels missing theirs are
    /// solved again, whole (no checkpoints).
    #[arg(long)]
    depth: bool,
    /// Table directory (a subdirectory per rule set is created in it).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Worker threads (default: one per core; at most 8 per core).
    #[arg(long, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Rebuild levels whose files are already present and valid.
    #[arg(long)]
    force: bool,
    /// How even tables store values: `full` (every value; fastest probes
    /// and batches) or `compact` (values a search of a few moves restores
    /// at probe time are left out: much smaller files, slower probes;
    /// docs/guide/performance.md has the figures).
    #[arg(long, default_value = "full", value_parser = parse_encoding)]
    encoding: Encoding,
    /// Positions per compressed block (default: what the tables already
    /// present use, else 768 for full tables and 2048 for compact ones).
    /// Smaller blocks make cold probes faster and files larger.
    #[arg(long)]
    block_size: Option<u32>,
    /// Memory for the level being solved: `fast` (two bytes a position,
    /// three for forced tables; the fastest) or `lean` (four bits a
    /// position, a byte for forced tables, its exits and decisions in
    /// sequential lists on disk next to the tables, or in --scratch). Both
    /// write the same files. Default: `fast`, or with --max-memory the
    /// fastest mode that fits.
    #[arg(long, value_parser = parse_memory)]
    memory: Option<MemoryMode>,
    /// About how much memory the build may take, in MiB: --memory then
    /// defaults to the fastest mode whose level --stones fits in it (a
    /// mode that cannot is refused), and lower levels are held in memory
    /// while they fit beside that level, rather than as scratch files on
    /// disk.
    #[arg(long, value_name = "MIB", value_parser = parse_mib)]
    max_memory: Option<usize>,
    /// Save a long level's progress this often (minutes, fractions
    /// allowed; 0 = never), so a killed build resumes inside the level.
    #[arg(long, value_name = "MINUTES", default_value = "10", value_parser = parse_minutes)]
    checkpoint_minutes: Duration,
    /// If another build is writing these tables, wait for it to end instead
    /// of failing.
    #[arg(long)]
    wait: bool,
    /// Where lower levels too large for memory are held as mapped files
    /// (default: `scratch/` in the tables' directory).
    #[arg(long)]
    scratch: Option<PathBuf>,
    /// Draw the summary as an SVG chart in this file when the build ends:
    /// wall seconds, positions per second and resident peak per level.
    #[arg(long, value_name = "FILE.svg")]
    profile: Option<PathBuf>,
    #[command(flatten)]
    progress: ProgressArgs,
}

pub(crate) const SUMMARY_HEADER: &str = "level      positions   seconds   positions/s         bytes  bits/pos          won        drawn         lost   peak RSS  anon peak       read    written";

const FORCED_SUMMARY_HEADER: &str = "level      positions   seconds   positions/s         bytes  bits/pos        exact   exact %   peak RSS  anon peak       read    written";

pub fn run(args: BuildArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    let profile = args.profile.as_deref().map(SvgPath::new).transpose()?;
    if let Some(threads) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("cannot set up the thread pool")?;
    }
    let mut options = BuildOptions::new(&args.dir, rules, args.stones);
    options.top_only = args.top_only;
    options.force = args.force;
    options.cycles = args.cycles;
    options.depths = args.depth;
    options.encoding = args.encoding;
    options.block_size = args.block_size;
    options.checkpoint_every =
        (!args.checkpoint_minutes.is_zero()).then_some(args.checkpoint_minutes);
    options.wait_for_lock = args.wait;
    options.scratch = args.scratch;
    options.max_memory = args.max_memory.map(|bytes| bytes as u64);
    options.memory = memory_mode(args.memory, &options);
    options.validate()?;
    let job = Job::join()?;
    let leads = job.leads();
    if leads {
        out!(
            "building {rules}, {} (--cycles {}), levels {} in {}",
            args.cycles.describe(),
            args.cycles.name(),
            levels_built(&options),
            options.dir().display()
        );
        if let Some(budget) = options.max_memory {
            out!(
                "--max-memory {} MiB: --memory {}, level {} takes about {} MiB to solve, the rest holds lower levels",
                budget >> 20,
                options.memory.cli_name(),
                options.max_stones,
                options.solving_bytes().div_ceil(1 << 20)
            );
        }
        match args.cycles {
            Cycles::Even => out!("{SUMMARY_HEADER}"),
            Cycles::Forced => out!("{FORCED_SUMMARY_HEADER}"),
        }
    }
    let start = Instant::now();
    let progress = Progress::new().with_lines(args.progress.every());
    if job.is_alone() {
        options.interrupt = Some(stop_on_signal("stopping at the next checkpoint")?);
    }
    let (reports, rank_lines) = job.build(&options, &progress)?;
    progress.finish();
    if !leads {
        return Ok(true);
    }
    print_total(&reports, start)?;
    for line in rank_lines {
        out!("{line}");
    }
    if let Some(profile) = profile {
        let title = format!(
            "build of {rules}, {}, levels {}",
            plot::kind_name(args.cycles),
            levels_built(&options)
        );
        write_profile(&profile, &title, &reports)?;
    }
    Ok(true)
}

/// The mode asked for; without one, the fastest whose largest level fits
/// in --max-memory (lean if none does: `validate` then says how much it
/// needs), or the fast mode.
fn memory_mode(asked: Option<MemoryMode>, options: &BuildOptions) -> MemoryMode {
    match (asked, options.max_memory) {
        (Some(mode), _) => mode,
        (None, Some(budget)) => {
            let positions = LevelIndex::new(options.rules.pits(), options.max_stones).count();
            let encoding = options.stored_encoding();
            MemoryMode::within(budget, options.cycles, encoding, positions)
                .unwrap_or(MemoryMode::Lean)
        }
        (None, None) => MemoryMode::Fast,
    }
}

/// The levels `options` builds: `0-34, 36`.
fn levels_built(options: &BuildOptions) -> String {
    let levels: Vec<u32> = (0..=options.max_stones)
        .filter(|&n| options.builds_level(n))
        .collect();
    level_ranges(&levels)
}

/// Draws the summary's rows, `reports`, as the chart `title` in `profile`.
fn write_profile(profile: &SvgPath, title: &str, reports: &[LevelReport]) -> Result<()> {
    let costs: Vec<LevelCost> = reports.iter().map(level_cost).collect();
    profile.write(&plot::profile::chart(title, &costs)?)?;
    out!("build profile: {}", profile.path().display());
    Ok(())
}

/// What a level cost, as its summary row gives it.
fn level_cost(r: &LevelReport) -> LevelCost {
    LevelCost {
        level: r.level,
        seconds: r.seconds,
        rate: rate(r),
        peak_rss_bytes: r.usage.peak_rss_bytes,
        reused: r.reused,
    }
}

/// Positions solved per second, for a level that was solved in this run
/// from its start and is large enough for a rate to mean anything: a
/// level of a few positions takes whatever the scheduler gives it, so its
/// rate would be noise, and a resumed level's seconds are only this run's
/// part of it.
fn rate(r: &LevelReport) -> Option<f64> {
    const MIN_POSITIONS: u64 = 1000;
    (!r.reused && r.resumed == 0.0 && r.positions >= MIN_POSITIONS && r.seconds >= 0.01)
        .then(|| r.positions as f64 / r.seconds)
}

/// The summary's last line: the whole build's figures.
pub(crate) fn print_total(reports: &[LevelReport], start: Instant) -> Result<()> {
    let positions: u64 = reports.iter().map(|r| r.positions).sum();
    let bytes: u64 = reports.iter().map(|r| r.bytes).sum();
    let built: f64 = reports.iter().map(|r| r.seconds).sum();
    // Each level reports its own peak; the build's is the largest of them.
    let peak = reports
        .iter()
        .filter_map(|r| r.usage.peak_rss_bytes)
        .chain(mancala_gen::peak_rss_bytes())
        .max();
    let anon = reports.iter().filter_map(|r| r.usage.peak_anon_bytes).max();
    let sum = |of: fn(&LevelReport) -> Option<u64>| reports.iter().filter_map(of).sum::<u64>();
    out!(
        "total {positions} positions, {bytes} bytes ({:.3} bits/position), {built:.2} s solving, {:.2} s wall, peak RSS {} (anonymous {}), {} read and {} written",
        8.0 * bytes as f64 / positions as f64,
        start.elapsed().as_secs_f64(),
        peak.map_or("unknown".into(), mebibytes),
        anon.map_or("unknown".into(), mebibytes),
        mebibytes(sum(|r| r.usage.read_bytes)),
        mebibytes(sum(|r| r.usage.written_bytes)),
    );
    Ok(())
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
}

/// The share of a bar done before a progress line gives its ETA.
const MIN_SHARE_FOR_ETA: f64 = 0.005;

/// Progress bars with ETAs on stderr, one for the level being solved and
/// one for the whole build, hidden when stderr is not a terminal (where a
/// build may write a progress line now and then instead:
/// [`Progress::with_lines`]); and a summary row per level on stdout. An
/// export or a comparison of VU files shows the level's bar only.
pub(crate) struct Progress {
    bars: MultiProgress,
    total: Mutex<Option<ProgressBar>>,
    level: Mutex<Option<ProgressBar>>,
    /// Units of each bar done by an earlier run ([`mancala_gen::Progress::resumed`]),
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
impl mancala_gen::Progress for Progress {
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

impl BuildObserver for Progress {
    fn level_finished(&self, report: &LevelReport) {
        self.print(&summary_row(report));
        if let Some(note) = resumed_note(report) {
            self.print(&note);
        }
    }
}

/// The line under a resumed level's summary row: how much of it an
/// earlier run had done, and that the row tells this run's part only.
fn resumed_note(r: &LevelReport) -> Option<String> {
    (r.resumed > 0.0).then(|| {
        format!(
            "level {} went on from a checkpoint with {:.1}% of its work done: its seconds, peaks, read and written are this run's part only",
            r.level,
            100.0 * r.resumed
        )
    })
}

fn summary_row(r: &LevelReport) -> String {
    let outcomes = match r.exact {
        Some(exact) => format!(
            "{exact:>12} {:>9.2}",
            100.0 * exact as f64 / r.positions as f64
        ),
        None => {
            let (won, drawn, lost) = r.won_drawn_lost();
            format!("{won:>12} {drawn:>12} {lost:>12}")
        }
    };
    let rate = match rate(r) {
        Some(rate) => format!("{rate:.0}"),
        None if r.reused => "reused".to_string(),
        None if r.resumed > 0.0 => "resumed".to_string(),
        None => "-".to_string(),
    };
    let mib = |bytes: Option<u64>| bytes.map_or("-".to_string(), mebibytes);
    let u = &r.usage;
    format!(
        "{:>5} {:>14} {:>9.2} {:>13} {:>13} {:>9.3} {outcomes} {:>10} {:>10} {:>10} {:>10}",
        r.level,
        r.positions,
        r.seconds,
        rate,
        r.bytes,
        8.0 * r.bytes as f64 / r.positions as f64,
        mib(u.peak_rss_bytes),
        mib(u.peak_anon_bytes),
        mib(u.read_bytes),
        mib(u.written_bytes),
    )
}
