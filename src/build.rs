//! Building tables: levels `0..=N` solved in order and written to disk,
//! resuming from the files a previous run left.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::checkpoint::Checkpoints;
use crate::error::{Error, Result};
use crate::forced::{self, ForcedLevel, ForcedLevels};
use crate::index::LevelIndex;
use crate::rules::Rules;
use crate::scratch::{self, Scratch};
use crate::solver::{self, SolvedLevels, MAX_LEVEL};
use crate::table::{self, level_file_name, Cycles, Encoding, Header, Table};
use crate::tablebase::tables_dir_for;

/// Subdirectory of a rule set's tables holding the build's scratch files.
pub const SCRATCH_DIR: &str = "scratch";
/// Subdirectory of a rule set's tables holding in-level checkpoints.
pub const CHECKPOINT_DIR: &str = "checkpoints";
/// Default time between two checkpoints of a level being solved.
pub const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(600);

/// What to build and where.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Root table directory; files go to `root/<rules id>/`.
    pub root: PathBuf,
    /// The rule set.
    pub rules: Rules,
    /// Build levels `0..=max_stones`.
    pub max_stones: u32,
    /// Which kind of table: even-split values (default) or forced bounds,
    /// in their own directory (`root/<rules id>-forced/`).
    pub cycles: Cycles,
    /// Rebuild levels whose files are already present and valid.
    pub force: bool,
    /// Positions per compressed block (`None`: the encoding's default,
    /// [`Encoding::default_block_size`]).
    pub block_size: Option<u32>,
    /// How even tables store their values.
    pub encoding: Encoding,
    /// Solved levels of at least this many positions are held as mapped
    /// scratch files rather than in memory while higher levels are built.
    pub mapped_min_positions: u64,
    /// Save a level's state at most this often while solving it, so a killed
    /// build resumes inside the level (`None`: only whole levels are kept).
    /// Forced tables keep only whole levels.
    pub checkpoint_every: Option<Duration>,
}

impl BuildOptions {
    /// Defaults for `rules` up to `max_stones` under `root`.
    pub fn new(root: impl Into<PathBuf>, rules: Rules, max_stones: u32) -> BuildOptions {
        BuildOptions {
            root: root.into(),
            rules,
            max_stones,
            cycles: Cycles::Even,
            force: false,
            block_size: None,
            encoding: Encoding::default(),
            mapped_min_positions: scratch::MAPPED_MIN_POSITIONS,
            checkpoint_every: Some(DEFAULT_CHECKPOINT_EVERY),
        }
    }
}

impl BuildOptions {
    /// Positions per block: as set, or the encoding's default (forced
    /// tables take the full encoding's).
    pub fn block_size(&self) -> u32 {
        let encoding = match self.cycles {
            Cycles::Even => self.encoding,
            Cycles::Forced => Encoding::Full,
        };
        self.block_size
            .unwrap_or_else(|| encoding.default_block_size())
    }
}

/// What happened to one level.
#[derive(Clone, Debug)]
pub struct LevelReport {
    /// Stones on the board.
    pub level: u32,
    /// Positions in the level.
    pub positions: u64,
    /// Wall time spent solving and writing (0 when reused).
    pub seconds: f64,
    /// Size of the table file.
    pub bytes: u64,
    /// The kind of table.
    pub cycles: Cycles,
    /// The header's histogram: `(value, count)` over every position of an
    /// even level, the stored symbols of a forced one.
    pub histogram: Vec<(i8, u64)>,
    /// Forced tables: positions whose bounds meet.
    pub exact: Option<u64>,
    /// The file was present and valid, so it was not rebuilt.
    pub reused: bool,
    /// Peak resident memory while the level was built (the process's peak so
    /// far for a reused level), where the OS tells it.
    pub peak_rss_bytes: Option<u64>,
}

impl LevelReport {
    /// Positions won, drawn and lost for the mover.
    pub fn won_drawn_lost(&self) -> (u64, u64, u64) {
        let sum = |keep: fn(i8) -> bool| {
            self.histogram
                .iter()
                .filter(|(v, _)| keep(*v))
                .map(|(_, c)| c)
                .sum()
        };
        (sum(|v| v > 0), sum(|v| v == 0), sum(|v| v < 0))
    }
}

/// Hooks for progress display; every method has an empty default.
pub trait BuildObserver: Sync {
    /// A level starts being solved; it is `work` units long (see
    /// [`solver::solve_level`]).
    fn level_started(&self, _level: u32, _positions: u64, _work: u64) {}
    /// `units` more units of the current level's work are done.
    fn advanced(&self, _units: u64) {}
    /// A level is done (built or reused).
    fn level_finished(&self, _report: &LevelReport) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl BuildObserver for Quiet {}

/// Builds levels `0..=max_stones`, reusing valid files unless `force`.
pub fn build(options: &BuildOptions, observer: &dyn BuildObserver) -> Result<Vec<LevelReport>> {
    let dir = prepare(options)?;
    match options.cycles {
        Cycles::Even => build_even(options, &dir, observer),
        Cycles::Forced => build_forced(options, &dir, observer),
    }
}

/// Checks the options and creates the tables' directory.
fn prepare(options: &BuildOptions) -> Result<PathBuf> {
    if options.max_stones > MAX_LEVEL {
        return Err(Error::InvalidRules(format!(
            "at most {MAX_LEVEL} stones are supported"
        )));
    }
    if !(1..=table::MAX_BLOCK_SIZE).contains(&options.block_size()) {
        return Err(Error::InvalidRules(format!(
            "block size must be 1..={}",
            table::MAX_BLOCK_SIZE
        )));
    }
    let dir = tables_dir_for(&options.root, &options.rules, options.cycles);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(dir)
}

/// The valid tables already present for each level (none with `force`),
/// and the last level that must be built, if any. Levels above it need
/// not be read at all.
fn present_tables(options: &BuildOptions, dir: &Path) -> (Vec<Option<Table>>, Option<usize>) {
    let present: Vec<Option<Table>> = (0..=options.max_stones)
        .map(|n| {
            (!options.force)
                .then(|| valid_table(&options.rules, options.cycles, dir, n))
                .flatten()
        })
        .collect();
    let last_to_build = present.iter().rposition(Option::is_none);
    (present, last_to_build)
}

fn build_even(
    options: &BuildOptions,
    dir: &Path,
    observer: &dyn BuildObserver,
) -> Result<Vec<LevelReport>> {
    let levels = 0..=options.max_stones;
    let (present, last_to_build) = present_tables(options, dir);
    let scratch = Scratch::create(dir.join(SCRATCH_DIR), options.mapped_min_positions)?;
    let mut solved = SolvedLevels::new();
    let mut reports = Vec::new();
    for (n, existing) in levels.zip(present) {
        let needed_in_memory = last_to_build.is_some_and(|last| (n as usize) < last);
        let report = match existing {
            Some(table) => {
                if needed_in_memory {
                    scratch.hold_table(&mut solved, &table)?;
                }
                reused_report(&table)
            }
            None => {
                let (report, values) = build_level(options, dir, n, &solved, observer)?;
                if needed_in_memory {
                    scratch.hold(&mut solved, n, values)?;
                }
                report
            }
        };
        observer.level_finished(&report);
        reports.push(report);
    }
    // Every level is stored: no checkpoint is left (removes the directory
    // only if it is empty).
    let _ = std::fs::remove_dir(dir.join(CHECKPOINT_DIR));
    Ok(reports)
}

/// Builds forced-bounds levels: the same walk as [`build_even`], with the
/// two bounds of each lower level held (in memory or mapped) for the
/// forward pass.
fn build_forced(
    options: &BuildOptions,
    dir: &Path,
    observer: &dyn BuildObserver,
) -> Result<Vec<LevelReport>> {
    let (present, last_to_build) = present_tables(options, dir);
    let scratch = |name: &str| Scratch::create(dir.join(name), options.mapped_min_positions);
    let mover_scratch = scratch(FORCED_SCRATCH_DIRS[0])?;
    let opponent_scratch = scratch(FORCED_SCRATCH_DIRS[1])?;
    let mut solved = ForcedLevels::new();
    let mut reports = Vec::new();
    for (n, existing) in (0..=options.max_stones).zip(present) {
        let needed_in_memory = last_to_build.is_some_and(|last| (n as usize) < last);
        let (report, level) = match existing {
            Some(table) => {
                let level = needed_in_memory
                    .then(|| {
                        ForcedLevel::from_symbols(n, &table.decode_all()?).map_err(|at| {
                            Error::Corrupted {
                                path: table.path().to_path_buf(),
                                what: format!("impossible bounds stored for index {at}"),
                            }
                        })
                    })
                    .transpose()?;
                (reused_report(&table), level)
            }
            None => {
                let (report, level) = build_forced_level(options, dir, n, &solved, observer)?;
                (report, needed_in_memory.then_some(level))
            }
        };
        if let Some(level) = level {
            mover_scratch.hold(&mut solved.mover, n, level.mover)?;
            opponent_scratch.hold(&mut solved.opponent, n, level.opponent)?;
        }
        observer.level_finished(&report);
        reports.push(report);
    }
    Ok(reports)
}

/// Scratch subdirectories of forced tables: the two bounds of lower levels.
const FORCED_SCRATCH_DIRS: [&str; 2] = ["scratch-mover", "scratch-opponent"];

/// Solves and writes forced level `n`; returns its report and bounds.
fn build_forced_level(
    options: &BuildOptions,
    dir: &Path,
    n: u32,
    solved: &ForcedLevels,
    observer: &dyn BuildObserver,
) -> Result<(LevelReport, ForcedLevel)> {
    let rules = &options.rules;
    let positions = LevelIndex::new(rules.pits(), n).count();
    observer.level_started(n, positions, 2 * positions);
    reset_peak_rss();
    let start = Instant::now();
    let level = forced::solve_level(rules, n, solved, &|done| observer.advanced(done));
    let symbols = level.to_symbols(n);
    let header = Header::for_symbols(rules, Cycles::Forced, n, &symbols, options.block_size());
    let bytes = table::write_table(&dir.join(level_file_name(n)), &header, &symbols)?;
    let report = LevelReport {
        level: n,
        positions,
        seconds: start.elapsed().as_secs_f64(),
        bytes,
        cycles: Cycles::Forced,
        exact: header.exact_positions(),
        histogram: header.histogram,
        reused: false,
        peak_rss_bytes: peak_rss_bytes(),
    };
    Ok((report, level))
}

/// The table of level `n` if its file is present and passes every check.
fn valid_table(rules: &Rules, cycles: Cycles, dir: &Path, n: u32) -> Option<Table> {
    let path = dir.join(level_file_name(n));
    let table = Table::open_kind(&path, Some((rules, cycles, n))).ok()?;
    table.check_file_checksum().ok()?;
    Some(table)
}

fn reused_report(table: &Table) -> LevelReport {
    let header = table.header();
    LevelReport {
        level: header.level,
        positions: header.positions,
        seconds: 0.0,
        bytes: table.bytes(),
        cycles: header.cycles().unwrap_or_default(),
        exact: header.exact_positions(),
        histogram: header.histogram.clone(),
        reused: true,
        peak_rss_bytes: peak_rss_bytes(),
    }
}

/// Solves and writes level `n`; returns its report and values.
fn build_level(
    options: &BuildOptions,
    dir: &Path,
    n: u32,
    solved: &SolvedLevels,
    observer: &dyn BuildObserver,
) -> Result<(LevelReport, Vec<i8>)> {
    let rules = &options.rules;
    let positions = LevelIndex::new(rules.pits(), n).count();
    observer.level_started(n, positions, 2 * positions);
    reset_peak_rss();
    let start = Instant::now();
    let progress = |done| observer.advanced(done);
    let checkpoints = options.checkpoint_every.map(|every| Checkpoints {
        dir: dir.join(CHECKPOINT_DIR),
        every,
    });
    let solution =
        solver::solve_level_resumable(rules, n, solved, &progress, checkpoints.as_ref())?;
    let (header, entries) =
        Header::for_solution(rules, n, &solution, options.encoding, options.block_size());
    let bytes = table::write_table(&dir.join(level_file_name(n)), &header, &entries)?;
    drop(entries);
    let values = solution.values;
    if let Some(c) = &checkpoints {
        c.remove(n);
    }
    let report = LevelReport {
        level: n,
        positions,
        seconds: start.elapsed().as_secs_f64(),
        bytes,
        cycles: Cycles::Even,
        exact: None,
        histogram: header.histogram,
        reused: false,
        peak_rss_bytes: peak_rss_bytes(),
    };
    Ok((report, values))
}

/// Starts a new peak-RSS measurement (Linux: `clear_refs` mode 5), so each
/// level reports its own peak. Elsewhere the peak stays cumulative.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process (Linux `VmHWM`) since the last
/// reset, if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
