//! Forced bounds (RULES.md, "Forced bounds"): what each side can be sure to
//! win without relying on any repetition.
//!
//! Under the tournament repetition rule the outcome of a cycle depends on
//! the game's history, so no single number per position is exact. Two
//! numbers are: `forced_mover`, the most of the `n` remaining stones the
//! mover can be sure to win by play that ends on its own, and
//! `forced_opponent`, the same for the opponent. Both are least fixpoints
//! from 0 of
//!
//! ```text
//! forced_mover(p)    = max over moves (gain + forced_opponent(child))
//! forced_opponent(p) = min over moves forced_mover(child)
//! ```
//!
//! (children seen from the opponent; after a Kalah extra turn the child is
//! seen from the same mover and the move contributes `gain +
//! forced_mover(child)` and `forced_opponent(child)`; a terminal position
//! splits its stones as its rule set says).
//!
//! # Solver
//!
//! The same two phases as [`crate::solver`], with two numbers per position.
//! For a threshold `t`, let `M_t` = positions with `forced_mover ≥ t` and
//! `O_t` = positions with `forced_opponent ≥ t`. Same-level moves capture
//! nothing, so
//!
//! - `p ∈ M_t` iff its best exit (`max_exit`, from lower levels) is at least
//!   `t`, or some same-level child is in `O_t`;
//! - `p ∈ O_t` iff its worst exit (`min_exit`) is at least `t` and every
//!   same-level child is in `M_t`.
//!
//! Kleene iteration from 0 commutes with thresholding (max and min do), so
//! the least fixpoint's threshold sets are the least sets closed under these
//! two rules: attractors grown from exits only, never from cycles. Both
//! shrink as `t` grows, so one sweep from `t = n` down to 1 grows them
//! incrementally: a position joins `M` when its `max_exit` equals `t` or a
//! same-level child joins `O`; each child joining `M` decrements its
//! parents' counters of same-level moves, and a parent whose counter is 0
//! joins `O` once `t ≤ min_exit`. Every position joins each set at most
//! once, so a level costs about two visits of every same-level edge, as the
//! even solver. Parents are found by un-moving and updated in sorted runs,
//! exactly as there.
//!
//! Memory: three bytes per position of the level being solved (`max_exit`
//! then `forced_mover`, `min_exit` then `forced_opponent`, the counter and
//! two membership flags). There are no in-level checkpoints: a killed build
//! resumes at the first level not yet written.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use crate::index::{self, LevelIndex};
use crate::position::Position;
use crate::rules::{Move, Rules};
use crate::solver::{seed_scan, visit_parents, SolvedLevels, CHUNK, MAX_LEVEL};

/// What each side can be sure to win of the remaining stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// `forced_mover`: stones the player to move can be sure to win.
    pub mover: u8,
    /// `forced_opponent`: stones the opponent can be sure to win.
    pub opponent: u8,
}

/// `mover/opponent`, as queries print it.
impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.mover, self.opponent)
    }
}

/// The outcome of a game given the stones already captured and the bounds
/// of the remaining ones (see [`Bounds::verdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The mover can be sure of more than half of all stones.
    Win,
    /// The opponent can be sure of more than half of all stones.
    Loss,
    /// Each side can be sure of exactly half.
    Draw,
    /// Neither: the result depends on the history (repetitions).
    Undecided,
}

impl Verdict {
    /// `win`, `loss`, `draw` or `undecided`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Win => "win",
            Verdict::Loss => "loss",
            Verdict::Draw => "draw",
            Verdict::Undecided => "undecided",
        }
    }
}

impl Bounds {
    /// A terminal position of `n` stones with value `value`: the mover gets
    /// `(n + value) / 2`, the opponent `(n − value) / 2`.
    pub fn terminal(n: u32, value: i32) -> Bounds {
        let n = n as i32;
        debug_assert!((n + value) % 2 == 0 && value.abs() <= n);
        Bounds {
            mover: ((n + value) / 2) as u8,
            opponent: ((n - value) / 2) as u8,
        }
    }

    /// What playing `m` guarantees each side of the parent's stones, given
    /// the child's bounds: `gain + forced_opponent(child)` and
    /// `forced_mover(child)`, or after an extra turn `gain +
    /// forced_mover(child)` and `forced_opponent(child)`.
    #[inline]
    pub fn after_move(m: &Move, child: Bounds) -> Bounds {
        if m.extra_turn {
            Bounds {
                mover: m.gain + child.mover,
                opponent: child.opponent,
            }
        } else {
            Bounds {
                mover: m.gain + child.opponent,
                opponent: child.mover,
            }
        }
    }

    /// Whether the bounds meet: every one of the `n` stones is accounted
    /// for, so the outcome does not depend on history.
    pub fn exact(&self, n: u32) -> bool {
        self.mover as u32 + self.opponent as u32 == n
    }

    /// The verdict with `captured = (by the mover, by the opponent)` stones
    /// already off the board and `n` on it. With `T` the total, the mover
    /// wins if `captured_mover + forced_mover > T/2`, loses if
    /// `captured_opponent + forced_opponent > T/2`, draws if both sides can
    /// force exactly `T/2`, and otherwise the result is undecided: it
    /// depends on the history.
    pub fn verdict(&self, n: u32, captured: (u32, u32)) -> Verdict {
        let total = captured.0 as u64 + captured.1 as u64 + n as u64;
        let mover = 2 * (captured.0 as u64 + self.mover as u64);
        let opponent = 2 * (captured.1 as u64 + self.opponent as u64);
        if mover > total {
            Verdict::Win
        } else if opponent > total {
            Verdict::Loss
        } else if mover == total && opponent == total {
            Verdict::Draw
        } else {
            Verdict::Undecided
        }
    }

    /// The two symbols a table stores: `forced_mover` and minus the gap
    /// `n − forced_mover − forced_opponent` (negated so that a table's
    /// histogram counts the positions whose bounds do not meet).
    pub fn to_symbols(self, n: u32) -> [i8; 2] {
        let gap = n as i32 - self.mover as i32 - self.opponent as i32;
        debug_assert!(gap >= 0, "bounds {self:?} exceed {n} stones");
        [self.mover as i8, -gap as i8]
    }

    /// Reads back [`Bounds::to_symbols`]; `None` if the symbols are not
    /// bounds of `n` stones.
    pub fn from_symbols(n: u32, symbols: [i8; 2]) -> Option<Bounds> {
        let (mover, gap) = (symbols[0] as i32, -(symbols[1] as i32));
        let opponent = n as i32 - mover - gap;
        let fits = |x: i32| (0..=n as i32).contains(&x);
        (fits(mover) && fits(gap) && fits(opponent)).then_some(Bounds {
            mover: mover as u8,
            opponent: opponent as u8,
        })
    }
}

/// Solved bounds of levels `0..len()`: `forced_mover` and `forced_opponent`
/// each held like the even solver's values (in memory or mapped).
#[derive(Default)]
pub struct ForcedLevels {
    /// `forced_mover` of every position, per level, in index order.
    pub mover: SolvedLevels,
    /// `forced_opponent` of every position, per level, in index order.
    pub opponent: SolvedLevels,
}

impl ForcedLevels {
    /// No level solved yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next level, held in memory.
    pub fn push(&mut self, level: ForcedLevel) {
        self.mover.push(level.mover);
        self.opponent.push(level.opponent);
    }

    /// Number of levels held.
    pub fn len(&self) -> usize {
        self.mover.len()
    }

    /// Whether no level is held.
    pub fn is_empty(&self) -> bool {
        self.mover.is_empty()
    }

    /// The bounds of `pos`, whose level must be held.
    #[inline]
    pub fn bounds(&self, pos: &Position) -> Bounds {
        let n = pos.stones();
        let at = index::rank(pos) as usize;
        Bounds {
            mover: self.mover.level(n)[at] as u8,
            opponent: self.opponent.level(n)[at] as u8,
        }
    }

    /// Lets the OS take back the pages of mapped levels (see
    /// [`SolvedLevels::release_mapped_pages`]).
    pub fn release_mapped_pages(&self) {
        self.mover.release_mapped_pages();
        self.opponent.release_mapped_pages();
    }
}

/// The bounds of one level, in index order.
pub struct ForcedLevel {
    /// `forced_mover` per position.
    pub mover: Vec<i8>,
    /// `forced_opponent` per position.
    pub opponent: Vec<i8>,
}

impl ForcedLevel {
    /// Position `at`'s bounds.
    pub fn get(&self, at: usize) -> Bounds {
        Bounds {
            mover: self.mover[at] as u8,
            opponent: self.opponent[at] as u8,
        }
    }

    /// The symbols a table stores, two per position (see
    /// [`Bounds::to_symbols`]).
    pub fn to_symbols(&self, n: u32) -> Vec<i8> {
        let mut symbols = vec![0i8; 2 * self.mover.len()];
        symbols
            .par_chunks_mut(2)
            .enumerate()
            .for_each(|(at, pair)| pair.copy_from_slice(&self.get(at).to_symbols(n)));
        symbols
    }

    /// Reads back [`ForcedLevel::to_symbols`]; the first position whose
    /// symbols are not bounds of `n` stones is the error.
    pub fn from_symbols(n: u32, symbols: &[i8]) -> Result<ForcedLevel, usize> {
        let count = symbols.len() / 2;
        let mut level = ForcedLevel {
            mover: vec![0; count],
            opponent: vec![0; count],
        };
        let bad = level
            .mover
            .par_iter_mut()
            .zip(level.opponent.par_iter_mut())
            .zip(symbols.par_chunks(2))
            .enumerate()
            .filter_map(|(at, ((mover, opponent), pair))| {
                match Bounds::from_symbols(n, [pair[0], pair[1]]) {
                    Some(bounds) => {
                        *mover = bounds.mover as i8;
                        *opponent = bounds.opponent as i8;
                        None
                    }
                    None => Some(at),
                }
            })
            .min();
        match bad {
            Some(at) => Err(at),
            None => Ok(level),
        }
    }
}

/// Solves levels `0..=max_stones` in memory (tests and small boards).
pub fn solve_in_memory(rules: &Rules, max_stones: u32) -> ForcedLevels {
    let mut solved = ForcedLevels::new();
    for n in 0..=max_stones {
        let level = solve_level(rules, n, &solved, &|_| {});
        solved.push(level);
    }
    solved
}

/// `min_exit` of a position none of whose moves leaves the level.
const NO_EXIT: u8 = u8::MAX;
/// Same-level moves whose child is not yet in `M` (at most 8).
const COUNTER: u8 = 0x0f;
/// The position is in `M`: its mover byte holds `forced_mover`.
const IN_MOVER: u8 = 0x40;
/// The position is in `O`: its opponent byte holds `forced_opponent`.
const IN_OPPONENT: u8 = 0x80;

/// Solves level `n` from the solved levels `0..n`. `progress` receives
/// `2 × count` units in all, as [`crate::solver::solve_level`].
pub fn solve_level(
    rules: &Rules,
    n: u32,
    lower: &ForcedLevels,
    progress: &(dyn Fn(u64) + Sync),
) -> ForcedLevel {
    assert!(n <= MAX_LEVEL, "level {n} is above {MAX_LEVEL}");
    assert_eq!(lower.len(), n as usize, "levels must be solved in order");
    let index = LevelIndex::new(rules.pits(), n);
    let mut state = State::new(index.count() as usize);
    forward_pass(rules, &index, lower, &mut state, progress);
    lower.release_mapped_pages();
    propagate(rules, &index, &state, progress);
    state.into_level()
}

/// The working state of the level being solved, three bytes per position.
struct State {
    /// `max_exit` until the position joins `M`, then `forced_mover`.
    mover: Vec<AtomicU8>,
    /// `min_exit` until the position joins `O`, then `forced_opponent`.
    opponent: Vec<AtomicU8>,
    /// [`COUNTER`], [`IN_MOVER`], [`IN_OPPONENT`].
    flags: Vec<AtomicU8>,
}

impl State {
    fn new(count: usize) -> State {
        let bytes = |v: u8| (0..count).map(|_| AtomicU8::new(v)).collect();
        State {
            mover: bytes(0),
            opponent: bytes(NO_EXIT),
            flags: bytes(0),
        }
    }

    /// Position `at` joins `M_t`: `forced_mover = t`.
    #[inline]
    fn join_mover(&self, at: usize, t: u8) {
        self.mover[at].store(t, Relaxed);
        self.flags[at].store(self.flags[at].load(Relaxed) | IN_MOVER, Relaxed);
    }

    /// Position `at` joins `O_t`: `forced_opponent = t`.
    #[inline]
    fn join_opponent(&self, at: usize, t: u8) {
        self.opponent[at].store(t, Relaxed);
        self.flags[at].store(self.flags[at].load(Relaxed) | IN_OPPONENT, Relaxed);
    }

    /// The bounds: a position outside `M` (or `O`) can force nothing.
    fn into_level(self) -> ForcedLevel {
        let flags: Vec<u8> = self.flags.into_iter().map(AtomicU8::into_inner).collect();
        let bounds = |bytes: Vec<AtomicU8>, side: u8| -> Vec<i8> {
            bytes
                .into_par_iter()
                .zip(flags.par_iter())
                .map(|(b, &f)| {
                    if f & side != 0 {
                        b.into_inner() as i8
                    } else {
                        0
                    }
                })
                .collect()
        };
        ForcedLevel {
            mover: bounds(self.mover, IN_MOVER),
            opponent: bounds(self.opponent, IN_OPPONENT),
        }
    }
}

/// Phase 1: `max_exit`, `min_exit` and same-level move counts.
fn forward_pass(
    rules: &Rules,
    index: &LevelIndex,
    lower: &ForcedLevels,
    state: &mut State,
    progress: &(dyn Fn(u64) + Sync),
) {
    let n = index.stones();
    state
        .mover
        .par_chunks_mut(CHUNK)
        .zip(state.opponent.par_chunks_mut(CHUNK))
        .zip(state.flags.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(chunk, ((mover, opponent), flags))| {
            let positions = index.positions_from((chunk * CHUNK) as u64);
            for (i, pos) in positions.take(mover.len()).enumerate() {
                let (exits, stays) = exits_and_stays(rules, n, &pos, lower);
                *mover[i].get_mut() = exits.mover;
                *opponent[i].get_mut() = exits.opponent;
                *flags[i].get_mut() = stays;
            }
            progress(mover.len() as u64);
        });
}

/// The best exit for the mover, the worst for the opponent (as [`Bounds`];
/// `0` and [`NO_EXIT`] if no move leaves the level) and the number of
/// same-level moves of one position.
#[inline]
fn exits_and_stays(rules: &Rules, n: u32, pos: &Position, lower: &ForcedLevels) -> (Bounds, u8) {
    let mut exits = Bounds {
        mover: 0,
        opponent: NO_EXIT,
    };
    let mut stays = 0u8;
    let terminal = rules.for_each_move(pos, |m| {
        if !m.leaves_level() {
            debug_assert!(!m.extra_turn && m.child.stones() == n);
            stays += 1;
        } else {
            let after = Bounds::after_move(m, lower.bounds(&m.child));
            exits.mover = exits.mover.max(after.mover);
            exits.opponent = exits.opponent.min(after.opponent);
        }
    });
    match terminal {
        Some(value) => (Bounds::terminal(n, value), 0),
        None => (exits, stays),
    }
}

/// Phase 2: thresholds `t = n, …, 1`.
fn propagate(rules: &Rules, index: &LevelIndex, state: &State, progress: &(dyn Fn(u64) + Sync)) {
    let n = index.stones();
    let count = index.count();
    for t in (1..=n).rev() {
        let t = t as u8;
        let (mut movers, mut opponents) = seed_threshold(t, state);
        while !movers.is_empty() || !opponents.is_empty() {
            let new_opponents = parents_of_movers(rules, index, t, &movers, state);
            movers = parents_of_opponents(rules, index, &opponents, t, state);
            opponents = new_opponents;
        }
        let done = |t: u32| count * (n - t) as u64 / n as u64;
        progress(done(t as u32 - 1) - done(t as u32));
    }
    if n == 0 {
        progress(count);
    }
}

/// Positions that join `M_t` or `O_t` on their own: an exit worth exactly
/// `t` to the mover, or (every same-level child already in `M`) a worst
/// exit worth exactly `t` to the opponent.
fn seed_threshold(t: u8, state: &State) -> (Vec<u64>, Vec<u64>) {
    seed_scan(&state.flags, |at, flag| {
        let mover = flag & IN_MOVER == 0 && state.mover[at].load(Relaxed) == t;
        if mover {
            state.join_mover(at, t);
        }
        let opponent = flag & (IN_OPPONENT | COUNTER) == 0 && state.opponent[at].load(Relaxed) == t;
        if opponent {
            state.join_opponent(at, t);
        }
        (mover, opponent)
    })
}

/// Each new `M` member removes one same-level move from each parent's
/// counter; a parent left with none, whose worst exit is at least `t`, joins
/// `O_t`.
fn parents_of_movers(
    rules: &Rules,
    index: &LevelIndex,
    t: u8,
    movers: &[u64],
    state: &State,
) -> Vec<u64> {
    visit_parents(rules, index, movers, |at, edges| {
        let flag = state.flags[at].load(Relaxed) - edges;
        state.flags[at].store(flag, Relaxed);
        let join = flag & (IN_OPPONENT | COUNTER) == 0 && state.opponent[at].load(Relaxed) >= t;
        if join {
            state.join_opponent(at, t);
        }
        join
    })
}

/// Every same-level parent of a new `O` member can move there: it joins
/// `M_t`.
fn parents_of_opponents(
    rules: &Rules,
    index: &LevelIndex,
    opponents: &[u64],
    t: u8,
    state: &State,
) -> Vec<u64> {
    visit_parents(rules, index, opponents, |at, _| {
        let join = state.flags[at].load(Relaxed) & IN_MOVER == 0;
        if join {
            state.join_mover(at, t);
        }
        join
    })
}
