//! The full encoding: every entry is its position's value, coded in the
//! plain order-1 model. Probes read one entry; nothing is searched.

use mancala_core::{Position, Rules};

use super::{ChosenEntries, ContextModel, EntryReader, SolvedValues, ValueEncoding, Window};
use crate::codec::{Model, Uniform};
use crate::kind::Even;
use crate::levels::Levels;

/// Every value stored as it is.
pub struct Full;

/// The header's name: order-1 rANS with 11-bit probabilities.
const NAME: &str = "rans-order1-11";
/// The header's name with the mover's-stones contexts
/// ([`super::MoverContexts`]), which depth tables use.
const NAME_MOVER: &str = "rans-order1-mover-11";

impl ValueEncoding for Full {
    /// A cold probe, and a batch with few probes a block, decode half a
    /// block at a few nanoseconds a value, and each block costs 16 bytes
    /// of framing (index entry and rANS states): 768 keeps both small
    /// (`bench/runs/2026-12-01-block-size` has the measured trade-off). A
    /// warm probe reads the decoded block from the cache, whatever its
    /// size.
    fn default_block_size() -> u32 {
        768
    }

    fn applies_to(_: &Rules) -> bool {
        true
    }

    fn name(contexts: ContextModel) -> Option<&'static str> {
        match contexts {
            ContextModel::Uniform => Some(NAME),
            ContextModel::Mover => Some(NAME_MOVER),
        }
    }

    fn contexts_of(name: &str) -> Option<ContextModel> {
        match name {
            NAME => Some(ContextModel::Uniform),
            NAME_MOVER => Some(ContextModel::Mover),
            _ => None,
        }
    }

    fn choose(level: SolvedValues<'_>, block_size: usize) -> ChosenEntries<'_> {
        ChosenEntries {
            entries: level.values.into(),
            contexts: ContextModel::Uniform,
            model: Model::fit(level.values, block_size, &Uniform),
        }
    }

    fn entries_are_values() -> bool {
        true
    }

    #[inline]
    fn value<R: EntryReader>(
        _: &Rules,
        _: &R,
        _: &Position,
        entry: i32,
        _: Window,
    ) -> Result<i32, R::Error> {
        Ok(entry)
    }

    fn restore(_: &Rules, _: u32, _: &mut [i8], _: &Levels<Even>) {}
}
