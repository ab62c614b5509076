//! The forced bounds' lean state: a byte a position.
//!
//! A position can be in both sets of a threshold `t`, `M_t` (the mover can
//! be sure of `t` stones: the first set of [`LeanState`]) and `O_t` (the
//! opponent can: the second), so each side has its own field. The
//! opponent's four bits say whether the position is blocked (its worst
//! exit leaves the opponent less than `t`: 0), eligible with 1 to 8
//! same-level moves whose child is not yet in `M` (that count) or in `O`;
//! a bit says it is in `M`, and two more mark what joined at the current
//! threshold.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::{Decided, Dirty, LeanState};
use crate::checkpoint::plain;
use crate::solve::{atomic, bytes};

/// The opponent's field: blocked, pending moves, or [`IN_OPPONENT`].
const OPPONENT: u8 = 0x0f;
/// Not yet eligible for `O`.
const BLOCKED: u8 = 0;
/// The most same-level moves a position has (eight pits a side).
const MAX_PENDING: u8 = 8;
/// In `O`: `forced_opponent` is the threshold it joined at.
const IN_OPPONENT: u8 = 0x0f;
/// Joined `O` at the current threshold.
const NEW_OPPONENT: u8 = 0x10;
/// In `M`: `forced_mover` is the threshold it joined at.
const IN_MOVER: u8 = 0x20;
/// Joined `M` at the current threshold.
const NEW_MOVER: u8 = 0x40;

/// A byte per position.
pub struct Flags {
    bytes: Vec<AtomicU8>,
    dirty: Dirty,
}

impl Flags {
    #[inline]
    fn flags(&self, at: usize) -> u8 {
        self.bytes[at].load(Relaxed)
    }

    /// Sets `at`'s flags to what `to` makes of them, where it gives
    /// something; the flags it changed, if it did. Of several threads,
    /// each sees the others' changes.
    #[inline]
    fn change(&self, at: usize, to: impl Fn(u8) -> Option<u8>) -> Option<u8> {
        let before = self.bytes[at].fetch_update(Relaxed, Relaxed, &to).ok()?;
        let after = to(before).expect("the update took");
        if after & !before & (NEW_MOVER | NEW_OPPONENT) != 0 {
            self.dirty.mark(at);
        }
        Some(before)
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
    fn join_first(&self, at: usize) -> bool {
        self.change(at, |f| {
            (f & IN_MOVER == 0).then_some(f | IN_MOVER | NEW_MOVER)
        })
        .is_some()
    }

    #[inline]
    fn in_first(&self, at: usize) -> bool {
        self.flags(at) & IN_MOVER != 0
    }

    #[inline]
    fn blocked(&self, at: usize) -> bool {
        self.flags(at) & OPPONENT == BLOCKED
    }

    #[inline]
    fn make_eligible(&self, at: usize, pending: u8) -> bool {
        debug_assert!(pending <= MAX_PENDING);
        let to = if pending > 0 {
            pending
        } else {
            IN_OPPONENT | NEW_OPPONENT
        };
        self.change(at, |f| (f & OPPONENT == BLOCKED).then_some(f | to))
            .is_some()
            && pending == 0
    }

    #[inline]
    fn child_joined_first(&self, at: usize) -> bool {
        let before = self.change(at, |f| match f & OPPONENT {
            1 => Some(f & !OPPONENT | IN_OPPONENT | NEW_OPPONENT),
            2..=MAX_PENDING => Some(f - 1),
            _ => None,
        });
        before.is_some_and(|f| f & OPPONENT == 1)
    }

    fn take_decided<E>(&self, write: impl FnMut(Decided) -> Result<(), E>) -> Result<(), E> {
        self.dirty.take_decided(|at| self.take(at), write)
    }
}
