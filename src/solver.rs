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
//!
//! Memory: two bytes per position of the level being solved. One byte holds
//! `max_exit` while the position is undecided and its value once decided;
//! the other holds the counter and a "decided" flag. Frontiers are processed
//! in bounded pieces, and lower levels may be memory-mapped files
//! ([`SolvedLevels::push_mapped`]), so a level far larger than the lower
//! levels' RAM footprint still builds.

use std::sync::atomic::{
    AtomicBool, AtomicI8, AtomicU8,
    Ordering::{Acquire, Relaxed, Release},
};

use memmap2::Mmap;

use rayon::prelude::*;

use std::time::Instant;

use crate::checkpoint::{self, Checkpoints};
use crate::error::Result;
use crate::index::{self, LevelIndex};
use crate::omission::Restoring;
use crate::position::Position;
use crate::rules::{Move, MoveList, Rules, Successors};

/// Marks "no move leaves the level" in `max_exit`.
const NO_EXIT: i8 = i8::MIN;
/// Positions per unit of parallel work in the forward pass.
pub(crate) const CHUNK: usize = 1 << 14;
/// Frontier members per unit of parallel work in the propagation.
const FRONTIER_CHUNK: usize = 1 << 10;
/// Frontier members whose parents are gathered and sorted at once; bounds
/// the parent buffer (8 bytes per edge) however large a frontier grows.
/// Tiny in debug builds, so the tests exercise frontiers cut into pieces.
const FRONTIER_PIECE: usize = if cfg!(debug_assertions) {
    1 << 6
} else {
    1 << 24
};
/// Set in a position's flag byte once its value is decided.
const DECIDED: u8 = 0x80;
/// Set with [`DECIDED`] when the value decided is the best exit's.
const EXIT_BEST: u8 = 0x40;

/// The most stones a level may have: values are stored as `i8`.
pub const MAX_LEVEL: u32 = 127;

/// Values of one solved level, in index order: in memory, or mapped from an
/// uncompressed scratch file so the OS can page it.
enum LevelData {
    Owned(Vec<i8>),
    Mapped(Mmap),
}

/// Solved values of levels `0..n`, one `i8` per position in index order.
/// This is the "fastest form" lower levels are kept in while higher ones are
/// built.
#[derive(Default)]
pub struct SolvedLevels {
    levels: Vec<LevelData>,
}

impl SolvedLevels {
    /// No level solved yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next level (its stone count must equal `len()`).
    pub fn push(&mut self, values: Vec<i8>) {
        self.levels.push(LevelData::Owned(values));
    }

    /// Appends the next level as a mapped file of one byte per position.
    pub fn push_mapped(&mut self, map: Mmap) {
        self.levels.push(LevelData::Mapped(map));
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
    #[inline]
    pub fn level(&self, n: u32) -> &[i8] {
        match &self.levels[n as usize] {
            LevelData::Owned(values) => values,
            LevelData::Mapped(map) => bytemuck::cast_slice(map),
        }
    }

    /// Lets the OS take back the resident pages of mapped levels (they are
    /// read again from their files if touched later). The propagation never
    /// reads lower levels, so the level being solved gets that memory.
    pub fn release_mapped_pages(&self) {
        for level in &self.levels {
            if let LevelData::Mapped(map) = level {
                // SAFETY: the mapping is shared and file-backed, and never
                // written through: dropping its pages loses nothing, they are
                // read back from the file (or page cache) on the next access.
                let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            }
        }
    }

    /// The value of `pos`, whose level must be held.
    #[inline]
    pub fn value(&self, pos: &Position) -> i32 {
        self.level(pos.stones())[index::rank(pos) as usize] as i32
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
    solve(rules, n, lower, progress, None)
        .expect("without checkpoints nothing can fail")
        .values
}

/// A solved level as the build stores it.
pub struct LevelSolution {
    /// The value of every position, in index order.
    pub values: Vec<i8>,
    /// Per position, whether its value is its best exit's (a move that
    /// leaves the level, or the terminal value): where a compact table
    /// needs no entry for it ([`crate::omission::free_entries`]).
    pub exit_best: Vec<bool>,
}

/// Like [`solve_level`], and with `checkpoints`, saving the state to
/// `checkpoints.dir` at most every `checkpoints.every` of solving, and first
/// resuming from a valid checkpoint of this level if there is one. The
/// checkpoint is left in place; remove it ([`Checkpoints::remove`]) once the
/// level is stored.
pub fn solve_level_resumable(
    rules: &Rules,
    n: u32,
    lower: &SolvedLevels,
    progress: &(dyn Fn(u64) + Sync),
    checkpoints: Option<&Checkpoints>,
) -> Result<LevelSolution> {
    solve(rules, n, lower, progress, checkpoints)
}

fn solve(
    rules: &Rules,
    n: u32,
    lower: &SolvedLevels,
    progress: &(dyn Fn(u64) + Sync),
    checkpoints: Option<&Checkpoints>,
) -> Result<LevelSolution> {
    assert!(n <= MAX_LEVEL, "level {n} is above {MAX_LEVEL}");
    assert_eq!(lower.len(), n as usize, "levels must be solved in order");
    let started = Instant::now();
    let index = LevelIndex::new(rules.pits(), n);
    let count = index.count() as usize;
    let saved = checkpoints.and_then(|c| checkpoint::load(&c.path(n), n, count));
    let (state, first_threshold) = match saved {
        Some(saved) => {
            let state = LevelState {
                value: saved.value,
                flags: saved.flags,
            };
            progress(count as u64 + propagation_done(count as u64, n, saved.next_threshold));
            (state, saved.next_threshold)
        }
        None => {
            let mut state = LevelState::new(count);
            forward_pass(rules, &index, lower, &mut state, progress);
            lower.release_mapped_pages();
            (state, n)
        }
    };
    let checkpoints = checkpoints.map(|c| (c, started));
    propagate(
        rules,
        &index,
        &state,
        first_threshold,
        progress,
        checkpoints,
    )?;
    Ok(state.into_solution())
}

/// The working state of the level being solved, two bytes per position.
struct LevelState {
    /// `max_exit` while undecided, the value once decided.
    value: Vec<AtomicI8>,
    /// Same-level children not yet in `W` (low bits), [`DECIDED`] and
    /// [`EXIT_BEST`].
    flags: Vec<AtomicU8>,
}

impl LevelState {
    fn new(count: usize) -> LevelState {
        LevelState {
            value: (0..count).map(|_| AtomicI8::new(NO_EXIT)).collect(),
            flags: (0..count).map(|_| AtomicU8::new(0)).collect(),
        }
    }

    /// Decides `value` for position `at`, noting whether it is the value of
    /// its best exit (still held in `value` until now).
    #[inline]
    fn decide(&self, at: usize, value: i8) {
        let exit_best = if self.value[at].load(Relaxed) == value {
            EXIT_BEST
        } else {
            0
        };
        self.value[at].store(value, Relaxed);
        self.flags[at].store(self.flags[at].load(Relaxed) | DECIDED | exit_best, Relaxed);
    }

    #[inline]
    fn undecided(&self, at: usize) -> bool {
        self.flags[at].load(Relaxed) & DECIDED == 0
    }

    /// The solved level: undecided positions are worth 0 (endless play),
    /// which is their best exit's value if that is 0 too.
    fn into_solution(self) -> LevelSolution {
        let flags: Vec<u8> = self.flags.into_iter().map(AtomicU8::into_inner).collect();
        let mut values: Vec<i8> = self.value.into_iter().map(AtomicI8::into_inner).collect();
        let exit_best = values
            .par_iter_mut()
            .zip(flags.par_iter())
            .map(|(v, &f)| {
                if f & DECIDED != 0 {
                    f & EXIT_BEST != 0
                } else {
                    let exit_best = *v == 0;
                    *v = 0;
                    exit_best
                }
            })
            .collect();
        LevelSolution { values, exit_best }
    }
}

/// Phase 1: `max_exit` and same-level move counts of every position.
fn forward_pass(
    rules: &Rules,
    index: &LevelIndex,
    lower: &SolvedLevels,
    state: &mut LevelState,
    progress: &(dyn Fn(u64) + Sync),
) {
    let n = index.stones();
    state
        .value
        .par_chunks_mut(CHUNK)
        .zip(state.flags.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(chunk, (exits, flags))| {
            let first = (chunk * CHUNK) as u64;
            let positions = index.positions_from(first);
            for ((exit, flag), pos) in exits.iter_mut().zip(flags.iter_mut()).zip(positions) {
                let look = look_one_ply(rules, n, &pos, lower, |_| {});
                *exit.get_mut() = look.best_exit;
                *flag.get_mut() = look.stays;
            }
            progress(exits.len() as u64);
        });
}

/// What one look at a position's moves tells the solver.
struct OnePly {
    /// The best exit's value, or the terminal value, or [`NO_EXIT`].
    best_exit: i8,
    /// The number of moves that keep the level.
    stays: u8,
}

/// Looks at every move of `pos`, in level `n`, showing each move that
/// keeps the level to `on_stay`.
#[inline]
fn look_one_ply(
    rules: &Rules,
    n: u32,
    pos: &Position,
    lower: &SolvedLevels,
    mut on_stay: impl FnMut(&Move),
) -> OnePly {
    let mut best = NO_EXIT as i32;
    let mut stays = 0u8;
    let terminal = rules.for_each_move(pos, |m| {
        if !m.leaves_level() {
            debug_assert!(!m.extra_turn && m.child.stones() == n);
            stays += 1;
            on_stay(m);
        } else {
            let child_level = lower.level(n - m.gain as u32);
            let child_value = child_level[index::rank(&m.child) as usize];
            best = best.max(m.value_given_child(child_value as i32));
        }
    });
    match terminal {
        Some(value) => OnePly {
            best_exit: value as i8,
            stays: 0,
        },
        None => OnePly {
            best_exit: best as i8,
            stays,
        },
    }
}

/// Restores the values a compact table left out ([`crate::omission`]):
/// `stored` holds level `n`'s entries, each at most its value, and becomes
/// its values; `lower` holds the levels below.
///
/// First every position gets the larger of its entry and its best exit (or
/// its terminal value), which is final unless it has a same-level
/// restoring move. Then each such position takes the best of that and its
/// same-level restoring moves, restoring first, depth first, any child not
/// done yet: those moves descend ([`crate::omission`]), so this ends. Two
/// threads may restore the same child at once; both find the same value.
pub fn restore_values(rules: &Rules, n: u32, stored: &mut [i8], lower: &SolvedLevels) {
    let index = LevelIndex::new(rules.pits(), n);
    let pending: Vec<AtomicBool> = stored
        .par_chunks_mut(CHUNK)
        .enumerate()
        .flat_map_iter(|(chunk, values)| {
            let first = (chunk * CHUNK) as u64;
            let positions = index.positions_from(first);
            let mut pending = Vec::with_capacity(values.len());
            for (i, (value, pos)) in values.iter_mut().zip(positions).enumerate() {
                let restoring = Restoring::of(&pos, first + i as u64);
                let mut restoring_stay = false;
                let look = look_one_ply(rules, n, &pos, lower, |m| {
                    restoring_stay = restoring_stay || restoring.restores(m);
                });
                *value = (*value).max(look.best_exit);
                pending.push(AtomicBool::new(restoring_stay));
            }
            pending
        })
        .collect();
    // SAFETY: `AtomicI8` has the same size, alignment and bit validity as
    // `i8`, and `stored` is borrowed mutably for as long as this view lives.
    let values: &[AtomicI8] = unsafe { &*(stored as *mut [i8] as *const [AtomicI8]) };
    pending
        .par_chunks(CHUNK)
        .enumerate()
        .for_each(|(chunk, flags)| {
            let positions = index.positions_from((chunk * CHUNK) as u64);
            for (i, (flag, pos)) in flags.iter().zip(positions).enumerate() {
                if flag.load(Acquire) {
                    restore_same_level(rules, chunk * CHUNK + i, pos, values, &pending);
                }
            }
        });
}

/// One position being restored: its same-level restoring moves, the next
/// one to look at, and the best value so far.
struct RestoreFrame {
    at: usize,
    moves: MoveList,
    next: usize,
    best: i32,
}

impl RestoreFrame {
    fn new(rules: &Rules, at: usize, pos: &Position, values: &[AtomicI8]) -> RestoreFrame {
        let mut moves = match rules.successors(pos) {
            Successors::Moves(moves) => moves,
            Successors::Terminal(_) => unreachable!("a terminal position is never pending"),
        };
        let restoring = Restoring::of(pos, at as u64);
        moves.retain(|m| !m.leaves_level() && restoring.restores(m));
        RestoreFrame {
            at,
            moves,
            next: 0,
            best: values[at].load(Relaxed) as i32,
        }
    }
}

/// Restores the pending position `pos`, at `at`, and every pending
/// position it needs: the larger of what each holds and the best of its
/// same-level restoring moves. An explicit stack, because chains of
/// descending moves can be long.
fn restore_same_level(
    rules: &Rules,
    at: usize,
    pos: Position,
    values: &[AtomicI8],
    pending: &[AtomicBool],
) {
    let mut stack = vec![RestoreFrame::new(rules, at, &pos, values)];
    while let Some(frame) = stack.last_mut() {
        let Some(m) = frame.moves.get(frame.next) else {
            values[frame.at].store(frame.best as i8, Relaxed);
            pending[frame.at].store(false, Release);
            stack.pop();
            continue;
        };
        let child = index::rank(&m.child) as usize;
        if pending[child].load(Acquire) {
            let child_frame = RestoreFrame::new(rules, child, &m.child, values);
            stack.push(child_frame);
            continue;
        }
        frame.best = frame
            .best
            .max(m.value_given_child(values[child].load(Relaxed) as i32));
        frame.next += 1;
    }
}

/// Phase 2: threshold propagation from `s = first_threshold` down to 1
/// (`first_threshold < n` when resuming from a checkpoint). With
/// `checkpoints`, the state is saved before a threshold once `every` has
/// passed since the level (or the last checkpoint) started.
fn propagate(
    rules: &Rules,
    index: &LevelIndex,
    state: &LevelState,
    first_threshold: u32,
    progress: &(dyn Fn(u64) + Sync),
    checkpoints: Option<(&Checkpoints, Instant)>,
) -> Result<()> {
    let n = index.stones();
    let count = index.count();
    let mut last_saved = checkpoints.map(|(_, started)| started);
    for s in (1..=first_threshold).rev() {
        if let (Some((c, _)), Some(last)) = (checkpoints, last_saved.as_mut()) {
            if last.elapsed() >= c.every {
                checkpoint::save(&c.path(n), n, s, &state.value, &state.flags)?;
                *last = Instant::now();
            }
        }
        let s = s as i8;
        let (mut wins, mut losses) = seed_threshold(s, state);
        while !wins.is_empty() || !losses.is_empty() {
            let new_losses = parents_of_wins(rules, index, s, &wins, state);
            wins = parents_of_losses(rules, index, s, &losses, state);
            losses = new_losses;
        }
        let done = propagation_done(count, n, s as u32 - 1);
        progress(done - propagation_done(count, n, s as u32));
    }
    if n == 0 {
        progress(count);
    }
    Ok(())
}

/// Progress units of the propagation done when every threshold above
/// `next_threshold` is finished.
fn propagation_done(count: u64, n: u32, next_threshold: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    count * (n - next_threshold) as u64 / n as u64
}

/// Positions that enter `W_s` or `L_s` on their own at threshold `s`: an
/// exit worth exactly `s`, or every same-level child already in `W` and the
/// best exit worth exactly `−s`.
fn seed_threshold(s: i8, state: &LevelState) -> (Vec<u64>, Vec<u64>) {
    seed_scan(&state.flags, |at, flag| {
        if flag & DECIDED != 0 {
            return (false, false);
        }
        let exit = state.value[at].load(Relaxed);
        if exit == s {
            state.decide(at, s);
            (true, false)
        } else if exit == -s && flag == 0 {
            state.decide(at, -s);
            (false, true)
        } else {
            (false, false)
        }
    })
}

/// Scans every position of a level in parallel, `classify(index, flags)`
/// saying whether it joins the first and/or the second new frontier (and
/// recording that itself); returns both frontiers in index order.
pub(crate) fn seed_scan(
    flags: &[AtomicU8],
    classify: impl Fn(usize, u8) -> (bool, bool) + Sync,
) -> (Vec<u64>, Vec<u64>) {
    let found: Vec<(Vec<u64>, Vec<u64>)> = flags
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(chunk, flags)| {
            let base = chunk * CHUNK;
            let (mut first, mut second) = (Vec::new(), Vec::new());
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
            (first, second)
        })
        .collect();
    let first = found.iter().flat_map(|(f, _)| f.iter().copied()).collect();
    let second = found.iter().flat_map(|(_, s)| s.iter().copied()).collect();
    (first, second)
}

/// Each new `W` member removes one unresolved child from each same-level
/// parent; a parent left with none, and no exit better than `−s`, is lost.
fn parents_of_wins(
    rules: &Rules,
    index: &LevelIndex,
    s: i8,
    wins: &[u64],
    state: &LevelState,
) -> Vec<u64> {
    visit_parents(rules, index, wins, |at, edges| {
        let flag = state.flags[at].load(Relaxed) - edges;
        state.flags[at].store(flag, Relaxed);
        // Undecided and no child left outside `W`.
        if flag == 0 && state.value[at].load(Relaxed) <= -s {
            state.decide(at, -s);
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
    state: &LevelState,
) -> Vec<u64> {
    visit_parents(rules, index, losses, |at, _| {
        let undecided = state.undecided(at);
        if undecided {
            state.decide(at, s);
        }
        undecided
    })
}

/// Calls `visit(parent, edges)` once per distinct same-level parent of the
/// frontier, with the number of edges from it into the frontier, piece by
/// piece so the parent buffer stays bounded; returns the parents for which
/// `visit` returned true (each joins the next frontier).
pub(crate) fn visit_parents(
    rules: &Rules,
    index: &LevelIndex,
    frontier: &[u64],
    visit: impl Fn(usize, u8) -> bool + Sync,
) -> Vec<u64> {
    let mut joined = Vec::new();
    for piece in frontier.chunks(FRONTIER_PIECE) {
        let parents = sorted_parents(rules, index, piece);
        joined.extend(for_each_parent_run(&parents, &visit));
    }
    joined
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
