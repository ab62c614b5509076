//! Even values as the generator solves them: one value per position,
//! endless play an even split (`docs/RULES.md`, "Endless play").
//!
//! For a threshold `s`, `W_s` (the mover can force at least `s`) and `L_s`
//! (the mover cannot avoid `−s` or worse) are attractors that only grow as
//! `s` falls. A position enters `W_s` when a move leaves the level with at
//! least `s` or a same-level child is in `L_s`; it enters `L_s` when every
//! exit is worth at most `−s` and every same-level child is in `W_s` (its
//! counter of same-level children not yet in `W` is zero). Positions that
//! never enter either set are worth 0.
//!
//! Memory: two bytes per position. One byte holds the best exit while the
//! position is undecided and its value once decided; the other holds the
//! counter, a "decided" flag and whether the value decided is the best
//! exit's (which a compact table needs).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use mancala_core::{Move, Rules};
use mancala_format::{Encoding, Even, Header, SolvedValues};
use rayon::prelude::*;

use crate::solve::{atomic, bytes, threshold_bit, LevelState, Solution, Solve};

/// Marks "no move leaves the level" in the best exit.
const NO_EXIT: i8 = i8::MIN;
/// Set in a position's flag byte once its value is decided.
const DECIDED: u8 = 0x80;
/// Set with [`DECIDED`] when the value decided is the best exit's.
const EXIT_BEST: u8 = 0x40;

impl Solve for Even {
    /// The best exit's value (`i8::MIN` if none), or the terminal value.
    type Exits = i32;
    type State = EvenState;

    fn no_exit() -> i32 {
        NO_EXIT as i32
    }

    #[inline]
    fn add_exit(best: &mut i32, m: &Move, child: i8) {
        *best = (*best).max(m.value_given_child(child as i32));
    }

    fn terminal(_n: u32, value: i32) -> i32 {
        value
    }

    fn acyclic_value(_n: u32, value: i8) -> i32 {
        value as i32
    }

    fn from_values(_n: u32, values: Vec<i8>) -> Solution {
        Solution {
            symbols: values,
            mapped: None,
            exit_best: None,
        }
    }

    /// The encoding asked for, or every value stored where it does not
    /// apply to the rule set.
    fn stored_encoding(rules: &Rules, asked: Encoding) -> Encoding {
        if asked.applies_to(rules) {
            asked
        } else {
            Encoding::Full
        }
    }

    fn to_store<'a>(
        rules: &Rules,
        n: u32,
        solution: &'a Solution,
        encoding: Encoding,
        block_size: u32,
    ) -> (Header, Cow<'a, [i8]>) {
        let values = solution.held_symbols();
        let encoding = Even::stored_encoding(rules, encoding);
        let exit_best = solution.exit_best.as_deref();
        let level = SolvedValues {
            rules: *rules,
            level: n,
            values,
            exit_best,
        };
        let chosen = encoding.choose(level, block_size as usize);
        let header = Header::for_entries(rules, n, values, encoding, &chosen, block_size);
        (header, chosen.entries)
    }
}

/// The working state of an even level, two bytes per position.
pub struct EvenState {
    /// The best exit while undecided (an `i8`), the value once decided.
    value: Vec<AtomicU8>,
    /// Same-level children not yet in `W` (low bits), [`DECIDED`] and
    /// [`EXIT_BEST`].
    flags: Vec<AtomicU8>,
}

impl EvenState {
    #[inline]
    fn value(&self, at: usize) -> i8 {
        self.value[at].load(Relaxed) as i8
    }

    /// Decides `value` for position `at`, noting whether it is the value of
    /// its best exit (still held in `value` until now).
    #[inline]
    fn decide(&self, at: usize, value: i8) {
        let exit_best = if self.value(at) == value {
            EXIT_BEST
        } else {
            0
        };
        self.value[at].store(value as u8, Relaxed);
        self.flags[at].store(self.flags[at].load(Relaxed) | DECIDED | exit_best, Relaxed);
    }

    #[inline]
    fn undecided(&self, at: usize) -> bool {
        self.flags[at].load(Relaxed) & DECIDED == 0
    }
}

impl LevelState for EvenState {
    type Exits = i32;

    fn new(count: usize) -> EvenState {
        EvenState {
            value: bytes(count, NO_EXIT as u8),
            flags: bytes(count, 0),
        }
    }

    #[inline]
    fn record(&self, at: usize, best_exit: i32, stays: u8) {
        self.value[at].store(best_exit as i8 as u8, Relaxed);
        self.flags[at].store(stays, Relaxed);
    }

    fn flags(&self) -> &[AtomicU8] {
        &self.flags
    }

    /// An exit worth exactly `s` enters `W_s`; with every same-level child
    /// already in `W`, a best exit worth exactly `−s` enters `L_s`.
    #[inline]
    fn seed(&self, t: u8, at: usize, flag: u8) -> (bool, bool) {
        let s = t as i8;
        if flag & DECIDED != 0 {
            return (false, false);
        }
        let exit = self.value(at);
        if exit == s {
            self.decide(at, s);
            (true, false)
        } else if exit == -s && flag == 0 {
            self.decide(at, -s);
            (false, true)
        } else {
            (false, false)
        }
    }

    /// An undecided position seeds at the size of its best exit, if any:
    /// `W_s` for an exit worth `s`, `L_s` for one worth `−s`.
    #[inline]
    fn seed_thresholds(&self, at: usize) -> u64 {
        let exit = self.value(at);
        if self.undecided(at) && exit != 0 {
            threshold_bit(exit.unsigned_abs())
        } else {
            0
        }
    }

    /// Each new `W` member removes one unresolved child from each
    /// same-level parent; a parent left with none, and no exit better than
    /// `−s`, is lost.
    #[inline]
    fn parent_of_first(&self, t: u8, at: usize, edges: u8) -> bool {
        let s = t as i8;
        let flag = self.flags[at].load(Relaxed) - edges;
        self.flags[at].store(flag, Relaxed);
        // Undecided and no child left outside `W`.
        if flag == 0 && self.value(at) <= -s {
            self.decide(at, -s);
            true
        } else {
            false
        }
    }

    /// Every same-level parent of a new `L` member can move there: it wins
    /// `s`.
    #[inline]
    fn parent_of_second(&self, t: u8, at: usize) -> bool {
        let undecided = self.undecided(at);
        if undecided {
            self.decide(at, t as i8);
        }
        undecided
    }

    fn arrays(&self) -> Vec<&[AtomicU8]> {
        vec![&self.value, &self.flags]
    }

    fn from_arrays(arrays: Vec<Vec<u8>>) -> Option<EvenState> {
        let [value, flags]: [Vec<u8>; 2] = arrays.try_into().ok()?;
        Some(EvenState {
            value: atomic(value),
            flags: atomic(flags),
        })
    }

    /// Undecided positions are worth 0 (endless play), which is their best
    /// exit's value if that is 0 too.
    fn into_solution(self, _n: u32) -> Solution {
        let flags: Vec<u8> = self.flags.into_iter().map(AtomicU8::into_inner).collect();
        let mut values: Vec<i8> = self
            .value
            .into_iter()
            .map(|v| v.into_inner() as i8)
            .collect();
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
        Solution {
            symbols: values,
            mapped: None,
            exit_best: Some(exit_best),
        }
    }
}
