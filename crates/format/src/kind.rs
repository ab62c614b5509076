//! The kinds of table as types: even values ([`Even`]), forced bounds
//! ([`Forced`]), and the depths to conversion that realize either
//! ([`Depth`], [`Depth<Forced>`]).
//!
//! Code that reads or writes tables is generic over [`TableKind`], so a
//! forced table can never be read where even values are expected: inside
//! the code that is a type error, and only at the file boundary, where a
//! header names its kind, is it a runtime check
//! ([`crate::FormatError::WrongKind`]).

use std::fmt::{Debug, Display};
use std::marker::PhantomData;

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
    impl<V: super::Realized> Sealed for super::Depth<V> {}
}

/// What a kind of table stores of each position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stores {
    /// Its value, or its forced bounds.
    Values,
    /// Its depth to conversion (`docs/RULES.md`), beside a table of values.
    Depths,
}

/// A kind of table as a value, for code that meets it in a header: its
/// cycle convention and what it stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindId {
    /// The cycle convention of the values (or of the values the depths
    /// realize).
    pub cycles: Cycles,
    /// What it stores.
    pub stores: Stores,
}

/// The header's name of a depth table's kind after its cycles' name
/// ("depth to conversion"; an earlier layout, two symbols a position
/// everywhere, was named `-depth`).
const DEPTH_SUFFIX: &str = "-dtc";

impl KindId {
    /// The name in file headers: the cycles' name, with `-dtc` for
    /// depths.
    pub fn name(self) -> String {
        match self.stores {
            Stores::Values => self.cycles.name().to_string(),
            Stores::Depths => format!("{}{DEPTH_SUFFIX}", self.cycles.name()),
        }
    }

    /// Parses a name written by [`KindId::name`].
    pub fn from_name(name: &str) -> Result<KindId, String> {
        let (cycles, stores) = match name.strip_suffix(DEPTH_SUFFIX) {
            Some(cycles) => (cycles, Stores::Depths),
            None => (name, Stores::Values),
        };
        let cycles = Cycles::from_name(cycles).map_err(|e| e.to_string())?;
        Ok(KindId { cycles, stores })
    }

    /// Symbols per position of the tables of this kind
    /// ([`TableKind::WIDTH`]).
    pub fn symbols_per_position(self) -> usize {
        match self.stores {
            Stores::Values => symbols_per_position(self.cycles),
            Stores::Depths => Depth::<Even>::WIDTH,
        }
    }
}

impl Display for KindId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.stores {
            Stores::Values => write!(f, "{}", self.cycles),
            Stores::Depths => write!(f, "depths to conversion of {}", self.cycles),
        }
    }
}

/// A kind of table: what a position stores and how it is written as
/// symbols (signed bytes), [`TableKind::WIDTH`] per position, in index
/// order. Decoded levels hold exactly these symbols ([`crate::Levels`]).
pub trait TableKind: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {
    /// What one position stores.
    type Entry: Copy + PartialEq + Debug + Display + Send + Sync;

    /// The cycle convention of the kind's values.
    const CYCLES: Cycles;

    /// What the kind stores.
    const STORES: Stores = Stores::Values;

    /// The kind as a value.
    fn id() -> KindId {
        KindId {
            cycles: Self::CYCLES,
            stores: Self::STORES,
        }
    }

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

/// Depth tables (`docs/RULES.md`, "Depth to conversion"; `docs/FORMAT.md`,
/// "Depth tables") of the values of kind `V`: [`Depth`] (of [`Even`]
/// values) or `Depth<Forced>`. One symbol a position, which counts only
/// where the mover has something to realize: where he is ahead (even), or
/// where his forced bound is not 0 (forced). Everywhere else a reader
/// derives the depth from the values one ply deep ([`crate::depth_of`],
/// [`crate::forced_opponent_depth`]), so the writer stores there whatever codes
/// cheapest. A depth of [`Depth::LONG_PLIES`] or more is stored as
/// [`StoredDepth::Long`] and found in the header's list of long depths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Depth<V: Realized = Even>(PhantomData<V>);

/// A kind of values depth tables are written for: [`Even`] or [`Forced`].
pub trait Realized: TableKind {
    /// Whether a depth table stores the depth of a position whose entry
    /// starts with `symbols`: where its mover has a value to realize.
    fn stores_depth(symbols: &[i8]) -> bool;
}

impl Realized for Even {
    /// Where the mover is ahead.
    fn stores_depth(symbols: &[i8]) -> bool {
        crate::depth::stores_depth(symbols[0].into())
    }
}

impl Realized for Forced {
    /// Where the mover can force some stones (the first symbol is his
    /// bound).
    fn stores_depth(symbols: &[i8]) -> bool {
        symbols[0] > 0
    }
}

/// A position's depth to conversion, in plies: `None` where it has none
/// (a position worth 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Plies(pub Option<u16>);

impl Display for Plies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(plies) => write!(f, "{plies}"),
            None => f.write_str("none"),
        }
    }
}

/// What a depth table's symbol says, read as a depth: meaningful only
/// where the mover is ahead ([`Depth`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredDepth {
    /// The depth, below [`Depth::LONG_PLIES`].
    Plies(u16),
    /// A depth of [`Depth::LONG_PLIES`] or more, in the header's list
    /// ([`crate::Header::long_depths`]).
    Long,
}

impl Display for StoredDepth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoredDepth::Plies(plies) => write!(f, "{plies}"),
            StoredDepth::Long => write!(f, "{} or more", Depth::LONG_PLIES),
        }
    }
}

impl Depth {
    /// Depths from this one on are stored in the header's list: the
    /// symbols `−127..=126` hold the depths `0..=253`, and `127` says
    /// "long".
    pub const LONG_PLIES: u16 = 254;
    /// The longest depth a table can store (a solver keeps the two
    /// 16-bit values above it for "longer" and "none").
    pub const MAX_PLIES: u16 = u16::MAX - 2;
    /// The most long depths one level's header may list.
    pub const MAX_LONG: usize = 1 << 16;
    /// The symbol of [`StoredDepth::Long`].
    const LONG_SYMBOL: i8 = i8::MAX;
}

impl<V: Realized> TableKind for Depth<V> {
    type Entry = StoredDepth;
    const CYCLES: Cycles = V::CYCLES;
    const STORES: Stores = Stores::Depths;
    const WIDTH: usize = 1;

    #[inline]
    fn read(_n: u32, symbols: &[i8]) -> StoredDepth {
        match symbols[0] {
            Depth::LONG_SYMBOL => StoredDepth::Long,
            symbol => StoredDepth::Plies((i16::from(symbol) + 127) as u16),
        }
    }

    /// Every symbol a codec can give is a stored depth (−128 never is).
    fn decode(n: u32, symbols: &[i8]) -> Option<StoredDepth> {
        (symbols[0] != i8::MIN).then(|| Self::read(n, symbols))
    }

    /// # Panics
    ///
    /// If a depth of [`Depth::LONG_PLIES`] or more is not
    /// [`StoredDepth::Long`].
    fn encode(_n: u32, stored: StoredDepth, out: &mut [i8]) {
        out[0] = match stored {
            StoredDepth::Plies(plies) => {
                assert!(
                    plies < Depth::LONG_PLIES,
                    "a depth of {plies} plies stored short"
                );
                (i16::from(plies as u8) - 127) as i8
            }
            StoredDepth::Long => Depth::LONG_SYMBOL,
        };
    }

    fn complete(
        table: &Table<Depth<V>>,
        symbols: &mut [i8],
        _order: Order,
        _: &Levels<Depth<V>>,
    ) -> Result<(), FormatError> {
        match symbols.par_iter().position_first(|&s| s == i8::MIN) {
            Some(at) => Err(table.corrupted(format!("an impossible depth stored for index {at}"))),
            None => Ok(()),
        }
    }
}
