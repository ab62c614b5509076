//! The order a held level keeps its entries in: the tables' rank order, or
//! flipped, for solvers that must read large lower levels from disk.

use std::ops::Range;

use mancala_core::{advance_cells, mover_row_rank, opponent_row_rank, rank, Position, MAX_PITS};
use rayon::prelude::*;

/// Where a held level keeps each position's entry.
///
/// Rank order runs through the positions sharing an opponent's row one
/// after another (the mover's row varies fastest). A forward pass walks its
/// level that way, and the children a run's captures reach share their
/// *mover's* row for each move and number of seeds sown (captures and sown
/// seeds change only the capturer's opponent's row, which becomes the
/// child's mover's row), while their opponent's rows vary. Held by rank,
/// those children are spread over the whole lower level; held flipped
/// (each entry at the rank of the position seen from the other side),
/// positions sharing a mover's row are one stretch, so a run's children
/// fall in a few short stretches that the next runs mostly reuse. This is
/// Lincke and Marzetta's dual indexing: the lower levels are read from the
/// page cache or disk nearly in sequence instead of at random.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Entry at the position's rank, as in the table files.
    #[default]
    Rank,
    /// Entry at the rank of [`Position::flipped`].
    Flipped,
}

impl Order {
    /// Where `pos`'s entry is in a level held in this order.
    #[inline]
    pub fn index(self, pos: &Position) -> u64 {
        match self {
            Order::Rank => rank(pos),
            Order::Flipped => rank(&pos.flipped()),
        }
    }
}

/// Rows per side of a square block of the transposition: a block's reads
/// and writes are whole runs of pages (a page of entries per row), so a
/// level larger than the page cache is still read and written about once.
const BLOCK: usize = 1 << 12;
/// Rows per side of a square tile within a block: a tile's reads and
/// writes stay within the processor's caches.
const TILE: usize = 64;

/// Level `n`'s entries (`width` symbols each, `pits` pits per side) copied
/// from rank order in `from` to flipped order in `to`.
///
/// For a mover's stone count `a`, the positions form a rectangle: rows `M`
/// of `a` stones against rows `R` of `n − a`. By rank, `M/R` is at
/// `mover_row_rank(M) + opponent_row_rank(a, R)`; flipped, at
/// `mover_row_rank(R) + opponent_row_rank(n − a, M)`. Within one sum,
/// consecutive rows have consecutive `mover_row_rank`s, so each `M` has
/// one run of the flipped level, and each rectangle is transposed block
/// by block (blocks of rows `M` in parallel, each writing its own runs),
/// tile by tile, from four row-rank tables.
pub(crate) fn flip(pits: usize, n: u32, width: usize, from: &[i8], to: &mut [i8]) {
    debug_assert_eq!(from.len(), to.len());
    for a in 0..=n {
        let movers = RowRanks::new(pits, a, n - a);
        let opponents = RowRanks::new(pits, n - a, a);
        let first = opponents.own[0];
        let starts = movers
            .against
            .iter()
            .map(|&at| (first + at) as usize * width);
        let mut runs = runs_of(to, starts, opponents.len() * width);
        runs.par_chunks_mut(BLOCK)
            .enumerate()
            .for_each(|(block, runs)| {
                let m0 = block * BLOCK;
                for block_rs in blocks(0..opponents.len(), BLOCK) {
                    for ms in blocks(m0..m0 + runs.len(), TILE) {
                        for rs in blocks(block_rs.clone(), TILE) {
                            for r in rs {
                                let (from_base, to_at) = (opponents.against[r], r * width);
                                for m in ms.clone() {
                                    let from_at = (movers.own[m] + from_base) as usize * width;
                                    runs[m - m0][to_at..to_at + width]
                                        .copy_from_slice(&from[from_at..from_at + width]);
                                }
                            }
                        }
                    }
                }
            });
    }
}

/// The runs of `len` symbols of `to` starting at `starts` (disjoint), as
/// slices in the order of `starts`: what lets each block of rows write its
/// own runs of the flipped level in parallel.
fn runs_of(mut to: &mut [i8], starts: impl Iterator<Item = usize>, len: usize) -> Vec<&mut [i8]> {
    let mut order: Vec<(usize, usize)> = starts.enumerate().map(|(k, at)| (at, k)).collect();
    order.sort_unstable();
    let mut runs: Vec<Option<&mut [i8]>> = (0..order.len()).map(|_| None).collect();
    let mut consumed = 0;
    for (at, k) in order {
        let (_, rest) = std::mem::take(&mut to).split_at_mut(at - consumed);
        let (run, rest) = rest.split_at_mut(len);
        runs[k] = Some(run);
        to = rest;
        consumed = at + len;
    }
    runs.into_iter()
        .map(|run| run.expect("a run for every row"))
        .collect()
}

/// `range` cut into consecutive pieces of at most `size`.
fn blocks(range: Range<usize>, size: usize) -> impl Iterator<Item = Range<usize>> {
    range
        .clone()
        .step_by(size)
        .map(move |start| start..(start + size).min(range.end))
}

/// The rows of `stones` stones in `pits` pits, in row-rank order: each
/// one's rank as the mover's row (`own`), and as the opponent's row
/// against a mover's `other` stones (`against`).
struct RowRanks {
    own: Vec<u64>,
    against: Vec<u64>,
}

impl RowRanks {
    fn new(pits: usize, stones: u32, other: u32) -> RowRanks {
        let mut row = [0u8; MAX_PITS];
        let row = &mut row[..pits];
        row[pits - 1] = stones as u8;
        let (mut own, mut against) = (Vec::new(), Vec::new());
        loop {
            own.push(mover_row_rank(row));
            against.push(opponent_row_rank(other, row));
            if advance_cells(row).is_none() {
                return RowRanks { own, against };
            }
        }
    }

    fn len(&self) -> usize {
        self.own.len()
    }
}

#[cfg(test)]
mod tests {
    use mancala_core::LevelIndex;

    use super::*;

    /// Every entry lands where [`Order::Flipped`] looks for it, for one and
    /// two symbols per position.
    #[test]
    fn flipped_entries_are_found_at_the_flipped_index() {
        for (pits, n) in [(1, 5), (2, 0), (2, 7), (3, 6), (6, 4), (6, 12)] {
            let index = LevelIndex::new(pits, n);
            let count = index.count() as usize;
            for width in [1, 2] {
                let from: Vec<i8> = (0..count * width).map(|i| (i % 251) as i8).collect();
                let mut to = vec![0i8; from.len()];
                flip(pits, n, width, &from, &mut to);
                for (at, pos) in index.positions_from(0).enumerate() {
                    let flipped = Order::Flipped.index(&pos) as usize;
                    assert_eq!(
                        to[flipped * width..(flipped + 1) * width],
                        from[at * width..(at + 1) * width],
                        "{pits} pits, level {n}, rank {at}"
                    );
                }
            }
        }
    }
}
