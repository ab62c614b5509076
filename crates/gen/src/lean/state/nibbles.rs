//! The even values' lean state: four bits a position.
//!
//! Two bits say where a position stands at the threshold `s` being solved:
//! undecided and *blocked* (an exit worth more than `−s` keeps it out of
//! `L_s`), undecided and *eligible* (every exit is worth `−s` or less, so
//! it is lost once every same-level child is in `W_s`), won (in `W`: its
//! value is the threshold it joined at) or lost (in `L`). A third bit marks
//! a position decided at the current threshold, the fourth one with a
//! single move that keeps the level. `W` and `L` are the first and second
//! sets of [`LeanState`]; a position is in one at most.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::{Decided, Dirty, LeanState};
use crate::checkpoint::plain;
use crate::solve::{atomic, bytes};

/// Undecided; some exit is worth more than `−s`.
const BLOCKED: u8 = 0;
/// Undecided; no exit is worth more than `−s`.
const ELIGIBLE: u8 = 1;
/// In `W`: the mover can force the threshold it joined at.
const WON: u8 = 2;
/// In `L`: the mover cannot avoid minus the threshold it joined at.
const LOST: u8 = 3;
/// Set with [`WON`] or [`LOST`] until the threshold's decisions are taken.
const NEW: u8 = 4;
/// Set by the forward pass on a position with exactly one move that keeps
/// the level: once that child is won, all of its children are, with no
/// need to look.
const SINGLE: u8 = 8;

/// Four bits per position, two positions a byte.
pub struct Nibbles {
    bytes: Vec<AtomicU8>,
    dirty: Dirty,
}

impl Nibbles {
    #[inline]
    fn shift(at: usize) -> u32 {
        4 * (at as u32 & 1)
    }

    /// Where position `at` stands: [`BLOCKED`], [`ELIGIBLE`], [`WON`] or
    /// [`LOST`].
    #[inline]
    fn state(&self, at: usize) -> u8 {
        (self.bytes[at / 2].load(Relaxed) >> Self::shift(at)) & 3
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
            self.dirty.mark(at);
        }
        changed
    }

    /// Whether `at` was decided at this threshold (as won, or lost), its
    /// mark cleared.
    fn take(&self, at: usize) -> (bool, bool) {
        let shift = Self::shift(at);
        let byte = &self.bytes[at / 2];
        let nibble = (byte.load(Relaxed) >> shift) & 0xf;
        if nibble & NEW == 0 {
            return (false, false);
        }
        byte.fetch_and(!(NEW << shift), Relaxed);
        let won = nibble & 3 == WON;
        (won, !won)
    }
}

impl LeanState for Nibbles {
    fn new(count: usize) -> Nibbles {
        Nibbles {
            bytes: bytes(Self::bytes_for(count), 0),
            dirty: Dirty::new(count),
        }
    }

    fn bytes_for(count: usize) -> usize {
        count.div_ceil(2)
    }

    fn from_bytes(bytes: Vec<u8>, count: usize) -> Nibbles {
        Nibbles {
            bytes: atomic(bytes),
            dirty: Dirty::new(count),
        }
    }

    fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    #[inline]
    fn prefetch(&self, at: usize) {
        mancala_format::prefetch(&self.bytes, at / 2);
    }

    #[inline]
    fn single(&self, at: usize) -> bool {
        (self.bytes[at / 2].load(Relaxed) >> Self::shift(at)) & SINGLE != 0
    }

    #[inline]
    fn mark_single(&self, at: usize) {
        self.bytes[at / 2].fetch_or(SINGLE << Self::shift(at), Relaxed);
    }

    /// An undecided `at` joins `W`.
    #[inline]
    fn join_first(&self, at: usize) -> bool {
        self.change(at, |s| s < WON, WON | NEW)
    }

    /// An eligible `at` joins `L`.
    #[inline]
    fn join_second(&self, at: usize) -> bool {
        self.change(at, |s| s == ELIGIBLE, LOST | NEW)
    }

    #[inline]
    fn unblock(&self, at: usize) -> bool {
        self.change(at, |s| s == BLOCKED, ELIGIBLE)
    }

    #[inline]
    fn in_first(&self, at: usize) -> bool {
        self.state(at) == WON
    }

    #[inline]
    fn may_join_second(&self, at: usize) -> bool {
        self.state(at) == ELIGIBLE
    }

    fn take_decided<E>(&self, write: impl FnMut(Decided) -> Result<(), E>) -> Result<(), E> {
        self.dirty.take_decided(|at| self.take(at), write)
    }
}
