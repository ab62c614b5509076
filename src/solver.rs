//! Retrograde solver: the exact value of every position of a level, given
//! the solved lower levels.
//!
//! One level is solved in two phases (SOLVER-NOTES.md):
//!
//! 1. **Forward pass**, parallel over index ranges: for every position, the
//!    best value among its moves that leave the level (`max_exit`, read from
//!    the lower levels; the terminal value for a terminal position) and the
//!    number of its moves that stay in the level (`counter`).
//! 2. **Threshold propagation**, for `s = n, …, 1`: `W_s` (the mover can
//!    force at least `s`) and `L_s` (the mover cannot avoid `−s` or worse)
//!    are attractors that only grow as `s` falls. A position enters `W_s`
//!    when a move leaves the level with at least `s` or a same-level child
//!    is in `L_s`; it enters `L_s` when every exit is worth at most `−s` and
//!    every same-level child is in `W_s` (its counter of same-level children
//!    not yet in `W` is zero). Same-level parents are found by un-moving
//!    ([`Rules::same_level_parents`]). Every position enters `W` at most once
//!    and `L` at most once, so the level costs about two visits of every
//!    same-level edge. Positions that never enter either set are worth 0:
//!    endless play is an even split (RULES.md).
//!
//! Each propagation step is parallel twice over: parents are generated from
//! slices of the frontier, then sorted, and each thread updates a disjoint
//! range of them, so a position joins the next frontier exactly once.

use std::sync::atomic::{AtomicI8, AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use crate::index::{self, LevelIndex};
use crate::position::Position;
use crate::rules::{Rules, Successors};

/// Marks "no move leaves the level" in `max_exit`.
const NO_EXIT: i8 = i8::MIN;
/// Positions per unit of parallel work in the forward pass.
const CHUNK: usize = 1 << 14;
/// Frontier members per unit of parallel work in the propagation.
const FRONTIER_CHUNK: usize = 1 << 10;

/// The most stones a level may have: values are stored as `i8`.
pub const MAX_LEVEL: u32 = 127;

/// Solved values of levels `0..=n`, in memory, one `i8` per position in
/// index order. This is the "fastest form" lower levels are kept in while
/// higher ones are built.
#[derive(Default)]
pub struct SolvedLevels {
    levels: Vec<Vec<i8>>,
}

impl SolvedLevels {
    /// No level solved yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next level (its stone count must equal `len()`).
    pub fn push(&mut self, values: Vec<i8>) {
        self.levels.push(values);
    }

    /// Number of levels held (levels `0..len()`).
    pub fn len(&self) -> usize {
        self.levels.len()
    }

    /// Whether no level is held.
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }

    /// Values of level `n` in index order.
    pub fn level(&self, n: u32) -> &[i8] {
        &self.levels[n as usize]
    }

    /// The value of `pos`, whose level must be held.
    #[inline]
    pub fn value(&self, pos: &Position) -> i32 {
        self.levels[pos.stones() as usize][index::rank(pos) as usize] as i32
    }
}

/// Solves levels `0..=max_stones` in memory. Meant for tests and small
/// boards; the `build` command writes each level to disk as it goes.
pub fn solve_in_memory(rules: &Rules, max_stones: u32) -> SolvedLevels {
    let mut solved = SolvedLevels::new();
    for n in 0..=max_stones {
        let values = solve_level(rules, n, &solved, &|_| {});
        solved.push(values);
    }
    solved
}

/// Solves level `n` from the solved levels `0..n`.
///
/// `progress` receives work units as they finish; a level is `2 × count`
/// units: one per position in the forward pass, and `count` spread evenly
/// over the thresholds of the propagation.
pub fn solve_level(
    rules: &Rules,
    n: u32,
    lower: &SolvedLevels,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<i8> {
    assert!(n <= MAX_LEVEL, "level {n} is above {MAX_LEVEL}");
    assert_eq!(lower.len(), n as usize, "levels must be solved in order");
    let index = LevelIndex::new(rules.pits(), n);
    let (max_exit, counter) = forward_pass(rules, &index, lower, progress);
    propagate(rules, n, &max_exit, counter, progress)
}

/// Phase 1: `max_exit` and same-level move counts of every position.
fn forward_pass(
    rules: &Rules,
    index: &LevelIndex,
    lower: &SolvedLevels,
    progress: &(dyn Fn(u64) + Sync),
) -> (Vec<i8>, Vec<u8>) {
    let count = index.count() as usize;
    let n = index.stones();
    let mut max_exit = vec![NO_EXIT; count];
    let mut counter = vec![0u8; count];
    max_exit
        .par_chunks_mut(CHUNK)
        .zip(counter.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(chunk, (exits, counts))| {
            let mut pos = index.unrank((chunk * CHUNK) as u64);
            for (i, (exit, same)) in exits.iter_mut().zip(counts.iter_mut()).enumerate() {
                if i > 0 {
                    index::advance(&mut pos);
                }
                (*exit, *same) = exits_and_stays(rules, n, &pos, lower);
            }
            progress(exits.len() as u64);
        });
    (max_exit, counter)
}

/// The best exit value and the number of same-level moves of one position.
#[inline]
fn exits_and_stays(rules: &Rules, n: u32, pos: &Position, lower: &SolvedLevels) -> (i8, u8) {
    match rules.successors(pos) {
        Successors::Terminal(v) => (v as i8, 0),
        Successors::Moves(moves) => {
            let mut best = NO_EXIT as i32;
            let mut stays = 0u8;
            for m in moves.iter() {
                if m.gain == 0 {
                    debug_assert!(!m.extra_turn && m.child.stones() == n);
                    stays += 1;
                } else {
                    let child_level = lower.level(n - m.gain as u32);
                    let child_value = child_level[index::rank(&m.child) as usize];
                    best = best.max(m.value_given_child(child_value as i32));
                }
            }
            (best as i8, stays)
        }
    }
}

/// Phase 2: threshold propagation from `s = n` down to 1.
fn propagate(
    rules: &Rules,
    n: u32,
    max_exit: &[i8],
    counter: Vec<u8>,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<i8> {
    let counter: Vec<AtomicU8> = counter.into_iter().map(AtomicU8::new).collect();
    let value: Vec<AtomicI8> = (0..max_exit.len()).map(|_| AtomicI8::new(0)).collect();
    let index = LevelIndex::new(rules.pits(), n);
    for s in (1..=n as i32).rev() {
        let s = s as i8;
        let (mut wins, mut losses) = seed_threshold(s, max_exit, &counter, &value);
        while !wins.is_empty() || !losses.is_empty() {
            let new_losses = parents_of_wins(rules, &index, s, &wins, max_exit, &counter, &value);
            wins = parents_of_losses(rules, &index, s, &losses, &value);
            losses = new_losses;
        }
        let count = max_exit.len() as u64;
        let thresholds = n as u64;
        let done_before = count * (thresholds - s as u64) / thresholds;
        progress(count * (thresholds - s as u64 + 1) / thresholds - done_before);
    }
    if n == 0 {
        progress(max_exit.len() as u64);
    }
    value.into_iter().map(AtomicI8::into_inner).collect()
}

/// Positions that enter `W_s` or `L_s` on their own at threshold `s`: an
/// exit worth exactly `s`, or every same-level child already in `W` and the
/// best exit worth exactly `−s`.
fn seed_threshold(
    s: i8,
    max_exit: &[i8],
    counter: &[AtomicU8],
    value: &[AtomicI8],
) -> (Vec<u64>, Vec<u64>) {
    let found: Vec<(Vec<u64>, Vec<u64>)> = max_exit
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(chunk, exits)| {
            let base = chunk * CHUNK;
            let (mut wins, mut losses) = (Vec::new(), Vec::new());
            for (i, &exit) in exits.iter().enumerate() {
                let at = base + i;
                if value[at].load(Relaxed) != 0 {
                    continue;
                }
                if exit == s {
                    value[at].store(s, Relaxed);
                    wins.push(at as u64);
                } else if exit == -s && counter[at].load(Relaxed) == 0 {
                    value[at].store(-s, Relaxed);
                    losses.push(at as u64);
                }
            }
            (wins, losses)
        })
        .collect();
    let wins = found.iter().flat_map(|(w, _)| w.iter().copied()).collect();
    let losses = found.iter().flat_map(|(_, l)| l.iter().copied()).collect();
    (wins, losses)
}

/// Each new `W` member removes one unresolved child from each same-level
/// parent; a parent left with none, and no exit better than `−s`, is lost.
fn parents_of_wins(
    rules: &Rules,
    index: &LevelIndex,
    s: i8,
    wins: &[u64],
    max_exit: &[i8],
    counter: &[AtomicU8],
    value: &[AtomicI8],
) -> Vec<u64> {
    let parents = sorted_parents(rules, index, wins);
    for_each_parent_run(&parents, |at, edges| {
        let left = counter[at].load(Relaxed) - edges;
        counter[at].store(left, Relaxed);
        if left == 0 && value[at].load(Relaxed) == 0 && max_exit[at] <= -s {
            value[at].store(-s, Relaxed);
            true
        } else {
            false
        }
    })
}

/// Every same-level parent of a new `L` member can move there: it wins `s`.
fn parents_of_losses(
    rules: &Rules,
    index: &LevelIndex,
    s: i8,
    losses: &[u64],
    value: &[AtomicI8],
) -> Vec<u64> {
    let parents = sorted_parents(rules, index, losses);
    for_each_parent_run(&parents, |at, _| {
        let undecided = value[at].load(Relaxed) == 0;
        if undecided {
            value[at].store(s, Relaxed);
        }
        undecided
    })
}

/// The same-level parents of every frontier member, one entry per edge,
/// sorted. Sorting turns the random updates that follow into a sweep in
/// index order, and lets each thread own a disjoint range of positions, so
/// no update needs a locked instruction (which would stall on every cache
/// miss).
fn sorted_parents(rules: &Rules, index: &LevelIndex, frontier: &[u64]) -> Vec<u64> {
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
    let mut parents = found.concat();
    parents.par_sort_unstable();
    parents
}

/// Calls `visit(position, edges)` once per distinct entry of the sorted
/// `parents` (`edges` = how often it occurs), in parallel over disjoint
/// ranges, and collects the positions for which it returns true.
///
/// Each position is visited by exactly one thread, so `visit` may update
/// its state with plain (relaxed, non-read-modify-write) loads and stores.
fn for_each_parent_run(parents: &[u64], visit: impl Fn(usize, u8) -> bool + Sync) -> Vec<u64> {
    let found: Vec<Vec<u64>> = split_between_runs(parents, FRONTIER_CHUNK * 8)
        .into_par_iter()
        .map(|chunk| {
            chunk
                .chunk_by(|a, b| a == b)
                .filter(|run| visit(run[0] as usize, run.len() as u8))
                .map(|run| run[0])
                .collect()
        })
        .collect();
    found.concat()
}

/// Cuts sorted `items` into pieces of about `size`, never inside a run of
/// equal items.
fn split_between_runs(items: &[u64], size: usize) -> Vec<&[u64]> {
    let mut pieces = Vec::with_capacity(items.len() / size + 1);
    let mut rest = items;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while cut < rest.len() && rest[cut] == rest[cut - 1] {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}
