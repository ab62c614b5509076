//! The lean mode: a level solved with a few bits a position in memory
//! (four for even values, eight for forced bounds), its exits and
//! decisions in sequential lists on disk (`build --memory lean`).
//!
//! The retrograde strategy holds two bytes a position for even values
//! (three for forced bounds): the exits, and from the start a counter of
//! same-level children not yet in the first set. The lean mode keeps the
//! exits on disk and, in the few bits of a position's state, the counter
//! and where the position stands. In even values' terms (forced bounds
//! grow `M_t` and `O_t` by the same rules, [`kind`]):
//!
//! 1. **Forward pass** ([`forward`]): every position's best exit (or
//!    terminal value) is found as the retrograde strategy finds it, and
//!    the position's index is appended to the list of that value on disk
//!    ([`lists`]), in index order; its first state (its moves that keep
//!    the level, all pending) goes to the level's state file. A long pass
//!    is checkpointed between groups of positions, its lists sealed
//!    ([`checkpoint`]).
//! 2. **Thresholds** `s = n, …, 1`: the list of `−s` makes its positions
//!    *eligible* for `L` ([`state`]), those with no move pending seeding
//!    `L_s`; then the list of `+s` seeds `W_s`. Each new member of either
//!    set is propagated to its same-level parents, as the retrograde
//!    strategy does: a parent of a new `L` member is won, a parent of a
//!    new `W` member has one move fewer pending, and if it is eligible, is
//!    lost when none is left. Sets only grow, so the attractors, and every
//!    value, are those of the retrograde strategy.
//! 3. When a threshold ends, the positions it decided are written, in
//!    index order, to its lists of each set.
//! 4. The level's values are put together from the decision lists (a
//!    position in neither is worth 0), and whether each is its best exit's
//!    value from the exit lists.
//!
//! The result is byte for byte the retrograde strategy's.

mod checkpoint;
mod decisions;
mod forward;
mod kind;
mod lists;
mod state;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use mancala_core::{LevelIndex, Rules};
use mancala_format::{filled_on_huge_pages, new_mapped_file};
use memmap2::MmapMut;
use rayon::prelude::*;

use crate::checkpoint::Checkpoints;
use crate::error::BuildError;
use crate::kernel::{thresholds, Depths, Frontier, Ledger, LocalExchange, Pacing, Part};
use crate::solve::Solution;
use crate::strategy::LevelJob;
use decisions::DecisionWriter;
pub use kind::LeanKind;
use lists::List;
use state::LeanState;

/// Seeds read from a list together when a threshold is seeded, and
/// frontier members propagated from together. Small in debug builds, so
/// the tests work in several pieces.
const PIECE: usize = if cfg!(debug_assertions) {
    1 << 6
} else {
    1 << 20
};

/// Eighths of a byte a position the lean state of kind `K` takes with
/// `pits` pits a side, read off the state's own layout.
pub(crate) fn state_eighths<K: LeanKind>(pits: usize) -> u64 {
    const POSITIONS: usize = 8 << 10;
    (K::Lean::bytes_for(POSITIONS, pits) / (POSITIONS / 8)) as u64
}

/// Solves levels with a few bits a position in memory, its lists in `dir`
/// (a directory of its own per level, removed once it is solved).
#[derive(Clone, Debug)]
pub struct Lean {
    /// Where the level's lists are written.
    pub dir: PathBuf,
    /// A solved level of at least this many positions is put together in
    /// a file-backed mapping ([`Solution::mapped`]), not in memory.
    pub mapped_min_positions: u64,
}

impl Lean {
    /// Solves `job`'s level, resuming from its checkpoint if a valid one
    /// is there (with [`LevelJob::checkpoints`]), and saving new ones,
    /// with the depths of the thresholds done where they are asked for.
    pub fn solve<K: LeanKind>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError> {
        job.assert_in_order();
        let n = job.level;
        let saved = job
            .checkpoints
            .and_then(|c| self.saved::<K>(c, job.rules, n, job.depths));
        if saved.is_none() && lacks_lower_levels(job) {
            return Err(BuildError::CheckpointLost { level: n });
        }
        self.keeping_lists_if_checkpointed(job, || {
            let resumed = saved.is_some();
            let (level, progress, last_saved) = self.start(job, saved)?;
            level.solve(job, progress, (resumed, last_saved))
        })
    }

    /// Solves the part of `job`'s level that reads the lower levels, its
    /// forward pass, and saves a checkpoint after it: then [`Lean::solve`]
    /// finishes the level without them ([`Lean::resumes`]), and a build
    /// can let their memory and scratch files go first. The state goes
    /// from its file to the checkpoint without being held in memory, so
    /// that the level's peak is the larger of the lower levels and its
    /// state, not their sum. Does nothing without
    /// [`LevelJob::checkpoints`], or if the level resumes past its forward
    /// pass already.
    pub fn solve_forward<K: LeanKind>(&self, job: &LevelJob<K>) -> Result<(), BuildError> {
        job.assert_in_order();
        let Some(checkpoints) = job.checkpoints else {
            return Ok(());
        };
        if self.resumes::<K>(checkpoints, job.rules, job.level) {
            return Ok(());
        }
        let n = job.level;
        let index = LevelIndex::new(job.rules.pits(), n);
        let saved = forward::pass(job, &index, &self.level_dir(n)).and_then(|passed| {
            let lists = Progress {
                exits: passed.exits,
                decisions: Vec::new(),
            }
            .list_lengths();
            let file = File::open(&passed.state).map_err(|e| lists::io(&passed.state, e))?;
            let mut state = Crc32Reader {
                input: file,
                crc: crc32fast::Hasher::new(),
            };
            // The state goes on after the starts as zeros.
            let count = index.count() as usize;
            let pits = job.rules.pits();
            let rest = K::Lean::bytes_for(count, pits) - K::Lean::start_bytes_for(count, pits);
            let mut whole = (&mut state).chain(std::io::repeat(0).take(rest as u64));
            let path = checkpoints.path(n);
            checkpoint::save(&path, n, index.count(), n, &lists, &mut whole)?;
            if state.crc.finalize() != passed.state_crc {
                let _ = std::fs::remove_file(&path);
                return Err(forward::state_damaged(
                    &passed.state,
                    "its checksum fails".into(),
                ));
            }
            forward::remove_state_file(&self.level_dir(n));
            Ok(())
        });
        if let Err(e) = &saved {
            self.remove_lists_unless_checkpointed(job, e);
        }
        saved
    }

    /// Runs `work` on `job`'s level, then removes the level's lists unless
    /// it failed leaving a checkpoint that relies on them.
    fn keeping_lists_if_checkpointed<T>(
        &self,
        job: &LevelJob<impl LeanKind>,
        work: impl FnOnce() -> Result<T, BuildError>,
    ) -> Result<T, BuildError> {
        let done = work();
        match &done {
            Ok(_) => {
                let _ = std::fs::remove_dir_all(self.level_dir(job.level));
            }
            Err(e) => self.remove_lists_unless_checkpointed(job, e),
        }
        done
    }

    /// Removes `job`'s level's lists, after `error`, unless a checkpoint
    /// relies on them; a damaged scratch file takes the checkpoint with
    /// it, which would have it read again.
    fn remove_lists_unless_checkpointed(&self, job: &LevelJob<impl LeanKind>, error: &BuildError) {
        let n = job.level;
        if let (BuildError::ScratchDamaged { .. }, Some(checkpoints)) = (error, job.checkpoints) {
            checkpoints.remove(n);
        }
        if !job.checkpoints.is_some_and(|c| c.path(n).exists()) {
            let _ = std::fs::remove_dir_all(self.level_dir(n));
        }
    }

    /// `job`'s level ready for its thresholds: from the `saved` state and
    /// progress of a checkpoint, or else after a forward pass (resumed
    /// from its own checkpoint if it has one). Returns when the level's
    /// work was last saved, or else began.
    fn start<'a, K: LeanKind>(
        &'a self,
        job: &'a LevelJob<K>,
        saved: Option<(Vec<u8>, Progress)>,
    ) -> Result<(Level<'a, K>, Progress, Instant), BuildError> {
        let n = job.level;
        let index = LevelIndex::new(job.rules.pits(), n);
        let count = index.count() as usize;
        let dir = self.level_dir(n);
        let (state, progress, last_saved) = match saved {
            Some((state, progress)) => {
                remove_frontiers(&dir);
                let state = K::Lean::from_bytes(state, count, job.rules.pits());
                (state, progress, Instant::now())
            }
            None => {
                let passed = forward::pass(job, &index, &dir)?;
                let state = forward::read_state::<K>(&passed, count, job.rules.pits())?;
                let decisions = Vec::with_capacity(n as usize);
                let progress = Progress {
                    exits: passed.exits,
                    decisions,
                };
                (state, progress, passed.last_saved)
            }
        };
        let level = Level {
            lean: self,
            index,
            dir,
            state,
            frontiers: AtomicU64::new(0),
        };
        Ok((level, progress, last_saved))
    }
}

impl Lean {
    /// Whether [`Lean::solve`] would resume level `n` of `rules` past its
    /// forward pass, from a valid checkpoint in `checkpoints` and the lists
    /// it names: then it reads no lower level, and a build need not hold
    /// them (nor write their scratch files) to finish it.
    /// (A level whose depths are asked for is not resumed so: its
    /// checkpoints hold depths, which this one does not look for.)
    pub fn resumes<K: LeanKind>(&self, checkpoints: &Checkpoints, rules: &Rules, n: u32) -> bool {
        self.saved::<K>(checkpoints, rules, n, None).is_some()
    }

    /// The state and progress level `n`'s checkpoint records, if it is
    /// valid and every list it names is there; with `depths`, its depths
    /// (after the state) are taken back into them.
    fn saved<K: LeanKind>(
        &self,
        checkpoints: &Checkpoints,
        rules: &Rules,
        n: u32,
        depths: Option<&Depths>,
    ) -> Option<(Vec<u8>, Progress)> {
        let count = LevelIndex::new(rules.pits(), n).count();
        let state_bytes = K::Lean::bytes_for(count as usize, rules.pits());
        let depth_bytes = depths.map_or(0, |_| 2 * count as usize);
        let path = checkpoints.path(n);
        let mut saved = checkpoint::load(&path, n, count, state_bytes + depth_bytes)?;
        let depth_plies = saved.state.split_off(state_bytes);
        let resumed = Progress::resumed(&self.level_dir(n), K::exit_lists(n), n, saved)?;
        // Taken back only once the checkpoint is known good: a level that
        // starts again must find no depth recorded.
        match depths {
            Some(depths) if !depths.restore(&depth_plies) => None,
            _ => Some(resumed),
        }
    }

    /// The directory of level `n`'s lists.
    fn level_dir(&self, n: u32) -> PathBuf {
        self.dir.join(format!("level-{n:03}"))
    }
}

/// Whether a level the job's level reaches was skipped
/// ([`mancala_format::Levels::push_unreached`]): held back because the
/// level was to resume past its forward pass.
fn lacks_lower_levels<K: LeanKind>(job: &LevelJob<K>) -> bool {
    (0..job.level).any(|m| job.rules.reaches(job.level, m) && job.lower.is_unreached(m))
}

/// How far a level got: its exit lists, and the decisions of every
/// threshold done.
struct Progress {
    exits: Vec<List>,
    /// Thresholds `n, n − 1, …` done, in that order.
    decisions: Vec<Decisions>,
}

impl Progress {
    /// The progress a checkpoint of level `n` (of `exit_lists` exit lists)
    /// in `dir` records, with its state, if every list it names is there.
    fn resumed(
        dir: &Path,
        exit_lists: usize,
        n: u32,
        saved: checkpoint::Saved,
    ) -> Option<(Vec<u8>, Progress)> {
        let done = n.checked_sub(saved.next_threshold)? as usize;
        if saved.lists.len() != exit_lists + 2 * done {
            return None;
        }
        let list = |path: PathBuf, len: u64| path.exists().then_some(List { path, len });
        let mut lens = saved.lists.iter().copied();
        let mut next = |path| list(path, lens.next().expect("counted above"));
        let exits = (0..exit_lists)
            .map(|k| next(exit_path(dir, k)))
            .collect::<Option<Vec<_>>>()?;
        let decisions = (0..done)
            .map(|d| {
                let t = n - d as u32;
                Some(Decisions {
                    first: next(first_path(dir, t))?,
                    second: next(second_path(dir, t))?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some((saved.state, Progress { exits, decisions }))
    }

    /// The length of every list, in the order [`Progress::resumed`] reads
    /// them.
    fn list_lengths(&self) -> Vec<u64> {
        let decisions = self.decisions.iter().flat_map(|d| [&d.first, &d.second]);
        self.exits
            .iter()
            .chain(decisions)
            .map(|list| list.len)
            .collect()
    }
}

/// The names of a level's lists in its directory: exit list `k` (in the
/// kind's numbering, [`LeanKind`]), and the positions that joined each set
/// at threshold `t`.
fn exit_path(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("exit-{k}"))
}

fn first_path(dir: &Path, t: u32) -> PathBuf {
    dir.join(format!("first-{t}"))
}

fn second_path(dir: &Path, t: u32) -> PathBuf {
    dir.join(format!("second-{t}"))
}

impl Lean {
    /// A zeroed mapping of `len` bytes for level `n`'s symbols, of a file
    /// unlinked at once: its blocks last as long as the mapping, and a
    /// killed build leaves nothing behind.
    fn symbols_file(&self, n: u32, len: u64) -> Result<MmapMut, BuildError> {
        let path = self.dir.join(format!("level-{n:03}.symbols"));
        let map = new_mapped_file(&path, len)?;
        std::fs::remove_file(&path).map_err(|source| BuildError::Io { path, source })?;
        Ok(map)
    }
}

/// Where a level's symbols are put together.
enum Symbols {
    Held(Vec<i8>),
    Mapped(MmapMut),
}

impl Symbols {
    fn slice(&mut self) -> &mut [i8] {
        match self {
            Symbols::Held(symbols) => symbols,
            Symbols::Mapped(map) => bytemuck::cast_slice_mut(map),
        }
    }
}

/// A level being solved.
struct Level<'a, K: LeanKind> {
    lean: &'a Lean,
    index: LevelIndex,
    dir: PathBuf,
    state: K::Lean,
    /// Frontiers started, which names their files.
    frontiers: AtomicU64,
}

/// A threshold's decisions, in index order: the positions that joined
/// each set.
pub struct Decisions {
    pub(crate) first: List,
    pub(crate) second: List,
}

impl<K: LeanKind> Level<'_, K> {
    /// Solves the level's thresholds from `progress` on (`resumed` from a
    /// checkpoint, or just after the forward pass and its seeding), the
    /// level's work `last_saved` then: a checkpoint is due once
    /// [`Checkpoints::every`] has passed since, which saves a long forward
    /// pass's end before the first threshold.
    fn solve(
        &self,
        job: &LevelJob<K>,
        progress: Progress,
        (resumed, last_saved): (bool, Instant),
    ) -> Result<Solution, BuildError> {
        let n = job.level;
        let count = self.index.count();
        let work = ThresholdWork::new::<K>(n, count, &progress.exits);
        let from = n - progress.decisions.len() as u32;
        if resumed {
            job.report_resumed(count + work.done(from));
        }
        let part = Part {
            rules: job.rules,
            index: self.index,
            owned: 0..count,
        };
        let every = job.checkpoints.map(|c| c.every);
        let mut pacing = Pacing::new(job.interrupt, every, last_saved);
        let mut progress = std::thread::scope(|scope| {
            let mut ledger = LeanThresholds {
                level: self,
                job,
                progress,
                work,
                reporter: None,
                writer: DecisionWriter::start(scope, &self.dir),
            };
            let solved = thresholds(&part, &LocalExchange, &mut ledger, from, &mut pacing);
            let written = ledger.writer.written();
            solved?;
            ledger.progress.decisions.extend(written?);
            Ok::<_, BuildError>(ledger.progress)
        })?;
        if n == 0 {
            (job.progress)(count);
        }
        progress.decisions.reverse();
        self.assemble(job, &progress.exits, &progress.decisions)
    }

    /// Saves a checkpoint before threshold `next`, if the job keeps them.
    fn save(&self, job: &LevelJob<K>, next: u32, progress: &Progress) -> Result<(), BuildError> {
        let Some(checkpoints) = job.checkpoints else {
            return Ok(());
        };
        let state = self.state.bytes();
        let mut depths = job.depths.map(Depths::le_bytes);
        let depths: &mut dyn Read = match &mut depths {
            Some(depths) => depths,
            None => &mut std::io::empty(),
        };
        checkpoint::save(
            &checkpoints.path(job.level),
            job.level,
            self.index.count(),
            next,
            &progress.list_lengths(),
            &mut state.chain(depths),
        )?;
        forward::remove_state_file(&self.dir);
        Ok(())
    }

    /// The positions of `list` (for even values, those whose best exit is
    /// worth `s`) join the first set if they are not in it.
    fn seed_first(&self, list: &List, read: &dyn Fn(u64)) -> Result<Frontier, BuildError> {
        self.joined_from(list, read, |at| self.state.join_first(at))
    }

    /// A new, empty frontier, with a file of its own to spill to.
    fn frontier(&self) -> Frontier {
        let k = self.frontiers.fetch_add(1, Relaxed);
        Frontier::spilling_to(self.dir.join(format!("frontier-{k}")))
    }

    /// The blocked positions of `list` (for even values, those whose best
    /// exit is worth `−s`) become eligible for the second set; those with
    /// no move pending join it.
    fn seed_second(&self, list: &List, read: &dyn Fn(u64)) -> Result<Frontier, BuildError> {
        self.joined_from(list, read, |at| self.state.make_eligible(at))
    }

    /// The positions of `list` for which `join` says they joined a set, in
    /// a frontier; the list is read a piece at a time, and `read` is told
    /// how many entries each piece had. The next piece is read while the
    /// last is joined, so that decoding the list does not leave the other
    /// threads idle.
    fn joined_from(
        &self,
        list: &List,
        read: &dyn Fn(u64),
        join: impl Fn(usize) -> bool + Sync,
    ) -> Result<Frontier, BuildError> {
        let join = |piece: &[u64]| -> Vec<u64> {
            piece
                .par_iter()
                .copied()
                .filter(|&at| join(at as usize))
                .collect()
        };
        let mut joined = self.frontier();
        let mut reader = list.read(self.index.count())?;
        let mut piece = reader.next_indices(PIECE)?;
        while !piece.is_empty() {
            let (next, found) = rayon::join(|| reader.next_indices(PIECE), || join(&piece));
            joined.extend(found)?;
            read(piece.len() as u64);
            piece = next?;
        }
        Ok(joined)
    }

    /// The level's symbols, put together (in a mapping if the level is
    /// large) from the decisions of thresholds `1..=n` (`decisions[t −
    /// 1]`), with the exit marks `job` asks for.
    fn assemble(
        &self,
        job: &LevelJob<K>,
        exits: &[List],
        decisions: &[Decisions],
    ) -> Result<Solution, BuildError> {
        let count = self.index.count();
        let len = K::WIDTH as u64 * count;
        let mut symbols = if count >= self.lean.mapped_min_positions {
            Symbols::Mapped(self.lean.symbols_file(self.index.stones(), len)?)
        } else {
            Symbols::Held(filled_on_huge_pages(len as usize, 0))
        };
        let slice = symbols.slice();
        K::assemble(job.level, slice, decisions)?;
        let exit_best = K::exit_marks(job, slice, exits)?;
        let (symbols, mapped) = match symbols {
            Symbols::Held(symbols) => (symbols, None),
            Symbols::Mapped(map) => (Vec::new(), Some(map)),
        };
        Ok(Solution {
            symbols,
            mapped,
            exit_best,
        })
    }
}

/// A lean level's thresholds, as the kernel grows them: seeded from the
/// exit lists, each one's decisions written to lists when it ends.
struct LeanThresholds<'a, 'scope, K: LeanKind> {
    level: &'a Level<'a, K>,
    job: &'a LevelJob<'a, K>,
    /// The exit lists, and the decision lists written so far.
    progress: Progress,
    work: ThresholdWork,
    /// The current threshold's progress.
    reporter: Option<ThresholdReporter<'a>>,
    writer: DecisionWriter<'scope>,
}

impl<K: LeanKind> Ledger for LeanThresholds<'_, '_, K> {
    fn frontier(&self) -> Frontier {
        self.level.frontier()
    }

    fn frontier_piece(&self) -> usize {
        PIECE
    }

    fn seed(&mut self, s: u32) -> Result<(Frontier, Frontier), BuildError> {
        let n = self.job.level;
        let reporter = self.work.reporter(s, self.job.progress);
        let read = |entries| reporter.read(entries);
        let exits = &self.progress.exits;
        let seconds = self
            .level
            .seed_second(&exits[K::eligible_at(n, s)], &read)?;
        let firsts = self.level.seed_first(&exits[K::first_seeds(n, s)], &read)?;
        self.reporter = Some(reporter);
        Ok((firsts, seconds))
    }

    /// Each edge is one move fewer pending.
    #[inline]
    fn parent_of_first(&self, _: u32, at: usize, edges: u8) -> bool {
        (0..edges).fold(false, |joined, _| {
            self.level.state.child_joined_first(at) || joined
        })
    }

    #[inline]
    fn parent_of_second(&self, _: u32, at: usize) -> bool {
        self.level.state.join_first(at)
    }

    #[inline]
    fn prefetch_parent_of_first(&self, at: usize) {
        self.level.state.prefetch_for_child_joined_first(at);
    }

    #[inline]
    fn prefetch_parent_of_second(&self, at: usize) {
        self.level.state.prefetch_for_join_first(at);
    }

    fn depths(&self) -> Option<&Depths> {
        self.job.depths
    }

    fn drained(&self, members: u64) {
        if let Some(reporter) = &self.reporter {
            reporter.drained(members);
        }
    }

    fn threshold_done(&mut self, s: u32) -> Result<(), BuildError> {
        let state = &self.level.state;
        self.writer.threshold(s, |write| state.take_decided(write));
        if let Some(reporter) = self.reporter.take() {
            reporter.finish();
        }
        Ok(())
    }

    fn save(&mut self, next: u32) -> Result<(), BuildError> {
        self.progress.decisions.extend(self.writer.written()?);
        self.level.save(self.job, next, &self.progress)
    }
}

/// The share of a level's work units (`count` of them) that follows its
/// forward pass, split among the thresholds: each weighs as much as the
/// exit lists it seeds from hold. Most positions are worth little, so the
/// low thresholds, which come last, take most of the time: an even split
/// of the units would tell an ETA that the level is nearly done when most
/// of its work is ahead.
struct ThresholdWork {
    count: u64,
    /// Threshold `s`'s weight at `s − 1`.
    weights: Vec<u64>,
    total: u64,
}

impl ThresholdWork {
    fn new<K: LeanKind>(n: u32, count: u64, exits: &[List]) -> ThresholdWork {
        let weights: Vec<u64> = (1..=n)
            .map(|s| 1 + exits[K::eligible_at(n, s)].len + exits[K::first_seeds(n, s)].len)
            .collect();
        ThresholdWork::weighing(count, weights)
    }

    /// The work of thresholds weighing `weights`, told in `count` units.
    fn weighing(count: u64, weights: Vec<u64>) -> ThresholdWork {
        let total = weights.iter().sum::<u64>().max(1);
        ThresholdWork {
            count,
            weights,
            total,
        }
    }

    /// The units done once thresholds `n, n − 1, …, s + 1` are.
    fn done(&self, s: u32) -> u64 {
        let weight: u64 = self.weights[s as usize..].iter().sum();
        scale(self.count, weight, self.total)
    }

    /// Threshold `s`'s units, told to `progress` as its seeds are read.
    fn reporter<'a>(&self, s: u32, progress: &'a (dyn Fn(u64) + Sync)) -> ThresholdReporter<'a> {
        ThresholdReporter {
            units: self.done(s - 1) - self.done(s),
            weight: self.weights[s as usize - 1],
            read: AtomicU64::new(0),
            drained: AtomicU64::new(0),
            told: AtomicU64::new(0),
            progress,
        }
    }
}

/// `x · numerator / denominator`, rounded down, without overflow.
fn scale(x: u64, numerator: u64, denominator: u64) -> u64 {
    (x as u128 * numerator as u128 / denominator as u128) as u64
}

/// Tells a threshold's units as it goes, so that a long threshold shows
/// progress before it ends: a sixth of them as its seed lists are read
/// (reading and seeding is the small part of a threshold), the rest as its
/// propagation drains its frontiers, whose members number about twice its
/// seeds (capped there; whatever is left is told when it ends).
struct ThresholdReporter<'a> {
    units: u64,
    weight: u64,
    /// Seed entries read so far.
    read: AtomicU64,
    /// Frontier members drained so far.
    drained: AtomicU64,
    /// Units told so far.
    told: AtomicU64,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl ThresholdReporter<'_> {
    /// The units that go with reading the seeds.
    fn seeding_units(&self) -> u64 {
        self.units / 6
    }

    /// `entries` more seed entries were read.
    fn read(&self, entries: u64) {
        let read = self.read.fetch_add(entries, Relaxed) + entries;
        let due = scale(self.seeding_units(), read, self.weight);
        self.tell(due.min(self.seeding_units()));
    }

    /// `members` more frontier members were drained.
    fn drained(&self, members: u64) {
        let drained = self.drained.fetch_add(members, Relaxed) + members;
        let propagating = self.units - self.seeding_units();
        let expected = 2 * self.weight;
        let due = scale(propagating, drained.min(expected), expected);
        self.tell(self.seeding_units() + due);
    }

    /// The threshold is over: all its units are told.
    fn finish(&self) {
        self.tell(self.units);
    }

    fn tell(&self, due: u64) {
        let told = self.told.fetch_max(due, Relaxed);
        if due > told {
            (self.progress)(due - told);
        }
    }
}

/// Removes the spilled frontiers a killed run left in the level's list
/// directory `dir`: a checkpoint is taken between thresholds, when no
/// frontier is live, so none of them is read again.
fn remove_frontiers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("frontier-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// `dir`, empty.
pub(super) fn recreate(dir: &Path) -> Result<(), BuildError> {
    let io = |source| BuildError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io)?;
    }
    std::fs::create_dir_all(dir).map_err(io)
}

/// A reader that keeps the CRC-32 of what it has read.
struct Crc32Reader<R> {
    input: R,
    crc: crc32fast::Hasher,
}

impl<R: Read> Read for Crc32Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.input.read(buf)?;
        self.crc.update(&buf[..read]);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mancala_format::{Even, Forced};
    use std::sync::Mutex;

    /// The states' sizes, as the memory planner counts them: four bits a
    /// position for even values and six for forced bounds up to six pits
    /// a side, a byte and ten bits beyond.
    #[test]
    fn states_take_the_eighths_the_planner_counts() {
        assert_eq!(state_eighths::<Even>(6), 4);
        assert_eq!(state_eighths::<Forced>(6), 6);
        assert_eq!(state_eighths::<Even>(7), 8);
        assert_eq!(state_eighths::<Forced>(8), 10);
    }

    /// The thresholds tell all the units of the level's second half,
    /// each its share.
    #[test]
    fn the_thresholds_tell_all_their_units() {
        let work = ThresholdWork::weighing(10_000, vec![40, 25, 10, 1]);
        let told = Mutex::new(0);
        let progress = |u| *told.lock().unwrap() += u;
        let told = || *told.lock().unwrap();
        assert_eq!(work.done(4), 0);
        for s in (1..=4).rev() {
            work.reporter(s, &progress).finish();
            assert_eq!(told(), work.done(s - 1));
            assert!(s == 1 || told() < 10_000, "{}", told());
        }
        assert_eq!(told(), 10_000);
    }

    /// A threshold's units are told a piece at a time as its seeds are read
    /// and its frontiers drained, never more than it has, and all of them
    /// once it ends, however far the drained members are from the
    /// expectation.
    #[test]
    fn a_threshold_tells_its_units_as_it_goes_and_all_of_them_at_its_end() {
        for (units, weight, drained) in [(6_000, 100, 150), (6_000, 100, 1_000), (7, 3, 0)] {
            let told = Mutex::new(Vec::new());
            let progress = |u| told.lock().unwrap().push(u);
            let reporter = ThresholdReporter {
                units,
                weight,
                read: AtomicU64::new(0),
                drained: AtomicU64::new(0),
                told: AtomicU64::new(0),
                progress: &progress,
            };
            for _ in 0..weight - 1 {
                reporter.read(1);
            }
            let after_seeds: u64 = told.lock().unwrap().iter().sum();
            assert!(after_seeds <= units / 6, "{after_seeds}");
            for _ in 0..drained / 10 {
                reporter.drained(10);
            }
            let before_end: u64 = told.lock().unwrap().iter().sum();
            assert!(before_end <= units, "{before_end} of {units}");
            if drained > 0 {
                assert!(before_end > after_seeds, "nothing told while draining");
            }
            reporter.finish();
            let told = told.into_inner().unwrap();
            assert_eq!(told.iter().sum::<u64>(), units);
            assert!(
                told.len() > 2 || units < 100,
                "told in {} pieces",
                told.len()
            );
        }
    }
}
