//! The retrograde strategy: a forward pass, then threshold propagation,
//! for every rule set and both kinds of table.
//!
//! 1. **Forward pass**, parallel over index ranges: for every position, the
//!    summary of its moves that leave the level (read from the lower
//!    levels; the terminal value for a terminal position) and the number of
//!    its moves that stay in the level ([`LevelState::record`]).
//! 2. **Threshold propagation**, for `t = n, …, 1`: the two sets of each
//!    threshold ([`LevelState`]) are attractors that only grow as `t` falls.
//!    Positions that join on their own seed them; then each new member of
//!    either set is propagated to its same-level parents, found by
//!    un-moving ([`Rules::same_level_parents`]) and delivered by the
//!    [`Exchange`], until neither set grows. Every position joins each set
//!    at most once, so the level costs about two visits of every same-level
//!    edge, whatever `n` is.
//!
//! Frontiers are processed in bounded pieces (the parent buffer holds 8
//! bytes per edge), and the state is checkpointed between thresholds: the
//! result does not depend on the order of work, so a resumed level ends
//! byte for byte as an uninterrupted one.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::Instant;

use mancala_core::{LevelIndex, Move, Position, Rules, MAX_PITS};
use rayon::prelude::*;

use super::{LevelJob, Strategy};
use crate::checkpoint;
use crate::error::BuildError;
use crate::exchange::{Exchange, LocalExchange};
use crate::solve::{threshold_bit, LevelState, Solution, Solve};

/// Positions per unit of parallel work in the forward pass and the seeds.
const CHUNK: usize = 1 << 14;
/// Frontier members per unit of parallel work in the propagation.
const FRONTIER_CHUNK: usize = 1 << 10;
/// Frontier members whose parents are gathered and delivered at once;
/// bounds the parent buffer however large a frontier grows.
const FRONTIER_PIECE: usize = 1 << 24;

/// At least how many pieces a debug build cuts a large frontier into.
const DEBUG_PIECES: usize = 64;

/// How many members of a frontier of `len` go in one piece. Debug builds
/// cut every frontier into many small pieces, so the tests exercise the
/// cuts, but no smaller than a fraction of the frontier: a piece per
/// handful of members would cost a round of the thread pool each.
fn frontier_piece(len: usize) -> usize {
    if cfg!(debug_assertions) {
        (len / DEBUG_PIECES).max(64)
    } else {
        FRONTIER_PIECE
    }
}

/// Forward pass and threshold propagation, with parents delivered by `E`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Retrograde<E: Exchange = LocalExchange> {
    /// How parents reach the state they update.
    pub exchange: E,
}

impl Retrograde {
    /// The strategy of one process ([`LocalExchange`]).
    pub fn local() -> Retrograde {
        Retrograde {
            exchange: LocalExchange,
        }
    }
}

impl<E: Exchange> Strategy for Retrograde<E> {
    fn solve<K: Solve>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError> {
        let n = job.level;
        job.assert_in_order();
        let started = Instant::now();
        let index = LevelIndex::new(job.rules.pits(), n);
        let count = index.count();
        let saved = job
            .checkpoints
            .and_then(|c| checkpoint::load::<K::State>(&c.path(n), n, count));
        let (state, first_threshold) = match saved {
            Some((state, next_threshold)) => {
                job.report_resumed(count + propagation_done(count, n, next_threshold));
                (state, next_threshold)
            }
            None => {
                let state = K::State::new(count as usize);
                forward_pass::<K>(job, &index, &state);
                job.lower.release_mapped_pages();
                if job.interrupted() {
                    return Err(BuildError::Interrupted);
                }
                (state, n)
            }
        };
        let seeds = Seeds::of(&state);
        let mut last_saved = started;
        for t in (1..=first_threshold).rev() {
            if job.interrupted() {
                if let Some(c) = job.checkpoints {
                    checkpoint::save(&c.path(n), n, t, &state.arrays())?;
                }
                return Err(BuildError::Interrupted);
            }
            if let Some(c) = job.checkpoints {
                if last_saved.elapsed() >= c.every {
                    checkpoint::save(&c.path(n), n, t, &state.arrays())?;
                    last_saved = Instant::now();
                }
            }
            self.threshold(job.rules, &index, t as u8, &state, &seeds);
            (job.progress)(propagation_done(count, n, t - 1) - propagation_done(count, n, t));
        }
        if n == 0 {
            (job.progress)(count);
        }
        let mut solution = state.into_solution(n);
        if job.rules.variant().gives_extra_turns() {
            // The best exits marked may be extra turns, which restore
            // nothing: the marks would free entries no reader restores.
            solution.exit_best = None;
        }
        Ok(solution)
    }
}

impl<E: Exchange> Retrograde<E> {
    /// Grows both sets of threshold `t` until neither changes.
    fn threshold<S: LevelState>(
        &self,
        rules: &Rules,
        index: &LevelIndex,
        t: u8,
        state: &S,
        seeds: &Seeds,
    ) {
        let (mut firsts, mut seconds) =
            seeds.scan(t, state.flags(), |at, flag| state.seed(t, at, flag));
        while !firsts.is_empty() || !seconds.is_empty() {
            let new_seconds = self.visit_parents(rules, index, &firsts, |at, edges| {
                state.parent_of_first(t, at, edges)
            });
            firsts = self.visit_parents(rules, index, &seconds, |at, _| {
                state.parent_of_second(t, at)
            });
            seconds = new_seconds;
        }
    }

    /// Calls `visit(parent, edges)` once per distinct same-level parent of
    /// the frontier, with the number of edges from it into the frontier,
    /// piece by piece so the parent buffer stays bounded; returns the
    /// parents for which `visit` returned true (the next frontier).
    fn visit_parents(
        &self,
        rules: &Rules,
        index: &LevelIndex,
        frontier: &[u64],
        visit: impl Fn(usize, u8) -> bool + Sync,
    ) -> Vec<u64> {
        let mut joined = Vec::new();
        for piece in frontier.chunks(frontier_piece(frontier.len())) {
            let parents = same_level_parents(rules, index, piece);
            joined.extend(self.exchange.deliver(parents, &visit));
        }
        joined
    }
}

/// Progress units of the propagation done when every threshold above
/// `next_threshold` is finished.
fn propagation_done(count: u64, n: u32, next_threshold: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    count * (n - next_threshold) as u64 / n as u64
}

/// Phase 1: every position's exits and number of same-level moves. Stops
/// early, the state incomplete, if the job is interrupted.
fn forward_pass<K: Solve>(job: &LevelJob<K>, index: &LevelIndex, state: &K::State) {
    let (rules, lower) = (job.rules, job.lower);
    let n = index.stones();
    let count = index.count() as usize;
    (0..count.div_ceil(CHUNK))
        .into_par_iter()
        .for_each(|chunk| {
            if job.interrupted() {
                return;
            }
            let first = chunk * CHUNK;
            let len = CHUNK.min(count - first);
            let mut positions = index.positions_from(first as u64);
            let mut batch = [Looked::default(); BATCH];
            for start in (first..first + len).step_by(BATCH) {
                let batch = &mut batch[..BATCH.min(first + len - start)];
                for looked in batch.iter_mut() {
                    let pos = positions.next().expect("the chunk's positions");
                    looked.look(rules, n, &pos, |level, child| {
                        lower.locate_prefetched(level, child)
                    });
                }
                for (at, looked) in (start..).zip(batch.iter()) {
                    let (exits, stays) =
                        looked.summary::<K>(n, |_, level, at| lower.entry_at(level, at));
                    state.record(at, exits, stays);
                }
            }
            (job.progress)(len as u64);
        });
}

/// Positions whose exits are all located (and prefetched) before the first
/// is read, so that the misses of their random lookups overlap.
const BATCH: usize = 32;

/// One position's moves, looked at once: its exits located in the lower
/// levels, not yet read. Read where the build holds the lower levels: in
/// this process, or at the ranks that own them (`cluster/solve.rs`).
#[derive(Clone, Copy, Default)]
pub(crate) struct Looked {
    /// Its value, if it is terminal.
    terminal: Option<i32>,
    /// Moves that keep the level.
    stays: u8,
    /// Each exit, with its child's index in its level (`n − gain`).
    exits: [(Move, u64); MAX_PITS],
    /// Exits in use.
    len: usize,
}

impl Looked {
    /// One look at every move of `pos`, in level `n`: its exits located
    /// (`locate` gives each child's index in its level, and may prefetch
    /// it), its moves that keep the level counted, or its terminal value.
    #[inline]
    pub(crate) fn look(
        &mut self,
        rules: &Rules,
        n: u32,
        pos: &Position,
        mut locate: impl FnMut(u32, &Position) -> u64,
    ) {
        self.stays = 0;
        self.len = 0;
        self.terminal = rules.for_each_move(pos, |m| {
            if !m.leaves_level() {
                debug_assert!(!m.extra_turn && m.child.stones() == n);
                self.stays += 1;
            } else {
                let at = locate(n - m.gain as u32, &m.child);
                self.exits[self.len] = (*m, at);
                self.len += 1;
            }
        });
    }

    /// Each exit's child: its level and index, in the exits' order.
    pub(crate) fn children(&self, n: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.exits[..self.len]
            .iter()
            .map(move |(m, at)| (n - m.gain as u32, *at))
    }

    /// The exits' summary (or the terminal value) and the number of moves
    /// that keep the level, `entry(j, level, index)` giving what exit `j`'s
    /// child stores.
    #[inline]
    pub(crate) fn summary<K: Solve>(
        &self,
        n: u32,
        entry: impl Fn(usize, u32, u64) -> K::Entry,
    ) -> (K::Exits, u8) {
        if let Some(value) = self.terminal {
            return (K::terminal(n, value), 0);
        }
        let mut exits = K::no_exit();
        for (j, (m, at)) in self.exits[..self.len].iter().enumerate() {
            K::add_exit(&mut exits, m, entry(j, n - m.gain as u32, *at));
        }
        (exits, self.stays)
    }
}

/// Positions per block of [`Seeds`]; divides [`CHUNK`].
const SEED_BLOCK: usize = 1 << 8;

/// For each block of a level's positions, the thresholds at which one of
/// them could join a set on its own. A position seeds only at the size of
/// an exit, and most levels' exits are small, so most thresholds find
/// seeds in few blocks: seeding scans those instead of the whole state.
/// Taken once, after the forward pass (or from a resumed state): positions
/// only ever lose thresholds, so the sets stay a superset, and a level is
/// solved exactly as a scan of every position would solve it.
pub(crate) struct Seeds {
    blocks: Vec<u64>,
}

impl Seeds {
    /// The seed thresholds of every block of `state`.
    pub(crate) fn of<S: LevelState>(state: &S) -> Seeds {
        let count = state.flags().len();
        let blocks = (0..count.div_ceil(SEED_BLOCK))
            .into_par_iter()
            .map(|block| {
                let first = block * SEED_BLOCK;
                (first..count.min(first + SEED_BLOCK))
                    .fold(0, |set, at| set | state.seed_thresholds(at))
            })
            .collect();
        Seeds { blocks }
    }

    /// Scans the positions that could seed threshold `t` in parallel,
    /// `classify(index, flag)` saying whether each joins the first and/or
    /// the second new frontier (and recording that itself); returns both
    /// frontiers in index order.
    pub(crate) fn scan(
        &self,
        t: u8,
        flags: &[AtomicU8],
        classify: impl Fn(usize, u8) -> (bool, bool) + Sync,
    ) -> (Vec<u64>, Vec<u64>) {
        // The top bit stands for every threshold from 63 up, and an even
        // level's byte arithmetic wraps from 128 on: those thresholds scan
        // every block.
        let skip = |set: u64| t < 63 && set & threshold_bit(t) == 0;
        let found: Vec<(Vec<u64>, Vec<u64>)> = flags
            .par_chunks(CHUNK)
            .zip(self.blocks.par_chunks(CHUNK / SEED_BLOCK))
            .enumerate()
            .map(|(chunk, (flags, blocks))| {
                let (mut first, mut second) = (Vec::new(), Vec::new());
                for (block, flags) in flags.chunks(SEED_BLOCK).enumerate() {
                    if skip(blocks[block]) {
                        continue;
                    }
                    let base = chunk * CHUNK + block * SEED_BLOCK;
                    for (i, flag) in flags.iter().enumerate() {
                        let at = base + i;
                        let (joins_first, joins_second) = classify(at, flag.load(Relaxed));
                        if joins_first {
                            first.push(at as u64);
                        }
                        if joins_second {
                            second.push(at as u64);
                        }
                    }
                }
                (first, second)
            })
            .collect();
        let first = found.iter().flat_map(|(f, _)| f.iter().copied()).collect();
        let second = found.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        (first, second)
    }
}

/// The same-level parents of every frontier member, one entry per edge, in
/// no particular order.
pub(crate) fn same_level_parents(rules: &Rules, index: &LevelIndex, frontier: &[u64]) -> Vec<u64> {
    let found: Vec<Vec<u64>> = frontier
        .par_chunks(FRONTIER_CHUNK)
        .map(|members| {
            let mut parents = Vec::with_capacity(members.len() * 2);
            for &member in members {
                let child = index.unrank(member);
                rules.same_level_parents(&child, |parent| parents.push(index.rank(&parent)));
            }
            parents
        })
        .collect();
    found.concat()
}
