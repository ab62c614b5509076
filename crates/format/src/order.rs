//! The order a held level keeps its entries in: the tables' rank order, or
//! flipped, for solvers that must read large lower levels from disk.

use std::ops::Range;

use mancala_core::{advance_cells, mover_row_rank, opponent_row_rank, rank, Position, MAX_PITS};
use rayon::prelude::*;

use crate::error::FormatError;
use crate::file::Table;
use crate::kind::TableKind;

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

    /// Where the entry of the position whose rows have the ranks `mover`
    /// and `opponent` is in a level held in this order: what a pass that
    /// walks a level as pairs of rows computes once a row.
    #[inline]
    pub fn index_of_rows(self, mover: RowRank, opponent: RowRank) -> u64 {
        match self {
            Order::Rank => mover.own + opponent.against,
            Order::Flipped => opponent.own + mover.against,
        }
    }
}

/// A row's parts of the ranks of the positions it is in: as the mover's
/// row ([`mover_row_rank`]), and as the opponent's row against the other
/// row's stones ([`opponent_row_rank`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowRank {
    /// [`mover_row_rank`] of the row.
    pub own: u64,
    /// [`opponent_row_rank`] of the row, against the other row's stones.
    pub against: u64,
}

impl RowRank {
    /// The ranks of `row`, in a position whose other row has `other`
    /// stones.
    pub fn of(row: &[u8], other: u32) -> RowRank {
        RowRank {
            own: mover_row_rank(row),
            against: opponent_row_rank(other, row),
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
/// Bytes of a table's entries that [`flip_table`] gathers in memory per
/// pass (at least one rectangle's).
const GATHERED_BYTES: usize = 1 << 30;

/// Level `n`'s entries (`width` symbols each, `pits` pits per side) copied
/// from rank order in `from` to flipped order in `to`, rectangle by
/// rectangle ([`Rectangle`]).
pub(crate) fn flip(pits: usize, n: u32, width: usize, from: &[i8], to: &mut [i8]) {
    debug_assert_eq!(from.len(), to.len());
    for a in 0..=n {
        let rectangle = Rectangle::new(pits, n, a);
        let (movers, opponents) = (&rectangle.movers, &rectangle.opponents);
        let from_at = |m, r| Order::Rank.index_of_rows(movers.rank(m), opponents.rank(r)) as usize;
        rectangle.transpose(width, from, from_at, to);
    }
}

/// The symbols stored in `table`, whose entries are its values (nothing to
/// restore), written to `to` in flipped order without a copy of the level
/// in rank order: in passes that each gather a group of rectangles from
/// the table's blocks into memory, then transpose them. A level too large
/// for memory then costs the disk its flipped file alone, and the table's
/// blocks are decoded a few times over.
pub(crate) fn flip_table<K: TableKind>(
    table: &Table<K>,
    pits: usize,
    to: &mut [i8],
) -> Result<(), FormatError> {
    flip_table_gathering(table, pits, to, GATHERED_BYTES)
}

/// [`flip_table`], gathering up to `gathered_bytes` a pass (tests make
/// several passes of small levels).
fn flip_table_gathering<K: TableKind>(
    table: &Table<K>,
    pits: usize,
    to: &mut [i8],
    gathered_bytes: usize,
) -> Result<(), FormatError> {
    debug_assert!(table.entries_are_values());
    debug_assert_eq!(to.len(), table.symbols());
    let n = table.header().level;
    for group in groups(pits, n, K::WIDTH, gathered_bytes) {
        let gathered = gather(table, &group)?;
        let mut base = 0;
        for rectangle in &group {
            let movers = rectangle.movers.len();
            let from = &gathered[base * K::WIDTH..];
            rectangle.transpose(K::WIDTH, from, |m, r| r * movers + m, to);
            base += rectangle.len();
        }
    }
    Ok(())
}

/// The most memory a table of level `n` (boards of `pits` pits per side,
/// `width` symbols an entry) takes at once while it is held flipped
/// ([`crate::Scratch::flipped`]): its entries are gathered a group of
/// rectangles at a time. What a memory budget must leave beside the
/// levels it holds.
pub fn flip_gathered_bytes(pits: usize, n: u32, width: usize) -> u64 {
    groups(pits, n, width, GATHERED_BYTES)
        .map(|group| (group.iter().map(Rectangle::len).sum::<usize>() * width) as u64)
        .max()
        .unwrap_or(0)
}

/// Level `n`'s rectangles in order, in groups of up to `gathered_bytes`
/// of entries (`width` symbols each), a rectangle too large alone in a
/// group of its own.
fn groups(
    pits: usize,
    n: u32,
    width: usize,
    gathered_bytes: usize,
) -> impl Iterator<Item = Vec<Rectangle>> {
    let mut rectangles = (0..=n).map(move |a| Rectangle::new(pits, n, a)).peekable();
    std::iter::from_fn(move || {
        let mut group = vec![rectangles.next()?];
        let mut len = group[0].len();
        while let Some(next) = rectangles.peek() {
            if (len + next.len()) * width > gathered_bytes {
                break;
            }
            len += next.len();
            group.extend(rectangles.next());
        }
        Some(group)
    })
}

/// The entries of `group`'s rectangles read from `table`, one after
/// another, each by rows of opponents (`r * movers + m`): the rank order
/// of the rectangle's positions. Each row is one run of the table, so the
/// runs, sorted, are filled from its blocks in parallel, each block a
/// batch of runs needs decoded once.
fn gather<K: TableKind>(table: &Table<K>, group: &[Rectangle]) -> Result<Vec<i8>, FormatError> {
    let width = K::WIDTH;
    let total: usize = group.iter().map(Rectangle::len).sum();
    let mut gathered = vec![0i8; total * width];
    let mut runs: Vec<(u64, &mut [i8])> = Vec::new();
    let mut rest = &mut gathered[..];
    for rectangle in group {
        let (movers, opponents) = (&rectangle.movers, &rectangle.opponents);
        debug_assert!(
            (1..movers.len()).all(|m| movers.rank(m).own == movers.rank(0).own + m as u64)
        );
        let (mine, others) = std::mem::take(&mut rest).split_at_mut(rectangle.len() * width);
        rest = others;
        for (r, run) in mine.chunks_mut(movers.len() * width).enumerate() {
            runs.push((
                Order::Rank.index_of_rows(movers.rank(0), opponents.rank(r)),
                run,
            ));
        }
    }
    runs.sort_unstable_by_key(|&(start, _)| start);
    let block_size = table.header().block_size as u64;
    runs.par_chunk_by_mut(|a, b| a.0 / RUN_BATCH == b.0 / RUN_BATCH)
        .try_for_each(|batch| {
            let mut decoded: Option<(u64, Vec<i8>)> = None;
            for (start, run) in batch.iter_mut() {
                let (mut at, mut run) = (*start, &mut run[..]);
                while !run.is_empty() {
                    let block = at / block_size;
                    if decoded.as_ref().is_none_or(|(b, _)| *b != block) {
                        decoded = Some((block, table.decode_block(block)?));
                    }
                    let symbols = &decoded.as_ref().expect("just decoded").1;
                    let offset = (at % block_size) as usize * width;
                    let len = run.len().min(symbols.len() - offset);
                    let (piece, rest) = std::mem::take(&mut run).split_at_mut(len);
                    piece.copy_from_slice(&symbols[offset..offset + len]);
                    (at, run) = (at + (len / width) as u64, rest);
                }
            }
            Ok(())
        })?;
    Ok(gathered)
}

/// Positions per batch of runs [`gather`] fills in parallel: the runs
/// starting in one such stretch of the table.
const RUN_BATCH: u64 = 1 << 22;

/// The positions of a level of `n` stones whose mover has `a`: rows `M`
/// of `a` stones against rows `R` of `n − a`, a rectangle.
///
/// By rank, `M/R` is at `mover_row_rank(M) + opponent_row_rank(a, R)`;
/// flipped, at `mover_row_rank(R) + opponent_row_rank(n − a, M)`. Within
/// one sum, consecutive rows have consecutive `mover_row_rank`s, so each
/// `R` is one run of the ranked level and each `M` one run of the flipped
/// level.
struct Rectangle {
    /// The rows `M`, indexed `m`.
    movers: Rows,
    /// The rows `R`, indexed `r`.
    opponents: Rows,
}

impl Rectangle {
    fn new(pits: usize, n: u32, a: u32) -> Rectangle {
        Rectangle {
            movers: Rows::new(pits, a, n - a),
            opponents: Rows::new(pits, n - a, a),
        }
    }

    /// Its positions.
    fn len(&self) -> usize {
        self.movers.len() * self.opponents.len()
    }

    /// Copies the rectangle's entries (`width` symbols each) to their
    /// flipped places in `to` (the whole level), the entry of `M/R` being
    /// entry `from_at(m, r)` of `from`. Block by block (blocks of rows `M`
    /// in parallel, each writing its own runs), tile by tile.
    fn transpose(
        &self,
        width: usize,
        from: &[i8],
        from_at: impl Fn(usize, usize) -> usize + Sync,
        to: &mut [i8],
    ) {
        let (movers, opponents) = (&self.movers, &self.opponents);
        let starts = (0..movers.len()).map(|m| {
            Order::Flipped.index_of_rows(movers.rank(m), opponents.rank(0)) as usize * width
        });
        let mut runs = runs_of(to, starts, opponents.len() * width);
        runs.par_chunks_mut(BLOCK)
            .enumerate()
            .for_each(|(block, runs)| {
                let m0 = block * BLOCK;
                for block_rs in blocks(0..opponents.len(), BLOCK) {
                    for ms in blocks(m0..m0 + runs.len(), TILE) {
                        for rs in blocks(block_rs.clone(), TILE) {
                            for r in rs {
                                let to_at = r * width;
                                for m in ms.clone() {
                                    let from_at = from_at(m, r) * width;
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

/// The rows of `stones` stones in `pits` pits, in row-rank order, each
/// with its [`RowRank`] in a position whose other row has `other` stones:
/// one side of the rectangle of a level's positions whose mover has
/// `stones` (or whose opponent has, with `stones` and `other` swapped).
/// What a pass that walks a level as pairs of rows holds, ranking each
/// row once rather than each position.
pub struct Rows {
    pits: usize,
    rows: Vec<[u8; MAX_PITS]>,
    ranks: Vec<RowRank>,
}

impl Rows {
    /// The rows of `stones` stones in `pits` pits, against `other`.
    pub fn new(pits: usize, stones: u32, other: u32) -> Rows {
        let mut row = [0u8; MAX_PITS];
        row[pits - 1] = stones as u8;
        let (mut rows, mut ranks) = (Vec::new(), Vec::new());
        loop {
            rows.push(row);
            ranks.push(RowRank::of(&row[..pits], other));
            if advance_cells(&mut row[..pits]).is_none() {
                return Rows { pits, rows, ranks };
            }
        }
    }

    /// How many rows there are (never none).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Never: a row can always hold its stones.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `i`'s stones, pit by pit.
    pub fn row(&self, i: usize) -> &[u8] {
        &self.rows[i][..self.pits]
    }

    /// Row `i`'s ranks.
    pub fn rank(&self, i: usize) -> RowRank {
        self.ranks[i]
    }
}

#[cfg(test)]
mod tests {
    use mancala_core::{LevelIndex, Rules, Variant};

    use super::*;
    use crate::header::Header;
    use crate::kind::{Even, Forced};
    use crate::write::write_level;

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

    /// A table's entries gathered from its blocks land where [`flip`]
    /// puts them, whether the rectangles take one pass or many, and runs
    /// span blocks or not.
    #[test]
    fn a_table_flips_as_its_entries_do() {
        let dir = tempfile::TempDir::new().unwrap();
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let n = 9;
        let count = LevelIndex::new(6, n).count() as usize;
        for (block_size, gathered) in [(64, 1 << 30), (1000, 1 << 30), (64, 1 << 16), (333, 1)] {
            let path = dir.path().join("level.mtb");
            let even: Vec<i8> = (0..count).map(|i| (i % 19) as i8 - 9).collect();
            write_level(
                &Header::for_symbols::<Even>(&rules, n, &even, block_size),
                &even,
                &path,
            )
            .unwrap();
            check_flip_table::<Even>(&path, &even, gathered);
            let forced: Vec<i8> = (0..2 * count)
                .map(|i| (i % 10) as i8 - (i % 2) as i8 * 9)
                .collect();
            let header = Header::for_symbols::<Forced>(&rules, n, &forced, block_size);
            write_level(&header, &forced, &path).unwrap();
            check_flip_table::<Forced>(&path, &forced, gathered);
        }
    }

    /// A level's rectangles are grouped in order, each group within the
    /// bytes asked for unless it is one rectangle too large alone; a level
    /// smaller than a gathering is gathered whole.
    #[test]
    fn rectangles_are_grouped_within_the_gathering() {
        let (n, width, bytes) = (12, 2, 100_000);
        let count = LevelIndex::new(6, n).count() as usize;
        let mut next = 0;
        for group in groups(6, n, width, bytes) {
            let len: usize = group.iter().map(Rectangle::len).sum();
            assert!(group.len() == 1 || len * width <= bytes, "{len}");
            for rectangle in &group {
                let expected = Rectangle::new(6, n, next);
                assert_eq!(rectangle.len(), expected.len(), "out of order");
                next += 1;
            }
        }
        assert_eq!(next, n + 1, "rectangles left out");
        assert_eq!(flip_gathered_bytes(6, n, width), (count * width) as u64);
    }

    fn check_flip_table<K: TableKind>(path: &std::path::Path, ranked: &[i8], gathered: usize) {
        let table = Table::<K>::open(path, None).unwrap();
        let n = table.header().level;
        let mut expected = vec![0i8; ranked.len()];
        flip(6, n, K::WIDTH, ranked, &mut expected);
        let mut flipped = vec![0i8; ranked.len()];
        flip_table_gathering(&table, 6, &mut flipped, gathered).unwrap();
        assert!(
            flipped == expected,
            "{} gathering {gathered} bytes",
            path.display()
        );
    }
}
