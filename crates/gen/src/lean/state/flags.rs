//! The forced bounds' lean state: a byte a position.
//!
//! A position can be in both sets of a threshold `t`, `M_t` (the mover can
//! be sure of `t` stones: the first set of [`LeanState`]) and `O_t` (the
//! opponent can: the second), so each has its own bit, and so has being
//! eligible for `O_t` (the worst exit leaves the opponent at least `t`);
//! with a new mark for each set and the single-move mark that is six bits,
//! which a byte holds and a nibble does not.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::{Decided, Dirty, LeanState};
use crate::checkpoint::plain;
use crate::solve::{atomic, bytes};

/// In `M`: `forced_mover` is the threshold it joined at.
const IN_MOVER: u8 = 1;
/// In `O`: `forced_opponent` is the threshold it joined at.
const IN_OPPONENT: u8 = 2;
/// No exit leaves the opponent less than the threshold: the position is
/// in `O` once every same-level child is in `M`.
const ELIGIBLE: u8 = 4;
/// Joined `M` at the current threshold.
const NEW_MOVER: u8 = 8;
/// Joined `O` at the current threshold.
const NEW_OPPONENT: u8 = 16;
/// Exactly one move keeps the level.
const SINGLE: u8 = 32;

/// A byte of flags per position.
pub struct Flags {
    bytes: Vec<AtomicU8>,
    dirty: Dirty,
}

impl Flags {
    #[inline]
    fn flags(&self, at: usize) -> u8 {
        self.bytes[at].load(Relaxed)
    }

    /// Sets `to` on `at` if `accepts` its flags; whether it did. Of
    /// several threads, one succeeds.
    #[inline]
    fn change(&self, at: usize, accepts: impl Fn(u8) -> bool, to: u8) -> bool {
        let changed = self.bytes[at]
            .fetch_update(Relaxed, Relaxed, |f| accepts(f).then_some(f | to))
            .is_ok();
        if changed && to & (NEW_MOVER | NEW_OPPONENT) != 0 {
            self.dirty.mark(at);
        }
        changed
    }

    /// Whether `at` joined `M` and `O` at this threshold, its marks
    /// cleared.
    fn take(&self, at: usize) -> (bool, bool) {
        let flags = self.flags(at);
        if flags & (NEW_MOVER | NEW_OPPONENT) == 0 {
            return (false, false);
        }
        self.bytes[at].fetch_and(!(NEW_MOVER | NEW_OPPONENT), Relaxed);
        (flags & NEW_MOVER != 0, flags & NEW_OPPONENT != 0)
    }
}

impl LeanState for Flags {
    fn new(count: usize) -> Flags {
        Flags {
            bytes: bytes(count, 0),
            dirty: Dirty::new(count),
        }
    }

    fn bytes_for(count: usize) -> usize {
        count
    }

    fn from_bytes(bytes: Vec<u8>, count: usize) -> Flags {
        Flags {
            bytes: atomic(bytes),
            dirty: Dirty::new(count),
        }
    }

    fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    #[inline]
    fn prefetch(&self, at: usize) {
        mancala_format::prefetch(&self.bytes, at);
    }

    #[inline]
    fn single(&self, at: usize) -> bool {
        self.flags(at) & SINGLE != 0
    }

    #[inline]
    fn mark_single(&self, at: usize) {
        self.bytes[at].fetch_or(SINGLE, Relaxed);
    }

    #[inline]
    fn join_first(&self, at: usize) -> bool {
        self.change(at, |f| f & IN_MOVER == 0, IN_MOVER | NEW_MOVER)
    }

    #[inline]
    fn join_second(&self, at: usize) -> bool {
        self.change(
            at,
            |f| f & (ELIGIBLE | IN_OPPONENT) == ELIGIBLE,
            IN_OPPONENT | NEW_OPPONENT,
        )
    }

    #[inline]
    fn unblock(&self, at: usize) -> bool {
        self.change(at, |f| f & ELIGIBLE == 0, ELIGIBLE)
    }

    #[inline]
    fn in_first(&self, at: usize) -> bool {
        self.flags(at) & IN_MOVER != 0
    }

    #[inline]
    fn may_join_second(&self, at: usize) -> bool {
        self.flags(at) & (ELIGIBLE | IN_OPPONENT) == ELIGIBLE
    }

    fn take_decided<E>(&self, write: impl FnMut(Decided) -> Result<(), E>) -> Result<(), E> {
        self.dirty.take_decided(|at| self.take(at), write)
    }
}
