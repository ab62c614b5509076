//! Building tables: levels `0..=N` solved in order and written to disk,
//! resuming from the files a previous run left. One pipeline for both kinds
//! of table ([`Solve`]): reuse valid files, hold the lower levels decoded
//! (in memory, or mapped scratch files), solve the next level with the
//! strategy, store it in the encoding asked for, checkpoint long levels.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mancala_core::{Cycles, LevelIndex, Rules, MAX_LEVEL};
use mancala_format::{
    flip_gathered_bytes, level_path, symbols_per_position, tables_dir, write_level, Encoding, Even,
    Forced, Header, Levels, Scratch, Table, TableId, MAPPED_MIN_POSITIONS, MAX_BLOCK_SIZE,
};

use crate::checkpoint::Checkpoints;
use crate::error::BuildError;
use crate::lean::{Lean, LeanKind};
use crate::lock;
use crate::solve::{Solution, Solve};
use crate::strategy::{LevelJob, OnePass, Retrograde, Strategy};
use crate::usage::{peak_rss_bytes, Metering, Usage};

/// Subdirectory of a rule set's tables holding the build's scratch files.
pub const SCRATCH_DIR: &str = "scratch";
/// Subdirectory of a rule set's tables holding in-level checkpoints.
pub const CHECKPOINT_DIR: &str = "checkpoints";
/// Subdirectory of a rule set's tables holding the lean mode's lists
/// (or of `--scratch`, where one is given).
pub const LEAN_DIR: &str = "lean";
/// Default time between two checkpoints of a level being solved.
pub const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(600);

/// What to build and where.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Root table directory; files go to `root/<rules id>/` (even tables)
    /// or `root/<rules id>-forced/`.
    pub root: PathBuf,
    /// The rule set.
    pub rules: Rules,
    /// Build levels `0..=max_stones`.
    pub max_stones: u32,
    /// Build only level `max_stones` and the levels it needs
    /// (`Rules::levels_needed`), skipping the others: in the Oware family,
    /// the level just below it, which its moves never reach.
    pub top_only: bool,
    /// Which kind of table: even-split values (default) or forced bounds.
    pub cycles: Cycles,
    /// Rebuild levels whose files are already present and valid.
    pub force: bool,
    /// Positions per compressed block (`None`: the encoding's default,
    /// [`Encoding::default_block_size`]).
    pub block_size: Option<u32>,
    /// How even tables store their values (ignored where it does not
    /// apply: forced tables store every value).
    pub encoding: Encoding,
    /// Solved levels of at least this many positions are held as mapped
    /// scratch files rather than in memory while higher levels are built.
    pub mapped_min_positions: u64,
    /// Save a level's state at most this often while solving it, so a killed
    /// build resumes inside the level (`None`: only whole levels are kept).
    pub checkpoint_every: Option<Duration>,
    /// How much memory the level being solved takes.
    pub memory: MemoryMode,
    /// About how much anonymous memory the build may take (`None`: no
    /// bound). The largest level to build must fit in it in the chosen
    /// mode ([`MemoryMode::solving_bytes`]; [`BuildOptions::validate`]
    /// says so otherwise, and [`MemoryMode::within`] picks the mode); what
    /// it leaves holds lower levels in memory, smallest first, rather than
    /// as mapped scratch files, which spares the disk and its traffic.
    pub max_memory: Option<u64>,
    /// Where lower levels held as mapped files go (`None`: the tables'
    /// directory's `scratch/`); created only when a level is that large.
    pub scratch: Option<PathBuf>,
    /// If another build holds the directory, wait for it to end rather than
    /// fail ([`BuildError::Locked`]).
    pub wait_for_lock: bool,
    /// Set it (from another thread, or a signal handler) to stop the build
    /// at its next check: between levels, between two thresholds (saving a
    /// checkpoint where checkpoints are on), or within a first pass. The
    /// build then returns [`BuildError::Interrupted`] and leaves no file of
    /// the level it was solving.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl BuildOptions {
    /// Defaults for `rules` up to `max_stones` under `root`.
    pub fn new(root: impl Into<PathBuf>, rules: Rules, max_stones: u32) -> BuildOptions {
        BuildOptions {
            root: root.into(),
            rules,
            max_stones,
            top_only: false,
            cycles: Cycles::Even,
            force: false,
            block_size: None,
            encoding: Encoding::default(),
            mapped_min_positions: MAPPED_MIN_POSITIONS,
            checkpoint_every: Some(DEFAULT_CHECKPOINT_EVERY),
            scratch: None,
            memory: MemoryMode::Fast,
            max_memory: None,
            wait_for_lock: false,
            interrupt: None,
        }
    }

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

    /// The encoding the build's tables are stored in: the one asked for
    /// where it applies to the rule set, else the full encoding (which
    /// forced tables always take).
    pub fn stored_encoding(&self) -> Encoding {
        match self.cycles {
            Cycles::Even => Even::stored_encoding(&self.rules, self.encoding),
            Cycles::Forced => Encoding::Full,
        }
    }

    /// Whether level `n` (at most `max_stones`) is one to build, or to
    /// reuse: every level, or with [`BuildOptions::top_only`] those the
    /// top level needs.
    pub fn builds_level(&self, n: u32) -> bool {
        !self.top_only || self.rules.reaches(self.max_stones, n)
    }

    /// Whether the build has been asked to stop ([`BuildOptions::interrupt`]).
    pub fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.load(Relaxed))
    }

    /// The directory the tables go to.
    pub fn dir(&self) -> PathBuf {
        tables_dir(&self.root, &self.rules, self.cycles)
    }

    /// Whether the options can be built: the checks [`build`] makes before
    /// it touches the disk.
    pub fn validate(&self) -> Result<(), BuildError> {
        if self.max_stones > MAX_LEVEL {
            return Err(BuildError::TooManyStones {
                stones: self.max_stones,
                max: MAX_LEVEL,
            });
        }
        let size = self.block_size();
        if !(1..=MAX_BLOCK_SIZE).contains(&size) {
            return Err(BuildError::BlockSize {
                size,
                max: MAX_BLOCK_SIZE,
            });
        }
        if let Some(budget) = self.max_memory {
            let needed = self.solving_bytes();
            if needed > budget {
                return Err(BuildError::MemoryBudget {
                    level: self.max_stones,
                    memory: self.memory,
                    encoding: self.stored_encoding(),
                    needed,
                    budget,
                });
            }
        }
        Ok(())
    }

    /// About the anonymous memory the largest level takes to solve in the
    /// build's mode.
    pub fn solving_bytes(&self) -> u64 {
        let positions = LevelIndex::new(self.rules.pits(), self.max_stones).count();
        self.memory
            .solving_bytes(self.cycles, self.stored_encoding(), positions)
    }

    /// What of [`BuildOptions::max_memory`] is left for lower levels held
    /// in memory beside the largest level's solving state, or beside the
    /// entries a lean build gathers to flip a lower level's table, if
    /// they take more: levels are flipped while those held are in memory
    /// and no level's state is.
    fn memory_for_lower_levels(&self) -> Option<u64> {
        let budget = self.max_memory?;
        Some(budget.saturating_sub(self.solving_bytes().max(self.flipping_bytes())))
    }

    /// The most memory flipping a lower level's table takes (the largest
    /// level's, gathered a group of rectangles at a time): only the lean
    /// mode holds its lower levels flipped.
    fn flipping_bytes(&self) -> u64 {
        let width = symbols_per_position(self.cycles);
        match (self.memory, self.max_stones.checked_sub(1)) {
            (MemoryMode::Lean, Some(largest)) => {
                flip_gathered_bytes(self.rules.pits(), largest, width)
            }
            _ => 0,
        }
    }
}

/// How much memory a build's level being solved takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryMode {
    /// Two bytes a position (three for forced tables), everything in
    /// memory: the fastest.
    #[default]
    Fast,
    /// Four bits a position in memory (a byte for forced tables), the
    /// rest in sequential lists on disk ([`crate::Lean`]).
    Lean,
}

/// Memory a level takes to solve beyond its per-position share: buffers,
/// bounded frontiers, lists' windows, thread stacks.
const SOLVING_FIXED_BYTES: u64 = 256 << 20;

impl MemoryMode {
    /// About the anonymous memory solving a level of `positions` positions
    /// takes in this mode, lower levels held in memory aside: a share a
    /// position (fast: its value or bounds, and the work arrays beside
    /// them; lean: the nibble or byte) and a fixed part. An estimate to
    /// plan with, on the generous side of the summaries' anonymous peaks.
    ///
    /// A level stored in the compact encoding (`encoding`, as stored) is
    /// chosen from its values, its best exits' marks and its free entries,
    /// a byte a position each, when it is written: more than a lean
    /// level's state, so that is what such a level takes.
    pub fn solving_bytes(self, cycles: Cycles, encoding: Encoding, positions: u64) -> u64 {
        // Eighths of a byte a position.
        let eighths: u64 = match (self, cycles, encoding) {
            (MemoryMode::Fast, Cycles::Even, _) => 48,
            (MemoryMode::Fast, Cycles::Forced, _) => 80,
            (MemoryMode::Lean, Cycles::Even, Encoding::Compact) => 24,
            (MemoryMode::Lean, Cycles::Even, Encoding::Full) => 4,
            (MemoryMode::Lean, Cycles::Forced, _) => 8,
        };
        (positions.saturating_mul(eighths) / 8).saturating_add(SOLVING_FIXED_BYTES)
    }

    /// The fastest mode whose [`MemoryMode::solving_bytes`] for a level of
    /// `positions` positions fits in `budget`, if any.
    pub fn within(
        budget: u64,
        cycles: Cycles,
        encoding: Encoding,
        positions: u64,
    ) -> Option<MemoryMode> {
        [MemoryMode::Fast, MemoryMode::Lean]
            .into_iter()
            .find(|mode| mode.solving_bytes(cycles, encoding, positions) <= budget)
    }

    /// The mode's name on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            MemoryMode::Fast => "fast",
            MemoryMode::Lean => "lean",
        }
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
    /// What building the level cost the machine, where the OS tells it
    /// (for a reused level: nothing read or written, and the process's
    /// peak so far).
    pub usage: Usage,
    /// The share of the level's work (0 to 1) that an earlier run had
    /// done when this one went on from its checkpoint: `seconds` and
    /// `usage` then tell this run's part only, so a rate taken from them
    /// would overstate the solver's speed.
    pub resumed: f64,
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
    /// The build knows what it will solve: `work` units in all, over every
    /// level it builds (an overall progress display's length).
    fn build_started(&self, _work: u64) {}
    /// A level starts being solved; it is `work` units long (see
    /// [`LevelJob::progress`]).
    fn level_started(&self, _level: u32, _positions: u64, _work: u64) {}
    /// `units` more units of the current level's work are done.
    fn advanced(&self, _units: u64) {}
    /// `units` of the current level's work were done by an earlier run,
    /// whose checkpoint the level resumed from: done, but not at the
    /// current rate, so a display that estimates time left should not
    /// count them as such. By default, they are [`BuildObserver::advanced`].
    fn resumed(&self, units: u64) {
        self.advanced(units);
    }
    /// A level is done (built or reused).
    fn level_finished(&self, _report: &LevelReport) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl BuildObserver for Quiet {}

/// Builds levels `0..=max_stones`, reusing valid files unless `force`.
pub fn build(
    options: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<LevelReport>, BuildError> {
    let dir = prepare(options)?;
    let rules = options.rules;
    match (options.cycles, options.memory) {
        (Cycles::Even, MemoryMode::Fast) => build_kind::<Even>(
            options,
            &dir,
            observer,
            &LevelSolver::reading_lower(&|job| strategy_for(&rules).solve(job)),
        ),
        (Cycles::Even, MemoryMode::Lean) => build_lean::<Even>(options, &dir, observer),
        (Cycles::Forced, MemoryMode::Lean) => build_lean::<Forced>(options, &dir, observer),
        (Cycles::Forced, MemoryMode::Fast) => build_kind::<Forced>(
            options,
            &dir,
            observer,
            &LevelSolver::reading_lower(&|job| strategy_for(&rules).solve(job)),
        ),
    }
}

/// How the pipeline gets each level it does not find on disk: solved by a
/// strategy ([`build`]), or read from another program's files
/// ([`crate::import`]).
pub(crate) struct LevelSolver<'a, K: Solve> {
    /// Solves a level, resuming from its checkpoint where it keeps them.
    pub solve: &'a (dyn Fn(&LevelJob<K>) -> Result<Solution, BuildError> + Sync + 'a),
    /// For a solver that can finish a level from a checkpoint without
    /// reading the lower levels (the lean mode past its forward pass).
    pub alone: Option<Alone<'a, K>>,
}

/// How a solver finishes a level without its lower levels. When that
/// level is the only one left to build, the pipeline holds the lower
/// levels only for the part that reads them, if at all: their memory and
/// scratch files are free for the rest of the level.
pub(crate) struct Alone<'a, K: Solve> {
    /// Whether the solver would finish level `n` from its checkpoint in
    /// the given place without reading any lower level.
    pub resumes: &'a dyn Fn(&Checkpoints, u32) -> bool,
    /// Solves the part of a level that reads lower levels and saves a
    /// checkpoint after it, from which `resumes` is true.
    pub first_part: &'a dyn Fn(&LevelJob<K>) -> Result<(), BuildError>,
}

impl<'a, K: Solve> LevelSolver<'a, K> {
    /// A solver that reads the lower levels to the end of every level.
    pub fn reading_lower(
        solve: &'a (dyn Fn(&LevelJob<K>) -> Result<Solution, BuildError> + Sync + 'a),
    ) -> Self {
        LevelSolver { solve, alone: None }
    }
}

/// Builds the levels of kind `K` with the lean mode.
fn build_lean<K: LeanKind>(
    options: &BuildOptions,
    dir: &Path,
    observer: &dyn BuildObserver,
) -> Result<Vec<LevelReport>, BuildError> {
    let lean = Lean {
        dir: work_dir(options, dir, LEAN_DIR),
        mapped_min_positions: options.mapped_min_positions,
    };
    let solver = LevelSolver {
        solve: &|job| lean.solve(job),
        alone: Some(Alone {
            resumes: &|checkpoints, n| lean.resumes::<K>(checkpoints, &options.rules, n),
            first_part: &|job| lean.solve_forward(job),
        }),
    };
    let reports = build_kind::<K>(options, dir, observer, &solver);
    // Each level removes its own lists; this removes the directory only if
    // it is empty.
    let _ = std::fs::remove_dir(&lean.dir);
    reports
}

/// Checks the options and creates the tables' directory.
pub(crate) fn prepare(options: &BuildOptions) -> Result<PathBuf, BuildError> {
    options.validate()?;
    let dir = options.dir();
    std::fs::create_dir_all(&dir).map_err(|source| BuildError::Io {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// The levels of one kind, in order, after a [`survey`] of the directory,
/// each level not present got from `solver`.
pub(crate) fn build_kind<K: Solve>(
    options: &BuildOptions,
    dir: &Path,
    observer: &dyn BuildObserver,
    solver: &LevelSolver<'_, K>,
) -> Result<Vec<LevelReport>, BuildError> {
    let options = &keeping_block_size::<K>(options, dir);
    let Survey {
        present,
        last_to_build,
        lock: _lock,
    } = survey::<K>(options, dir)?;
    let scratch = Scratch::new(
        work_dir(options, dir, SCRATCH_DIR),
        options.mapped_min_positions,
    );
    // The lean mode reads its lower levels in sequence from flipped files
    // rather than relying on the page cache to hold them all.
    let scratch = match options.memory {
        MemoryMode::Fast => scratch,
        MemoryMode::Lean => scratch.flipped(options.rules.pits()),
    };
    let scratch = match options.memory_for_lower_levels() {
        Some(bytes) => scratch.with_memory(bytes),
        None => scratch,
    };
    let to_build: Vec<u32> = (0..=options.max_stones)
        .zip(&present)
        .filter(|(n, table)| options.builds_level(*n) && table.is_none())
        .map(|(n, _)| n)
        .collect();
    let work: u64 = to_build
        .iter()
        .map(|&n| 2 * LevelIndex::new(options.rules.pits(), n).count())
        .sum();
    observer.build_started(work);
    // With a single level to build, a solver that can finish it alone
    // reads the lower levels for a first part at most.
    let alone = match (
        to_build.as_slice(),
        &solver.alone,
        checkpoints(options, dir),
    ) {
        ([_], Some(alone), Some(checkpoints)) => Some((alone, checkpoints)),
        _ => None,
    };
    let lower_read = alone.as_ref().is_none_or(|(alone, checkpoints)| {
        !(alone.resumes)(checkpoints, *to_build.last().expect("one level"))
    });
    let split = alone.is_some() && lower_read;
    let mut solved = Levels::<K>::new();
    let mut reports = Vec::new();
    for (n, existing) in (0..=options.max_stones).zip(present) {
        let below_last = last_to_build.is_some_and(|last| (n as usize) < last);
        let needed_in_memory = below_last && lower_read;
        if below_last && !needed_in_memory {
            solved.push_unreached();
        }
        if !options.builds_level(n) {
            if needed_in_memory {
                solved.push_unreached();
            }
            continue;
        }
        let report = match existing {
            Some(table) => {
                if needed_in_memory {
                    scratch.hold_table(&mut solved, &table)?;
                }
                reused_report(&table)
            }
            None => {
                if options.interrupted() {
                    return Err(BuildError::Interrupted);
                }
                let release = split.then_some(&scratch);
                let (report, solution) =
                    build_level(options, dir, n, &mut solved, observer, solver, release)?;
                if needed_in_memory {
                    match solution.mapped {
                        Some(map) => scratch.hold_mapped(&mut solved, n, map)?,
                        None => scratch.hold(&mut solved, n, solution.symbols)?,
                    }
                }
                report
            }
        };
        observer.level_finished(&report);
        reports.push(report);
    }
    // Every level is stored: no checkpoint is left (removes the directory
    // only if it is empty).
    if last_to_build.is_some() {
        let _ = std::fs::remove_dir(dir.join(CHECKPOINT_DIR));
    }
    Ok(reports)
}

/// Where a build's working files named `name` go: the tables' directory
/// `dir`'s subdirectory, or a directory in `--scratch` named after the
/// tables and the process (so that builds sharing it never meet).
fn work_dir(options: &BuildOptions, dir: &Path, name: &str) -> PathBuf {
    let Some(scratch) = &options.scratch else {
        return dir.join(name);
    };
    // The tables' directory is named after the rule set and kind.
    let tables = dir.file_name().unwrap_or_default().to_string_lossy();
    let pid = std::process::id();
    if name == SCRATCH_DIR {
        scratch.join(format!("{tables}-{pid}"))
    } else {
        scratch.join(format!("{tables}-{pid}-{name}"))
    }
}

/// `options` with the block size of the set already in `dir` where none is
/// asked: the default has changed between versions, and a set built with
/// an older default must go on growing without `--block-size`. Only a
/// present level stored in the build's encoding counts; `force` rebuilds
/// with the default.
pub(crate) fn keeping_block_size<K: Solve>(options: &BuildOptions, dir: &Path) -> BuildOptions {
    let mut options = options.clone();
    if options.block_size.is_some() || options.force {
        return options;
    }
    let encoding = K::stored_encoding(&options.rules, options.encoding);
    options.block_size = (0..=options.max_stones)
        .filter(|&n| options.builds_level(n))
        .find_map(|n| {
            let expected = TableId {
                rules: options.rules,
                level: n,
            };
            let table = Table::<K>::open(&level_path(dir, n), Some(expected)).ok()?;
            let header = table.header();
            (header.encoding == encoding).then_some(header.block_size)
        });
    options
}

/// What a build finds in its tables' directory.
pub(crate) struct Survey<K: Solve> {
    /// The valid table present for each level, if any.
    pub present: Vec<Option<Table<K>>>,
    /// The last level to build, if any.
    pub last_to_build: Option<usize>,
    /// The directory's lock, held while any level is to be built.
    pub lock: Option<lock::DirLock>,
}

/// Looks at what `dir` holds. Present levels are read without the lock,
/// so a complete set builds (reuses) on a read-only disk; with levels to
/// write, the lock is taken, what killed builds left is swept, and the
/// directory is looked at again.
pub(crate) fn survey<K: Solve>(
    options: &BuildOptions,
    dir: &Path,
) -> Result<Survey<K>, BuildError> {
    let (present, last_to_build) = present_tables::<K>(options, dir, Vec::new())?;
    if last_to_build.is_none() {
        return Ok(Survey {
            present,
            last_to_build,
            lock: None,
        });
    }
    let lock = lock::lock(dir, options.wait_for_lock)?;
    lock::sweep_temporaries(dir);
    // What the first look found valid stays so while its file is the
    // same: only a file changed since (by a build that held the lock)
    // is checked again, not every table's whole-file CRC.
    let (present, last_to_build) = present_tables::<K>(options, dir, present)?;
    Ok(Survey {
        present,
        last_to_build,
        lock: Some(lock),
    })
}

/// The valid tables already present for each level the build keeps
/// ([`BuildOptions::builds_level`]; none with `force`), and the last level
/// that must be built, if any. Levels above it need
/// not be read at all. A present level stored in another encoding or block
/// size than the build's is an error: one set never mixes them. A table
/// of `known` (by level) whose file has not changed since it was opened
/// is taken as it is, without checking it again.
#[allow(clippy::type_complexity)]
fn present_tables<K: Solve>(
    options: &BuildOptions,
    dir: &Path,
    known: Vec<Option<Table<K>>>,
) -> Result<(Vec<Option<Table<K>>>, Option<usize>), BuildError> {
    let mut known = known.into_iter();
    let present: Vec<Option<Table<K>>> = (0..=options.max_stones)
        .map(|n| {
            let unchanged = known
                .next()
                .flatten()
                .filter(|table| !table.changed_on_disk());
            (!options.force && options.builds_level(n))
                .then(|| unchanged.or_else(|| valid_table(&options.rules, dir, n)))
                .flatten()
        })
        .collect();
    let asked = (
        K::stored_encoding(&options.rules, options.encoding),
        options.block_size(),
    );
    for table in present.iter().flatten() {
        let header = table.header();
        let found = (header.encoding, header.block_size);
        if found != asked {
            let describe = |(encoding, block_size): (Encoding, u32)| {
                format!("{} in blocks of {block_size}", encoding.cli_name())
            };
            return Err(BuildError::Mismatch {
                dir: dir.to_path_buf(),
                level: header.level,
                found: describe(found),
                asked: describe(asked),
            });
        }
    }
    let last_to_build = (0..=options.max_stones)
        .zip(&present)
        .filter(|(n, table)| options.builds_level(*n) && table.is_none())
        .map(|(n, _)| n as usize)
        .last();
    Ok((present, last_to_build))
}

/// The table of level `n` if its file is present and passes every check.
pub(crate) fn valid_table<K: Solve>(rules: &Rules, dir: &Path, n: u32) -> Option<Table<K>> {
    let expected = TableId {
        rules: *rules,
        level: n,
    };
    let table = Table::<K>::open(&level_path(dir, n), Some(expected)).ok()?;
    table.check_file_checksum().ok()?;
    Some(table)
}

pub(crate) fn reused_report<K: Solve>(table: &Table<K>) -> LevelReport {
    let usage = Usage {
        peak_rss_bytes: peak_rss_bytes(),
        ..Usage::default()
    };
    level_report(table.header(), 0.0, table.bytes(), usage, true)
}

/// The report of the level `header` describes, stored in `bytes` after
/// `seconds` of work that cost `usage` (`reused`: none, the file was
/// present).
pub(crate) fn level_report(
    header: &Header,
    seconds: f64,
    bytes: u64,
    usage: Usage,
    reused: bool,
) -> LevelReport {
    LevelReport {
        level: header.level,
        positions: header.positions,
        seconds,
        bytes,
        cycles: header.cycles,
        exact: header.exact_positions(),
        histogram: header.histogram.clone(),
        reused,
        usage,
        resumed: 0.0,
    }
}

/// Solves (with `solver`) and writes level `n`; returns its report and
/// solution. With `release`, the solver's [`Alone::first_part`] is run
/// first, then the lower levels in `solved` let go (their memory, and
/// their files in `release`), and the level finished without them.
fn build_level<K: Solve>(
    options: &BuildOptions,
    dir: &Path,
    n: u32,
    solved: &mut Levels<K>,
    observer: &dyn BuildObserver,
    solver: &LevelSolver<'_, K>,
    release: Option<&Scratch>,
) -> Result<(LevelReport, Solution), BuildError> {
    let rules = &options.rules;
    let positions = LevelIndex::new(rules.pits(), n).count();
    observer.level_started(n, positions, 2 * positions);
    let metering = Metering::start();
    let start = Instant::now();
    let checkpoints = checkpoints(options, dir);
    let advanced = |done| observer.advanced(done);
    // Units an earlier run did, as the checkpoint resumed from tells them.
    let resumed_units = AtomicU64::new(0);
    let resumed_by_earlier_run = |done| {
        resumed_units.fetch_add(done, Relaxed);
        observer.resumed(done)
    };
    // Units done or resumed in a first part, which the level then reports
    // as resumed: each is counted once.
    let first_part_done = AtomicU64::new(0);
    if let (Some(scratch), Some(alone)) = (release, &solver.alone) {
        let counted = |done| {
            first_part_done.fetch_add(done, Relaxed);
            observer.advanced(done)
        };
        let counted_resumed = |done| {
            first_part_done.fetch_add(done, Relaxed);
            resumed_by_earlier_run(done)
        };
        let job = level_job(
            options,
            n,
            solved,
            (&counted, Some(&counted_resumed)),
            checkpoints.as_ref(),
        );
        (alone.first_part)(&job)?;
        *solved = unreached_levels(n);
        scratch.clear()?;
    }
    let resumed =
        |done: u64| resumed_by_earlier_run(done.saturating_sub(first_part_done.load(Relaxed)));
    let job = level_job(
        options,
        n,
        solved,
        (&advanced, Some(&resumed)),
        checkpoints.as_ref(),
    );
    let solution = (solver.solve)(&job)?;
    let (header, bytes) = store::<K>(options, dir, n, &solution)?;
    if let Some(c) = &checkpoints {
        c.remove(n);
    }
    let seconds = start.elapsed().as_secs_f64();
    let report = LevelReport {
        resumed: resumed_units.into_inner() as f64 / (2 * positions) as f64,
        ..level_report(&header, seconds, bytes, metering.finish(), false)
    };
    Ok((report, solution))
}

/// Where a job's work units go ([`LevelJob::progress`]).
type Progress<'a> = dyn Fn(u64) + Sync + 'a;

/// The job of solving level `n` from `lower`, its work units and those
/// done before it resumed reported to `progress` and `resumed`.
fn level_job<'a, K: Solve>(
    options: &'a BuildOptions,
    n: u32,
    lower: &'a Levels<K>,
    (progress, resumed): (&'a Progress<'a>, Option<&'a Progress<'a>>),
    checkpoints: Option<&'a Checkpoints>,
) -> LevelJob<'a, K> {
    let rules = &options.rules;
    LevelJob {
        rules,
        level: n,
        lower,
        progress,
        resumed,
        checkpoints,
        interrupt: options.interrupt.as_deref(),
        mark_exits: K::stored_encoding(rules, options.encoding) == Encoding::Compact,
    }
}

/// Levels `0..n`, none held: what a level finished alone is given.
fn unreached_levels<K: Solve>(n: u32) -> Levels<K> {
    let mut levels = Levels::new();
    for _ in 0..n {
        levels.push_unreached();
    }
    levels
}

/// Where and how often the build's levels save checkpoints, if they do.
fn checkpoints(options: &BuildOptions, dir: &Path) -> Option<Checkpoints> {
    options.checkpoint_every.map(|every| Checkpoints {
        dir: dir.join(CHECKPOINT_DIR),
        every,
    })
}

/// The strategy that solves levels of `rules`: one pass where levels
/// cannot cycle, else the retrograde analysis.
fn strategy_for(rules: &Rules) -> Chosen {
    if rules.variant().can_cycle() {
        Chosen::Retrograde(Retrograde::local())
    } else {
        Chosen::OnePass(OnePass)
    }
}

/// The strategies a build chooses from ([`strategy_for`]).
enum Chosen {
    Retrograde(Retrograde),
    OnePass(OnePass),
}

impl Strategy for Chosen {
    fn solve<K: Solve>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError> {
        match self {
            Chosen::Retrograde(strategy) => strategy.solve(job),
            Chosen::OnePass(strategy) => strategy.solve(job),
        }
    }
}

/// Writes a solved level's table file; returns its header and size.
fn store<K: Solve>(
    options: &BuildOptions,
    dir: &Path,
    n: u32,
    solution: &Solution,
) -> Result<(Header, u64), BuildError> {
    let (header, entries) = K::to_store(
        &options.rules,
        n,
        solution,
        options.encoding,
        options.block_size(),
    );
    let bytes = write_level(&header, &entries, &level_path(dir, n))?;
    Ok((header, bytes))
}

/// Solves levels `0..=max_stones` in memory: small boards, tests and
/// benchmarks (a build writes each level to disk as it goes).
pub fn solve_in_memory<K: Solve>(rules: &Rules, max_stones: u32) -> Levels<K> {
    let mut solved = Levels::new();
    for n in 0..=max_stones {
        let solution = solve_level(rules, n, &solved, &|_| {});
        solved.push(solution.symbols);
    }
    solved
}

/// Solves level `n` from the solved levels `0..n`, in memory, without
/// checkpoints. `progress` receives `2 × positions` work units in all.
pub fn solve_level<K: Solve>(
    rules: &Rules,
    n: u32,
    lower: &Levels<K>,
    progress: &(dyn Fn(u64) + Sync),
) -> Solution {
    let job = LevelJob {
        rules,
        level: n,
        lower,
        progress,
        resumed: None,
        checkpoints: None,
        interrupt: None,
        mark_exits: false,
    };
    strategy_for(rules)
        .solve(&job)
        .expect("without checkpoints nothing can fail")
}
