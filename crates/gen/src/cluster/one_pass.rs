//! One level that cannot cycle solved across ranks: the one-pass strategy
//! ([`crate::OnePass`]) with each rank holding the values of its own range
//! only.
//!
//! Every rank solves its positions of distance 0, then 1, and so on
//! ([`crate::strategy`]'s distance order), a piece at a time. A piece's
//! children are asked of their owners in one exchange: lower levels'
//! children from the owners' shares, same-level ones from the values the
//! owners solved at smaller distances, which every rank finished before
//! any piece of this distance was asked. One collective step per piece,
//! every rank taking as many as the rank with the most.

use std::ops::Range;

use mancala_core::{Rules, MAX_PITS};
use rayon::prelude::*;

use super::solve::{Asks, LevelAcross};
use super::transport::{max, Transport};
use crate::solve::Solve;
use crate::strategy::{largest_distance, tasks_at, Pending, RowMoves, Rows, Task};

/// Positions of a rank's range solved per exchange, about. Tiny in debug
/// builds, so the tests cut distances into many pieces.
const PIECE: usize = if cfg!(debug_assertions) {
    1 << 9
} else {
    1 << 16
};
/// A position not solved yet.
const UNSOLVED: i8 = i8::MIN;

impl<K: Solve, T: Transport> LevelAcross<'_, K, T> {
    /// This rank's range of a level that cannot cycle, solved in one pass
    /// (two work units a position): its symbols in index order.
    pub(crate) fn solve_in_one_pass(&self) -> Vec<i8> {
        let (n, pits) = (self.level, self.rules.pits());
        let range = self.split.range(self.transport.rank());
        let rows = Rows::of_level(pits, n);
        let opponents: Vec<Rows> = (0..=n as usize)
            .map(|s| rows[s].opponents_within(&rows[n as usize - s], &range))
            .collect();
        let mut values = vec![UNSOLVED; (range.end - range.start) as usize];
        let mut scratch = Vec::new();
        for distance in 0..=largest_distance(pits, n) {
            let tasks = tasks_at(&rows, &opponents, distance);
            let pieces = pieces_of(&tasks);
            let steps = max(self.transport, pieces.len() as u64) as usize;
            for step in 0..steps {
                let piece = pieces.get(step).map_or(&[][..], |p| &tasks[p.clone()]);
                self.solve_piece(piece, &range, &mut values, &mut scratch);
            }
        }
        debug_assert!(values.iter().all(|&v| v != UNSOLVED));
        K::from_values(n, values).symbols
    }

    /// Solves the positions of `tasks` in `range`, asking every child's
    /// value of its owner.
    /// `scratch` is kept from piece to piece: each task locates its
    /// positions into its own part of it, in place, as a located position
    /// is large to move.
    fn solve_piece(
        &self,
        tasks: &[Task],
        range: &Range<u64>,
        values: &mut [i8],
        scratch: &mut Vec<Pending>,
    ) {
        let n = self.level;
        let most: usize = tasks.iter().map(Task::positions).sum();
        if scratch.len() < most {
            scratch.resize(most, Pending::default());
        }
        let mut parts = Vec::with_capacity(tasks.len());
        let mut rest = &mut scratch[..most];
        for task in tasks {
            let (part, after) = rest.split_at_mut(task.positions());
            parts.push(part);
            rest = after;
        }
        let located: Vec<&[Pending]> = parts
            .into_par_iter()
            .zip(tasks)
            .map(|(part, task)| {
                let found = locate(self.rules, n, task, range, part);
                &part[..found]
            })
            .collect();
        let mut firsts = Vec::with_capacity(located.len());
        let mut asks = Asks::new(self.transport.ranks());
        let mut i = 0;
        for task in &located {
            firsts.push(i);
            for p in task.iter() {
                for (j, child) in p.children().iter().enumerate() {
                    let split = if child.level == n {
                        self.split
                    } else {
                        self.lower.split(child.level)
                    };
                    asks.push(
                        split.owner(child.index),
                        child.level,
                        child.index,
                        i * MAX_PITS + j,
                    );
                }
                i += 1;
            }
        }
        let first = range.start;
        let children = asks.send(self.transport, i * MAX_PITS, 1, |level, index, out| {
            let value = if level == n {
                let value = values[(index - first) as usize];
                debug_assert_ne!(value, UNSOLVED, "a same-level child is not solved yet");
                value
            } else {
                let entry = K::read(level, self.lower.symbols(level, index));
                K::acyclic_value(level, entry) as i8
            };
            out.push(value as u8);
        });
        let solved: Vec<Vec<(u64, i8)>> = located
            .par_iter()
            .zip(&firsts)
            .map(|(located, &i)| {
                let child = |k: usize, j: usize| children[(i + k) * MAX_PITS + j][0] as i32;
                let value = |(k, p): (usize, &Pending)| (p.at, p.value(|j, _| child(k, j)) as i8);
                located.iter().enumerate().map(value).collect()
            })
            .collect();
        for (at, value) in solved.into_iter().flatten() {
            values[(at - first) as usize] = value;
        }
        (self.progress)(2 * i as u64);
    }
}

/// Locates the positions of `task` (of level `n`) in `range` into the
/// front of `found` (as long as the task); returns how many there are.
fn locate(rules: &Rules, n: u32, task: &Task, range: &Range<u64>, found: &mut [Pending]) -> usize {
    let mut count = 0;
    for mover in task.movers {
        let moves = RowMoves::new(rules, mover, n);
        for opponent in task.opponents {
            let pending = &mut found[count];
            pending.locate(rules, n, (&moves, mover), opponent, |_, _| {});
            count += range.contains(&pending.at) as usize;
        }
    }
    count
}

/// `tasks` cut into runs of about [`PIECE`] positions.
fn pieces_of(tasks: &[Task]) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let (mut start, mut positions) = (0, 0);
    for (i, task) in tasks.iter().enumerate() {
        positions += task.positions();
        if positions >= PIECE {
            pieces.push(start..i + 1);
            (start, positions) = (i + 1, 0);
        }
    }
    if start < tasks.len() {
        pieces.push(start..tasks.len());
    }
    pieces
}
