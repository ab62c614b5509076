//! Forced bounds as the generator solves them (`docs/RULES.md`, "Two kinds
//! of table"): what each side can be sure to win without relying on any
//! repetition.
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
//! # Solving
//!
//! The same strategy as even values, with two numbers per position. For a
//! threshold `t`, let `M_t` = positions with `forced_mover ≥ t` and `O_t` =
//! positions with `forced_opponent ≥ t`. Same-level moves capture nothing,
//! so
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
//! once, so a level costs about two visits of every same-level edge, as
//! even values do.
//!
//! Memory: three bytes per position of the level being solved (`max_exit`
//! then `forced_mover`, `min_exit` then `forced_opponent`, the counter and
//! two membership flags).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use mancala_core::{Bounds, Move, Rules};
use mancala_format::{filled_on_huge_pages, Encoding, Forced, Header, TableKind};
use rayon::prelude::*;

use crate::solve::{atomic, bytes, threshold_bit, LevelState, Solution, Solve};

/// `min_exit` of a position none of whose moves leaves the level.
const NO_EXIT: u8 = u8::MAX;
/// Same-level moves whose child is not yet in `M` (at most 8).
const COUNTER: u8 = 0x0f;
/// The position is in `M`: its mover byte holds `forced_mover`.
const IN_MOVER: u8 = 0x40;
/// The position is in `O`: its opponent byte holds `forced_opponent`.
const IN_OPPONENT: u8 = 0x80;

impl Solve for Forced {
    /// The best exit for the mover and the worst for the opponent.
    type Exits = Bounds;
    type State = ForcedState;

    fn no_exit() -> Bounds {
        Bounds {
            mover: 0,
            opponent: NO_EXIT,
        }
    }

    #[inline]
    fn add_exit(exits: &mut Bounds, m: &Move, child: Bounds) {
        let after = Bounds::after_move(m, child);
        exits.mover = exits.mover.max(after.mover);
        exits.opponent = exits.opponent.min(after.opponent);
    }

    fn terminal(n: u32, value: i32) -> Bounds {
        Bounds::terminal(n, value)
    }

    /// Without cycles both bounds are exact: they add up to `n`.
    fn acyclic_value(_n: u32, bounds: Bounds) -> i32 {
        bounds.mover as i32 - bounds.opponent as i32
    }

    fn from_values(n: u32, values: Vec<i8>) -> Solution {
        let mut symbols = vec![0i8; Forced::WIDTH * values.len()];
        symbols
            .par_chunks_mut(Forced::WIDTH)
            .zip(values.par_iter())
            .for_each(|(pair, &v)| Forced::encode(n, Bounds::terminal(n, v as i32), pair));
        Solution {
            symbols,
            mapped: None,
            exit_best: None,
        }
    }

    /// Forced tables store their symbols as they are, whatever encoding
    /// even tables were asked for.
    fn stored_encoding(_rules: &Rules, _asked: Encoding) -> Encoding {
        Encoding::Full
    }

    fn to_store<'a>(
        rules: &Rules,
        n: u32,
        solution: &'a Solution,
        _encoding: Encoding,
        block_size: u32,
    ) -> (Header, Cow<'a, [i8]>) {
        let symbols = solution.held_symbols();
        let header = Header::for_symbols::<Forced>(rules, n, symbols, block_size);
        (header, symbols.into())
    }
}

/// The working state of a forced level, three bytes per position.
pub struct ForcedState {
    /// `max_exit` until the position joins `M`, then `forced_mover`.
    mover: Vec<AtomicU8>,
    /// `min_exit` until the position joins `O`, then `forced_opponent`.
    opponent: Vec<AtomicU8>,
    /// [`COUNTER`], [`IN_MOVER`], [`IN_OPPONENT`].
    flags: Vec<AtomicU8>,
}

impl ForcedState {
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
}

impl LevelState for ForcedState {
    type Exits = Bounds;

    fn new(count: usize) -> ForcedState {
        ForcedState {
            mover: bytes(count, 0),
            opponent: bytes(count, NO_EXIT),
            flags: bytes(count, 0),
        }
    }

    #[inline]
    fn record(&self, at: usize, exits: Bounds, stays: u8) {
        self.mover[at].store(exits.mover, Relaxed);
        self.opponent[at].store(exits.opponent, Relaxed);
        self.flags[at].store(stays, Relaxed);
    }

    fn flags(&self) -> &[AtomicU8] {
        &self.flags
    }

    /// An exit worth exactly `t` to the mover joins `M_t`; with every
    /// same-level child already in `M`, a worst exit worth exactly `t` to
    /// the opponent joins `O_t`.
    #[inline]
    fn seed(&self, t: u8, at: usize, flag: u8) -> (bool, bool) {
        let mover = flag & IN_MOVER == 0 && self.mover[at].load(Relaxed) == t;
        if mover {
            self.join_mover(at, t);
        }
        let opponent = flag & (IN_OPPONENT | COUNTER) == 0 && self.opponent[at].load(Relaxed) == t;
        if opponent {
            self.join_opponent(at, t);
        }
        (mover, opponent)
    }

    /// A position outside `M` seeds at its best exit; one outside `O`, at
    /// its worst.
    #[inline]
    fn seed_thresholds(&self, at: usize) -> u64 {
        let flag = self.flags[at].load(Relaxed);
        let mut thresholds = 0;
        if flag & IN_MOVER == 0 {
            thresholds |= threshold_bit(self.mover[at].load(Relaxed));
        }
        if flag & IN_OPPONENT == 0 {
            thresholds |= threshold_bit(self.opponent[at].load(Relaxed));
        }
        thresholds
    }

    /// Each new `M` member removes one same-level move from each parent's
    /// counter; a parent left with none, whose worst exit is at least `t`,
    /// joins `O_t`.
    #[inline]
    fn parent_of_first(&self, t: u8, at: usize, edges: u8) -> bool {
        let flag = self.flags[at].load(Relaxed) - edges;
        self.flags[at].store(flag, Relaxed);
        let join = flag & (IN_OPPONENT | COUNTER) == 0 && self.opponent[at].load(Relaxed) >= t;
        if join {
            self.join_opponent(at, t);
        }
        join
    }

    /// Every same-level parent of a new `O` member can move there: it
    /// joins `M_t`.
    #[inline]
    fn parent_of_second(&self, t: u8, at: usize) -> bool {
        let join = self.flags[at].load(Relaxed) & IN_MOVER == 0;
        if join {
            self.join_mover(at, t);
        }
        join
    }

    fn arrays(&self) -> Vec<&[AtomicU8]> {
        vec![&self.mover, &self.opponent, &self.flags]
    }

    fn from_arrays(arrays: Vec<Vec<u8>>) -> Option<ForcedState> {
        let [mover, opponent, flags]: [Vec<u8>; 3] = arrays.try_into().ok()?;
        Some(ForcedState {
            mover: atomic(mover),
            opponent: atomic(opponent),
            flags: atomic(flags),
        })
    }

    /// A position outside `M` (or `O`) can force nothing.
    fn into_solution(self, n: u32) -> Solution {
        let mut symbols = filled_on_huge_pages(Forced::WIDTH * self.flags.len(), 0i8);
        symbols
            .par_chunks_mut(Forced::WIDTH)
            .enumerate()
            .for_each(|(at, pair)| {
                let flag = self.flags[at].load(Relaxed);
                let side = |bytes: &[AtomicU8], member: u8| {
                    if flag & member != 0 {
                        bytes[at].load(Relaxed)
                    } else {
                        0
                    }
                };
                let bounds = Bounds {
                    mover: side(&self.mover, IN_MOVER),
                    opponent: side(&self.opponent, IN_OPPONENT),
                };
                Forced::encode(n, bounds, pair);
            });
        Solution {
            symbols,
            mapped: None,
            exit_best: None,
        }
    }
}
