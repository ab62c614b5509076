//! The lean mode's state of a level: a few bits a position, whatever the
//! kind of table ([`LeanState`]), and the dirty flags both kinds use to
//! take a threshold's decisions in index order ([`Dirty`]).
//!
//! Both kinds grow two sets per threshold. A position joins the *first*
//! (`W_s` for even values, `M_t` for forced bounds) when an exit or a
//! same-level child in the second set gives its mover enough; it joins
//! the *second* (`L_s`, `O_t`) once it is *eligible* (no exit keeps it
//! out) and every same-level child is in the first. An eligible position
//! keeps the number of its same-level moves whose child is not yet in the
//! first set, as the retrograde strategy's counter does, but only from the
//! threshold it becomes eligible at (counted then by looking at its
//! children) instead of from the start: a blocked position needs no
//! counter, which is what lets the state fit in a few bits. A position
//! that joined a set at the current threshold is marked new until the
//! threshold's decisions are written out. Positions are updated from many
//! threads: every change is an atomic read-modify-write of its byte.

mod flags;
mod nibbles;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

pub(crate) use flags::Flags;
pub(crate) use nibbles::Nibbles;

/// Positions per dirty flag: a multiple of two (whole bytes of
/// [`Nibbles`]). Small in debug builds, as [`GROUP_BLOCKS`] is, so the
/// tests take a level's decisions in many blocks and groups.
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

/// The state of a level being solved by the lean mode.
pub trait LeanState: Sync + Sized {
    /// `count` positions, in neither set and not eligible.
    fn new(count: usize) -> Self;

    /// The bytes the state of `count` positions takes.
    fn bytes_for(count: usize) -> usize;

    /// The state of `count` positions from the bytes a checkpoint saved
    /// ([`LeanState::bytes`]), taken between two thresholds.
    fn from_bytes(bytes: Vec<u8>, count: usize) -> Self;

    /// The state's bytes, for a checkpoint: taken between two thresholds,
    /// when no decision is marked new and no thread changes them.
    fn bytes(&self) -> &[u8];

    /// Asks for position `at`'s byte to be brought into the caches.
    fn prefetch(&self, at: usize);

    /// `at` joins the first set at this threshold, if it can and is not
    /// in it; whether it joined. Of several threads, one succeeds.
    fn join_first(&self, at: usize) -> bool;

    /// Whether `at` is in the first set.
    fn in_first(&self, at: usize) -> bool;

    /// Whether `at` is not yet eligible for the second set.
    fn blocked(&self, at: usize) -> bool;

    /// A blocked `at` becomes eligible for the second set, with `pending`
    /// same-level moves whose child is not in the first set; with none it
    /// joins the second set at this threshold. Whether it joined.
    fn make_eligible(&self, at: usize, pending: u8) -> bool;

    /// A same-level child of `at`, by one move, joined the first set: an
    /// eligible `at` has one move fewer pending, and with none left joins
    /// the second set at this threshold. Whether it joined.
    fn child_joined_first(&self, at: usize) -> bool;

    /// Hands the positions decided since the last call to `write`, in
    /// index order and a group of blocks at a time, and clears their new
    /// marks. Called between thresholds, when no other thread changes
    /// the state.
    fn take_decided<E>(&self, write: impl FnMut(Decided) -> Result<(), E>) -> Result<(), E>;
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
    /// call: `take(at)` says whether `at` newly joined the first set and
    /// the second, and clears its marks.
    pub(crate) fn take_decided<E>(
        &self,
        take: impl Fn(usize) -> (bool, bool) + Sync,
        mut write: impl FnMut(Decided) -> Result<(), E>,
    ) -> Result<(), E> {
        for (group, dirty) in self.blocks.chunks(GROUP_BLOCKS).enumerate() {
            let found: Vec<Decided> = dirty
                .par_iter()
                .enumerate()
                .filter(|(_, dirty)| dirty.swap(false, Relaxed))
                .map(|(block, _)| self.take_block(group * GROUP_BLOCKS + block, &take))
                .collect();
            let mut decided = Decided::default();
            for block in found {
                decided.first.extend(block.first);
                decided.second.extend(block.second);
            }
            write(decided)?;
        }
        Ok(())
    }

    fn take_block(&self, block: usize, take: &impl Fn(usize) -> (bool, bool)) -> Decided {
        let mut decided = Decided::default();
        let first = block * DIRTY_BLOCK;
        for at in first..self.count.min(first + DIRTY_BLOCK) {
            let (joined_first, joined_second) = take(at);
            if joined_first {
                decided.first.push(at as u64);
            }
            if joined_second {
                decided.second.push(at as u64);
            }
        }
        decided
    }
}
