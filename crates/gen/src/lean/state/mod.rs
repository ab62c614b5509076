//! The lean mode's state of a level: a few bits a position, whatever the
//! kind of table ([`LeanState`]), and the dirty flags both kinds use to
//! take a threshold's decisions in index order ([`Dirty`]).
//!
//! Both kinds grow two sets per threshold. A position joins the *first*
//! (`W_s` for even values, `M_t` for forced bounds) when an exit or a
//! same-level child in the second set gives its mover enough; it joins
//! the *second* (`L_s`, `O_t`) once it is *eligible* (no exit keeps it
//! out) and every same-level child is in the first. Every undecided
//! position keeps, from the start, the number of its same-level moves
//! whose child is not yet in the first set, as the retrograde strategy's
//! counter does: the forward pass writes each position's moves that keep
//! the level as its first state ([`Start`]), and each new member of the
//! first set takes one off its parents' counts. Becoming eligible is then
//! a change of the position's own cell, never a look at its children. A
//! blocked position and an eligible one with the same count differ by the
//! cell's value alone, and a decided position needs no count, which is
//! what lets the count fit in a few bits. A position that joined a set at
//! the current threshold is marked new until the threshold's decisions are
//! written out. Positions are updated from many threads: every change is
//! an atomic read-modify-write of its byte.

mod cells;
mod even;
mod forced;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

pub(crate) use even::EvenState;
pub(crate) use forced::ForcedState;

/// Positions per dirty flag: a multiple of four (whole bytes of every
/// plane's cells). Small in debug builds, as [`GROUP_BLOCKS`]
/// is, so the tests take a level's decisions in many blocks and groups.
const DIRTY_BLOCK: usize = if cfg!(debug_assertions) {
    1 << 6
} else {
    1 << 14
};
/// Dirty blocks scanned in parallel before their decisions are written.
const GROUP_BLOCKS: usize = if cfg!(debug_assertions) {
    1 << 2
} else {
    1 << 8
};

/// How a position starts the level, as the forward pass finds it.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// Its moves that keep the level: all of them pending.
    pub moves: u8,
    /// Whether it is eligible from the start: no move leaves the level.
    pub eligible: bool,
}

/// The state of a level being solved by the lean mode.
pub trait LeanState: Sync + Sized {
    /// The bytes the state of `count` positions with `pits` pits a side
    /// takes.
    fn bytes_for(count: usize, pits: usize) -> usize;

    /// The bytes the starts of `count` positions take
    /// ([`LeanState::write_starts`]): the first part of the state, the
    /// rest of which starts as zeros.
    fn start_bytes_for(count: usize, pits: usize) -> usize {
        Self::bytes_for(count, pits)
    }

    /// Appends to `out` the first state of positions that start as
    /// `starts` says, in index order, the first of them at a byte's first
    /// position (an index that is a multiple of 64: the forward pass's
    /// groups are); a last byte not full is padded.
    fn write_starts(pits: usize, starts: impl Iterator<Item = Start>, out: &mut Vec<u8>);

    /// The state of `count` positions with `pits` pits a side from its
    /// [`LeanState::bytes_for`] bytes: their starts
    /// ([`LeanState::write_starts`]) followed by zeros, or what a
    /// checkpoint saved ([`LeanState::bytes`]) between two thresholds.
    fn from_bytes(bytes: Vec<u8>, count: usize, pits: usize) -> Self;

    /// The state's bytes, for a checkpoint: taken between two thresholds,
    /// when no decision is marked new and no thread changes them.
    fn bytes(&self) -> &[u8];

    /// `at` joins the first set at this threshold, if it can and is not
    /// in it; whether it joined. Of several threads, one succeeds.
    fn join_first(&self, at: usize) -> bool;

    /// A blocked `at` becomes eligible for the second set; with no move
    /// pending it joins it at this threshold. Whether it joined.
    fn make_eligible(&self, at: usize) -> bool;

    /// A same-level child of `at`, by one move, joined the first set: an
    /// undecided `at` has one move fewer pending, and if it is eligible
    /// and none is left, joins the second set at this threshold. Whether
    /// it joined.
    fn child_joined_first(&self, at: usize) -> bool;

    /// `at` will soon be visited by [`LeanState::join_first`]: the cell it
    /// changes may be fetched into the cache meanwhile.
    fn prefetch_for_join_first(&self, at: usize);

    /// `at` will soon be visited by [`LeanState::child_joined_first`].
    fn prefetch_for_child_joined_first(&self, at: usize);

    /// Hands the positions decided since the last call to `write`, in
    /// index order, a group of blocks at a time, and clears their new
    /// marks. Called between thresholds, when no other thread changes
    /// the state.
    fn take_decided(&self, write: impl FnMut(Vec<Decided>));
}

/// The positions a threshold added to each set, in index order.
#[derive(Default)]
pub struct Decided {
    pub(crate) first: Vec<u64>,
    pub(crate) second: Vec<u64>,
}

/// A flag per block of positions: set when a position of the block joins
/// a set, so that taking a threshold's decisions skips the blocks nothing
/// joined.
pub(crate) struct Dirty {
    blocks: Vec<AtomicBool>,
    count: usize,
}

impl Dirty {
    /// Flags for `count` positions, all clear.
    pub(crate) fn new(count: usize) -> Dirty {
        Dirty {
            blocks: (0..count.div_ceil(DIRTY_BLOCK))
                .map(|_| AtomicBool::new(false))
                .collect(),
            count,
        }
    }

    /// Notes that a position of `at`'s block joined a set.
    #[inline]
    pub(crate) fn mark(&self, at: usize) {
        self.blocks[at / DIRTY_BLOCK].store(true, Relaxed);
    }

    /// [`LeanState::take_decided`] over the blocks marked since the last
    /// call: `take(positions, decided)` adds to `decided`, in index order,
    /// the positions of a block (its first a multiple of four) that newly
    /// joined each set, and clears their marks.
    pub(crate) fn take_decided(
        &self,
        take: impl Fn(Range<usize>, &mut Decided) + Sync,
        mut write: impl FnMut(Vec<Decided>),
    ) {
        for (group, dirty) in self.blocks.chunks(GROUP_BLOCKS).enumerate() {
            let found: Vec<Decided> = dirty
                .par_iter()
                .enumerate()
                .filter(|(_, dirty)| dirty.swap(false, Relaxed))
                .map(|(block, _)| self.take_block(group * GROUP_BLOCKS + block, &take))
                .collect();
            write(found);
        }
    }

    fn take_block(&self, block: usize, take: &impl Fn(Range<usize>, &mut Decided)) -> Decided {
        let mut decided = Decided::default();
        let first = block * DIRTY_BLOCK;
        take(first..self.count.min(first + DIRTY_BLOCK), &mut decided);
        decided
    }
}
