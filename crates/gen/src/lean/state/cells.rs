//! Cells of a few bits packed into bytes, each changed on its own by an
//! atomic read-modify-write of its byte ([`Packing`]), and the counting
//! cell both lean states keep for an undecided position ([`Counting`]):
//! the even state's every cell, the forced state's opponent plane. Each
//! kind puts its own values above the counts.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::Start;

/// How a plane of cells is packed: `1 << log` cells a byte, the first in
/// the byte's low bits.
#[derive(Clone, Copy)]
pub(super) struct Packing {
    log: u32,
}

impl Packing {
    /// A byte a cell.
    pub(super) const BYTES: Packing = Packing { log: 0 };
    /// Four bits a cell.
    pub(super) const NIBBLES: Packing = Packing { log: 1 };
    /// Two bits a cell.
    pub(super) const PAIRS: Packing = Packing { log: 2 };

    /// Cells a byte.
    pub(super) fn per_byte(self) -> usize {
        1 << self.log
    }

    /// The bytes `count` cells take.
    pub(super) fn bytes_for(self, count: usize) -> usize {
        count.div_ceil(self.per_byte())
    }

    /// The byte `at`'s cell is in.
    #[inline]
    pub(super) fn byte(self, at: usize) -> usize {
        at >> self.log
    }

    /// The first cell of byte `byte`.
    #[inline]
    pub(super) fn first_of(self, byte: usize) -> usize {
        byte << self.log
    }

    /// Where the `k`-th cell of a byte begins.
    #[inline]
    pub(super) fn shift_of(self, k: usize) -> u32 {
        (k as u32) << (3 - self.log)
    }

    /// Where `at`'s cell begins in its byte.
    #[inline]
    pub(super) fn shift(self, at: usize) -> u32 {
        self.shift_of(at & ((1 << self.log) - 1))
    }

    /// A cell's bits.
    #[inline]
    pub(super) fn mask(self) -> u8 {
        (0xff_u16 >> (8 - (8 >> self.log))) as u8
    }

    /// The `k`-th cell of `byte`.
    #[inline]
    pub(super) fn cell(self, byte: u8, k: usize) -> u8 {
        (byte >> self.shift_of(k)) & self.mask()
    }

    /// Sets `at`'s cell in `bytes` to what `to` makes of it, where `to`
    /// gives something; the cell it changed, if it did. Of several threads
    /// changing one byte at once, each sees the others' changes.
    #[inline]
    pub(super) fn change(
        self,
        bytes: &[AtomicU8],
        at: usize,
        to: impl Fn(u8) -> Option<u8>,
    ) -> Option<u8> {
        let (shift, mask) = (self.shift(at), self.mask());
        bytes[self.byte(at)]
            .fetch_update(Relaxed, Relaxed, |byte| {
                let new = to((byte >> shift) & mask)?;
                Some(byte & !(mask << shift) | new << shift)
            })
            .ok()
            .map(|byte| (byte >> shift) & mask)
    }

    /// For each value of a byte, a bit per cell `k` (bit `k`) where
    /// `is(cell)`: most bytes have none, which one lookup tells.
    pub(super) fn cells_where(self, is: impl Fn(u8) -> bool) -> [u8; 256] {
        std::array::from_fn(|byte| {
            (0..self.per_byte())
                .filter(|&k| is(self.cell(byte as u8, k)))
                .fold(0, |bits, k| bits | 1 << k)
        })
    }
}

/// A cell that counts an undecided position's same-level moves whose
/// child is not yet in the first set, `c`, and says whether the position
/// is blocked from the second set or eligible for it: `0..=p` blocked
/// with `c` = cell, `p+1..=2p` eligible with `c` = cell − `p` (an eligible
/// position with none pending joins the second set), `p` the most moves a
/// position has. The values above `2p` are the kind's own.
#[derive(Clone, Copy)]
pub(super) struct Counting {
    /// The most moves a position has: `p`.
    pub(super) most: u8,
    /// Nibbles up to six pits a side, bytes beyond.
    pub(super) packing: Packing,
}

/// Counting cells of four bits hold up to this many pits a side, with
/// four values to spare.
const NIBBLE_PITS: usize = 6;

impl Counting {
    /// The counting cells of a rule set of `pits` pits a side.
    pub(super) fn of(pits: usize) -> Counting {
        Counting {
            most: pits as u8,
            packing: if pits <= NIBBLE_PITS {
                Packing::NIBBLES
            } else {
                Packing::BYTES
            },
        }
    }

    /// The cell of an eligible position with `pending` moves pending.
    #[inline]
    pub(super) fn eligible(self, pending: u8) -> u8 {
        self.most + pending
    }

    /// The first value above the counts: the kind's own from there.
    #[inline]
    pub(super) fn above(self) -> u8 {
        2 * self.most + 1
    }

    /// Appends to `out` the first cells of positions that start as
    /// `starts` says, the first at a byte's first cell; a last byte not
    /// full is padded with zeros.
    pub(super) fn write_starts(self, starts: impl Iterator<Item = Start>, out: &mut Vec<u8>) {
        let mut cells = starts.map(|s| self.start(s));
        let per_byte = self.packing.per_byte();
        while let Some(first) = cells.next() {
            let mut byte = first;
            for k in 1..per_byte {
                byte |= cells.next().unwrap_or(0) << self.packing.shift_of(k);
            }
            out.push(byte);
        }
    }

    /// A position's first cell.
    fn start(self, start: Start) -> u8 {
        debug_assert!(start.moves <= self.most);
        debug_assert!(
            start.moves > 0 || !start.eligible,
            "a position with no move"
        );
        if start.eligible {
            self.eligible(start.moves)
        } else {
            start.moves
        }
    }

    /// The cell a blocked position's `cell` becomes when it is made
    /// eligible: `joined` if none of its moves is pending. `None` if it is
    /// not blocked.
    #[inline]
    pub(super) fn made_eligible(self, cell: u8, joined: u8) -> Option<u8> {
        match cell {
            0 => Some(joined),
            _ if cell <= self.most => Some(self.eligible(cell)),
            _ => None,
        }
    }

    /// The cell an undecided position's `cell` becomes when one of its
    /// pending moves' child joins the first set: `joined` if it is
    /// eligible and that was its last. `None` if it is decided.
    #[inline]
    pub(super) fn lost_a_move(self, cell: u8, joined: u8) -> Option<u8> {
        debug_assert!(
            cell != 0,
            "a blocked position with no move pending lost one"
        );
        match cell {
            _ if cell == self.eligible(1) => Some(joined),
            _ if cell > 0 && cell <= self.eligible(self.most) => Some(cell - 1),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every packing puts each cell at its own bits, and a change of one
    /// cell leaves its neighbours alone.
    #[test]
    fn cells_change_alone() {
        for packing in [Packing::BYTES, Packing::NIBBLES, Packing::PAIRS] {
            let count = 3 * packing.per_byte() + 1;
            let bytes: Vec<AtomicU8> = (0..packing.bytes_for(count))
                .map(|_| AtomicU8::new(0))
                .collect();
            for at in 0..count {
                let value = (at as u8 % packing.mask()) + 1;
                assert_eq!(packing.change(&bytes, at, |_| Some(value)), Some(0));
            }
            for at in 0..count {
                let value = (at as u8 % packing.mask()) + 1;
                let byte = bytes[packing.byte(at)].load(Relaxed);
                assert_eq!(packing.cell(byte, at % packing.per_byte()), value);
                assert_eq!(packing.change(&bytes, at, |_| None), None);
            }
            let odd = packing.cells_where(|cell| cell % 2 == 1);
            let byte = bytes[1].load(Relaxed);
            for k in 0..packing.per_byte() {
                let cell = packing.cell(byte, k);
                assert_eq!(odd[byte as usize] >> k & 1 == 1, cell % 2 == 1);
            }
        }
    }

    /// Starts are packed in order, a partly filled last byte padded.
    #[test]
    fn starts_are_packed_in_order() {
        let starts =
            [(1, false), (2, true), (0, false)].map(|(moves, eligible)| Start { moves, eligible });
        let mut out = Vec::new();
        Counting::of(6).write_starts(starts.into_iter(), &mut out);
        assert_eq!(out, [1 | (6 + 2) << 4, 0]);
        out.clear();
        Counting::of(8).write_starts(starts.into_iter(), &mut out);
        assert_eq!(out, [1, 8 + 2, 0]);
    }
}
