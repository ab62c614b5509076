//! `mancala-tb build`: solve levels 0..=N and write their tables.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
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
use crate::progress::Progress;
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
    /// solved again.
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
    /// position, six bits for forced tables, its exits and decisions in
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
            let budget = budget.saturating_sub(options.depth_bytes(positions));
            MemoryMode::within(
                budget,
                options.cycles,
                encoding,
                options.rules.pits(),
                positions,
            )
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
