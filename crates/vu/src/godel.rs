//! The Gödel numbering of the VU files: within a level, the positions
//! whose opponent row has an empty pit, in lexicographic order of their
//! counts read from the opponent's last pit back to the mover's first
//! (`x_{2P−1}` most significant, `x_0` least), numbered from 0.
//!
//! The opponent has just moved, and the pit he sowed from is empty after
//! any move of the Oware family, so a position with his whole row full is
//! never reached by a move (the start position is the one exception, and it
//! is not numbered). Leaving those positions out is what makes the files
//! smaller than the level.
//!
//! That order is the reverse of our index's: `C(b_i, i + 1)` grows with the
//! prefix sums `b_i`, so a larger rank means a smaller `x_{2P−1}`, then a
//! smaller `x_{2P−2}`, and so on. Ranking here counts directly, pit by pit,
//! the numbered positions that come before: no table but the binomials.

use mancala_core::{binomial, Position, MAX_PITS, MAX_STONES};
use mancala_format::unreachable_by_moves;

/// Whether the VU numbering gives `pos` a number: its opponent row (the
/// row of the player who moved last) has an empty pit.
pub fn is_numbered(pos: &Position) -> bool {
    !unreachable_by_moves(pos)
}

/// The Gödel numbering of one level: the `stones`-stone positions of `pits`
/// pits a side that [`is_numbered`] accepts, and `0..count()`.
#[derive(Clone, Copy, Debug)]
pub struct GodelIndex {
    pits: usize,
    stones: u32,
    count: u64,
}

impl GodelIndex {
    /// The numbering of level `stones` with `pits` pits a side.
    ///
    /// # Panics
    ///
    /// If `pits` is not in `1..=MAX_PITS` or `stones` exceeds `MAX_STONES`
    /// (the limits of [`mancala_core::LevelIndex`]).
    pub fn new(pits: usize, stones: u32) -> GodelIndex {
        assert!((1..=MAX_PITS).contains(&pits) && stones <= MAX_STONES);
        let n = stones as usize;
        let all = compositions(n, 2 * pits);
        let full = n
            .checked_sub(pits)
            .map_or(0, |rest| compositions(rest, 2 * pits));
        GodelIndex {
            pits,
            stones,
            count: all - full,
        }
    }

    /// Positions numbered: the level's positions less those whose opponent
    /// row has no empty pit, `C(n + 2P − 1, 2P − 1) − C(n − P + 2P − 1, 2P − 1)`.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The number of `pos`, or `None` if it is not a position of this level
    /// or not numbered ([`is_numbered`]).
    pub fn rank(&self, pos: &Position) -> Option<u64> {
        if pos.pits() != self.pits || pos.stones() != self.stones || !is_numbered(pos) {
            return None;
        }
        let mut walk = Walk::new(self.pits, self.stones);
        let mut number = 0;
        for pit in (0..2 * self.pits).rev() {
            let seeds = pos.cells()[pit] as usize;
            number += (0..seeds)
                .map(|smaller| walk.completions(pit, smaller))
                .sum::<u64>();
            walk.fix(pit, seeds);
        }
        Some(number)
    }

    /// The position numbered `number`, or `None` past [`GodelIndex::count`].
    pub fn unrank(&self, mut number: u64) -> Option<Position> {
        if number >= self.count {
            return None;
        }
        let mut walk = Walk::new(self.pits, self.stones);
        let mut cells = [0u8; 2 * MAX_PITS];
        for pit in (0..2 * self.pits).rev() {
            // `number < count` leaves a completion at some count up to
            // what is left, so the scan stops by then.
            let mut seeds = walk.left;
            for smaller in 0..walk.left {
                let before = walk.completions(pit, smaller);
                if number < before {
                    seeds = smaller;
                    break;
                }
                number -= before;
            }
            cells[pit] = seeds as u8;
            walk.fix(pit, seeds);
        }
        let (mover, opponent) = cells[..2 * self.pits].split_at(self.pits);
        Some(Position::from_rows(mover, opponent))
    }
}

/// Compositions of `n` into `parts` parts: `C(n + parts − 1, parts − 1)`,
/// and for no parts, one if nothing is left to place.
fn compositions(n: usize, parts: usize) -> u64 {
    match parts {
        0 => u64::from(n == 0),
        _ => binomial(n + parts - 1, parts - 1),
    }
}

/// The state of a walk from the last pit down: the stones not yet placed,
/// and whether every opponent pit fixed so far holds a stone (so that the
/// position could still have a full opponent row).
struct Walk {
    pits: usize,
    left: usize,
    opponent_full_so_far: bool,
}

impl Walk {
    fn new(pits: usize, stones: u32) -> Walk {
        Walk {
            pits,
            left: stones as usize,
            opponent_full_so_far: true,
        }
    }

    /// Numbered positions that agree with the pits fixed so far and hold
    /// `seeds` in `pit`: the ways to fill pits `pit − 1 … 0` with what is
    /// left, less the ways that leave the opponent row full.
    fn completions(&self, pit: usize, seeds: usize) -> u64 {
        let Some(rest) = self.left.checked_sub(seeds) else {
            return 0;
        };
        let all = compositions(rest, pit);
        let still_full = self.opponent_full_so_far && (pit < self.pits || seeds > 0);
        if !still_full {
            return all;
        }
        // Every opponent pit below `pit` must hold a stone: set one aside
        // in each and fill freely.
        let opponent_below = pit.saturating_sub(self.pits);
        let full = rest
            .checked_sub(opponent_below)
            .map_or(0, |free| compositions(free, pit));
        all - full
    }

    /// Places `seeds` in `pit`.
    fn fix(&mut self, pit: usize, seeds: usize) {
        self.left -= seeds;
        self.opponent_full_so_far &= pit < self.pits || seeds > 0;
    }
}
