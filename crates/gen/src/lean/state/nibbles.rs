//! The even values' lean state: four bits a position.
//!
//! A position is blocked (an exit worth more than `−s` keeps it out of
//! `L_s`: value 0), eligible with 1 to 8 same-level moves whose child is
//! not yet in `W` (the value is that count), won (in `W`: its value is the
//! threshold it joined at) or lost (in `L`), the last two with or without
//! the mark of a decision taken at the current threshold. `W` and `L` are
//! the first and second sets of [`LeanState`]; a position is in one at
//! most. Sixteen values hold all thirteen states: two positions a byte.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::{Decided, Dirty, LeanState};
use crate::checkpoint::plain;
use crate::solve::{atomic, bytes};

/// Undecided; some exit is worth more than `−s`.
const BLOCKED: u8 = 0;
/// The most same-level moves a position has (eight pits a side).
const MAX_PENDING: u8 = 8;
/// In `W`: the mover can force the threshold it joined at.
const WON: u8 = 12;
/// In `L`: the mover cannot avoid minus the threshold it joined at.
const LOST: u8 = 13;
/// Set with [`WON`] or [`LOST`] until the threshold's decisions are taken.
const NEW: u8 = 2;

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

    #[inline]
    fn nibble(&self, at: usize) -> u8 {
        (self.bytes[at / 2].load(Relaxed) >> Self::shift(at)) & 0xf
    }

    /// Sets `at`'s nibble to what `to` makes of it, where `to` gives
    /// something; the nibble it changed, if it did. Of several threads
    /// changing one position at once, each sees the others' changes.
    #[inline]
    fn change(&self, at: usize, to: impl Fn(u8) -> Option<u8>) -> Option<u8> {
        let shift = Self::shift(at);
        self.bytes[at / 2]
            .fetch_update(Relaxed, Relaxed, |byte| {
                let new = to((byte >> shift) & 0xf)?;
                Some(byte & !(0xf << shift) | new << shift)
            })
            .ok()
            .map(|byte| (byte >> shift) & 0xf)
    }

    /// Marks `at` decided as `decided` ([`WON`] or [`LOST`]) at this
    /// threshold, where `to` gives something.
    #[inline]
    fn decide(&self, at: usize, decided: impl Fn(u8) -> Option<u8>) -> bool {
        let changed = self.change(at, |v| decided(v).map(|d| d | NEW)).is_some();
        if changed {
            self.dirty.mark(at);
        }
        changed
    }

    /// Whether `at` was decided at this threshold (as won, or lost), its
    /// mark cleared.
    fn take(&self, at: usize) -> (bool, bool) {
        let v = self.nibble(at);
        if v < WON | NEW {
            return (false, false);
        }
        self.bytes[at / 2].fetch_and(!(NEW << Self::shift(at)), Relaxed);
        let won = v & !NEW == WON;
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

    /// An undecided `at` joins `W`.
    #[inline]
    fn join_first(&self, at: usize) -> bool {
        self.decide(at, |v| (v < WON).then_some(WON))
    }

    #[inline]
    fn in_first(&self, at: usize) -> bool {
        self.nibble(at) & !NEW == WON
    }

    #[inline]
    fn blocked(&self, at: usize) -> bool {
        self.nibble(at) == BLOCKED
    }

    #[inline]
    fn make_eligible(&self, at: usize, pending: u8) -> bool {
        debug_assert!(pending <= MAX_PENDING);
        if pending > 0 {
            self.change(at, |v| (v == BLOCKED).then_some(pending));
            false
        } else {
            self.decide(at, |v| (v == BLOCKED).then_some(LOST))
        }
    }

    #[inline]
    fn child_joined_first(&self, at: usize) -> bool {
        let before = self.change(at, |v| match v {
            1 => Some(LOST | NEW),
            2..=MAX_PENDING => Some(v - 1),
            _ => None,
        });
        let joined = before == Some(1);
        if joined {
            self.dirty.mark(at);
        }
        joined
    }

    fn take_decided<E>(&self, write: impl FnMut(Decided) -> Result<(), E>) -> Result<(), E> {
        self.dirty.take_decided(|at| self.take(at), write)
    }
}
