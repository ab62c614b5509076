//! Which rank holds what: each level dealt out in contiguous ranges of
//! whole table blocks ([`Split`]), and a rank's shares of the solved lower
//! levels ([`LowerShares`]).

use std::ops::Range;

use mancala_format::TableKind;

/// How one level's positions are dealt to the ranks: rank `r` owns a
/// contiguous range of whole blocks, the ranges in rank order and as even
/// as whole blocks allow. A rank may own none (a level of fewer blocks
/// than ranks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// `starts[r]` is rank `r`'s first position; `starts[ranks]` the
    /// level's size.
    starts: Vec<u64>,
}

impl Split {
    /// The split of a level of `positions` positions in blocks of
    /// `block_size` among `ranks` ranks.
    pub fn new(positions: u64, block_size: u32, ranks: usize) -> Split {
        let block_size = block_size as u64;
        let blocks = positions.div_ceil(block_size);
        let starts = (0..=ranks as u64)
            .map(|r| (blocks * r / ranks as u64 * block_size).min(positions))
            .collect();
        Split { starts }
    }

    /// The positions rank `rank` owns.
    pub fn range(&self, rank: usize) -> Range<u64> {
        self.starts[rank]..self.starts[rank + 1]
    }

    /// The rank that owns position `index`.
    #[inline]
    pub fn owner(&self, index: u64) -> usize {
        self.starts[1..].partition_point(|&start| start <= index)
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.starts.len() - 1
    }
}

/// One rank's part of a solved level: its range and their symbols.
struct Share {
    split: Split,
    first: u64,
    symbols: Vec<i8>,
}

/// A rank's shares of the solved levels `0..len()`: what it answers other
/// ranks' lookups from.
pub(crate) struct LowerShares<K: TableKind> {
    shares: Vec<Share>,
    kind: std::marker::PhantomData<K>,
}

impl<K: TableKind> LowerShares<K> {
    pub(crate) fn new() -> Self {
        LowerShares {
            shares: Vec::new(),
            kind: std::marker::PhantomData,
        }
    }

    /// Adds the next level: this rank's `symbols` of `split`'s range.
    pub(crate) fn push(&mut self, split: Split, rank: usize, symbols: Vec<i8>) {
        let range = split.range(rank);
        debug_assert_eq!(
            symbols.len() as u64,
            (range.end - range.start) * K::WIDTH as u64
        );
        self.shares.push(Share {
            first: range.start,
            split,
            symbols,
        });
    }

    /// How level `n` is split.
    #[inline]
    pub(crate) fn split(&self, n: u32) -> &Split {
        &self.shares[n as usize].split
    }

    /// The stored symbols of position `index` of level `n`, which this
    /// rank owns.
    #[inline]
    pub(crate) fn symbols(&self, n: u32, index: u64) -> &[i8] {
        let share = &self.shares[n as usize];
        let at = (index - share.first) as usize * K::WIDTH;
        &share.symbols[at..at + K::WIDTH]
    }
}
