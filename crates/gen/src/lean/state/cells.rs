//! Cells of a few bits packed into bytes, each changed on its own by an
//! atomic read-modify-write of its byte ([`Packing`]), and the counting
//! cell both lean states keep for an undecided position ([`Counting`]):
//! the even state's every cell, the forced state's opponent plane. Each
//! kind puts its own values above the counts.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::Start;
use crate::checkpoint::plain;

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

    /// Bits a cell.
    #[inline]
    fn width(self) -> u32 {
        8 >> self.log
    }

    /// Of a word of cells (eight bytes read as a little-endian number),
    /// the top bit of each cell that equals `cell`, no other bit: a
    /// threshold's new members are found eight bytes at a time, with no
    /// look at a cell that is not one. Exact, for every cell at once: a
    /// cell is `cell` when its bits xor `cell` are all zero, that is when
    /// neither its top bit is set nor its low bits, added to all ones,
    /// carry into the top bit (they cannot carry out of the cell).
    #[inline]
    pub(super) fn matching(self, word: u64, cell: u8) -> u64 {
        let ones = u64::MAX / ((1 << self.width()) - 1);
        let low = !(ones << (self.width() - 1));
        let differs = word ^ ones.wrapping_mul(u64::from(cell));
        !(((differs & low) + low) | differs | low)
    }

    /// Takes, in index order, the `positions`' cells of `plane` that
    /// `new` marks (a word of cells to the top bits of the new ones,
    /// [`Packing::matching`]): `found(position, cell)` is called for each,
    /// and the cell is set to `before`. `new` must mark no cell of value 0:
    /// the padding after a level's last cell is zeros.
    ///
    /// No other thread may change the plane's `positions` meanwhile: a
    /// word is read whole, then stored back whole if a cell changed.
    pub(super) fn take_new(
        self,
        plane: &[AtomicU8],
        positions: &Range<usize>,
        new: impl Fn(u64) -> u64,
        before: u8,
        mut found: impl FnMut(usize, u8),
    ) {
        let bytes = self.byte(positions.start)..self.byte(positions.end - 1) + 1;
        let (width, mask) = (self.width(), u64::from(self.mask()));
        let mut at_byte = bytes.start;
        for word_bytes in plane[bytes].chunks(8) {
            let mut read = [0u8; 8];
            read[..word_bytes.len()].copy_from_slice(plain(word_bytes));
            let word = u64::from_le_bytes(read);
            let mut marks = new(word);
            if marks != 0 {
                let mut taken = word;
                while marks != 0 {
                    let shift = marks.trailing_zeros() + 1 - width;
                    marks &= marks - 1;
                    let at = self.first_of(at_byte) + (shift / width) as usize;
                    debug_assert!(positions.contains(&at), "a padding cell taken");
                    found(at, ((word >> shift) & mask) as u8);
                    taken = taken & !(mask << shift) | u64::from(before) << shift;
                }
                for (cell_byte, byte) in word_bytes.iter().zip(taken.to_le_bytes()) {
                    cell_byte.store(byte, Relaxed);
                }
            }
            at_byte += word_bytes.len();
        }
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

    const PACKINGS: [Packing; 3] = [Packing::BYTES, Packing::NIBBLES, Packing::PAIRS];

    /// `at`'s cell, read the plain way.
    fn cell(packing: Packing, bytes: &[AtomicU8], at: usize) -> u8 {
        (bytes[packing.byte(at)].load(Relaxed) >> packing.shift(at)) & packing.mask()
    }

    /// A plane of `count` cells, cell `at` holding `value(at)`: each
    /// change finds its cell still zero.
    fn plane(packing: Packing, count: usize, value: impl Fn(usize) -> u8) -> Vec<AtomicU8> {
        let bytes: Vec<AtomicU8> = (0..packing.bytes_for(count))
            .map(|_| AtomicU8::new(0))
            .collect();
        for at in 0..count {
            assert_eq!(packing.change(&bytes, at, |_| Some(value(at))), Some(0));
        }
        bytes
    }

    /// Every packing puts each cell at its own bits, and a change of one
    /// cell leaves its neighbours alone.
    #[test]
    fn cells_change_alone() {
        for packing in PACKINGS {
            let count = 3 * packing.per_byte() + 1;
            let value = |at: usize| (at as u8 % packing.mask()) + 1;
            let bytes = plane(packing, count, value);
            for at in 0..count {
                assert_eq!(cell(packing, &bytes, at), value(at));
                assert_eq!(packing.change(&bytes, at, |_| None), None);
                assert_eq!(packing.change(&bytes, at, Some), Some(value(at)));
            }
        }
    }

    /// A word's matching cells are exactly those equal to the value, for
    /// words of every kind of cell: all equal, none, neighbours one apart.
    #[test]
    fn matching_marks_exactly_the_equal_cells() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut words = vec![0, u64::MAX, 0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210];
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            words.push(seed);
        }
        for packing in PACKINGS {
            let width = packing.width();
            for &word in &words {
                for value in 0..=packing.mask() {
                    let mut expected = 0;
                    for k in 0..64 / width {
                        if (word >> (k * width)) & u64::from(packing.mask()) == u64::from(value) {
                            expected |= 1 << (k * width + width - 1);
                        }
                    }
                    assert_eq!(packing.matching(word, value), expected);
                }
            }
        }
    }

    /// The new cells of a range are found in index order, whole words and
    /// a last part of one alike, and set to the value for before; the
    /// others, and the cells outside the range, are left alone.
    #[test]
    fn new_cells_are_taken_in_order() {
        const NEW: u8 = 1;
        const BEFORE: u8 = 2;
        for packing in PACKINGS {
            let count = 100 * packing.per_byte() + 1;
            let value = |at: usize| ((at * 7 + at / 5) % 3) as u8;
            let bytes = plane(packing, count, value);
            let range = 3 * packing.per_byte()..count;
            let mut found = Vec::new();
            packing.take_new(
                &bytes,
                &range,
                |word| packing.matching(word, NEW),
                BEFORE,
                |at, cell| found.push((at, cell)),
            );
            let expected: Vec<_> = range
                .clone()
                .filter(|&at| value(at) == NEW)
                .map(|at| (at, NEW))
                .collect();
            assert_eq!(found, expected);
            for at in 0..count {
                let now = match range.contains(&at) && value(at) == NEW {
                    true => BEFORE,
                    false => value(at),
                };
                assert_eq!(cell(packing, &bytes, at), now, "cell {at}");
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
