//! Level indexing: a bijection between the positions of a level and
//! `0..C(n + 2P − 1, 2P − 1)`.
//!
//! A position with `n` stones in `K = 2P` pits is a composition of `n`; stars
//! and bars turn it into `K − 1` strictly increasing bar positions
//! `b_i = (x_0 + … + x_i) + i`, ranked by the combinatorial number system:
//! `rank = Σ C(b_i, i + 1)`. Ranking costs one table lookup per pit, and the
//! successor in rank order is a cheap local update, so a whole level is
//! walked without unranking each index.

use std::sync::OnceLock;

use crate::position::{Position, MAX_PITS, MAX_STONES};

const BINOM_ROWS: usize = MAX_STONES as usize + 2 * MAX_PITS + 1;
const BINOM_COLS: usize = 2 * MAX_PITS + 1;

/// `C(a, c)` for every `a`, `c` the index can need, stored by column
/// (`table[c][a]`) so that unranking scans one contiguous column; saturating
/// at `u64::MAX` (levels that large are rejected before they are built).
#[inline]
fn binomials() -> &'static [[u64; BINOM_ROWS]; BINOM_COLS] {
    static TABLE: OnceLock<Box<[[u64; BINOM_ROWS]; BINOM_COLS]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([[0u64; BINOM_ROWS]; BINOM_COLS]);
        for a in 0..BINOM_ROWS {
            t[0][a] = 1;
            for c in 1..BINOM_COLS.min(a + 1) {
                t[c][a] = t[c - 1][a - 1].saturating_add(if c < a { t[c][a - 1] } else { 0 });
            }
        }
        t
    })
}

/// `C(a, b)`, saturating.
pub fn binomial(a: usize, b: usize) -> u64 {
    if b > a {
        0
    } else {
        binomials()[b][a]
    }
}

/// The index of one level: `n` stones on a board of `P` pits per side.
#[derive(Clone, Copy, Debug)]
pub struct LevelIndex {
    pits: usize,
    stones: u32,
    count: u64,
}

impl LevelIndex {
    /// The index of level `stones` for `pits` pits per side.
    pub fn new(pits: usize, stones: u32) -> LevelIndex {
        assert!((1..=MAX_PITS).contains(&pits) && stones <= MAX_STONES);
        let k = 2 * pits;
        LevelIndex {
            pits,
            stones,
            count: binomial(stones as usize + k - 1, k - 1),
        }
    }

    /// Number of positions in the level.
    #[inline]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The level's stone count.
    pub fn stones(&self) -> u32 {
        self.stones
    }

    /// The rank of `pos`, which must have this level's pits and stones.
    #[inline]
    pub fn rank(&self, pos: &Position) -> u64 {
        debug_assert_eq!(pos.stones(), self.stones);
        rank(pos)
    }

    /// The positions of ranks `first`, `first + 1`, … to the end of the
    /// level, in order: one unranking, then one [`advance`] a position,
    /// which is how passes over index ranges walk a level.
    pub fn positions_from(&self, first: u64) -> impl Iterator<Item = Position> {
        let mut next = (first < self.count).then(|| self.unrank(first));
        let mut started = false;
        std::iter::from_fn(move || {
            let pos = next.as_mut()?;
            if started && !advance(pos) {
                next = None;
                return None;
            }
            started = true;
            Some(*pos)
        })
    }

    /// The position of rank `index` (`index < count()`).
    pub fn unrank(&self, mut index: u64) -> Position {
        debug_assert!(index < self.count);
        let k = 2 * self.pits;
        let t = binomials();
        let mut pos = Position::empty(self.pits);
        let cells = pos.cells_mut();
        // Find the bars from the highest down: b_i is the largest value
        // below b_{i+1} with C(b_i, i + 1) <= index.
        let mut upper = self.stones as usize + k - 1; // exclusive bound for b_{k-2}
        let mut next_bar = upper;
        for i in (0..k - 1).rev() {
            // Bars are close together (pits hold few stones), so a short
            // downward scan beats a binary search. It stops at the latest
            // at b = i, where C(i, i + 1) = 0.
            let column = &t[i + 1];
            let mut b = upper - 1;
            while column[b] > index {
                b -= 1;
            }
            index -= column[b];
            cells[i + 1] = (next_bar - b - 1) as u8;
            next_bar = b;
            upper = b;
        }
        cells[0] = next_bar as u8;
        pos
    }
}

/// The rank of `pos` within its own level.
#[inline]
pub fn rank(pos: &Position) -> u64 {
    let t = binomials();
    let cells = pos.cells();
    let mut prefix = 0usize;
    let mut r = 0u64;
    for (i, &c) in cells[..cells.len() - 1].iter().enumerate() {
        prefix += c as usize;
        r += t[i + 1][prefix + i];
    }
    r
}

/// The part of a position's rank that depends on its mover's row alone.
///
/// The rank splits in two: `rank(M/R) = mover_row_rank(M) +
/// opponent_row_rank(|M|, R)`, because the first `P` bars of the stars and
/// bars are the mover's pits and the others are offset only by his stone
/// count. A solver that walks a level as pairs of rows adds two numbers it
/// computed once per row instead of ranking every position.
#[inline]
pub fn mover_row_rank(row: &[u8]) -> u64 {
    let t = binomials();
    let mut prefix = 0usize;
    let mut r = 0u64;
    for (i, &c) in row.iter().enumerate() {
        prefix += c as usize;
        r += t[i + 1][prefix + i];
    }
    r
}

/// The part of a position's rank that depends on its opponent's row `row`
/// and on the mover's stone count (see [`mover_row_rank`]).
#[inline]
pub fn opponent_row_rank(mover_stones: u32, row: &[u8]) -> u64 {
    let t = binomials();
    let p = row.len();
    let mut prefix = mover_stones as usize;
    let mut r = 0u64;
    for (j, &c) in row[..p - 1].iter().enumerate() {
        prefix += c as usize;
        r += t[p + j + 1][prefix + p + j];
    }
    r
}

/// Steps `pos` to the position of the next rank in its level. Returns
/// `false` (leaving `pos` unchanged) if `pos` was the last one.
#[inline]
pub fn advance(pos: &mut Position) -> bool {
    advance_at(pos).is_some()
}

/// [`advance`], telling which pit `i` changed last: pits `0..i` were
/// gathered into pit `i`, which also took one stone from pit `i + 1`.
/// `None` (leaving `pos` unchanged) if `pos` was the last one.
#[inline]
pub fn advance_at(pos: &mut Position) -> Option<usize> {
    advance_cells(pos.cells_mut())
}

/// [`advance_at`] on any cells: a row alone (`P` cells) steps to the next
/// row of the same stones in [`mover_row_rank`] order, from all stones in
/// the last pit to all in the first, which is how a pass that pairs rows
/// walks them.
#[inline]
pub fn advance_cells(cells: &mut [u8]) -> Option<usize> {
    // The smallest i whose right neighbour has a stone: gather pits 0..=i
    // into pit i and move one stone over from pit i + 1.
    let mut gathered = 0u8;
    for i in 0..cells.len() - 1 {
        if cells[i + 1] > 0 {
            gathered += cells[i];
            cells[..i].iter_mut().for_each(|c| *c = 0);
            cells[i] = gathered + 1;
            cells[i + 1] -= 1;
            return Some(i);
        }
        gathered += cells[i];
    }
    None
}
