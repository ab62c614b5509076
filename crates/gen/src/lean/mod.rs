//! The lean mode: a level solved with four bits a position in memory, its
//! exits and decisions in sequential lists on disk (`build --memory lean`).
//!
//! The retrograde strategy holds two bytes a position: the best exit and a
//! counter of same-level children not yet won. The lean mode holds neither:
//!
//! 1. **Forward pass**: every position's best exit (or terminal value) is
//!    found as the retrograde strategy finds it, and the position's index
//!    is appended to the list of that value on disk ([`lists`]), in index
//!    order.
//! 2. **Thresholds** `s = n, …, 1`: the list of `+s` seeds `W_s`; the list
//!    of `−s` makes its positions *eligible* for `L` ([`state`]), and those
//!    whose same-level children are all won already seed `L_s`. Each new
//!    member of either set is propagated to its same-level parents, as the
//!    retrograde strategy does, except that instead of counting a parent's
//!    children down, an eligible parent of a new `W` member looks at its
//!    children and is lost if they are all won. Sets only grow, so the
//!    attractors, and every value, are those of the retrograde strategy.
//! 3. When a threshold ends, the positions it decided are written, in
//!    index order, to its won and lost lists.
//! 4. The level's values are put together from the decision lists (a
//!    position in neither is worth 0), and whether each is its best exit's
//!    value from the exit lists.
//!
//! The result is byte for byte the retrograde strategy's.

mod checkpoint;
mod frontier;
mod lists;
mod state;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use mancala_core::{LevelIndex, Position, Rules, MAX_PITS};
use mancala_format::{filled_on_huge_pages, new_mapped_file, Even};
use memmap2::MmapMut;
use rayon::prelude::*;

use crate::error::BuildError;
use crate::import::exit_best_marks;
use crate::solve::{Solution, Solve};
use crate::strategy::{LevelJob, Looked};
use frontier::Frontier;
use lists::{List, ListWriter};
use state::{Nibbles, ELIGIBLE, WON};

/// Positions whose exits are found in parallel before they are listed.
/// Small in debug builds, so the tests list levels in several groups.
const FORWARD_GROUP: usize = if cfg!(debug_assertions) {
    1 << 10
} else {
    1 << 20
};
/// Positions per unit of parallel work in the forward pass.
const CHUNK: usize = 1 << 14;
/// Positions whose exits are located (and prefetched) before the first is
/// read, as in the retrograde strategy's forward pass.
const BATCH: usize = 32;
/// Eligible positions looked at together when a threshold is seeded, and
/// frontier members propagated from together. Small in debug builds, so
/// the tests work in several pieces.
const PIECE: usize = if cfg!(debug_assertions) {
    1 << 6
} else {
    1 << 20
};
/// Frontier members or candidates per unit of parallel work.
const FRONTIER_CHUNK: usize = 1 << 10;

/// A position's same-level children.
#[derive(Clone, Copy, Default)]
struct Children {
    ranks: [u64; MAX_PITS],
    len: usize,
}

impl Children {
    fn ranks(&self) -> &[u64] {
        &self.ranks[..self.len]
    }
}

/// Solves even levels with four bits a position in memory, its lists in
/// `dir` (a directory of its own per level, removed once it is solved).
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
    /// is there (with [`LevelJob::checkpoints`]), and saving new ones.
    pub fn solve(&self, job: &LevelJob<Even>) -> Result<Solution, BuildError> {
        job.assert_in_order();
        let n = job.level;
        let index = LevelIndex::new(job.rules.pits(), n);
        let count = index.count();
        let dir = self.dir.join(format!("level-{n:03}"));
        let saved = job.checkpoints.and_then(|c| {
            let saved = checkpoint::load(&c.path(n), n, count, Nibbles::bytes_for(count as usize))?;
            Progress::resumed(&dir, n, saved)
        });
        let (state, progress) = match saved {
            Some((state, progress)) => (Nibbles::from_bytes(state, count as usize), Some(progress)),
            None => {
                recreate(&dir)?;
                (Nibbles::new(count as usize), None)
            }
        };
        let level = Level {
            lean: self,
            rules: job.rules,
            index,
            dir: &dir,
            state,
            frontiers: AtomicU64::new(0),
        };
        let solved = level.solve(job, progress);
        let checkpointed = job.checkpoints.is_some_and(|c| c.path(n).exists());
        if solved.is_ok() || !checkpointed {
            let _ = std::fs::remove_dir_all(&dir);
        }
        let mut solution = solved?;
        if job.mark_exits && job.rules.variant().gives_extra_turns() {
            // The best exits listed may be extra turns, which restore
            // nothing: a compact table's marks are those of the restoring
            // exits, found again as an import finds them.
            let values = solution.held_symbols();
            solution.exit_best = Some(exit_best_marks(job.rules, n, values, job.lower));
        }
        Ok(solution)
    }
}

/// How far a level got: its exit lists, and the decisions of every
/// threshold done.
struct Progress {
    exits: Exits,
    /// Thresholds `n, n − 1, …` done, in that order.
    decisions: Vec<Decisions>,
}

impl Progress {
    /// The progress a checkpoint of level `n` in `dir` records, with its
    /// state, if every list it names is there.
    fn resumed(dir: &Path, n: u32, saved: checkpoint::Saved) -> Option<(Vec<u8>, Progress)> {
        let exit_lists = 2 * n as usize + 2;
        let done = n.checked_sub(saved.next_threshold)? as usize;
        if saved.lists.len() != exit_lists + 2 * done {
            return None;
        }
        let list = |path: PathBuf, len: u64| path.exists().then_some(List { path, len });
        let mut lens = saved.lists.iter().copied();
        let mut next = |path| list(path, lens.next().expect("counted above"));
        let by_value = (-(n as i32)..=n as i32)
            .map(|v| next(exit_path(dir, v)))
            .collect::<Option<Vec<_>>>()?;
        let none = next(dir.join(EXIT_NONE))?;
        let decisions = (0..done)
            .map(|d| {
                let s = (n as usize - d) as i32;
                Some(Decisions {
                    won: next(won_path(dir, s))?,
                    lost: next(lost_path(dir, s))?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let exits = Exits {
            n: n as i32,
            by_value,
            none,
        };
        Some((saved.state, Progress { exits, decisions }))
    }

    /// The length of every list, in the order [`Progress::resumed`] reads
    /// them.
    fn list_lengths(&self) -> Vec<u64> {
        let exits = self.exits.by_value.iter().chain([&self.exits.none]);
        let decisions = self.decisions.iter().flat_map(|d| [&d.won, &d.lost]);
        exits.chain(decisions).map(|list| list.len).collect()
    }
}

/// The names of a level's lists in its directory.
const EXIT_NONE: &str = "exit-none";

fn exit_path(dir: &Path, value: i32) -> PathBuf {
    dir.join(format!("exit{value:+}"))
}

fn won_path(dir: &Path, s: i32) -> PathBuf {
    dir.join(format!("won{s}"))
}

fn lost_path(dir: &Path, s: i32) -> PathBuf {
    dir.join(format!("lost{s}"))
}

impl Lean {
    /// A zeroed mapping of `count` bytes for level `n`'s values, of a file
    /// unlinked at once: its blocks last as long as the mapping, and a
    /// killed build leaves nothing behind.
    fn values_file(&self, n: u32, count: u64) -> Result<MmapMut, BuildError> {
        let path = self.dir.join(format!("level-{n:03}.values"));
        let map = new_mapped_file(&path, count)?;
        std::fs::remove_file(&path).map_err(|source| BuildError::Io { path, source })?;
        Ok(map)
    }
}

/// Where a level's values are put together.
enum Values {
    Held(Vec<i8>),
    Mapped(MmapMut),
}

impl Values {
    fn slice(&mut self) -> &mut [i8] {
        match self {
            Values::Held(values) => values,
            Values::Mapped(map) => bytemuck::cast_slice_mut(map),
        }
    }
}

/// A level being solved.
struct Level<'a> {
    lean: &'a Lean,
    rules: &'a Rules,
    index: LevelIndex,
    dir: &'a Path,
    state: Nibbles,
    /// Frontiers started, which names their files.
    frontiers: AtomicU64,
}

/// The exit lists of a level: one per value `−n..=n`, and one of the
/// positions no move leaves.
struct Exits {
    n: i32,
    by_value: Vec<List>,
    none: List,
}

impl Exits {
    fn of(&self, value: i32) -> &List {
        &self.by_value[(value + self.n) as usize]
    }
}

/// A threshold's decisions, in index order.
struct Decisions {
    won: List,
    lost: List,
}

impl Level<'_> {
    /// Solves the level from the start, or from `progress` with the state
    /// it was saved with.
    fn solve(
        &self,
        job: &LevelJob<Even>,
        progress: Option<Progress>,
    ) -> Result<Solution, BuildError> {
        let n = job.level;
        let count = self.index.count();
        let started = Instant::now();
        let done = |s: u32| count * (n - s) as u64 / n.max(1) as u64;
        let mut progress = match progress {
            Some(progress) => {
                let next = n - progress.decisions.len() as u32;
                (job.progress)(count + done(next));
                progress
            }
            None => {
                let exits = self.forward_pass(job)?;
                exits.none.for_each(|at| {
                    self.state.unblock(at as usize);
                })?;
                Progress {
                    exits,
                    decisions: Vec::with_capacity(n as usize),
                }
            }
        };
        let mut last_saved = started;
        for s in (1..=n - progress.decisions.len() as u32).rev() {
            if job.interrupted() {
                self.save(job, s, &progress)?;
                return Err(BuildError::Interrupted);
            }
            if job
                .checkpoints
                .is_some_and(|c| last_saved.elapsed() >= c.every)
            {
                self.save(job, s, &progress)?;
                last_saved = Instant::now();
            }
            let firsts = self.seed_won(progress.exits.of(s as i32))?;
            let seconds = self.seed_lost(progress.exits.of(-(s as i32)))?;
            self.propagate(firsts, seconds)?;
            progress.decisions.push(self.write_decisions(s as i32)?);
            (job.progress)(done(s - 1) - done(s));
        }
        if n == 0 {
            (job.progress)(count);
        }
        progress.decisions.reverse();
        self.assemble(&progress.exits, &progress.decisions, job.mark_exits)
    }

    /// Saves a checkpoint before threshold `next`, if the job keeps them.
    fn save(&self, job: &LevelJob<Even>, next: u32, progress: &Progress) -> Result<(), BuildError> {
        let Some(checkpoints) = job.checkpoints else {
            return Ok(());
        };
        checkpoint::save(
            &checkpoints.path(job.level),
            job.level,
            self.index.count(),
            next,
            &progress.list_lengths(),
            self.state.bytes(),
        )
    }

    /// Phase 1: every position listed under its best exit's value.
    fn forward_pass(&self, job: &LevelJob<Even>) -> Result<Exits, BuildError> {
        let n = job.level;
        let count = self.index.count() as usize;
        let mut by_value = (-(n as i32)..=n as i32)
            .map(|v| ListWriter::create(exit_path(self.dir, v)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut none = ListWriter::create(self.dir.join(EXIT_NONE))?;
        for first in (0..count).step_by(FORWARD_GROUP) {
            if job.interrupted() {
                return Err(BuildError::Interrupted);
            }
            let len = FORWARD_GROUP.min(count - first);
            let best = self.best_exits(job, first, len);
            for (at, &exit) in (first as u64..).zip(&best) {
                if exit as i32 == Even::no_exit() {
                    none.push(at)?;
                } else {
                    by_value[(exit as i32 + n as i32) as usize].push(at)?;
                }
            }
            (job.progress)(len as u64);
        }
        Ok(Exits {
            n: n as i32,
            by_value: by_value
                .into_iter()
                .map(ListWriter::finish)
                .collect::<Result<_, _>>()?,
            none: none.finish()?,
        })
    }

    /// The best exits (or terminal values) of positions `first..first +
    /// len`, [`Even::no_exit`] where no move leaves the level.
    fn best_exits(&self, job: &LevelJob<Even>, first: usize, len: usize) -> Vec<i8> {
        let (rules, lower, n) = (self.rules, job.lower, job.level);
        let mut best = vec![0i8; len];
        best.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, best)| {
                let start = first + chunk * CHUNK;
                let mut positions = self.index.positions_from(start as u64);
                let mut batch = [Looked::default(); BATCH];
                for (piece, best) in best.chunks_mut(BATCH).enumerate() {
                    let start = start + piece * BATCH;
                    let batch = &mut batch[..best.len()];
                    for looked in batch.iter_mut() {
                        let pos = positions.next().expect("the chunk's positions");
                        looked.look(rules, n, &pos, |level, at| lower.prefetch(level, at));
                    }
                    for ((at, best), looked) in (start..).zip(best).zip(batch.iter()) {
                        let (exit, stays) =
                            looked.summary::<Even>(n, |_, level, at| lower.entry_at(level, at));
                        *best = exit as i8;
                        if stays == 1 {
                            self.state.mark_single(at);
                        }
                    }
                }
            });
        best
    }

    /// Undecided positions whose best exit is worth `s` join `W_s`.
    fn seed_won(&self, list: &List) -> Result<Frontier, BuildError> {
        let mut joined = self.frontier();
        let mut piece = Vec::with_capacity(PIECE);
        let mut reader = list.read()?;
        while let Some(at) = reader.next_index()? {
            if self.state.win(at as usize) {
                piece.push(at);
            }
            if piece.len() == PIECE {
                joined.extend(&piece)?;
                piece.clear();
            }
        }
        joined.extend(&piece)?;
        Ok(joined)
    }

    /// A new, empty frontier, with a file of its own to spill to.
    fn frontier(&self) -> Frontier {
        let k = self.frontiers.fetch_add(1, Relaxed);
        Frontier::new(self.dir.join(format!("frontier-{k}")))
    }

    /// Positions whose best exit is worth `−s` become eligible for `L_s`;
    /// those whose same-level children are all in `W_s` join it. The list
    /// is read a piece at a time, so only the new members are held.
    fn seed_lost(&self, list: &List) -> Result<Frontier, BuildError> {
        let mut lost = self.frontier();
        let mut eligible = Vec::with_capacity(PIECE);
        let mut reader = list.read()?;
        while let Some(at) = reader.next_index()? {
            if self.state.unblock(at as usize) {
                eligible.push(at);
            }
            if eligible.len() == PIECE {
                lost.extend(&self.lose_where_children_won(&eligible))?;
                eligible.clear();
            }
        }
        lost.extend(&self.lose_where_children_won(&eligible))?;
        Ok(lost)
    }

    /// Grows both sets of the threshold from their new members until
    /// neither changes, a round's new members in a [`Frontier`] so that
    /// however many there are, only a bounded number are in memory.
    fn propagate(&self, mut firsts: Frontier, mut seconds: Frontier) -> Result<(), BuildError> {
        while !firsts.is_empty() || !seconds.is_empty() {
            let mut new_seconds = self.frontier();
            firsts.drain(PIECE, |piece| new_seconds.extend(&self.lose_parents(piece)))?;
            let mut new_firsts = self.frontier();
            seconds.drain(PIECE, |piece| new_firsts.extend(&self.win_parents(piece)))?;
            (firsts, seconds) = (new_firsts, new_seconds);
        }
        Ok(())
    }

    /// The eligible same-level parents of new `W` members `firsts` whose
    /// children are now all in `W` join `L`; returns them. Each parent is
    /// looked at as un-moving finds it, its position still at hand: a
    /// batch of members' parents have their states prefetched before any
    /// is read, and the eligible ones their children's states.
    fn lose_parents(&self, firsts: &[u64]) -> Vec<u64> {
        let found: Vec<u64> = firsts
            .par_chunks(FRONTIER_CHUNK)
            .flat_map_iter(|members| {
                let mut found = Vec::new();
                let mut parents = Vec::new();
                let mut eligible = Vec::new();
                for batch in members.chunks(BATCH) {
                    parents.clear();
                    self.for_each_parent(batch, |at, parent| parents.push((at, parent)));
                    eligible.clear();
                    for (at, parent) in &parents {
                        if self.state.state(*at as usize) != ELIGIBLE {
                            continue;
                        }
                        // A single child is the new member that led here.
                        let children = if self.state.single(*at as usize) {
                            Children::default()
                        } else {
                            self.children(parent)
                        };
                        for &child in children.ranks() {
                            self.state.prefetch(child as usize);
                        }
                        eligible.push((*at, children));
                    }
                    found.extend(
                        eligible
                            .iter()
                            .filter(|(_, children)| self.all_won(children))
                            .map(|&(at, _)| at),
                    );
                }
                found
            })
            .collect();
        // Found more than once where several children joined at once.
        found
            .into_par_iter()
            .filter(|&at| self.state.lose(at as usize))
            .collect()
    }

    /// Every undecided same-level parent of new `L` members `seconds` can
    /// move there: it joins `W`. Returns them. A batch of members' parents
    /// have their states prefetched before any is changed.
    fn win_parents(&self, seconds: &[u64]) -> Vec<u64> {
        seconds
            .par_chunks(FRONTIER_CHUNK)
            .flat_map_iter(|members| {
                let mut won = Vec::new();
                let mut parents = Vec::new();
                for batch in members.chunks(BATCH) {
                    parents.clear();
                    self.for_each_parent(batch, |at, _| parents.push(at));
                    won.extend(parents.iter().filter(|&&at| self.state.win(at as usize)));
                }
                won
            })
            .collect()
    }

    /// Calls `found(rank, parent)` for every same-level parent of every
    /// member of `batch`, each parent's state prefetched as it is found,
    /// so that the batch's random lookups overlap.
    #[inline]
    fn for_each_parent(&self, batch: &[u64], mut found: impl FnMut(u64, Position)) {
        for &member in batch {
            let child = self.index.unrank(member);
            self.rules.same_level_parents(&child, |parent| {
                let at = self.index.rank(&parent);
                self.state.prefetch(at as usize);
                found(at, parent);
            });
        }
    }

    /// The eligible positions of `candidates` whose same-level children
    /// are all in `W` join `L`; returns them. A batch of candidates'
    /// children are located and prefetched before any is read, so the
    /// misses of their random lookups overlap.
    fn lose_where_children_won(&self, candidates: &[u64]) -> Vec<u64> {
        candidates
            .par_chunks(FRONTIER_CHUNK)
            .flat_map_iter(|chunk| {
                let mut lost = Vec::new();
                for batch in chunk.chunks(BATCH) {
                    let children: Vec<Children> = batch
                        .iter()
                        .map(|&at| {
                            let children = self.children(&self.index.unrank(at));
                            for &child in children.ranks() {
                                self.state.prefetch(child as usize);
                            }
                            children
                        })
                        .collect();
                    for (&at, children) in batch.iter().zip(&children) {
                        if self.all_won(children) && self.state.lose(at as usize) {
                            lost.push(at);
                        }
                    }
                }
                lost
            })
            .collect()
    }

    /// The ranks of `pos`'s same-level children.
    fn children(&self, pos: &Position) -> Children {
        let mut children = Children::default();
        self.rules.for_each_move(pos, |m| {
            if !m.leaves_level() {
                children.ranks[children.len] = self.index.rank(&m.child);
                children.len += 1;
            }
        });
        children
    }

    /// Whether all of `children` are in `W`: what the retrograde
    /// strategy's counter of children knows, looked up.
    fn all_won(&self, children: &Children) -> bool {
        children
            .ranks()
            .iter()
            .all(|&child| self.state.state(child as usize) == WON)
    }

    /// Writes the positions threshold `s` decided to its lists.
    fn write_decisions(&self, s: i32) -> Result<Decisions, BuildError> {
        let mut won = ListWriter::create(won_path(self.dir, s))?;
        let mut lost = ListWriter::create(lost_path(self.dir, s))?;
        self.state.take_decided(|decided| {
            won.extend(&decided.won)?;
            lost.extend(&decided.lost)
        })?;
        Ok(Decisions {
            won: won.finish()?,
            lost: lost.finish()?,
        })
    }

    /// The level's values, put together (in a mapping if the level is
    /// large) from the decisions of thresholds `1..=n` (`decisions[s − 1]`), and with
    /// `mark_exits` whether each is its best exit's.
    fn assemble(
        &self,
        exits: &Exits,
        decisions: &[Decisions],
        mark_exits: bool,
    ) -> Result<Solution, BuildError> {
        let count = self.index.count();
        let mut values = if count >= self.lean.mapped_min_positions {
            Values::Mapped(self.lean.values_file(self.index.stones(), count)?)
        } else {
            Values::Held(filled_on_huge_pages(count as usize, 0))
        };
        let slice = values.slice();
        for (s, decided) in (1i8..).zip(decisions) {
            decided.won.for_each(|at| slice[at as usize] = s)?;
            decided.lost.for_each(|at| slice[at as usize] = -s)?;
        }
        let exit_best = if mark_exits {
            let mut marks = vec![false; slice.len()];
            for value in -exits.n..=exits.n {
                exits
                    .of(value)
                    .for_each(|at| marks[at as usize] = slice[at as usize] as i32 == value)?;
            }
            Some(marks)
        } else {
            None
        };
        let (symbols, mapped) = match values {
            Values::Held(values) => (values, None),
            Values::Mapped(map) => (Vec::new(), Some(map)),
        };
        Ok(Solution {
            symbols,
            mapped,
            exit_best,
        })
    }
}

/// `dir`, empty.
fn recreate(dir: &Path) -> Result<(), BuildError> {
    let io = |source| BuildError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io)?;
    }
    std::fs::create_dir_all(dir).map_err(io)
}
