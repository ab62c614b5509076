//! Value encodings: what the entries of an even table stand for, how a
//! writer chooses them, and how a reader gets every value back.
//!
//! Each encoding is one file implementing [`ValueEncoding`]; [`Encoding`]
//! names them at run time (a tablebase may hold levels of both) and
//! dispatches to them. Adding an encoding is a new file here, a variant of
//! [`Encoding`] and its arm in the `with_encoding!` macro; the header names it by
//! the string its file chooses, and no reader outside this module needs to
//! know it exists.
//!
//! - [`Full`] (`--encoding full`, the default): every entry is its value.
//! - [`Compact`] (`--encoding compact`): an entry is at most its value,
//!   which a reader restores by a search of a few moves.
//!
//! Forced tables always store their symbols in full.

mod compact;
mod full;

use mancala_core::{Move, Position, Rules};

use crate::codec::Model;
use crate::kind::Even;
use crate::levels::Levels;

pub use compact::{free_entries, unreachable_by_moves, Compact};
#[allow(unused_imports)]
pub(crate) use compact::{MoverContexts, Restoring, MOVER_CAP};
pub use full::Full;

/// How an even table stores its values (`build --encoding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Values that a search of the position's restoring moves gives back
    /// are stored as cheaper entries ([`Compact`]).
    Compact,
    /// Every value stored as it is ([`Full`]): the fastest probes.
    #[default]
    Full,
}

/// What the coding model of a table conditions on besides the previous
/// symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContextModel {
    /// Nothing: the plain order-1 model.
    Uniform,
    /// The stones on the mover's side (`MoverContexts`).
    Mover,
}

/// A solved even level, as an encoding's writer sees it.
#[derive(Clone, Copy)]
pub struct SolvedValues<'a> {
    /// The rule set.
    pub rules: Rules,
    /// Stones on the board.
    pub level: u32,
    /// Every position's value, in index order.
    pub values: &'a [i8],
    /// Per position, whether its value is that of its best restoring exit
    /// (a move that leaves the level without an extra turn: see
    /// [`Compact`]) or its terminal value: what the compact encoding needs
    /// (`None`: not marked, and only the full encoding can be written).
    pub exit_best: Option<&'a [bool]>,
}

/// What a writer stores for a level: the entries, and the model that codes
/// them in their contexts.
pub struct ChosenEntries<'a> {
    /// One entry per position, in index order (the values themselves when
    /// the encoding stores them as they are).
    pub entries: std::borrow::Cow<'a, [i8]>,
    /// The contexts the model conditions on.
    pub contexts: ContextModel,
    /// The model fitted to the entries.
    pub(crate) model: Model,
}

/// Where a reader gets entries while it restores a value: a tablebase's
/// cache, or levels decoded whole for a batch.
pub trait EntryReader: Sync {
    /// What reading an entry can fail with.
    type Error;

    /// The entry stored for `pos`.
    fn entry(&self, pos: &Position) -> Result<i32, Self::Error>;

    /// The entries stored for the children of `moves`, into `out`: one
    /// call for all of a position's moves, so that a reader may overlap
    /// their reads (each is a likely cache miss).
    #[inline]
    fn child_entries(&self, moves: &[Move], out: &mut [i32]) -> Result<(), Self::Error> {
        for (m, out) in moves.iter().zip(out) {
            *out = self.entry(&m.child)?;
        }
        Ok(())
    }

    /// The value of `pos` given its entry, as far as `window` needs it, by
    /// the encoding of `pos`'s level: how a search goes on into a child.
    fn value(&self, pos: &Position, entry: i32, window: Window) -> Result<i32, Self::Error>;
}

/// One value encoding: its writer and its two readers.
pub(crate) trait ValueEncoding {
    /// Positions per block unless a build says otherwise: a probe decodes
    /// half a block on average, and each block costs 16 bytes of framing.
    fn default_block_size() -> u32;

    /// Whether the encoding can store tables of `rules`.
    fn applies_to(rules: &Rules) -> bool;

    /// The header's name of the encoding with `contexts`, if it codes its
    /// entries that way.
    fn name(contexts: ContextModel) -> Option<&'static str>;

    /// The contexts a header's encoding name stands for, if it is one of
    /// this encoding's.
    fn contexts_of(name: &str) -> Option<ContextModel>;

    /// The entries to store for a solved level, coded in blocks of
    /// `block_size`.
    fn choose(level: SolvedValues<'_>, block_size: usize) -> ChosenEntries<'_>;

    /// Whether every entry is its value: then readers need not search.
    fn entries_are_values() -> bool;

    /// The value of `pos`, whose entry is `entry`, as far as `window`
    /// needs it; `reader` supplies other positions' entries.
    fn value<R: EntryReader>(
        rules: &Rules,
        reader: &R,
        pos: &Position,
        entry: i32,
        window: Window,
    ) -> Result<i32, R::Error>;

    /// Turns the decoded entries of level `n`, in `entries`, into its
    /// values; `lower` holds the values of the levels below.
    fn restore(rules: &Rules, n: u32, entries: &mut [i8], lower: &Levels<Even>);
}

/// Runs `$call` with `$E` bound to the implementation of `$encoding`: the
/// one place that lists the encodings.
macro_rules! with_encoding {
    ($encoding:expr, $E:ident => $call:expr) => {
        match $encoding {
            Encoding::Full => {
                type $E = full::Full;
                $call
            }
            Encoding::Compact => {
                type $E = compact::Compact;
                $call
            }
        }
    };
}

/// Names of compact encodings of earlier versions, refused with a request
/// to rebuild rather than read wrongly.
const EARLIER_NAMES: [&str; 2] = ["rans-order1-11-exits-omitted", "rans-order1-11-one-ply"];

impl Encoding {
    /// Every encoding.
    pub const ALL: [Encoding; 2] = [Encoding::Full, Encoding::Compact];

    /// The name on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            Encoding::Full => "full",
            Encoding::Compact => "compact",
        }
    }

    /// The encoding of a name written by [`Encoding::cli_name`].
    pub fn from_cli_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.cli_name() == name)
    }

    /// Positions per block unless a build says otherwise.
    pub fn default_block_size(self) -> u32 {
        with_encoding!(self, E => E::default_block_size())
    }

    /// Whether the encoding can store tables of `rules`.
    pub fn applies_to(self, rules: &Rules) -> bool {
        with_encoding!(self, E => E::applies_to(rules))
    }

    /// The entries to store for a solved level.
    pub fn choose(self, level: SolvedValues<'_>, block_size: usize) -> ChosenEntries<'_> {
        with_encoding!(self, E => E::choose(level, block_size))
    }

    /// Whether every entry is its value.
    #[inline]
    pub fn entries_are_values(self) -> bool {
        with_encoding!(self, E => E::entries_are_values())
    }

    /// The value of `pos` from its entry (see `ValueEncoding::value`).
    #[inline]
    pub fn value<R: EntryReader>(
        self,
        rules: &Rules,
        reader: &R,
        pos: &Position,
        entry: i32,
        window: Window,
    ) -> Result<i32, R::Error> {
        with_encoding!(self, E => E::value(rules, reader, pos, entry, window))
    }

    /// Restores the values of a decoded level (see
    /// `ValueEncoding::restore`).
    pub fn restore(self, rules: &Rules, n: u32, entries: &mut [i8], lower: &Levels<Even>) {
        with_encoding!(self, E => E::restore(rules, n, entries, lower))
    }

    /// The header's name of this encoding with `contexts`.
    pub(crate) fn name(self, contexts: ContextModel) -> Option<&'static str> {
        with_encoding!(self, E => E::name(contexts))
    }

    /// The encoding and contexts a header names.
    pub(crate) fn from_name(name: &str) -> Result<(Encoding, ContextModel), String> {
        if EARLIER_NAMES.contains(&name) {
            return Err(format!(
                "value encoding '{name}' was written by an earlier version; rebuild the table"
            ));
        }
        Encoding::ALL
            .into_iter()
            .find_map(|e| with_encoding!(e, E => E::contexts_of(name)).map(|c| (e, c)))
            .ok_or_else(|| format!("unknown value encoding '{name}'"))
    }
}

/// What a search must learn of a value `v`: `v` itself if `alpha < v <
/// beta`, otherwise only on which side it lies. A search returns `r = v`
/// inside the window, some `r >= beta` if `v >= beta`, and some `r <=
/// alpha` if `v <= alpha`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Values at most this need only be known to be at most it.
    pub alpha: i32,
    /// Values at least this need only be known to be at least it.
    pub beta: i32,
}

impl Window {
    /// Every value is needed exactly.
    pub const ALL: Window = Window {
        alpha: i32::MIN / 2,
        beta: i32::MAX / 2,
    };
}
