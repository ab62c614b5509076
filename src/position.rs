//! Positions and their text notation.
//!
//! A [`Position`] is the board seen from the player to move (RULES.md): pits
//! `0..P` are the mover's row, pits `P..2P` the opponent's, both in sowing
//! order. Stores and captured stones are not part of it.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

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
            return Err(Error::Notation(format!(
                "pits per side must be 1..={MAX_PITS}, got {pits}"
            )));
        }
        if counts.len() != 2 * pits {
            return Err(Error::Notation(format!(
                "expected {} pit counts ({} per side), got {}",
                2 * pits,
                pits,
                counts.len()
            )));
        }
        let mut pos = Position::empty(pits);
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total > MAX_STONES as u64 {
            return Err(Error::Notation(format!(
                "the board holds {total} stones; at most {MAX_STONES} are supported"
            )));
        }
        for (cell, &c) in pos.cells.iter_mut().zip(counts) {
            *cell = c as u8;
        }
        Ok(pos)
    }

    /// The start position with `seeds` stones in every pit.
    pub fn start(pits: usize, seeds: u32) -> Result<Self> {
        Position::from_counts(pits, &vec![seeds; 2 * pits])
    }

    /// Parses the RULES.md notation, e.g. `4,4,4,4,4,4/4,4,4,4,4,4`.
    ///
    /// Each row must have exactly `pits` counts; whitespace around numbers is
    /// allowed; nothing is silently repaired.
    pub fn parse(pits: usize, text: &str) -> Result<Self> {
        let rows: Vec<&str> = text.trim().split('/').collect();
        if rows.len() != 2 {
            return Err(Error::Notation(format!(
                "'{text}': expected two rows separated by one '/', e.g. {}",
                Position::start(pits.clamp(1, MAX_PITS), 4).expect("valid start")
            )));
        }
        let mut counts = Vec::with_capacity(2 * pits);
        for (side, row) in ["mover's", "opponent's"].iter().zip(&rows) {
            let fields: Vec<&str> = row.split(',').collect();
            if fields.len() != pits {
                return Err(Error::Notation(format!(
                    "'{text}': the {side} row has {} pits, expected {pits}",
                    fields.len()
                )));
            }
            for field in fields {
                let field = field.trim();
                if field.is_empty() {
                    return Err(Error::Notation(format!(
                        "'{text}': the {side} row has an empty count"
                    )));
                }
                let count: u32 = field
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| field.parse().ok())
                    .flatten()
                    .ok_or_else(|| {
                        Error::Notation(format!(
                            "'{text}': '{field}' in the {side} row is not a stone count"
                        ))
                    })?;
                counts.push(count);
            }
        }
        Position::from_counts(pits, &counts)
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

impl fmt::Display for Position {
    /// The RULES.md notation, which [`Position::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.pits();
        for (i, c) in self.cells().iter().enumerate() {
            if i == p {
                f.write_str("/")?;
            } else if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
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
