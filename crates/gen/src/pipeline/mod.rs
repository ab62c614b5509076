//! Building tables: levels `0..=N` solved in order and written to disk,
//! resuming from the files a previous run left. One pipeline for both kinds
//! of table ([`Solve`]): reuse valid files, hold the lower levels decoded
//! (in memory, or mapped scratch files), solve the next level with the
//! strategy, store it in the encoding asked for, checkpoint long levels.
//!
//! This file is the orchestration; what a build is asked
//! (`options.rs`) and what it tells (`report.rs`) are the public types.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use mancala_core::{Cycles, LevelIndex, Progress, Quiet, Rules};
use mancala_format::{
    depth_path, level_path, table_path, write_level, Depth, Encoding, Even, Forced, FormatError,
    Header, Levels, Scratch, Table, TableId, TableKind,
};
use rayon::prelude::*;

use crate::checkpoint::Checkpoints;
use crate::depth_table::{depth_symbols, listable};
use crate::error::BuildError;
use crate::kernel::{Depths, Finished};
use crate::lean::{Lean, LeanKind};
use crate::lock;
use crate::solve::{Solution, Solve};
use crate::strategy::{LevelJob, OnePass, Retrograde, Strategy};
use crate::usage::Metering;

mod options;
mod report;

pub use options::{BuildOptions, MemoryMode, CHECKPOINT_DIR, LEAN_DIR, SCRATCH_DIR};
pub(crate) use report::{level_report, reused_report};
pub use report::{BuildObserver, LevelReport};

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
            &LevelSolver::reading_lower(&|job| strategy_for(&rules, options.depths).solve(job)),
        ),
        (Cycles::Even, MemoryMode::Lean) => build_lean::<Even>(options, &dir, observer),
        (Cycles::Forced, MemoryMode::Lean) => build_lean::<Forced>(options, &dir, observer),
        (Cycles::Forced, MemoryMode::Fast) => build_kind::<Forced>(
            options,
            &dir,
            observer,
            &LevelSolver::reading_lower(&|job| strategy_for(&rules, false).solve(job)),
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

/// How a solver finishes a level without its lower levels. For the last
/// level a build builds, the pipeline holds the lower levels only for the
/// part that reads them, if at all: their memory and scratch files are
/// free for the rest of the level.
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
    let resumes = |checkpoints: &Checkpoints, n| lean.resumes::<K>(checkpoints, &options.rules, n);
    let first_part = |job: &LevelJob<K>| lean.solve_forward(job);
    // A level asked for depths resumes from its checkpoints between
    // thresholds, which hold its depths, but is not split around its
    // forward pass (whose checkpoint holds none); nor is one whose exit
    // marks are found from the lower levels as it ends.
    let marks_read_lower = K::exit_marks_read_lower(&options.rules, marks_exits::<K>(options));
    let alone = (!options.depths && !marks_read_lower).then_some(Alone {
        resumes: &resumes,
        first_part: &first_part,
    });
    let solver = LevelSolver {
        solve: &|job| lean.solve(job),
        alone,
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
    // Held under the build's lock, the decoded lower levels outlive an
    // interrupted build, so that the resumed one maps them instead of
    // decoding them again; a build that ends removes them.
    let scratch = Scratch::new(
        work_dir(options, dir, SCRATCH_DIR),
        options.mapped_min_positions,
    )
    .reusable();
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
    observer.started(work);
    // The last level to build, with a solver that can finish it alone,
    // reads the lower levels for a first part at most: nothing above it
    // needs them after that.
    let last_alone = match (to_build.last(), &solver.alone, checkpoints(options, dir)) {
        (Some(&last), Some(alone), Some(checkpoints)) => Some((last, alone, checkpoints)),
        _ => None,
    };
    // Only the one level to build may be past that part: a level below it
    // reads them.
    let lower_read = !matches!(
        (&last_alone, to_build.as_slice()),
        (Some((last, alone, checkpoints)), [_]) if (alone.resumes)(checkpoints, *last)
    );
    if !lower_read {
        // What an interrupted run kept for this level's forward pass.
        scratch.clear()?;
    }
    let mut site = LocalSite {
        options,
        dir,
        observer,
        solver,
        scratch,
        solved: Levels::new(),
        present,
        lower_read,
        split_level: last_alone.filter(|_| lower_read).map(|(last, ..)| last),
    };
    let reports = build_levels(&mut site, last_to_build, observer)?;
    site.scratch.clear()?;
    // Every level is stored: no checkpoint is left (removes the directory
    // only if it is empty).
    if last_to_build.is_some() {
        let _ = std::fs::remove_dir(dir.join(CHECKPOINT_DIR));
    }
    Ok(reports)
}

/// Where a build's levels are got (read from their valid files, or solved
/// and stored) and held for the levels above: this process, or each rank
/// of a job (`cluster/`).
pub(crate) trait Site {
    /// What the site tells of a level.
    type Report;

    /// How many levels the build looks at (`0..levels`).
    fn levels(&self) -> u32;

    /// Whether level `n` is one the build asks for.
    fn builds(&self, n: u32) -> bool;

    /// Level `n`'s file is present and valid: it is held if a level above
    /// `needs` it.
    fn reuse(&mut self, n: u32, needed: bool) -> Result<Self::Report, BuildError>;

    /// Level `n` is solved and stored, and held if a level above `needs` it.
    fn build(&mut self, n: u32, needed: bool) -> Result<Self::Report, BuildError>;

    /// Level `n` is not built (a build of one level skips those it does not
    /// reach), though a level above it may be `needed`.
    fn skip(&mut self, n: u32, needed: bool) -> Result<(), BuildError>;

    /// Whether level `n`'s valid file is present.
    fn present(&self, n: u32) -> bool;

    /// The level's report in a report of the site's.
    fn level_report(report: &Self::Report) -> &LevelReport;
}

/// The build loop, the same wherever the levels are: levels in order, each
/// reused or built, those below `last_to_build` held for the levels above.
pub(crate) fn build_levels<S: Site>(
    site: &mut S,
    last_to_build: Option<usize>,
    observer: &dyn BuildObserver,
) -> Result<Vec<S::Report>, BuildError> {
    let mut reports = Vec::new();
    for n in 0..site.levels() {
        let needed = last_to_build.is_some_and(|last| (n as usize) < last);
        if !site.builds(n) {
            site.skip(n, needed)?;
            continue;
        }
        let report = if site.present(n) {
            site.reuse(n, needed)?
        } else {
            site.build(n, needed)?
        };
        observer.level_finished(S::level_report(&report));
        reports.push(report);
    }
    Ok(reports)
}

/// The levels of one process: read or solved here, held in memory or as
/// scratch files.
struct LocalSite<'a, K: Solve> {
    options: &'a BuildOptions,
    dir: &'a Path,
    observer: &'a dyn BuildObserver,
    solver: &'a LevelSolver<'a, K>,
    scratch: Scratch,
    /// The levels held for the levels above.
    solved: Levels<K>,
    /// The valid table of each level, taken as the level is reused.
    present: Vec<Option<Table<K>>>,
    /// Whether the lower levels are read (not if the one level to build
    /// resumes past the part that reads them, [`Alone`]).
    lower_read: bool,
    /// The last level to build, if it reads them for a first part only.
    split_level: Option<u32>,
}

impl<K: Solve> Site for LocalSite<'_, K> {
    type Report = LevelReport;

    fn levels(&self) -> u32 {
        self.options.max_stones + 1
    }

    fn builds(&self, n: u32) -> bool {
        self.options.builds_level(n)
    }

    fn present(&self, n: u32) -> bool {
        self.present[n as usize].is_some()
    }

    fn skip(&mut self, _n: u32, needed: bool) -> Result<(), BuildError> {
        if needed {
            self.solved.push_unreached();
        }
        Ok(())
    }

    fn reuse(&mut self, n: u32, needed: bool) -> Result<LevelReport, BuildError> {
        let table = self.present[n as usize].take().expect("a present level");
        self.hold_unread(needed);
        if needed && self.lower_read {
            self.scratch.hold_table(&mut self.solved, &table)?;
        }
        Ok(reused_report(&table))
    }

    fn build(&mut self, n: u32, needed: bool) -> Result<LevelReport, BuildError> {
        if self.options.interrupted() {
            return Err(BuildError::Interrupted);
        }
        self.hold_unread(needed);
        let release = (self.split_level == Some(n)).then_some(&self.scratch);
        let (report, solution) = build_level(
            self.options,
            self.dir,
            n,
            &mut self.solved,
            self.observer,
            self.solver,
            release,
        )?;
        if needed && self.lower_read {
            match solution.mapped {
                Some(map) => self.scratch.hold_mapped(&mut self.solved, n, map)?,
                None => self.scratch.hold(&mut self.solved, n, solution.symbols)?,
            }
            // As a build resumed later would decode it from its table.
            let stored = Table::<K>::open(&level_path(self.dir, n), None)?;
            self.scratch.keep_for_reuse(n, &stored)?;
        }
        Ok(report)
    }

    fn level_report(report: &LevelReport) -> &LevelReport {
        report
    }
}

impl<K: Solve> LocalSite<'_, K> {
    /// A level needed above whose lower levels are not read is held as
    /// unreached.
    fn hold_unread(&mut self, needed: bool) {
        if needed && !self.lower_read {
            self.solved.push_unreached();
        }
    }
}

/// Where a build's working files named `name` go: the tables' directory
/// `dir`'s subdirectory, or a directory in `--scratch` named after the
/// tables and a digest of their full path. The name must be the same for
/// every run on the same tables, or a build run again could not find the
/// lists its checkpoint names; the digest keeps builds of different
/// directories apart in a shared `--scratch`, and the tables' lock keeps
/// two runs on the same directory from meeting.
fn work_dir(options: &BuildOptions, dir: &Path, name: &str) -> PathBuf {
    let Some(scratch) = &options.scratch else {
        return dir.join(name);
    };
    // The tables' directory is named after the rule set and kind.
    let tables = dir.file_name().unwrap_or_default().to_string_lossy();
    let full = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let digest = crc32fast::hash(full.as_os_str().as_encoded_bytes());
    if name == SCRATCH_DIR {
        scratch.join(format!("{tables}-{digest:08x}"))
    } else {
        scratch.join(format!("{tables}-{digest:08x}-{name}"))
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
    let lock = lock::lock(dir, options.wait_for_lock, options.interrupt.as_deref())?;
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
    let mut present: Vec<Option<Table<K>>> = Vec::new();
    for n in 0..=options.max_stones {
        let unchanged = known
            .next()
            .flatten()
            .filter(|table| !table.changed_on_disk());
        let table = match unchanged {
            _ if options.force || !options.builds_level(n) => None,
            Some(table) => Some(table),
            None => valid_table(&options.rules, dir, n)?,
        };
        // A level whose depths are asked for and missing is solved again.
        let depths_missing = options.depths
            && table.is_some()
            && valid_table::<Depth<K>>(&options.rules, dir, n)?.is_none();
        present.push(table.filter(|_| !depths_missing));
    }
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

/// The table of kind `K` of level `n` if its file is present and passes
/// every check (one that fails is built again). Where the level's file
/// should be, something that is not a file (a directory, a FIFO, a device)
/// is an error: the build would replace what someone put there on purpose.
pub(crate) fn valid_table<K: TableKind>(
    rules: &Rules,
    dir: &Path,
    n: u32,
) -> Result<Option<Table<K>>, BuildError> {
    let expected = TableId {
        rules: *rules,
        level: n,
    };
    match Table::<K>::open(&table_path::<K>(dir, n), Some(expected)) {
        Ok(table) => Ok(table.check_file_checksum().is_ok().then_some(table)),
        Err(e @ FormatError::NotRegularFile { .. }) => Err(e.into()),
        Err(_) => Ok(None),
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
    let depths = options
        .depths
        .then(|| Depths::for_kind::<K>(0, positions as usize));
    let mut job = level_job(
        options,
        n,
        solved,
        (&advanced, Some(&resumed)),
        checkpoints.as_ref(),
    );
    job.depths = depths.as_ref();
    let solution = (solver.solve)(&job)?;
    if let Some(depths) = depths {
        store_depths::<K>(options, dir, n, &depths.finished(), solution.held_symbols())?;
    }
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
type Units<'a> = dyn Fn(u64) + Sync + 'a;

/// The job of solving level `n` from `lower`, its work units and those
/// done before it resumed reported to `progress` and `resumed`.
fn level_job<'a, K: Solve>(
    options: &'a BuildOptions,
    n: u32,
    lower: &'a Levels<K>,
    (progress, resumed): (&'a Units<'a>, Option<&'a Units<'a>>),
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
        mark_exits: marks_exits::<K>(options),
        depths: None,
    }
}

/// Whether the build's levels mark their positions whose value is their
/// best exit's, as a compact table stores them.
fn marks_exits<K: Solve>(options: &BuildOptions) -> bool {
    K::stored_encoding(&options.rules, options.encoding) == Encoding::Compact
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
/// cannot cycle, else (or for `depths`, which the threshold propagation
/// finds) the retrograde analysis.
fn strategy_for(rules: &Rules, depths: bool) -> Chosen {
    if depths || rules.variant().can_cycle() {
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

/// Writes level `n`'s depth table from its positions' depths, `plies`,
/// and their entries of kind `K`, `values` ([`depth_symbols`]).
fn store_depths<K: Solve>(
    options: &BuildOptions,
    dir: &Path,
    n: u32,
    plies: &Finished,
    values: &[i8],
) -> Result<(), BuildError> {
    let block_size = options.block_size();
    // Whole blocks a piece, so that the pieces fill as the level would.
    let piece = (1 << 20) / block_size as usize * block_size as usize;
    let mut symbols = vec![0i8; plies.len()];
    let long: Vec<Vec<(u64, u16)>> = symbols
        .par_chunks_mut(piece)
        .zip(values.par_chunks(piece * K::WIDTH))
        .enumerate()
        .map(|(k, (out, values))| {
            let first = k * piece;
            let plies = |at| plies.plies(first + at);
            depth_symbols::<K>(n, first as u64, block_size, plies, values, out)
        })
        .collect::<Result<_, _>>()?;
    let long = listable(n, long.into_iter().flatten().collect())?;
    let header = Header::for_depths::<K>(&options.rules, n, &symbols, long, block_size);
    write_level(&header, &symbols, &depth_path(dir, n))?;
    Ok(())
}

/// Solves levels `0..=max_stones` in memory: small boards, tests and
/// benchmarks (a build writes each level to disk as it goes).
pub fn solve_in_memory<K: Solve>(rules: &Rules, max_stones: u32) -> Levels<K> {
    let mut solved = Levels::new();
    for n in 0..=max_stones {
        let solution = solve_level(rules, n, &solved, &Quiet);
        solved.push(solution.symbols);
    }
    solved
}

/// Solves level `n` from the solved levels `0..n`, in memory, without
/// checkpoints. `progress` is told `2 × positions` work units in all, as
/// [`Progress::advanced`] (not [`Progress::level_started`]: the caller
/// knows the level).
pub fn solve_level<K: Solve>(
    rules: &Rules,
    n: u32,
    lower: &Levels<K>,
    progress: &dyn Progress,
) -> Solution {
    let job = LevelJob {
        rules,
        level: n,
        lower,
        progress: &|units| progress.advanced(units),
        resumed: None,
        checkpoints: None,
        interrupt: None,
        mark_exits: false,
        depths: None,
    };
    strategy_for(rules, false)
        .solve(&job)
        .expect("without checkpoints nothing can fail")
}
