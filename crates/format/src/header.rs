//! The header of a table file: what the file says about itself, typed.
//!
//! On disk the header is a bincode record of strings and numbers
//! ([`RawHeader`], layout in `docs/FORMAT.md`); in memory it is a
//! [`Header`] whose rule set, kind and encoding are parsed and checked, so
//! no reader handles an unknown name past the file boundary.

use mancala_core::{Cycles, LevelIndex, Rules, Variant, MAX_LEVEL};
use rayon::prelude::*;

use crate::codec::{Model, ModelCounts, StoredModel, Uniform};
use crate::encoding::{ChosenEntries, ContextModel, Encoding, MoverContexts};
use crate::kind::{Depth, Even, Forced, KindId, Realized, StoredDepth, Stores, TableKind};

/// First bytes of every table file.
pub const MAGIC: &[u8; 8] = b"MANCALTB";
/// Last bytes of every complete table file.
pub const END_MARKER: &[u8; 4] = b"TBOK";
/// The format version this build writes and reads (`docs/FORMAT.md`,
/// "Versions").
pub(crate) const FORMAT_VERSION: u32 = 2;
/// The only index scheme so far: every composition, colex rank.
pub(crate) const INDEX_SCHEME: &str = "compositions-colex";
/// The largest block size: a group of 65,536 blocks must stay under 4 GiB
/// so that offsets within it fit 32 bits.
pub const MAX_BLOCK_SIZE: u32 = 1 << 14;
/// The most bytes a header may decode to (a level's model is at most 256
/// contexts per feature of 255 symbols).
pub(crate) const HEADER_LIMIT: usize = 1 << 20;

/// Depth tables of at least this many positions code their depths in the
/// mover's-stones contexts ([`Header::depth_counts`]).
pub(crate) const DEPTH_MOVER_MIN_POSITIONS: u64 = 1 << 22;

/// The contexts a depth table of level `level` is coded in.
fn depth_contexts(rules: &Rules, level: u32) -> ContextModel {
    if LevelIndex::new(rules.pits(), level).count() >= DEPTH_MOVER_MIN_POSITIONS {
        ContextModel::Mover
    } else {
        ContextModel::Uniform
    }
}

/// Everything a table file says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The rule set.
    pub rules: Rules,
    /// The cycle convention of the table's values (or of the values its
    /// depths realize).
    pub cycles: Cycles,
    /// What the table stores: values, or depths to conversion.
    pub stores: Stores,
    /// Stones on the board in every position of the table.
    pub level: u32,
    /// Positions in the level (every one is stored).
    pub positions: u64,
    /// What the entries stand for.
    pub encoding: Encoding,
    /// What the value model conditions on.
    pub contexts: ContextModel,
    /// Positions per block.
    pub block_size: u32,
    /// Number of blocks.
    pub block_count: u64,
    /// `(symbol, how often it is stored)`, ascending by symbol, zero counts
    /// left out: for even tables, positions per value.
    pub histogram: Vec<(i8, u64)>,
    /// The value model every block is coded with (`Model`).
    pub model: StoredModel,
    /// Depth tables: `(index, plies)` of each position whose stored depth
    /// is [`crate::StoredDepth::Long`], ascending by index; empty in
    /// other tables. Written after the record as a bincode record of its
    /// own, so that value tables are unchanged.
    pub long_depths: Vec<(u64, u16)>,
}

/// The header as bincode stores it: field order and strings are the file
/// format.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub(crate) struct RawHeader {
    variant: String,
    pits: u8,
    empty_capture: bool,
    cycles: String,
    level: u32,
    positions: u64,
    index_scheme: String,
    value_encoding: String,
    block_size: u32,
    block_count: u64,
    histogram: Vec<(i8, u64)>,
    model: StoredModel,
}

impl RawHeader {
    /// Whether a list of long depths follows the record: it names a depth
    /// table's kind.
    pub(crate) fn lists_long_depths(&self) -> bool {
        KindId::from_name(&self.cycles).is_ok_and(|kind| kind.stores == Stores::Depths)
    }

    /// The block count the record claims, unchecked.
    pub(crate) fn block_count(&self) -> u64 {
        self.block_count
    }
}

impl Header {
    /// The header of a table of kind `K` storing `symbols` as they are
    /// (the full encoding), the solved level `level` of `rules`, with the
    /// value model fitted to them.
    pub fn for_symbols<K: TableKind>(
        rules: &Rules,
        level: u32,
        symbols: &[i8],
        block_size: u32,
    ) -> Header {
        let counts = ModelCounts::count(symbols, 0, block_size as usize * K::WIDTH, &Uniform);
        Header::for_counts::<K>(rules, level, block_size, &counts)
    }

    /// The header of a depth table of values of kind `V` storing `symbols`
    /// (one a position) and listing `long_depths` ([`Header::long_depths`]).
    pub fn for_depths<V: Realized>(
        rules: &Rules,
        level: u32,
        symbols: &[i8],
        long_depths: Vec<(u64, u16)>,
        block_size: u32,
    ) -> Header {
        let counts = Header::depth_counts(rules, level, symbols, 0, block_size);
        Header::for_depth_counts::<V>(rules, level, block_size, &counts, long_depths)
    }

    /// The model counts of a depth table's symbols of positions `first,
    /// first + 1, …` (`first` starts a block), in the contexts its level
    /// is coded in: those of every share of a level add up to the whole
    /// level's ([`ModelCounts::merge`]). Levels of at least
    /// `DEPTH_MOVER_MIN_POSITIONS` (2^22) code their depths in the
    /// mover's-stones contexts (`MoverContexts`); smaller ones in the
    /// plain order-1 model, whose smaller header costs less than the
    /// contexts save.
    pub fn depth_counts(
        rules: &Rules,
        level: u32,
        symbols: &[i8],
        first: u64,
        block_size: u32,
    ) -> ModelCounts {
        let block = block_size as usize;
        match depth_contexts(rules, level) {
            ContextModel::Mover => {
                ModelCounts::count(symbols, first, block, &MoverContexts::new(rules, level))
            }
            ContextModel::Uniform => ModelCounts::count(symbols, first, block, &Uniform),
        }
    }

    /// The header of a depth table of values of kind `V` from the model
    /// counts of all its symbols ([`Header::depth_counts`]), listing
    /// `long_depths`.
    pub fn for_depth_counts<V: Realized>(
        rules: &Rules,
        level: u32,
        block_size: u32,
        counts: &ModelCounts,
        long_depths: Vec<(u64, u16)>,
    ) -> Header {
        Header {
            long_depths,
            ..Header::new(
                rules,
                Depth::<V>::id(),
                level,
                block_size,
                (Encoding::Full, depth_contexts(rules, level)),
                counts.histogram(),
                &Model::from_counts(counts),
            )
        }
    }

    /// A depth table's longest depth where the mover is ahead: its largest
    /// symbol, or its longest listed depth. (Positions where the mover is
    /// not ahead repeat stored symbols, and a level without such a
    /// position stores depth 0 throughout.)
    pub fn longest_stored_depth(&self) -> u16 {
        let listed = self.long_depths.iter().map(|&(_, plies)| plies).max();
        let coded = self.histogram.last().map(|&(symbol, _)| {
            match Depth::<Even>::read(self.level, &[symbol]) {
                StoredDepth::Plies(plies) => plies,
                StoredDepth::Long => 0,
            }
        });
        listed.max(coded).unwrap_or(0)
    }

    /// The depth a depth table lists for index `at`, if it lists one.
    pub fn long_depth(&self, at: u64) -> Option<u16> {
        let found = self
            .long_depths
            .binary_search_by_key(&at, |&(index, _)| index);
        found.ok().map(|k| self.long_depths[k].1)
    }

    /// Checks a depth table's list of long depths against the level:
    /// indices ascending and in the level, depths long enough to be
    /// listed.
    pub(crate) fn check_long_depths(&self) -> Result<(), String> {
        if self.stores != Stores::Depths && !self.long_depths.is_empty() {
            return Err("long depths listed in a table of values".into());
        }
        let ordered = self.long_depths.windows(2).all(|w| w[0].0 < w[1].0);
        let in_level = self
            .long_depths
            .last()
            .is_none_or(|&(at, _)| at < self.positions);
        let long = self
            .long_depths
            .iter()
            .all(|&(_, plies)| (Depth::LONG_PLIES..=Depth::MAX_PLIES).contains(&plies));
        if !(ordered && in_level && long) || self.long_depths.len() > Depth::MAX_LONG {
            return Err("a bad list of long depths".into());
        }
        Ok(())
    }

    /// The header of a table of kind `K` storing its symbols as they are,
    /// from the model counts of every block ([`ModelCounts`], which
    /// workers holding parts of the level count and sum): the same header
    /// as [`Header::for_symbols`] of the whole level.
    pub fn for_counts<K: TableKind>(
        rules: &Rules,
        level: u32,
        block_size: u32,
        counts: &ModelCounts,
    ) -> Header {
        Header::new(
            rules,
            K::id(),
            level,
            block_size,
            (Encoding::Full, ContextModel::Uniform),
            counts.histogram(),
            &Model::from_counts(counts),
        )
    }

    /// The header of an even table of level `level` of `rules` whose
    /// entries an encoding chose for `values`.
    pub fn for_entries(
        rules: &Rules,
        level: u32,
        values: &[i8],
        encoding: Encoding,
        chosen: &ChosenEntries,
        block_size: u32,
    ) -> Header {
        Header::new(
            rules,
            KindId {
                cycles: Cycles::Even,
                stores: Stores::Values,
            },
            level,
            block_size,
            (encoding, chosen.contexts),
            histogram(values),
            &chosen.model,
        )
    }

    fn new(
        rules: &Rules,
        kind: KindId,
        level: u32,
        block_size: u32,
        (encoding, contexts): (Encoding, ContextModel),
        histogram: Vec<(i8, u64)>,
        model: &Model,
    ) -> Header {
        let positions = LevelIndex::new(rules.pits(), level).count();
        Header {
            rules: *rules,
            cycles: kind.cycles,
            stores: kind.stores,
            level,
            positions,
            encoding,
            contexts,
            block_size,
            block_count: positions.div_ceil(block_size as u64),
            histogram,
            model: model.to_stored(),
            long_depths: Vec::new(),
        }
    }

    /// The kind of table the header describes.
    pub fn kind(&self) -> KindId {
        KindId {
            cycles: self.cycles,
            stores: self.stores,
        }
    }

    /// Symbols per position (1 for even tables, 2 for forced ones and
    /// depth tables).
    pub fn symbols_per_position(&self) -> usize {
        self.kind().symbols_per_position()
    }

    /// Symbols per block.
    pub fn block_symbols(&self) -> usize {
        self.block_size as usize * self.symbols_per_position()
    }

    /// Positions whose forced bounds meet (`None` for even tables): those
    /// stored with a gap of 0, a non-negative second symbol.
    pub fn exact_positions(&self) -> Option<u64> {
        (self.kind() == Forced::id()).then(|| {
            let inexact: u64 = self
                .histogram
                .iter()
                .filter(|&&(v, _)| v < 0)
                .map(|&(_, c)| c)
                .sum();
            self.positions - inexact
        })
    }

    /// The header's name of its value encoding, as `info` reports it.
    pub fn encoding_name(&self) -> &'static str {
        self.encoding
            .name(self.contexts)
            .expect("a header holds an encoding with its own contexts")
    }

    /// The coding contexts of a table coded with the mover's stones
    /// (`None`: the plain order-1 model).
    pub(crate) fn mover_contexts(&self) -> Option<MoverContexts> {
        (self.contexts == ContextModel::Mover).then(|| MoverContexts::new(&self.rules, self.level))
    }

    /// The header's value model, checked.
    pub(crate) fn value_model(&self) -> Result<Model, String> {
        let features = self.mover_contexts().map_or(1, |c| {
            use crate::codec::Contexts;
            c.features()
        });
        Model::from_stored(&self.model, features)
    }

    /// The record bincode writes.
    pub(crate) fn to_raw(&self) -> RawHeader {
        RawHeader {
            variant: self.rules.variant().name().to_string(),
            pits: self.rules.pits() as u8,
            empty_capture: self.rules.empty_capture(),
            cycles: self.kind().name(),
            level: self.level,
            positions: self.positions,
            index_scheme: INDEX_SCHEME.to_string(),
            value_encoding: self.encoding_name().to_string(),
            block_size: self.block_size,
            block_count: self.block_count,
            histogram: self.histogram.clone(),
            model: self.model.clone(),
        }
    }

    /// Reads and checks a record: a header this program can read, or what
    /// is wrong with it.
    pub(crate) fn from_raw(raw: RawHeader) -> Result<Header, String> {
        let variant = Variant::from_name(&raw.variant).map_err(|e| e.to_string())?;
        let rules = Rules::new(variant, raw.pits as usize)
            .map_err(|e| e.to_string())?
            .with_empty_capture(raw.empty_capture);
        let kind = KindId::from_name(&raw.cycles)?;
        if raw.index_scheme != INDEX_SCHEME {
            return Err(format!("unknown index scheme '{}'", raw.index_scheme));
        }
        let (encoding, contexts) = Encoding::from_name(&raw.value_encoding)?;
        // Compact entries are even values'; the full encoding's mover
        // contexts are for depths.
        let fits = match (encoding, contexts) {
            (Encoding::Compact, _) => kind == Even::id(),
            (Encoding::Full, ContextModel::Mover) => kind.stores == Stores::Depths,
            (Encoding::Full, ContextModel::Uniform) => true,
        };
        if !fits {
            return Err(format!(
                "value encoding '{}' in a table of {kind}",
                raw.value_encoding
            ));
        }
        if raw.level > MAX_LEVEL {
            return Err(format!("level {} out of range", raw.level));
        }
        let positions = LevelIndex::new(rules.pits(), raw.level).count();
        if raw.positions != positions {
            return Err(format!(
                "{} positions, but level {} has {positions}",
                raw.positions, raw.level
            ));
        }
        if raw.block_size == 0
            || raw.block_size > MAX_BLOCK_SIZE
            || raw.block_count != raw.positions.div_ceil(raw.block_size as u64)
        {
            return Err("block size and count do not match the positions".into());
        }
        let header = Header {
            rules,
            cycles: kind.cycles,
            stores: kind.stores,
            level: raw.level,
            positions,
            encoding,
            contexts,
            block_size: raw.block_size,
            block_count: raw.block_count,
            histogram: raw.histogram,
            model: raw.model,
            long_depths: Vec::new(),
        };
        header.check_model()?;
        Ok(header)
    }

    /// The model must be well formed and span the stored symbols, and the
    /// histogram must count every stored symbol.
    fn check_model(&self) -> Result<(), String> {
        let model = self
            .value_model()
            .map_err(|e| format!("bad value model: {e}"))?;
        let (low, high) = (self.histogram.first(), self.histogram.last());
        let (low, high) = (low.map(|&(v, _)| v), high.map(|&(v, _)| v));
        // Entries below values keep within the values' range.
        let spans = if self.encoding.entries_are_values() {
            low == Some(model.min()) && high == Some(model.max())
        } else {
            low <= Some(model.min()) && Some(model.max()) <= high
        };
        if !spans {
            return Err("the value model does not span the histogram".into());
        }
        let symbols = self.positions * self.symbols_per_position() as u64;
        if self.histogram.iter().map(|&(_, c)| c).sum::<u64>() != symbols {
            return Err("histogram does not add up to the stored symbols".into());
        }
        Ok(())
    }
}

/// Counts of each symbol, ascending, zero counts left out.
pub fn histogram(symbols: &[i8]) -> Vec<(i8, u64)> {
    let counts = symbols
        .par_chunks(1 << 16)
        .map(|chunk| {
            let mut counts = [0u64; 256];
            chunk.iter().for_each(|&v| counts[v as u8 as usize] += 1);
            counts
        })
        .reduce(
            || [0u64; 256],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    (-128i16..=127)
        .map(|v| (v as i8, counts[v as i8 as u8 as usize]))
        .filter(|&(_, c)| c > 0)
        .collect()
}
