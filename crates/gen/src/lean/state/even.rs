//! The even values' lean state: four bits a position (a byte with more
//! than six pits a side).
//!
//! With `p` pits a side a position has at most `p` same-level moves. Its
//! cell holds, while it is undecided, the number `c` of those whose child
//! is not yet in `W` and whether it is blocked (an exit worth more than
//! `−s` keeps it out of `L_s`) or eligible; once decided, whether it was
//! decided at the current threshold (won or lost: its decision is not yet
//! written out) or before (then the cell says nothing more: the decision
//! lists do). `W` and `L` are the first and second sets of [`LeanState`].
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
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::cells::{Counting, NIBBLE_PITS};
use super::{Decided, Dirty, LeanState, Start};
use crate::checkpoint::plain;
use crate::solve::atomic;

/// A cell a position: four bits, or a byte with more pits.
pub struct EvenState {
    bytes: Vec<AtomicU8>,
    dirty: Dirty,
    cells: Cells,
    /// For each value of a byte, which of its cells were decided at this
    /// threshold ([`Cells::new_cells`]).
    new_cells: [u8; 256],
}

/// The layout and values of the cells of a rule set's positions.
#[derive(Clone, Copy)]
struct Cells {
    /// The most moves a position has: `p`.
    most: u8,
    /// Positions a byte, as a power of two: 1 (nibbles) or 0 (bytes).
    log: u32,
}

impl Cells {
    fn of(pits: usize) -> Cells {
        Cells {
            most: pits as u8,
            log: u32::from(pits <= NIBBLE_PITS),
        }
    }

    fn bytes_for(self, count: usize) -> usize {
        count.div_ceil(1 << self.log)
    }

    #[inline]
    fn byte(self, at: usize) -> usize {
        at >> self.log
    }

    #[inline]
    fn shift(self, at: usize) -> u32 {
        4 * (at as u32 & self.log)
    }

    #[inline]
    fn mask(self) -> u8 {
        if self.log == 1 {
            0xf
        } else {
            0xff
        }
    }

    #[inline]
    fn eligible(self, pending: u8) -> u8 {
        self.most + pending
    }

    #[inline]
    fn won_new(self) -> u8 {
        2 * self.most + 1
    }

    #[inline]
    fn lost_new(self) -> u8 {
        2 * self.most + 2
    }

    #[inline]
    fn decided(self) -> u8 {
        2 * self.most + 3
    }

    /// For a byte `b`, bits `2k` and `2k + 1` say whether its `k`-th cell
    /// is won, or lost, at this threshold.
    fn new_cells(self) -> [u8; 256] {
        std::array::from_fn(|byte| {
            let mut new = 0;
            for k in 0..1 << self.log {
                let cell = (byte >> (4 * k)) as u8 & self.mask();
                if cell == self.won_new() {
                    new |= 1 << (2 * k);
                } else if cell == self.lost_new() {
                    new |= 2 << (2 * k);
                }
            }
            new
        })
    }
}

impl EvenState {
    /// Sets `at`'s cell to what `to` makes of it, where `to` gives
    /// something; the cell it changed, if it did. Of several threads
    /// changing one byte at once, each sees the others' changes.
    #[inline]
    fn change(&self, at: usize, to: impl Fn(u8) -> Option<u8>) -> Option<u8> {
        let c = self.cells;
        let (shift, mask) = (c.shift(at), c.mask());
        self.bytes[c.byte(at)]
            .fetch_update(Relaxed, Relaxed, |byte| {
                let new = to((byte >> shift) & mask)?;
                Some(byte & !(mask << shift) | new << shift)
            })
            .ok()
            .map(|byte| (byte >> shift) & mask)
    }

    /// Changes `at`'s cell as `to` says, noting a decision if it makes
    /// one; whether it made one.
    #[inline]
    fn change_deciding(&self, at: usize, to: impl Fn(u8) -> Option<u8>) -> bool {
        let c = self.cells;
        let decided = self
            .change(at, &to)
            .and_then(&to)
            .is_some_and(|new| new == c.won_new() || new == c.lost_new());
        if decided {
            self.dirty.mark(at);
        }
        decided
    }

    /// Adds the `positions` decided at this threshold to `decided` (the
    /// won to the first set, the lost to the second), their cells marked
    /// decided before. A byte at a time: most hold no new decision, which
    /// one lookup tells.
    fn take(&self, positions: Range<usize>, decided: &mut Decided) {
        let c = self.cells;
        let (per_byte, mask) = (1 << c.log, c.mask());
        for at_byte in c.byte(positions.start)..=c.byte(positions.end - 1) {
            let byte = self.bytes[at_byte].load(Relaxed);
            let new = self.new_cells[byte as usize];
            if new == 0 {
                continue;
            }
            let mut taken = byte;
            for k in 0..per_byte {
                let (won, lost) = (new >> (2 * k) & 1 != 0, new >> (2 * k) & 2 != 0);
                if !won && !lost {
                    continue;
                }
                let at = ((at_byte << c.log) + k) as u64;
                if won {
                    decided.first.push(at);
                } else {
                    decided.second.push(at);
                }
                let shift = 4 * k as u32;
                taken = taken & !(mask << shift) | c.decided() << shift;
            }
            self.bytes[at_byte].store(taken, Relaxed);
        }
    }
}

impl LeanState for EvenState {
    fn bytes_for(count: usize, pits: usize) -> usize {
        Cells::of(pits).bytes_for(count)
    }

    fn write_starts(pits: usize, starts: impl Iterator<Item = Start>, out: &mut Vec<u8>) {
        Counting::of(pits).write_starts(starts, out);
    }

    fn from_bytes(bytes: Vec<u8>, count: usize, pits: usize) -> EvenState {
        let cells = Cells::of(pits);
        EvenState {
            bytes: atomic(bytes),
            dirty: Dirty::new(count),
            cells,
            new_cells: cells.new_cells(),
        }
    }

    fn bytes(&self) -> &[u8] {
        plain(&self.bytes)
    }

    /// An undecided `at` joins `W`.
    #[inline]
    fn join_first(&self, at: usize) -> bool {
        let c = self.cells;
        self.change_deciding(at, |v| (v < c.won_new()).then_some(c.won_new()))
    }

    #[inline]
    fn make_eligible(&self, at: usize) -> bool {
        let c = self.cells;
        self.change_deciding(at, |v| match v {
            0 => Some(c.lost_new()),
            _ if v <= c.most => Some(c.eligible(v)),
            _ => None,
        })
    }

    #[inline]
    fn child_joined_first(&self, at: usize) -> bool {
        let c = self.cells;
        self.change_deciding(at, |v| {
            debug_assert!(v != 0, "a blocked position with no move pending lost one");
            match v {
                _ if v == c.eligible(1) => Some(c.lost_new()),
                _ if v <= c.eligible(c.most) && v > 0 => Some(v - 1),
                _ => None,
            }
        })
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
