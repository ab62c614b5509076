//! What the lean mode needs to know of a kind of table ([`LeanKind`]): its
//! state, which exit lists a position goes to, which of them seed each
//! threshold, and how the level's symbols are put together from the
//! decisions. Even values and forced bounds grow their two sets per
//! threshold by the same rules, so everything else is shared.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use mancala_core::{Bounds, Rules};
use mancala_format::{Even, Forced, TableKind};
use rayon::prelude::*;

use super::lists::{visit_by_windows, List};
use super::state::{EvenState, ForcedState, LeanState};
use super::Decisions;
use crate::error::BuildError;
use crate::import::exit_best_marks;
use crate::solve::{as_atomic, Solve};
use crate::strategy::LevelJob;

/// A kind of table the lean mode solves.
pub trait LeanKind: Solve {
    /// The level's state in memory.
    type Lean: LeanState;

    /// How many exit lists a level of `n` stones has.
    fn exit_lists(n: u32) -> usize;

    /// The exit lists a position whose exits are `exits` is written to.
    fn lists_of(n: u32, exits: Self::Exits) -> [Option<usize>; 2];

    /// The exit list of the positions that join the first set at
    /// threshold `t` on their own.
    fn first_seeds(n: u32, t: u32) -> usize;

    /// The exit list of the positions that become eligible for the second
    /// set at threshold `t`.
    fn eligible_at(n: u32, t: u32) -> usize;

    /// Whether a position whose exits are `exits` is eligible for the
    /// second set from the start: no move leaves the level from it.
    fn eligible_from_start(exits: Self::Exits) -> bool;

    /// Writes the level's symbols ([`TableKind::WIDTH`] a position) into
    /// `symbols`, zeroed, from the decisions of thresholds `1..=n`
    /// (`decisions[t − 1]`).
    fn assemble(n: u32, symbols: &mut [i8], decisions: &[Decisions]) -> Result<(), BuildError>;

    /// Whether [`LeanKind::exit_marks`] reads the lower levels when a job
    /// asks for marks (`mark_exits`): a level whose end reads them cannot
    /// be finished without them.
    fn exit_marks_read_lower(rules: &Rules, mark_exits: bool) -> bool;

    /// Whether each position's value is its best exit's, where `job` asks
    /// ([`LevelJob::mark_exits`]).
    fn exit_marks(
        job: &LevelJob<Self>,
        symbols: &[i8],
        exits: &[List],
    ) -> Result<Option<Vec<bool>>, BuildError>;
}

/// Even values: `W_s` and `L_s`, a list per best exit's value `−n..=n`.
impl LeanKind for Even {
    type Lean = EvenState;

    fn exit_lists(n: u32) -> usize {
        2 * n as usize + 1
    }

    fn lists_of(n: u32, best: i32) -> [Option<usize>; 2] {
        [
            (!Self::eligible_from_start(best)).then(|| value_list(n, best)),
            None,
        ]
    }

    fn first_seeds(n: u32, s: u32) -> usize {
        value_list(n, s as i32)
    }

    fn eligible_at(n: u32, s: u32) -> usize {
        value_list(n, -(s as i32))
    }

    fn eligible_from_start(best: i32) -> bool {
        best == Even::no_exit()
    }

    /// A position in neither set of any threshold is worth 0.
    fn assemble(_n: u32, values: &mut [i8], decisions: &[Decisions]) -> Result<(), BuildError> {
        let below = values.len() as u64;
        let values = as_atomic(values);
        visit_by_windows(&both_sets(decisions), below, |k, at| {
            let s = (k / 2 + 1) as i8;
            values[at as usize].store(if k % 2 == 0 { s } else { -s }, Relaxed);
        })
    }

    fn exit_marks_read_lower(rules: &Rules, mark_exits: bool) -> bool {
        mark_exits && rules.variant().gives_extra_turns()
    }

    fn exit_marks(
        job: &LevelJob<Even>,
        values: &[i8],
        exits: &[List],
    ) -> Result<Option<Vec<bool>>, BuildError> {
        if !job.mark_exits {
            return Ok(None);
        }
        let n = job.level;
        if Self::exit_marks_read_lower(job.rules, job.mark_exits) {
            // The best exits listed may be extra turns, which restore
            // nothing: a compact table's marks are those of the restoring
            // exits, found again as an import finds them.
            return Ok(Some(exit_best_marks(job.rules, n, values, job.lower)));
        }
        let marks: Vec<AtomicBool> = (0..values.len())
            .into_par_iter()
            .map(|_| AtomicBool::new(false))
            .collect();
        let lists: Vec<_> = (-(n as i32)..=n as i32)
            .map(|value| &exits[value_list(n, value)])
            .collect();
        visit_by_windows(&lists, values.len() as u64, |k, at| {
            let best = values[at as usize] as i32 == k as i32 - n as i32;
            marks[at as usize].store(best, Relaxed);
        })?;
        Ok(Some(
            marks.into_iter().map(AtomicBool::into_inner).collect(),
        ))
    }
}

/// The list of the positions whose best exit is worth `value`.
fn value_list(n: u32, value: i32) -> usize {
    (value + n as i32) as usize
}

/// Forced bounds: `M_t` and `O_t`, a list per best exit for the mover
/// (`1..=n`: one worth 0 seeds nothing) and one per worst exit for the
/// opponent (`1..=n`: one worth 0 never makes a position eligible).
impl LeanKind for Forced {
    type Lean = ForcedState;

    fn exit_lists(n: u32) -> usize {
        2 * n as usize
    }

    fn lists_of(n: u32, exits: Bounds) -> [Option<usize>; 2] {
        let mover = (exits.mover > 0).then(|| Self::first_seeds(n, exits.mover.into()));
        let opponent = (exits.opponent > 0 && !Self::eligible_from_start(exits))
            .then(|| Self::eligible_at(n, exits.opponent.into()));
        [mover, opponent]
    }

    fn first_seeds(_n: u32, t: u32) -> usize {
        t as usize - 1
    }

    fn eligible_at(n: u32, t: u32) -> usize {
        (n + t) as usize - 1
    }

    fn eligible_from_start(exits: Bounds) -> bool {
        exits.opponent == Forced::no_exit().opponent
    }

    /// Each side's bound is the threshold it joined its set at, 0 if it
    /// never did; written as the pair [`Forced::encode`] stores.
    fn assemble(n: u32, symbols: &mut [i8], decisions: &[Decisions]) -> Result<(), BuildError> {
        let width = Forced::WIDTH;
        let below = (symbols.len() / width) as u64;
        let pairs = as_atomic(symbols);
        visit_by_windows(&both_sets(decisions), below, |k, at| {
            pairs[width * at as usize + k % 2].store((k / 2 + 1) as i8, Relaxed);
        })?;
        symbols.par_chunks_mut(width).for_each(|pair| {
            let bounds = Bounds {
                mover: pair[0] as u8,
                opponent: pair[1] as u8,
            };
            Forced::encode(n, bounds, pair);
        });
        Ok(())
    }

    fn exit_marks_read_lower(_: &Rules, _: bool) -> bool {
        false
    }

    fn exit_marks(
        _: &LevelJob<Forced>,
        _: &[i8],
        _: &[List],
    ) -> Result<Option<Vec<bool>>, BuildError> {
        Ok(None)
    }
}

/// Each threshold's first then second set, threshold by threshold: list
/// `k` holds threshold `k / 2 + 1`'s first set if `k` is even.
fn both_sets(decisions: &[Decisions]) -> Vec<&List> {
    decisions
        .iter()
        .flat_map(|decided| [&decided.first, &decided.second])
        .collect()
}
