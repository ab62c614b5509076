//! The two kinds of table as types: even values ([`Even`]) and forced
//! bounds ([`Forced`]).
//!
//! Code that reads or writes tables is generic over [`TableKind`], so a
//! forced table can never be read where even values are expected: inside
//! the code that is a type error, and only at the file boundary, where a
//! header names its kind, is it a runtime check
//! ([`crate::FormatError::WrongKind`]).

use std::fmt::{Debug, Display};

use mancala_core::{Bounds, Cycles, LevelIndex};
use rayon::prelude::*;

use crate::error::FormatError;
use crate::file::Table;
use crate::levels::Levels;
use crate::order::Order;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Even {}
    impl Sealed for super::Forced {}
}

/// A kind of table: what a position stores and how it is written as
/// symbols (signed bytes), [`TableKind::WIDTH`] per position, in index
/// order. Decoded levels hold exactly these symbols ([`crate::Levels`]).
pub trait TableKind: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {
    /// What one position stores.
    type Entry: Copy + PartialEq + Debug + Display + Send + Sync;

    /// The header's name of the kind.
    const CYCLES: Cycles;

    /// Symbols stored per position.
    const WIDTH: usize;

    /// The entry of a position of level `n` from its symbols, which a
    /// table of this kind wrote (no check: lower levels held by a build
    /// or a verification were checked when they were decoded).
    fn read(n: u32, symbols: &[i8]) -> Self::Entry;

    /// The entry of a position of level `n` from its symbols, or `None` if
    /// they are not an entry of that level (a damaged table).
    fn decode(n: u32, symbols: &[i8]) -> Option<Self::Entry>;

    /// Writes the symbols of `entry`, of a position of level `n`, into
    /// `out` (exactly [`TableKind::WIDTH`] symbols).
    fn encode(n: u32, entry: Self::Entry, out: &mut [i8]);

    /// Turns `symbols`, decoded from `table`, into its level's entries:
    /// restores the values a compact table left to its reader (even), or
    /// checks that every pair is bounds of the level (forced). `lower`
    /// holds the levels below; the symbols are in `order`, which only a
    /// table whose entries are values may be in other than by rank (then
    /// there is nothing to restore), and which an error's index is given
    /// back in by rank, as the table stores it.
    fn complete(
        table: &Table<Self>,
        symbols: &mut [i8],
        order: Order,
        lower: &Levels<Self>,
    ) -> Result<(), FormatError>;
}

/// Symbols per position of the tables of `cycles` ([`TableKind::WIDTH`]
/// of its kind), for code that knows the kind only as a value.
pub fn symbols_per_position(cycles: Cycles) -> usize {
    match cycles {
        Cycles::Even => Even::WIDTH,
        Cycles::Forced => Forced::WIDTH,
    }
}

/// Tables of one value per position, endless play an even split
/// (`--cycles even`): the value itself is the symbol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Even;

/// Tables of the forced bounds (`--cycles forced`): two symbols per
/// position, `forced_mover` and minus the gap `n − forced_mover −
/// forced_opponent`, so that a table's histogram counts the positions
/// whose bounds do not meet among its negative symbols.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Forced;

impl TableKind for Even {
    type Entry = i8;
    const CYCLES: Cycles = Cycles::Even;
    const WIDTH: usize = 1;

    #[inline]
    fn read(_n: u32, symbols: &[i8]) -> i8 {
        symbols[0]
    }

    fn decode(n: u32, symbols: &[i8]) -> Option<i8> {
        let value = symbols[0];
        (value as i32).unsigned_abs().le(&n).then_some(value)
    }

    fn encode(_n: u32, entry: i8, out: &mut [i8]) {
        out[0] = entry;
    }

    fn complete(
        table: &Table<Even>,
        symbols: &mut [i8],
        order: Order,
        lower: &Levels<Even>,
    ) -> Result<(), FormatError> {
        debug_assert!(order == Order::Rank || table.entries_are_values());
        let header = table.header();
        header
            .encoding
            .restore(&header.rules, header.level, symbols, lower);
        Ok(())
    }
}

impl TableKind for Forced {
    type Entry = Bounds;
    const CYCLES: Cycles = Cycles::Forced;
    const WIDTH: usize = 2;

    #[inline]
    fn read(n: u32, symbols: &[i8]) -> Bounds {
        let (mover, gap) = (symbols[0] as i32, -(symbols[1] as i32));
        Bounds {
            mover: mover as u8,
            opponent: (n as i32 - mover - gap) as u8,
        }
    }

    fn decode(n: u32, symbols: &[i8]) -> Option<Bounds> {
        let (mover, gap) = (symbols[0] as i32, -(symbols[1] as i32));
        let opponent = n as i32 - mover - gap;
        let fits = |x: i32| (0..=n as i32).contains(&x);
        (fits(mover) && fits(gap) && fits(opponent)).then_some(Bounds {
            mover: mover as u8,
            opponent: opponent as u8,
        })
    }

    fn encode(n: u32, bounds: Bounds, out: &mut [i8]) {
        let gap = n as i32 - bounds.mover as i32 - bounds.opponent as i32;
        debug_assert!(gap >= 0, "bounds {bounds:?} exceed {n} stones");
        out[0] = bounds.mover as i8;
        out[1] = -gap as i8;
    }

    fn complete(
        table: &Table<Forced>,
        symbols: &mut [i8],
        order: Order,
        _: &Levels<Forced>,
    ) -> Result<(), FormatError> {
        let header = table.header();
        let n = header.level;
        let bad = symbols
            .par_chunks(Forced::WIDTH)
            .position_first(|pair| Forced::decode(n, pair).is_none());
        match bad {
            Some(at) => {
                let pos = LevelIndex::new(header.rules.pits(), n).unrank(at as u64);
                // Flipping is its own inverse: the entry at the flipped
                // rank of `pos` is that of the position `pos` flips to.
                let stored = order.index(&pos);
                let what = format!("impossible bounds stored for index {stored}");
                Err(table.corrupted(what))
            }
            None => Ok(()),
        }
    }
}
