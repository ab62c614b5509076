//! Positions and their text notation.
//!
//! A [`Position`] is the board seen from the player to move (`docs/RULES.md`): pits
//! `0..P` are the mover's row, pits `P..2P` the opponent's, both in sowing
//! order. Stores and captured stones are not part of it.

use std::fmt;
use std::str::FromStr;

use crate::error::{echoed, Error, NotationError, Result, Row};

/// The most pits per side any rule set supports.
pub const MAX_PITS: usize = 8;
/// The most stones a board may hold: pits are bytes, and sowing must never
/// overflow one.
pub const MAX_STONES: u32 = 255;

/// A board seen from the player to move.
///
/// Small and `Copy` on purpose: the solver creates billions of them. Cells
/// beyond `2P` are always zero, so the derived `Eq` and `Hash` are exact.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Position {
    cells: [u8; 2 * MAX_PITS],
    pits: u8,
}

impl Position {
    /// A position with `pits` pits per side and every pit empty.
    ///
    /// # Panics
    /// If `pits` is not in `1..=MAX_PITS`; callers validate user input with
    /// [`Position::from_counts`] or [`Position::parse`].
    pub fn empty(pits: usize) -> Self {
        assert!((1..=MAX_PITS).contains(&pits), "pits per side out of range");
        Position {
            cells: [0; 2 * MAX_PITS],
            pits: pits as u8,
        }
    }

    /// Builds a position from `2P` counts in sowing order (mover's row first).
    pub fn from_counts(pits: usize, counts: &[u32]) -> Result<Self> {
        if !(1..=MAX_PITS).contains(&pits) {
            return Err(NotationError::Pits { pits }.into());
        }
        if counts.len() != 2 * pits {
            return Err(NotationError::Counts {
                pits,
                found: counts.len(),
            }
            .into());
        }
        let mut pos = Position::empty(pits);
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total > MAX_STONES as u64 {
            return Err(NotationError::TooManyStones {
                stones: total,
                max: MAX_STONES,
            }
            .into());
        }
        for (cell, &c) in pos.cells.iter_mut().zip(counts) {
            *cell = c as u8;
        }
        Ok(pos)
    }

    /// The position whose mover's row is `mover` and opponent's row
    /// `opponent`, in sowing order: how solvers that walk a level as pairs
    /// of rows make positions (their rows come from the level, so their
    /// counts are in range).
    ///
    /// # Panics
    /// If the rows differ in length or their length is not in
    /// `1..=MAX_PITS`.
    #[inline]
    pub fn from_rows(mover: &[u8], opponent: &[u8]) -> Self {
        let pits = mover.len();
        assert!(
            opponent.len() == pits && (1..=MAX_PITS).contains(&pits),
            "rows of {pits} and {} pits",
            opponent.len()
        );
        let mut pos = Position {
            cells: [0; 2 * MAX_PITS],
            pits: pits as u8,
        };
        pos.cells[..pits].copy_from_slice(mover);
        pos.cells[pits..2 * pits].copy_from_slice(opponent);
        pos
    }

    /// The start position with `seeds` stones in every pit.
    pub fn start(pits: usize, seeds: u32) -> Result<Self> {
        Position::from_counts(pits, &vec![seeds; 2 * pits])
    }

    /// Parses the `docs/RULES.md` notation, e.g. `4,4,4,4,4,4/4,4,4,4,4,4`.
    ///
    /// Each row must have exactly `pits` counts; whitespace around numbers is
    /// allowed; nothing is silently repaired.
    pub fn parse(pits: usize, text: &str) -> Result<Self> {
        match Position::parse_plain(pits, text) {
            Some(pos) => Ok(pos),
            None => Position::parse_checked(pits, text),
        }
    }

    /// The fast path of [`Position::parse`], for batches of millions of
    /// lines: well-formed text of digits, commas, one slash and ASCII
    /// spaces or tabs. Anything else (including every error) is left to
    /// [`Position::parse_checked`], which names the problem.
    fn parse_plain(pits: usize, text: &str) -> Option<Position> {
        if !(1..=MAX_PITS).contains(&pits) {
            return None;
        }
        let mut pos = Position::empty(pits);
        let (mut pit, mut count, mut digits, mut total) = (0usize, 0u32, 0u32, 0u32);
        let mut spaced = false; // a blank after this field's digits
        for &b in text.as_bytes() {
            match b {
                b'0'..=b'9' if !spaced && digits < 3 => {
                    count = count * 10 + u32::from(b - b'0');
                    digits += 1;
                }
                b' ' | b'\t' => spaced = digits > 0,
                b',' | b'/' => {
                    let row_ends = pit + 1 == pits;
                    if digits == 0 || pit + 1 >= 2 * pits || row_ends != (b == b'/') {
                        return None;
                    }
                    pos.cells[pit] = count as u8;
                    total += count;
                    (pit, count, digits, spaced) = (pit + 1, 0, 0, false);
                }
                _ => return None,
            }
        }
        if digits == 0 || pit + 1 != 2 * pits {
            return None;
        }
        pos.cells[pit] = count as u8;
        (total + count <= MAX_STONES).then_some(pos)
    }

    /// [`Position::parse`] with a precise error for every malformed text.
    fn parse_checked(pits: usize, text: &str) -> Result<Self> {
        let mut rows = text.trim().split('/');
        let (Some(mover), Some(opponent), None) = (rows.next(), rows.next(), rows.next()) else {
            return Err(NotationError::Rows {
                text: echoed(text).into_owned(),
                pits,
            }
            .into());
        };
        // Batches parse millions of lines: no allocation unless it fails.
        let mut counts = [0u32; 2 * MAX_PITS];
        let mut filled = 0;
        for (side, row) in [(Row::Mover, mover), (Row::Opponent, opponent)] {
            // Every field must be a count before the fields are counted:
            // `4;4,…` is a field that is not a count, not a row of too few
            // pits.
            let mut fields = 0;
            for field in row.split(',') {
                let field = field.trim();
                if field.is_empty() {
                    return Err(NotationError::EmptyCount {
                        text: echoed(text).into_owned(),
                        row: side,
                    }
                    .into());
                }
                let count: u32 = field
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| field.parse().ok())
                    .flatten()
                    .ok_or_else(|| NotationError::NotACount {
                        text: echoed(text).into_owned(),
                        row: side,
                        field: echoed(field).into_owned(),
                    })?;
                if let Some(slot) = counts.get_mut(filled) {
                    *slot = count;
                }
                filled += 1;
                fields += 1;
            }
            if fields != pits {
                return Err(NotationError::PitCount {
                    text: echoed(text).into_owned(),
                    row: side,
                    found: fields,
                    expected: pits,
                }
                .into());
            }
        }
        Position::from_counts(pits, &counts[..filled.min(2 * MAX_PITS)])
    }

    /// Pits per side (`P`).
    #[inline]
    pub fn pits(&self) -> usize {
        self.pits as usize
    }

    /// All `2P` pit counts in sowing order.
    #[inline]
    pub fn cells(&self) -> &[u8] {
        &self.cells[..2 * self.pits as usize]
    }

    /// Mutable access to the `2P` counts, for move generation.
    #[inline]
    pub(crate) fn cells_mut(&mut self) -> &mut [u8] {
        let len = 2 * self.pits as usize;
        &mut self.cells[..len]
    }

    /// The counts as one 128-bit number, pit `i` in byte `i` (the bytes
    /// beyond `2P` are zero): move generation adds a whole sowing at once.
    #[inline]
    pub(crate) fn board_bits(&self) -> u128 {
        u128::from_le_bytes(self.cells)
    }

    /// The position of the same pits whose counts are `bits`
    /// ([`Position::board_bits`]; the bytes beyond `2P` must be zero).
    #[inline]
    pub(crate) fn with_board_bits(&self, bits: u128) -> Position {
        Position {
            cells: bits.to_le_bytes(),
            pits: self.pits,
        }
    }

    /// The count in pit `i` (`0..2P`).
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        self.cells[i] as u32
    }

    /// Stones on the whole board: the position's level.
    #[inline]
    pub fn stones(&self) -> u32 {
        self.cells().iter().map(|&c| c as u32).sum()
    }

    /// Stones in the mover's row.
    #[inline]
    pub fn mover_stones(&self) -> u32 {
        self.cells[..self.pits as usize]
            .iter()
            .map(|&c| c as u32)
            .sum()
    }

    /// Stones in the opponent's row.
    #[inline]
    pub fn opponent_stones(&self) -> u32 {
        self.stones() - self.mover_stones()
    }

    /// The same board seen from the other player (rows swapped).
    ///
    /// Done as one 128-bit rotation of the low `2P` bytes (the rest are
    /// zero): this runs once per generated move, where two variable-length
    /// slice copies would each cost a `memcpy` call.
    #[inline]
    pub fn flipped(&self) -> Position {
        let row_bits = 8 * self.pits as u32;
        let board = u128::from_le_bytes(self.cells);
        let swapped = if row_bits == 64 {
            board.rotate_right(64)
        } else {
            let board_mask = (1u128 << (2 * row_bits)) - 1;
            ((board >> row_bits) | (board << row_bits)) & board_mask
        };
        Position {
            cells: swapped.to_le_bytes(),
            pits: self.pits,
        }
    }

    /// A picture for humans: the opponent's row on top, reversed so the board
    /// reads counterclockwise, with pit letters and the mover's row below.
    pub fn picture(&self) -> String {
        let p = self.pits();
        let cell = |i: usize| format!("{:>3}", self.cells[i]);
        let letter = |i: usize| format!("{:>3}", pit_letter(i));
        let top_letters: String = (p..2 * p).rev().map(letter).collect();
        let top: String = (p..2 * p).rev().map(cell).collect();
        let bottom: String = (0..p).map(cell).collect();
        let bottom_letters: String = (0..p).map(letter).collect();
        format!(
            "   {top_letters}   (opponent)\n  +{rule}-+\n  |{top} |\n  |{bottom} |\n  +{rule}-+\n   {bottom_letters}   (to move)",
            rule = "-".repeat(3 * p)
        )
    }
}

/// The letter naming pit `i` (`a` = mover's first pit).
pub fn pit_letter(i: usize) -> char {
    (b'a' + i as u8) as char
}

impl Position {
    /// Appends the `docs/RULES.md` notation to `out`: the batch form of `Display`,
    /// without the formatting machinery (batches print millions).
    pub fn write_notation(&self, out: &mut String) {
        let p = self.pits();
        for (i, &c) in self.cells().iter().enumerate() {
            if i == p {
                out.push('/');
            } else if i > 0 {
                out.push(',');
            }
            push_decimal(out, c as u32);
        }
    }
}

/// Appends `n` in decimal.
pub fn push_decimal(out: &mut String, n: u32) {
    if n >= 10 {
        push_decimal(out, n / 10);
    }
    out.push((b'0' + (n % 10) as u8) as char);
}

impl fmt::Display for Position {
    /// The `docs/RULES.md` notation, which [`Position::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(4 * self.cells().len());
        self.write_notation(&mut text);
        f.write_str(&text)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({self})")
    }
}

impl FromStr for Position {
    type Err = Error;

    /// Parses a position whose pits per side follow from the text itself.
    fn from_str(text: &str) -> Result<Self> {
        let pits = text
            .split('/')
            .next()
            .map(|row| row.split(',').count())
            .unwrap_or(0);
        Position::parse(pits, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// The fast path accepts only what the checked parser accepts, and
        /// reads it the same.
        #[test]
        fn the_fast_path_agrees_with_the_checked_parser(
            pits in 1usize..=8,
            text in "[0-9 ,/\t]{0,40}",
        ) {
            if let Some(fast) = Position::parse_plain(pits, &text) {
                prop_assert_eq!(Position::parse_checked(pits, &text).ok(), Some(fast));
            }
        }

        /// Every position's notation takes the fast path.
        #[test]
        fn notation_takes_the_fast_path(
            pits in 1usize..=8,
            counts in proptest::collection::vec(0u32..20, 16),
        ) {
            let pos = Position::from_counts(pits, &counts[..2 * pits]).unwrap();
            prop_assert_eq!(Position::parse_plain(pits, &pos.to_string()), Some(pos));
            let spaced = pos.to_string().replace(',', " , ").replace('/', "\t/ ");
            prop_assert_eq!(Position::parse_plain(pits, &spaced), Some(pos));
        }
    }
}
