//! Which values a compact table leaves out, how a reader gets them back,
//! and the context its values are coded in.
//!
//! A compact table (Oware family, [`crate::table::Encoding::Compact`])
//! stores for each position an *entry* at most its value, and
//!
//! ```text
//! value(p) = max(entry(p), best value of p's restoring moves)
//! ```
//!
//! where a move is worth `gain − value(child)` and a position without a
//! legal move is worth its terminal value. The *restoring moves* of `p`
//! are every legal move if no move leads to `p` ([`unreachable_by_moves`]),
//! and otherwise the moves that leave the level (captures) and the moves
//! that *descend*: they leave the new mover fewer stones on his side than
//! the old mover had on his, or as many and a lower index rank. Wherever
//! the restoring moves alone give the value, the entry is free, and the
//! writer stores the one the codec finds cheapest
//! ([`crate::codec::lower_free_values`]).
//!
//! That this is exactly the value is RULES.md's recursion: a table holds its
//! fixpoint, endless play included. That a reader's search ends: a
//! same-level restoring move descends in the order (mover's stones, rank),
//! except from an unreachable position, which is nobody's child; levels
//! only fall. A probe searches the restoring moves best bound first (a move
//! is worth at most its gain minus its child's entry), so most of it is
//! reading a few entries.
//!
//! About 65% of oware positions have a free entry this way: a third take
//! their value from a capture, and most of the rest from a descending move.
//!
//! Entries are coded in the context of the previous entry and the mover's
//! stones, capped at [`MOVER_CAP`] ([`MoverContexts`]): the stones on the
//! mover's side say much about the value, and a reader walking a block
//! gets them for the cost of stepping to the next position.

use rayon::prelude::*;

use crate::codec::Contexts;
use crate::index::{self, LevelIndex};
use crate::position::Position;
use crate::rules::{Move, Rules};

/// Positions per unit of parallel work.
const CHUNK: usize = 1 << 14;

/// Mover's-stone counts above this share one context.
pub const MOVER_CAP: u32 = 12;

/// Visits the restoring moves of `pos`, in pit order; returns its value
/// instead if it has no legal move.
pub fn for_each_restoring_move(
    rules: &Rules,
    pos: &Position,
    mut visit: impl FnMut(&Move),
) -> Option<i32> {
    let restoring = Restoring::of(pos, index::rank(pos));
    rules.for_each_move(pos, |m| {
        if restoring.restores(m) {
            visit(m)
        }
    })
}

/// Which moves of one position restore its value: what the rule needs to
/// know of the position, worked out once for all its moves.
#[derive(Clone, Copy, Debug)]
pub struct Restoring {
    /// No move leads to the position: every move restores.
    everything: bool,
    /// The position's stones on the mover's side.
    mover: u32,
    /// The position's rank in its level.
    rank: u64,
}

impl Restoring {
    /// The rule for `pos`, of rank `rank` in its level.
    pub fn of(pos: &Position, rank: u64) -> Restoring {
        Restoring {
            everything: unreachable_by_moves(pos),
            mover: pos.mover_stones(),
            rank,
        }
    }

    /// Whether `m`, a legal move of the position, is one of its restoring
    /// moves.
    #[inline]
    pub fn restores(&self, m: &Move) -> bool {
        self.everything || m.leaves_level() || descends(self.mover, self.rank, &m.child)
    }
}

/// Whether no move leads to `pos`: its opponent (who moved last) has no
/// empty pit, but the pit he sowed from would be empty.
pub fn unreachable_by_moves(pos: &Position) -> bool {
    let p = pos.pits();
    (p..2 * p).all(|pit| pos.get(pit) > 0)
}

/// Whether a same-level `child` comes before its parent, which had
/// `parent_mover` stones on the mover's side and rank `parent_rank`, in
/// the order (mover's stones, rank) that restoring moves descend.
#[inline]
pub fn descends(parent_mover: u32, parent_rank: u64, child: &Position) -> bool {
    let mover = child.mover_stones();
    mover < parent_mover || (mover == parent_mover && index::rank(child) < parent_rank)
}

/// The coding contexts of a compact level: each position's stones on the
/// mover's side, capped at [`MOVER_CAP`].
pub struct MoverContexts {
    index: LevelIndex,
}

impl MoverContexts {
    /// The contexts of the level of `stones` stones with `pits` pits a
    /// side.
    pub fn new(pits: usize, stones: u32) -> MoverContexts {
        MoverContexts {
            index: LevelIndex::new(pits, stones),
        }
    }
}

impl Contexts for MoverContexts {
    type Walk = MoverWalk;

    fn features(&self) -> usize {
        MOVER_CAP as usize + 1
    }

    fn walk(&self, first: u64) -> MoverWalk {
        let pos = (first < self.index.count()).then(|| self.index.unrank(first));
        MoverWalk {
            mover: pos.as_ref().map_or(0, |p| p.mover_stones()),
            pos,
        }
    }
}

/// Walks a level in index order from some position, yielding each
/// position's capped mover's stones.
pub struct MoverWalk {
    /// The next position; `None` past the level's end.
    pos: Option<Position>,
    /// Its mover's stones, kept up to date as the walk steps.
    mover: u32,
}

impl Iterator for MoverWalk {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let pos = self.pos.as_mut()?;
        let feature = self.mover.min(MOVER_CAP) as usize;
        match index::advance_at(pos) {
            // Stones moved within the mover's row.
            Some(pit) if pit + 1 < pos.pits() => {}
            // The mover's stones gathered in his last pit, and one more
            // from the opponent's first.
            Some(pit) if pit + 1 == pos.pits() => self.mover += 1,
            // The mover's stones gathered in the opponent's row.
            Some(_) => self.mover = 0,
            None => self.pos = None,
        }
        debug_assert!(self
            .pos
            .as_ref()
            .is_none_or(|p| p.mover_stones() == self.mover));
        Some(feature)
    }
}

/// Which entries of a solved level a compact table may lower: a position
/// is free where its restoring moves give its value. `exit_best` marks
/// the positions whose best exit (or terminal value) is their value, as
/// the solver found; the rest look at their descending moves, or at every
/// move if unreachable, with the level's `values`.
pub fn free_entries(rules: &Rules, level: u32, values: &[i8], exit_best: &[bool]) -> Vec<bool> {
    let index = LevelIndex::new(rules.pits(), level);
    values
        .par_chunks(CHUNK)
        .zip(exit_best.par_chunks(CHUNK))
        .enumerate()
        .flat_map_iter(|(chunk, (values_here, exit_best))| {
            let first = (chunk * CHUNK) as u64;
            index
                .positions_from(first)
                .zip(values_here.iter().zip(exit_best))
                .enumerate()
                .map(move |(i, (pos, (&value, &exit_best)))| {
                    exit_best || same_level_move_gives(rules, &pos, first + i as u64, value, values)
                })
        })
        .collect()
}

/// Whether a same-level restoring move of `pos` (rank `rank`) is worth
/// `value`, given the level's `values`.
fn same_level_move_gives(
    rules: &Rules,
    pos: &Position,
    rank: u64,
    value: i8,
    values: &[i8],
) -> bool {
    let restoring = Restoring::of(pos, rank);
    let mut gives = false;
    rules.for_each_move(pos, |m| {
        if !gives && !m.leaves_level() && restoring.restores(m) {
            let child = values[index::rank(&m.child) as usize];
            gives = m.value_given_child(child as i32) == value as i32;
        }
    });
    gives
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk from any index yields the capped mover's stones of every
    /// position from there to the level's end, and nothing after.
    #[test]
    fn a_walk_follows_the_index() {
        for (pits, stones) in [(6, 14), (3, 20), (4, 0)] {
            let contexts = MoverContexts::new(pits, stones);
            let index = LevelIndex::new(pits, stones);
            let count = index.count();
            for first in [0, 1, count / 3, count - 1] {
                let walked: Vec<usize> = contexts.walk(first).collect();
                let expected: Vec<usize> = (first..count)
                    .map(|at| index.unrank(at).mover_stones().min(MOVER_CAP) as usize)
                    .collect();
                assert_eq!(
                    walked, expected,
                    "{pits} pits, {stones} stones from {first}"
                );
                assert!(walked.iter().all(|&f| f < contexts.features()));
            }
        }
    }
}
