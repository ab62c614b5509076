//! The one-pass strategy, for rule sets whose levels cannot cycle
//! ([`mancala_core::Variant::can_cycle`]: Kalah, with either capture rule).
//!
//! Positions are solved by increasing distance ([`super::by_distance`]),
//! so every same-level child is solved before its parent and each
//! position is one look at its moves: a minimax over the lower levels and
//! the solved part of its own, one byte of state per position, no
//! counters, no thresholds, no un-moves. Positions of one distance are
//! independent and are solved in parallel.
//!
//! A level is a single pass: it is not checkpointed.

use std::sync::atomic::{AtomicBool, AtomicI8, Ordering::Relaxed};

use mancala_core::{LevelIndex, Rules};
use mancala_format::{filled_on_huge_pages, prefetch, Levels, Order};
use rayon::prelude::*;

use super::by_distance::{largest_distance, tasks_at, Child, Pending, RowMoves, Rows, Task};
use super::{LevelJob, Strategy};
use crate::error::BuildError;
use crate::solve::{Solution, Solve};

/// Positions whose children are located (and prefetched) before the
/// first is read.
const BATCH: usize = 32;
/// A position not solved yet.
const UNSOLVED: i8 = i8::MIN;

/// Every position solved once, same-level children first.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnePass;

impl Strategy for OnePass {
    fn solve<K: Solve>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError> {
        let n = job.level;
        job.assert_in_order();
        assert!(
            !job.rules.variant().can_cycle(),
            "one pass solves only levels that cannot cycle"
        );
        // Children are located from their rows' ranks, which is the rank
        // order: the fast mode holds its lower levels that way.
        debug_assert!((0..n).all(|level| job.lower.order(level) == Order::Rank));
        let pits = job.rules.pits();
        let rows = Rows::of_level(pits, n);
        let index = LevelIndex::new(pits, n);
        let count = index.count();
        let level = Level {
            rules: job.rules,
            index,
            lower: job.lower,
            values: filled_on_huge_pages(count as usize, UNSOLVED)
                .into_iter()
                .map(AtomicI8::new)
                .collect(),
            exit_best: job
                .mark_exits
                .then(|| (0..count).map(|_| AtomicBool::new(false)).collect()),
        };
        for distance in 0..=largest_distance(pits, n) {
            if job.interrupted() {
                return Err(BuildError::Interrupted);
            }
            let tasks = tasks_at(&rows, &rows, distance);
            tasks.par_iter().for_each(|task| level.solve_task(task));
            let positions: usize = tasks.iter().map(Task::positions).sum();
            // A level is two units a position (`LevelJob::progress`).
            (job.progress)(2 * positions as u64);
        }
        // Writing the level reads no lower level: their mapped pages may go.
        job.lower.release_mapped_pages();
        let values = level.values.into_iter().map(AtomicI8::into_inner).collect();
        let mut solution = K::from_values(n, values);
        if let Some(marks) = level.exit_best {
            solution.exit_best = Some(marks.into_iter().map(AtomicBool::into_inner).collect());
        }
        Ok(solution)
    }
}

/// The level being solved.
struct Level<'a, K: Solve> {
    rules: &'a Rules,
    index: LevelIndex,
    lower: &'a Levels<K>,
    /// Every position's value once solved, [`UNSOLVED`] before.
    values: Vec<AtomicI8>,
    /// Per position, whether its best restoring exit is its value, if the
    /// job asks for the marks ([`LevelJob::mark_exits`]).
    exit_best: Option<Vec<AtomicBool>>,
}

impl<K: Solve> Level<'_, K> {
    /// Solves a task's positions in batches: every child of a batch is
    /// located and prefetched before any is read, so the misses of a
    /// batch's random lookups overlap.
    fn solve_task(&self, task: &Task) {
        let n = self.index.stones();
        let mut batch = [Pending::default(); BATCH];
        let mut filled = 0;
        for mover in task.movers {
            let moves = RowMoves::new(self.rules, mover, n);
            for opponent in task.opponents {
                batch[filled].locate(self.rules, n, (&moves, mover), opponent, |level, index| {
                    if level < n {
                        self.lower.prefetch(level, index);
                    } else {
                        prefetch(&self.values, index as usize);
                    }
                });
                filled += 1;
                if filled == BATCH {
                    self.finish(&batch);
                    filled = 0;
                }
            }
        }
        self.finish(&batch[..filled]);
    }

    /// Reads the children of every position of `batch` and stores its
    /// values.
    fn finish(&self, batch: &[Pending]) {
        for pending in batch {
            let at = pending.at as usize;
            let value = match &self.exit_best {
                Some(marks) => {
                    let (value, exit_best) =
                        pending.value_and_exit_best(|child| self.child_value(child));
                    marks[at].store(exit_best, Relaxed);
                    value
                }
                None => pending.value(|_, child| self.child_value(child)),
            };
            self.values[at].store(value as i8, Relaxed);
        }
    }

    /// The value of a solved child.
    #[inline]
    fn child_value(&self, child: &Child) -> i32 {
        if child.level < self.index.stones() {
            K::acyclic_value(child.level, self.lower.entry_at(child.level, child.index))
        } else {
            let value = self.values[child.index as usize].load(Relaxed);
            debug_assert_ne!(value, UNSOLVED, "a same-level child is not solved yet");
            value as i32
        }
    }
}
