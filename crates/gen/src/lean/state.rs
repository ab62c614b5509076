//! The lean mode's state of a level: four bits a position.
//!
//! Two bits say where a position stands at the threshold `s` being solved:
//! undecided and *blocked* (an exit worth more than `−s` keeps it out of
//! `L_s`), undecided and *eligible* (every exit is worth `−s` or less, so
//! it is lost once every same-level child is in `W_s`), won (in `W`: its
//! value is the threshold it joined at) or lost (in `L`). A third bit marks
//! a position decided at the current threshold, so that the threshold's
//! decisions can be written out in index order when it ends; a dirty flag
//! per block of positions lets that scan skip the blocks nothing joined.
//! The fourth bit marks a position with a single move that keeps the
//! level, which needs no look at its children.
//! Two positions share a byte, so every change is an atomic
//! read-modify-write of its byte: positions are updated from many threads.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use crate::checkpoint::plain;
use crate::solve::{atomic, bytes};

/// Undecided; some exit is worth more than `−s`.
pub(crate) const BLOCKED: u8 = 0;
/// Undecided; no exit is worth more than `−s`.
pub(crate) const ELIGIBLE: u8 = 1;
/// In `W`: the mover can force the threshold it joined at.
pub(crate) const WON: u8 = 2;
/// In `L`: the mover cannot avoid minus the threshold it joined at.
pub(crate) const LOST: u8 = 3;
/// Set with [`WON`] or [`LOST`] until the threshold's decisions are taken.
const NEW: u8 = 4;
/// Set by the forward pass on a position with exactly one move that keeps
/// the level: once that child is won, all of its children are, with no
/// need to look.
const SINGLE: u8 = 8;
/// Positions per dirty flag: a multiple of two (whole bytes). Small in
/// debug builds, as [`GROUP_BLOCKS`] is, so the tests take a level's
/// decisions in many blocks and groups.
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

/// Four bits per position, and a dirty flag per block of them.
pub(crate) struct Nibbles {
    bytes: Vec<AtomicU8>,
    dirty: Vec<AtomicBool>,
    count: usize,
}

/// The positions a threshold decided, in index order.
#[derive(Default)]
pub(crate) struct Decided {
    pub(crate) won: Vec<u64>,
    pub(crate) lost: Vec<u64>,
}

impl Nibbles {
    /// `count` positions, all blocked.
    pub(crate) fn new(count: usize) -> Nibbles {
        Nibbles {
            bytes: bytes(Self::bytes_for(count), 0),
            dirty: (0..count.div_ceil(DIRTY_BLOCK))
                .map(|_| AtomicBool::new(false))
                .collect(),
            count,
        }
    }

    /// The bytes the state of `count` positions takes.
    pub(crate) fn bytes_for(count: usize) -> usize {
        count.div_ceil(2)
    }

    /// The state of `count` positions from the bytes a checkpoint saved
    /// ([`Nibbles::bytes`]), taken between two thresholds.
    pub(crate) fn from_bytes(bytes: Vec<u8>, count: usize) -> Nibbles {
        Nibbles {
            bytes: atomic(bytes),
            dirty: (0..count.div_ceil(DIRTY_BLOCK))
                .map(|_| AtomicBool::new(false))
                .collect(),
            count,
        }
    }

    /// The state's bytes, for a checkpoint: taken between two thresholds,
    /// when no decision is marked new and no thread changes them.
    pub(crate) fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    #[inline]
    fn shift(at: usize) -> u32 {
        4 * (at as u32 & 1)
    }

    /// Where position `at` stands: [`BLOCKED`], [`ELIGIBLE`], [`WON`] or
    /// [`LOST`].
    #[inline]
    pub(crate) fn state(&self, at: usize) -> u8 {
        (self.bytes[at / 2].load(Relaxed) >> Self::shift(at)) & 3
    }

    /// Whether `at` has exactly one move that keeps the level.
    #[inline]
    pub(crate) fn single(&self, at: usize) -> bool {
        (self.bytes[at / 2].load(Relaxed) >> Self::shift(at)) & SINGLE != 0
    }

    /// Notes that `at` has exactly one move that keeps the level.
    #[inline]
    pub(crate) fn mark_single(&self, at: usize) {
        self.bytes[at / 2].fetch_or(SINGLE << Self::shift(at), Relaxed);
    }

    /// Asks for position `at`'s byte to be brought into the caches, ahead
    /// of a [`Nibbles::state`].
    #[inline]
    pub(crate) fn prefetch(&self, at: usize) {
        mancala_format::prefetch(&self.bytes, at / 2);
    }

    /// Moves `at` from a state `from` accepts to `to` (with [`NEW`] for a
    /// decision); whether it moved. Of several threads moving one position
    /// at once, one succeeds.
    #[inline]
    fn change(&self, at: usize, from: impl Fn(u8) -> bool, to: u8) -> bool {
        let shift = Self::shift(at);
        let changed = self.bytes[at / 2]
            .fetch_update(Relaxed, Relaxed, |byte| {
                from((byte >> shift) & 3).then_some(byte & !(0x7 << shift) | to << shift)
            })
            .is_ok();
        if changed && to & NEW != 0 {
            self.dirty[at / DIRTY_BLOCK].store(true, Relaxed);
        }
        changed
    }

    /// An undecided `at` joins `W` at this threshold; whether it did.
    #[inline]
    pub(crate) fn win(&self, at: usize) -> bool {
        self.change(at, |s| s < WON, WON | NEW)
    }

    /// An eligible `at` joins `L` at this threshold; whether it did.
    #[inline]
    pub(crate) fn lose(&self, at: usize) -> bool {
        self.change(at, |s| s == ELIGIBLE, LOST | NEW)
    }

    /// A blocked `at` becomes eligible; whether it was blocked.
    #[inline]
    pub(crate) fn unblock(&self, at: usize) -> bool {
        self.change(at, |s| s == BLOCKED, ELIGIBLE)
    }

    /// Hands the positions decided since the last call to `write`, in
    /// index order and a group of blocks at a time (so that only a group's
    /// indices are ever held), and clears their [`NEW`] marks. Called
    /// between thresholds, when no other thread changes the state.
    pub(crate) fn take_decided<E>(
        &self,
        mut write: impl FnMut(Decided) -> Result<(), E>,
    ) -> Result<(), E> {
        for group in self.dirty.chunks(GROUP_BLOCKS).enumerate() {
            let (group, dirty) = group;
            let found: Vec<Decided> = dirty
                .par_iter()
                .enumerate()
                .filter(|(_, dirty)| dirty.swap(false, Relaxed))
                .map(|(block, _)| self.take_block(group * GROUP_BLOCKS + block))
                .collect();
            let mut decided = Decided::default();
            for block in found {
                decided.won.extend(block.won);
                decided.lost.extend(block.lost);
            }
            write(decided)?;
        }
        Ok(())
    }

    fn take_block(&self, block: usize) -> Decided {
        let mut decided = Decided::default();
        let first = block * DIRTY_BLOCK;
        for at in first..self.count.min(first + DIRTY_BLOCK) {
            let shift = Self::shift(at);
            let byte = &self.bytes[at / 2];
            let nibble = (byte.load(Relaxed) >> shift) & 0xf;
            if nibble & NEW != 0 {
                byte.fetch_and(!(NEW << shift), Relaxed);
                match nibble & 3 {
                    WON => decided.won.push(at as u64),
                    _ => decided.lost.push(at as u64),
                }
            }
        }
        decided
    }
}
