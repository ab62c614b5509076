//! The even values' lean state: four bits a position (a byte with more
//! than six pits a side).
//!
//! With `p` pits a side a position has at most `p` same-level moves. Its
//! cell is a [`Counting`] cell while it is undecided: the number `c` of
//! those moves whose child is not yet in `W`, and whether it is blocked
//! (an exit worth more than `−s` keeps it out of `L_s`) or eligible. Once
//! decided, the cell says whether it was decided at the current threshold
//! (won or lost: its decision is not yet written out) or before (then the
//! cell says nothing more: the decision lists do). `W` and `L` are the
//! first and second sets of [`LeanState`].
//!
//! | cell | meaning |
//! |---|---|
//! | `0..=p` | blocked, `c` = cell |
//! | `p+1..=2p` | eligible, `c` = cell − `p` (an eligible position with no move pending is lost) |
//! | `2p+1`, `2p+2` | won, lost at this threshold |
//! | `2p+3` | decided before |
//!
//! Six pits need sixteen values: two positions a byte.

use std::ops::Range;
use std::sync::atomic::AtomicU8;

use mancala_format::prefetch;

use super::cells::Counting;
use super::{Decided, Dirty, LeanState, Start};
use crate::checkpoint::plain;
use crate::solve::atomic;

/// A cell a position: four bits, or a byte with more pits.
pub struct EvenState {
    bytes: Vec<AtomicU8>,
    dirty: Dirty,
    counting: Counting,
}

impl EvenState {
    /// Won at this threshold.
    #[inline]
    fn won_new(&self) -> u8 {
        self.counting.above()
    }

    /// Lost at this threshold.
    #[inline]
    fn lost_new(&self) -> u8 {
        self.counting.above() + 1
    }

    /// Decided at an earlier threshold.
    #[inline]
    fn decided(&self) -> u8 {
        self.counting.above() + 2
    }

    /// Changes `at`'s cell as `to` says, noting a decision if it makes
    /// one; whether it made one.
    #[inline]
    fn change_deciding(&self, at: usize, to: impl Fn(u8) -> Option<u8>) -> bool {
        let decided = self
            .counting
            .packing
            .change(&self.bytes, at, &to)
            .and_then(&to)
            .is_some_and(|new| new == self.won_new() || new == self.lost_new());
        if decided {
            self.dirty.mark(at);
        }
        decided
    }

    /// Adds the `positions` decided at this threshold to `decided` (the
    /// won to the first set, the lost to the second), their cells marked
    /// decided before.
    fn take(&self, positions: Range<usize>, decided: &mut Decided) {
        let (won, lost, packing) = (self.won_new(), self.lost_new(), self.counting.packing);
        packing.take_new(
            &self.bytes,
            &positions,
            |word| packing.matching(word, won) | packing.matching(word, lost),
            self.decided(),
            |at, cell| match cell == won {
                true => decided.first.push(at as u64),
                false => decided.second.push(at as u64),
            },
        );
    }
}

impl LeanState for EvenState {
    fn bytes_for(count: usize, pits: usize) -> usize {
        Counting::of(pits).packing.bytes_for(count)
    }

    fn write_starts(pits: usize, starts: impl Iterator<Item = Start>, out: &mut Vec<u8>) {
        Counting::of(pits).write_starts(starts, out);
    }

    fn from_bytes(bytes: Vec<u8>, count: usize, pits: usize) -> EvenState {
        EvenState {
            bytes: atomic(bytes),
            dirty: Dirty::new(count),
            counting: Counting::of(pits),
        }
    }

    fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    /// An undecided `at` joins `W`.
    #[inline]
    fn join_first(&self, at: usize) -> bool {
        let won = self.won_new();
        self.change_deciding(at, |cell| (cell < won).then_some(won))
    }

    #[inline]
    fn make_eligible(&self, at: usize) -> bool {
        let lost = self.lost_new();
        self.change_deciding(at, |cell| self.counting.made_eligible(cell, lost))
    }

    #[inline]
    fn child_joined_first(&self, at: usize) -> bool {
        let lost = self.lost_new();
        self.change_deciding(at, |cell| self.counting.lost_a_move(cell, lost))
    }

    #[inline]
    fn prefetch_for_join_first(&self, at: usize) {
        prefetch(&self.bytes, self.counting.packing.byte(at));
    }

    #[inline]
    fn prefetch_for_child_joined_first(&self, at: usize) {
        prefetch(&self.bytes, self.counting.packing.byte(at));
    }

    fn take_decided(&self, write: impl FnMut(Vec<Decided>)) {
        self.dirty
            .take_decided(|positions, decided| self.take(positions, decided), write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pits: usize, starts: &[Start]) -> EvenState {
        let mut bytes = Vec::new();
        EvenState::write_starts(pits, starts.iter().copied(), &mut bytes);
        assert_eq!(bytes.len(), EvenState::bytes_for(starts.len(), pits));
        EvenState::from_bytes(bytes, starts.len(), pits)
    }

    fn taken(state: &EvenState) -> (Vec<u64>, Vec<u64>) {
        let mut found = (Vec::new(), Vec::new());
        state.take_decided(|blocks| {
            for d in blocks {
                found.0.extend(d.first);
                found.1.extend(d.second);
            }
        });
        found
    }

    /// A position's count falls with each child that joins `W`, blocked or
    /// not; it is lost when it is eligible and the count is 0, whichever
    /// comes last; a decided position ignores both.
    #[test]
    fn counts_fall_from_the_start_and_eligible_positions_are_lost_at_zero() {
        for pits in [2, 6, 7, 8] {
            let blocked = |moves| Start {
                moves,
                eligible: false,
            };
            let most = pits as u8;
            let starts = [
                blocked(2),
                blocked(most),
                blocked(1),
                blocked(0),
                Start {
                    moves: most,
                    eligible: true,
                },
            ];
            let s = state(pits, &starts);
            assert!(!s.child_joined_first(0));
            assert!(!s.child_joined_first(0));
            assert!(s.make_eligible(0), "eligible with none pending: lost");
            assert!(!s.make_eligible(1));
            for _ in 1..most {
                assert!(!s.child_joined_first(1));
            }
            assert!(s.child_joined_first(1));
            assert!(s.join_first(2));
            assert!(!s.join_first(2));
            assert!(!s.make_eligible(2));
            assert!(s.make_eligible(3));
            for _ in 1..most {
                assert!(!s.child_joined_first(4));
            }
            assert!(s.child_joined_first(4));
            assert_eq!(taken(&s), (vec![2], vec![0, 1, 3, 4]));
            assert!(!s.join_first(0) && !s.join_first(4));
            assert_eq!(taken(&s), (vec![], vec![]));
        }
    }
}
