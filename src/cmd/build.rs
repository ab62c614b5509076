//! `mancala-tb build`: solve levels 0..=N and write their tables.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mancala_core::Cycles;
use mancala_format::Encoding;
use mancala_gen::{BuildObserver, BuildOptions, LevelReport};

use crate::args::{parse_cycles, parse_encoding, RulesArgs};

#[derive(Args)]
pub struct BuildArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Build every level up to this many stones on the board.
    #[arg(long)]
    stones: u32,
    /// Which tables: `even` (one value, endless play an even split) or
    /// `forced` (what each side can be sure to win without repetitions).
    #[arg(long, default_value = "even", value_parser = parse_cycles)]
    cycles: Cycles,
    /// Table directory (a subdirectory per rule set is created in it).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Rebuild levels whose files are already present and valid.
    #[arg(long)]
    force: bool,
    /// How even tables store values: `full` (every value; fastest probes
    /// and batches) or `compact` (oware family: values a search of a few
    /// moves restores at probe time are left out: much smaller files, slower
    /// probes; README's "Performance" has the figures).
    #[arg(long, default_value = "full", value_parser = parse_encoding)]
    encoding: Encoding,
    /// Positions per compressed block (default: 512 for full tables, 2048
    /// for compact ones). Smaller blocks make probes faster and files
    /// larger.
    #[arg(long)]
    block_size: Option<u32>,
    /// Save a long level's progress this often (minutes; 0 = never), so a
    /// killed build resumes inside the level.
    #[arg(long, default_value_t = 10)]
    checkpoint_minutes: u64,
}

const SUMMARY_HEADER: &str = "level      positions   seconds   positions/s         bytes  bits/pos          won        drawn         lost   peak RSS";

const FORCED_SUMMARY_HEADER: &str = "level      positions   seconds   positions/s         bytes  bits/pos        exact   exact %   peak RSS";

pub fn run(args: BuildArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    if let Some(threads) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("cannot set up the thread pool")?;
    }
    let mut options = BuildOptions::new(&args.dir, rules, args.stones);
    options.force = args.force;
    options.cycles = args.cycles;
    options.encoding = args.encoding;
    options.block_size = args.block_size;
    options.checkpoint_every =
        (args.checkpoint_minutes > 0).then(|| Duration::from_secs(60 * args.checkpoint_minutes));
    options.validate()?;
    out!(
        "building {rules}, {}, levels 0..={} in {}",
        args.cycles.describe(),
        args.stones,
        options.dir().display()
    );
    match args.cycles {
        Cycles::Even => out!("{SUMMARY_HEADER}"),
        Cycles::Forced => out!("{FORCED_SUMMARY_HEADER}"),
    }
    let start = Instant::now();
    let reports = mancala_gen::build(
        &options,
        &Progress {
            bar: Mutex::new(None),
        },
    )?;
    let positions: u64 = reports.iter().map(|r| r.positions).sum();
    let bytes: u64 = reports.iter().map(|r| r.bytes).sum();
    let built: f64 = reports.iter().map(|r| r.seconds).sum();
    out!(
        "total {positions} positions, {bytes} bytes ({:.3} bits/position), {built:.2} s solving, {:.2} s wall, peak RSS {}",
        8.0 * bytes as f64 / positions as f64,
        start.elapsed().as_secs_f64(),
        mancala_gen::peak_rss_bytes().map_or("unknown".into(), mebibytes)
    );
    Ok(true)
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
}

/// A progress bar with ETA on stderr, hidden when stderr is not a terminal,
/// and a summary row per level on stdout.
struct Progress {
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress {
    fn bar(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        self.bar.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl BuildObserver for Progress {
    fn level_started(&self, level: u32, positions: u64, work: u64) {
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(work), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {percent:>3}%, ETA {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(format!("level {level:>3} ({positions} positions)"));
        *self.bar() = Some(bar);
    }

    fn advanced(&self, units: u64) {
        if let Some(bar) = &*self.bar() {
            bar.inc(units);
        }
    }

    fn level_finished(&self, report: &LevelReport) {
        if let Some(bar) = self.bar().take() {
            bar.finish_and_clear();
        }
        // Best effort: a closed stdout only loses the row, the build goes on.
        let _ = writeln!(std::io::stdout(), "{}", summary_row(report));
    }
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
    let rate = if r.reused {
        "reused".to_string()
    } else {
        format!("{:.0}", r.positions as f64 / r.seconds.max(1e-9))
    };
    let rss = r.peak_rss_bytes.map_or("-".to_string(), mebibytes);
    format!(
        "{:>5} {:>14} {:>9.2} {:>13} {:>13} {:>9.3} {outcomes} {:>10}",
        r.level,
        r.positions,
        r.seconds,
        rate,
        r.bytes,
        8.0 * r.bytes as f64 / r.positions as f64,
        rss
    )
}
