//! The forced bounds' lean state: a byte a position.
//!
//! A position can be in both sets of a threshold `t`, `M_t` (the mover can
//! be sure of `t` stones: the first set of [`LeanState`]) and `O_t` (the
//! opponent can: the second), so each side has its own field. The
//! opponent's five bits hold, until it is in `O`, the number `c` of
//! same-level moves whose child is not yet in `M` and whether the position
//! is blocked (its worst exit leaves the opponent less than `t`: `c`) or
//! eligible (`8 + c`), or else that it is in `O`; a bit says it is in `M`,
//! and two more mark what joined at the current threshold.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::{Decided, Dirty, LeanState, Start};
use crate::checkpoint::plain;
use crate::solve::atomic;

/// The opponent's field: blocked or eligible with its pending moves, or
/// [`IN_OPPONENT`].
const OPPONENT: u8 = 0x1f;
/// The most same-level moves a position has (eight pits a side).
const MAX_PENDING: u8 = 8;
/// Eligible for `O`, with no move pending: the field's value of an
/// eligible position with `c` pending is this plus `c`.
const ELIGIBLE: u8 = MAX_PENDING;
/// In `O`: `forced_opponent` is the threshold it joined at.
const IN_OPPONENT: u8 = 2 * MAX_PENDING + 1;
/// In `M`: `forced_mover` is the threshold it joined at.
const IN_MOVER: u8 = 0x20;
/// Joined `M` at the current threshold.
const NEW_MOVER: u8 = 0x40;
/// Joined `O` at the current threshold.
const NEW_OPPONENT: u8 = 0x80;

/// A byte per position.
pub struct ForcedState {
    bytes: Vec<AtomicU8>,
    dirty: Dirty,
}

impl ForcedState {
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

    /// Adds the `positions` that joined `M` and `O` at this threshold to
    /// `decided`, their marks cleared.
    fn take(&self, positions: Range<usize>, decided: &mut Decided) {
        for at in positions {
            let flags = self.flags(at);
            if flags & (NEW_MOVER | NEW_OPPONENT) == 0 {
                continue;
            }
            self.bytes[at].store(flags & !(NEW_MOVER | NEW_OPPONENT), Relaxed);
            if flags & NEW_MOVER != 0 {
                decided.first.push(at as u64);
            }
            if flags & NEW_OPPONENT != 0 {
                decided.second.push(at as u64);
            }
        }
    }
}

impl LeanState for ForcedState {
    fn bytes_for(count: usize, _pits: usize) -> usize {
        count
    }

    fn write_starts(_pits: usize, starts: impl Iterator<Item = Start>, out: &mut Vec<u8>) {
        out.extend(starts.map(|start| {
            debug_assert!(start.moves <= MAX_PENDING);
            debug_assert!(
                start.moves > 0 || !start.eligible,
                "a position with no move"
            );
            if start.eligible {
                ELIGIBLE + start.moves
            } else {
                start.moves
            }
        }));
    }

    fn from_bytes(bytes: Vec<u8>, count: usize, _pits: usize) -> ForcedState {
        ForcedState {
            bytes: atomic(bytes),
            dirty: Dirty::new(count),
        }
    }

    fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    #[inline]
    fn join_first(&self, at: usize) -> bool {
        self.change(at, |f| {
            (f & IN_MOVER == 0).then_some(f | IN_MOVER | NEW_MOVER)
        })
        .is_some()
    }

    #[inline]
    fn make_eligible(&self, at: usize) -> bool {
        let before = self.change(at, |f| match f & OPPONENT {
            0 => Some(f | IN_OPPONENT | NEW_OPPONENT),
            c if c <= MAX_PENDING => Some(f + ELIGIBLE),
            _ => None,
        });
        before.is_some_and(|f| f & OPPONENT == 0)
    }

    #[inline]
    fn child_joined_first(&self, at: usize) -> bool {
        let before = self.change(at, |f| {
            debug_assert!(
                f & OPPONENT != 0,
                "a blocked position with no move pending lost one"
            );
            match f & OPPONENT {
                v if v == ELIGIBLE + 1 => Some(f & !OPPONENT | IN_OPPONENT | NEW_OPPONENT),
                v if v > 0 && v < IN_OPPONENT => Some(f - 1),
                _ => None,
            }
        });
        before.is_some_and(|f| f & OPPONENT == ELIGIBLE + 1)
    }

    fn take_decided(&self, write: impl FnMut(Vec<Decided>)) {
        self.dirty
            .take_decided(|positions, decided| self.take(positions, decided), write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The opponent's count falls with each child that joins `M`, blocked
    /// or not, and the position joins `O` when it is eligible with none
    /// pending; joining `M` leaves the count alone.
    #[test]
    fn counts_fall_from_the_start_and_eligible_positions_join_at_zero() {
        let starts = [(2, false), (MAX_PENDING, true), (1, false)]
            .map(|(moves, eligible)| Start { moves, eligible });
        let mut bytes = Vec::new();
        ForcedState::write_starts(8, starts.into_iter(), &mut bytes);
        let s = ForcedState::from_bytes(bytes, starts.len(), 8);
        assert!(s.join_first(0) && !s.join_first(0));
        assert!(!s.child_joined_first(0));
        assert!(!s.make_eligible(0));
        assert!(s.child_joined_first(0), "eligible, its last move gone");
        for _ in 1..MAX_PENDING {
            assert!(!s.child_joined_first(1));
        }
        assert!(s.child_joined_first(1));
        assert!(!s.child_joined_first(1));
        assert!(!s.child_joined_first(2));
        assert!(s.make_eligible(2));
        assert!(!s.make_eligible(2));
        let mut found = (Vec::new(), Vec::new());
        s.take_decided(|blocks| {
            for d in blocks {
                found.0.extend(d.first);
                found.1.extend(d.second);
            }
        });
        assert_eq!(found, (vec![0], vec![0, 1, 2]));
    }
}
