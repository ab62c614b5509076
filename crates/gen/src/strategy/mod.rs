//! Solving strategies: how one level is solved from the levels below.
//!
//! A strategy gets a [`LevelJob`] (the rule set, the level, the solved
//! lower levels, progress and checkpoints) and returns the level's
//! [`Solution`]. [`Retrograde`] (forward pass, then threshold propagation)
//! solves every rule set and both kinds of table; [`OnePass`] solves rule
//! sets whose levels cannot cycle, each position once, same-level children
//! first. Both write the same tables; [`crate::pipeline`] chooses by the
//! rule set's [`mancala_core::Variant::can_cycle`].

mod by_distance;
mod one_pass;
mod retrograde;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use mancala_core::{Rules, MAX_LEVEL};
use mancala_format::Levels;

use crate::checkpoint::Checkpoints;
use crate::error::BuildError;
use crate::kernel::Depths;
use crate::solve::{Solution, Solve};

pub(crate) use by_distance::{largest_distance, tasks_at, Pending, RowMoves, Rows, Task};
pub use one_pass::OnePass;
pub use retrograde::Retrograde;

/// One level to solve.
pub struct LevelJob<'a, K: Solve> {
    /// The rule set.
    pub rules: &'a Rules,
    /// Stones on the board.
    pub level: u32,
    /// The solved levels `0..level`.
    pub lower: &'a Levels<K>,
    /// Receives work units as they finish: a level is `2 × positions`
    /// units, one per position for a first pass and the rest spread over
    /// the remaining work.
    pub progress: &'a (dyn Fn(u64) + Sync),
    /// Receives the work units a level resumed from its checkpoint had
    /// done before, which it does not redo ([`LevelJob::report_resumed`];
    /// `None`: `progress` receives them), so that an ETA does not count
    /// them as done at the current rate.
    pub resumed: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Where and how often to save the level's state, so that a killed
    /// build resumes inside the level (`None`: never).
    pub checkpoints: Option<&'a Checkpoints>,
    /// Set when the build is to stop ([`crate::BuildOptions::interrupt`]):
    /// a strategy checks it between its steps and returns
    /// [`BuildError::Interrupted`].
    pub interrupt: Option<&'a AtomicBool>,
    /// Whether the solution must mark the positions whose best restoring
    /// exit is their value ([`Solution::exit_best`]), which a compact
    /// table is written from; a strategy may mark them anyway.
    pub mark_exits: bool,
    /// Where the level's depths to conversion go ([`Depths`], for the
    /// positions this process holds), if they are asked for: the threshold
    /// propagation finds them ([`Retrograde`], [`crate::Lean`]); a
    /// strategy that solves otherwise ([`OnePass`]) leaves them unknown.
    pub depths: Option<&'a Depths>,
}

impl<K: Solve> LevelJob<'_, K> {
    /// Whether the build has been asked to stop.
    pub fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|i| i.load(Relaxed))
    }

    /// Reports the work units a level resumed from its checkpoint had done
    /// ([`LevelJob::resumed`]).
    pub fn report_resumed(&self, units: u64) {
        match self.resumed {
            Some(resumed) => resumed(units),
            None => (self.progress)(units),
        }
    }

    /// Checks what every strategy relies on: the level is in range and the
    /// levels below it are all solved, in order.
    pub(crate) fn assert_in_order(&self) {
        let n = self.level;
        assert!(n <= MAX_LEVEL, "level {n} is above {MAX_LEVEL}");
        assert_eq!(
            self.lower.len(),
            n as usize,
            "levels must be solved in order"
        );
    }
}

/// How a level is solved.
pub trait Strategy: Sync {
    /// Solves `job`'s level. With checkpoints, a valid checkpoint of the
    /// level is resumed from and new ones are saved; the last one is left
    /// in place for the caller to remove once the level is stored.
    fn solve<K: Solve>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError>;
}
