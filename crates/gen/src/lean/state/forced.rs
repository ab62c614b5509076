//! The forced bounds' lean state: six bits a position (ten with more than
//! six pits a side), in two planes.
//!
//! A position can be in both sets of a threshold `t`, `M_t` (the mover can
//! be sure of `t` stones: the first set of [`LeanState`]) and `O_t` (the
//! opponent can: the second), so each side has a cell of its own. Every
//! change touches one side's cell only, so the two sides' cells are kept
//! in two planes, each packed as tight as its values allow:
//!
//! | plane | cell | meaning |
//! |---|---|---|
//! | opponent's (counting, [`Counting`]) | `0..=2p` | not in `O`: blocked or eligible, with its moves whose child is not yet in `M` |
//! | | `2p+1`, `2p+2` | joined `O` at this threshold, before |
//! | mover's (two bits) | `0`, `1`, `2` | not in `M`, joined `M` at this threshold, before |
//!
//! The opponent's plane comes first: it is what the forward pass writes as
//! the level's starts, the mover's plane starting as zeros after it.

use std::ops::Range;
use std::sync::atomic::AtomicU8;

use mancala_format::prefetch;

use super::cells::{Counting, Packing};
use super::{Decided, Dirty, LeanState, Start};
use crate::checkpoint::plain;
use crate::solve::atomic;

/// The mover's plane.
const MOVER: Packing = Packing::PAIRS;
/// Not in `M`.
const OUTSIDE: u8 = 0;
/// Joined `M` at this threshold: `forced_mover` is the threshold.
const JOINED_NOW: u8 = 1;
/// Joined `M` at an earlier threshold.
const JOINED_BEFORE: u8 = 2;

/// Both sides' cells, the opponent's plane then the mover's.
pub struct ForcedState {
    bytes: Vec<AtomicU8>,
    /// Where the mover's plane begins.
    mover_from: usize,
    dirty: Dirty,
    counting: Counting,
}

impl ForcedState {
    fn opponent(&self) -> &[AtomicU8] {
        &self.bytes[..self.mover_from]
    }

    fn mover(&self) -> &[AtomicU8] {
        &self.bytes[self.mover_from..]
    }

    /// In `O` at this threshold.
    #[inline]
    fn opponent_now(&self) -> u8 {
        self.counting.above()
    }

    /// In `O` since an earlier threshold.
    #[inline]
    fn opponent_before(&self) -> u8 {
        self.counting.above() + 1
    }

    /// Changes `at`'s opponent cell as `to` says; whether `at` joined `O`.
    #[inline]
    fn change_opponent(&self, at: usize, to: impl Fn(u8) -> Option<u8>) -> bool {
        let joined = self
            .counting
            .packing
            .change(self.opponent(), at, &to)
            .and_then(&to)
            .is_some_and(|cell| cell == self.opponent_now());
        if joined {
            self.dirty.mark(at);
        }
        joined
    }

    /// Adds the `positions` that joined `M` and `O` at this threshold to
    /// `decided`, their cells marked as joined before.
    fn take(&self, positions: Range<usize>, decided: &mut Decided) {
        take_plane(
            self.mover(),
            MOVER,
            JOINED_NOW,
            JOINED_BEFORE,
            &positions,
            &mut decided.first,
        );
        take_plane(
            self.opponent(),
            self.counting.packing,
            self.opponent_now(),
            self.opponent_before(),
            &positions,
            &mut decided.second,
        );
    }
}

/// Pushes to `joined` the `positions` whose cell in `plane` (`packing`) is
/// `now` (they joined at this threshold), and sets those cells to `before`.
fn take_plane(
    plane: &[AtomicU8],
    packing: Packing,
    now: u8,
    before: u8,
    positions: &Range<usize>,
    joined: &mut Vec<u64>,
) {
    packing.take_new(
        plane,
        positions,
        |word| packing.matching(word, now),
        before,
        |at, _| joined.push(at as u64),
    );
}

impl LeanState for ForcedState {
    fn bytes_for(count: usize, pits: usize) -> usize {
        Self::start_bytes_for(count, pits) + MOVER.bytes_for(count)
    }

    fn start_bytes_for(count: usize, pits: usize) -> usize {
        Counting::of(pits).packing.bytes_for(count)
    }

    fn write_starts(pits: usize, starts: impl Iterator<Item = Start>, out: &mut Vec<u8>) {
        Counting::of(pits).write_starts(starts, out);
    }

    fn from_bytes(bytes: Vec<u8>, count: usize, pits: usize) -> ForcedState {
        debug_assert_eq!(bytes.len(), Self::bytes_for(count, pits));
        ForcedState {
            bytes: atomic(bytes),
            mover_from: Self::start_bytes_for(count, pits),
            dirty: Dirty::new(count),
            counting: Counting::of(pits),
        }
    }

    fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    #[inline]
    fn join_first(&self, at: usize) -> bool {
        let joined = MOVER
            .change(self.mover(), at, |cell| {
                (cell == OUTSIDE).then_some(JOINED_NOW)
            })
            .is_some();
        if joined {
            self.dirty.mark(at);
        }
        joined
    }

    #[inline]
    fn make_eligible(&self, at: usize) -> bool {
        let joined = self.opponent_now();
        self.change_opponent(at, |cell| self.counting.made_eligible(cell, joined))
    }

    #[inline]
    fn child_joined_first(&self, at: usize) -> bool {
        let joined = self.opponent_now();
        self.change_opponent(at, |cell| self.counting.lost_a_move(cell, joined))
    }

    /// The mover's plane.
    #[inline]
    fn prefetch_for_join_first(&self, at: usize) {
        prefetch(self.mover(), MOVER.byte(at));
    }

    /// The opponent's plane.
    #[inline]
    fn prefetch_for_child_joined_first(&self, at: usize) {
        prefetch(self.opponent(), self.counting.packing.byte(at));
    }

    fn take_decided(&self, write: impl FnMut(Vec<Decided>)) {
        self.dirty
            .take_decided(|positions, decided| self.take(positions, decided), write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pits: usize, starts: &[Start]) -> ForcedState {
        let mut bytes = Vec::new();
        ForcedState::write_starts(pits, starts.iter().copied(), &mut bytes);
        assert_eq!(
            bytes.len(),
            ForcedState::start_bytes_for(starts.len(), pits)
        );
        bytes.resize(ForcedState::bytes_for(starts.len(), pits), 0);
        ForcedState::from_bytes(bytes, starts.len(), pits)
    }

    fn taken(state: &ForcedState) -> (Vec<u64>, Vec<u64>) {
        let mut found = (Vec::new(), Vec::new());
        state.take_decided(|blocks| {
            for d in blocks {
                found.0.extend(d.first);
                found.1.extend(d.second);
            }
        });
        found
    }

    /// The opponent's count falls with each child that joins `M`, blocked
    /// or not, and the position joins `O` when it is eligible with none
    /// pending; joining `M` leaves the count alone, and a position joins
    /// each set once.
    #[test]
    fn counts_fall_from_the_start_and_eligible_positions_join_at_zero() {
        for pits in [1, 2, 6, 7, 8] {
            let most = pits as u8;
            let starts = [
                (2.min(most), false),
                (most, true),
                (1, false),
                (1, false),
                (0, false),
            ]
            .map(|(moves, eligible)| Start { moves, eligible });
            let s = state(pits, &starts);
            assert!(s.join_first(0) && !s.join_first(0));
            if most > 1 {
                assert!(!s.child_joined_first(0));
            }
            assert!(!s.make_eligible(0));
            assert!(s.child_joined_first(0), "eligible, its last move gone");
            for _ in 1..most {
                assert!(!s.child_joined_first(1));
            }
            assert!(s.child_joined_first(1));
            assert!(!s.child_joined_first(1));
            assert!(!s.child_joined_first(2));
            assert!(s.make_eligible(2));
            assert!(!s.make_eligible(2));
            assert!(s.join_first(4) && s.make_eligible(4));
            assert_eq!(taken(&s), (vec![0, 4], vec![0, 1, 2, 4]));
            assert!(!s.join_first(0) && !s.join_first(4) && !s.make_eligible(4));
            assert!(s.join_first(3) && !s.make_eligible(3));
            assert_eq!(taken(&s), (vec![3], vec![]));
        }
    }
}
