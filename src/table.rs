//! The table file format: one file per (rule set, level).
//!
//! ```text
//! offset  size          field
//! 0       8             magic "MANCALTB"
//! 8       4             format version (u32 LE)
//! 12      4             header length H (u32 LE)
//! 16      H             header (bincode 2, standard config): rules, level,
//!                       positions, index scheme, value encoding, block size,
//!                       block count, value histogram, value model
//! 16+H    8·B           block index: per block, its offset relative to its
//!                       group's base (u32) and the CRC-32 of its bytes (u32)
//! …       8·G           group bases: the offset (u64) of every 65,536th block
//! …       4             CRC-32 of everything above (header + index)
//! …       …             B coded blocks, each decoding on its own to
//!                       `block_size` values (the last may be shorter)
//! end−8   4             CRC-32 of every byte before it
//! end−4   4             end marker "TBOK"
//! ```
//!
//! Values are in index order (see [`crate::index`]) and coded with the
//! level's order-1 rANS model (see [`crate::codec`]); a block ends where the
//! next begins.
//!
//! The header's `value_encoding` says what an even table's entries are:
//!
//! - `rans-order1-11`: every position's value ([`Encoding::Full`]).
//! - `rans-order1-mover-11-descending` ([`Encoding::Compact`], Oware family
//!   only): an entry at most the value, from which a reader restores the
//!   value as the larger of the entry and the best of the position's
//!   restoring moves (captures and moves that descend;
//!   [`crate::omission`]). Wherever those moves give the value (about 65%
//!   of oware positions), the entry is free, and the writer picks the one
//!   the model codes cheapest. Entries are coded in the context of the
//!   previous entry and of the mover's stones
//!   ([`crate::omission::MoverContexts`]), in blocks of 2,048 positions by
//!   default: oware levels 0–20 take 1.42 bits a position, against 3.53
//!   stored whole.
//! - `rans-order1-11-descending`: the same entries in the plain order-1
//!   model, for compact levels under [`MOVER_CONTEXTS_MIN_POSITIONS`]
//!   positions, where the larger model would cost more header than it
//!   saves.
//!
//! Readers restore values from the tables: a probe looks at the moves best
//! bound first (a move is worth at most its gain minus its child's entry),
//! and a batch first decodes whole the compact levels that are small next
//! to it ([`crate::tablebase::Tablebase::values`]).
//!
//! Files are written to a temporary name, synced and renamed, so a killed
//! build never leaves a file that looks complete. Opening checks
//! magic, version, the header and index checksum and the end marker; every
//! block's checksum is checked when it is decoded; `verify` and `info` also
//! check the whole-file checksum.
//!
//! The header's `cycles` field says which kind of table the file is
//! ([`Cycles`]): `even` stores one symbol per position, its value; `forced`
//! stores two, `forced_mover` and minus the gap `n − forced_mover −
//! forced_opponent` ([`crate::forced::Bounds::to_symbols`]), interleaved in
//! index order, so that one block holds both numbers of its positions and
//! the histogram's negative symbols count the positions whose bounds do not
//! meet. Blocks always hold `block_size` positions.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::{Advice, Mmap};
use rayon::prelude::*;

use crate::codec::{self, Contexts, Decoder, Model, StoredModel, Uniform};
use crate::error::{Error, Result};
use crate::forced::Bounds;
use crate::index::LevelIndex;
use crate::omission::{self, MoverContexts};
use crate::rules::{Rules, Variant};
use crate::solver::{self, LevelSolution, SolvedLevels};

/// First bytes of every table file.
pub const MAGIC: &[u8; 8] = b"MANCALTB";
/// Last bytes of every complete table file.
pub const END_MARKER: &[u8; 4] = b"TBOK";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 2;
/// The only index scheme so far: every composition, colex rank.
pub const INDEX_SCHEME: &str = "compositions-colex";
/// The value encoding: order-1 context model, rANS with 11-bit
/// probabilities (see [`crate::codec`]).
pub const VALUE_ENCODING: &str = "rans-order1-11";
/// Entries that may be below the value where the restoring moves give it
/// ([`crate::omission`]), coded in the context of the previous entry and
/// the mover's stones ([`crate::omission::MoverContexts`]).
pub const VALUE_ENCODING_COMPACT: &str = "rans-order1-mover-11-descending";
/// The same entries in the plain order-1 model: what small levels use,
/// where the larger model would cost more header than it saves.
pub const VALUE_ENCODING_COMPACT_SMALL: &str = "rans-order1-11-descending";
/// Compact levels of at least this many positions code their entries in
/// the mover's-stones contexts.
pub const MOVER_CONTEXTS_MIN_POSITIONS: usize = 1 << 14;
/// The compact encodings of earlier versions: captures only searched, then
/// captures and positions whose every move descends.
const VALUE_ENCODINGS_EARLIER: [&str; 2] =
    ["rans-order1-11-exits-omitted", "rans-order1-11-one-ply"];
/// The cycle convention of the stored values.
pub const CYCLES_EVEN: &str = "even";

/// How an even table stores its values (`build --encoding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Oware family: a position whose value its restoring moves give
    /// ([`crate::omission`]) stores a cheaper entry, and entries are coded
    /// with the mover's stones as context: oware levels 0–20 take 1.42
    /// bits a position instead of 3.53. A probe searches a few positions
    /// instead of reading one entry: on oware 0–20, single probes are
    /// about 2× slower at the median and 10× at the 99th percentile,
    /// batches of move values about 4× slower.
    Compact,
    /// Every value stored as it is: the fastest probes, and the default.
    #[default]
    Full,
}

impl Encoding {
    /// Positions per block unless a build says otherwise: a probe decodes
    /// half a block on average, and each block costs 16 bytes of framing.
    /// Full tables favour probes; compact ones, whose probes read several
    /// entries anyway, favour size.
    pub fn default_block_size(self) -> u32 {
        match self {
            Encoding::Full => DEFAULT_BLOCK_SIZE,
            Encoding::Compact => COMPACT_BLOCK_SIZE,
        }
    }
}

/// Which kind of table a file holds: the cycle convention of RULES.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cycles {
    /// One value per position, endless play an even split (`--cycles even`).
    #[default]
    Even,
    /// The forced bounds of RULES.md, two numbers per position (`--cycles
    /// forced`).
    Forced,
}

impl Cycles {
    /// The name in file headers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Cycles::Even => CYCLES_EVEN,
            Cycles::Forced => "forced",
        }
    }

    /// Parses a name written by [`Cycles::name`].
    pub fn from_name(name: &str) -> Result<Cycles> {
        match name {
            "even" => Ok(Cycles::Even),
            "forced" => Ok(Cycles::Forced),
            _ => Err(Error::InvalidRules(format!(
                "unknown cycle convention '{name}' (expected even or forced)"
            ))),
        }
    }

    /// Symbols stored per position.
    pub fn symbols_per_position(self) -> usize {
        match self {
            Cycles::Even => 1,
            Cycles::Forced => 2,
        }
    }

    /// What a table of this kind holds, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Cycles::Even => "even-split values (--cycles even)",
            Cycles::Forced => "forced bounds (--cycles forced)",
        }
    }
}
/// Positions per block: a cold probe decodes on average half a block, at a
/// few nanoseconds per value, and each block costs 8 index bytes. At 512
/// (oware level 20): 0.125 bits/position of index, blocks 1.4% larger than
/// at 4,096, and a cold probe about 1 µs.
pub const DEFAULT_BLOCK_SIZE: u32 = 512;
/// Positions per block of compact tables by default.
pub const COMPACT_BLOCK_SIZE: u32 = 2048;
/// The largest block size: a group of 65,536 blocks must stay
/// under 4 GiB so that offsets within it fit 32 bits.
pub const MAX_BLOCK_SIZE: u32 = 1 << 14;
/// Blocks per group: every group has a 64-bit base offset, its blocks 32-bit
/// offsets from it.
const GROUP_BLOCKS: usize = 1 << 16;
const INDEX_ENTRY: usize = 8;
/// The most bytes a header may decode to (a level's model is at most 256
/// contexts of 255 symbols).
const HEADER_LIMIT: usize = 1 << 20;
const TRAILER: usize = 8;

/// Everything a table file says about itself.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Header {
    /// Rule-set name (`oware`, `awari`, `wari`, `kalah`).
    pub variant: String,
    /// Pits per side.
    pub pits: u8,
    /// Kalah's empty-capture option (always true for other rule sets).
    pub empty_capture: bool,
    /// Cycle convention of the values (`even` or `forced`, see [`Cycles`]).
    pub cycles: String,
    /// Stones on the board in every position of the table.
    pub level: u32,
    /// Positions in the level (every one is stored).
    pub positions: u64,
    /// How positions map to indices.
    pub index_scheme: String,
    /// How the values are coded.
    pub value_encoding: String,
    /// Positions per block.
    pub block_size: u32,
    /// Number of blocks.
    pub block_count: u64,
    /// `(symbol, how often it is stored)`, ascending by symbol, zero counts
    /// left out: for even tables, positions per value.
    pub histogram: Vec<(i8, u64)>,
    /// The value model every block is coded with ([`Model`]).
    pub model: StoredModel,
}

impl Header {
    /// The header for `values`, the solved level `level` of `rules`, with
    /// the value model fitted to them.
    pub fn for_level(rules: &Rules, level: u32, values: &[i8], block_size: u32) -> Header {
        Header::for_symbols(rules, Cycles::Even, level, values, block_size)
    }

    /// The header for `symbols`, the stored symbols of level `level` of
    /// `rules` as a table of kind `cycles` (for forced tables, two per
    /// position: [`crate::forced::ForcedLevel::to_symbols`]).
    pub fn for_symbols(
        rules: &Rules,
        cycles: Cycles,
        level: u32,
        symbols: &[i8],
        block_size: u32,
    ) -> Header {
        let per_position = cycles.symbols_per_position();
        let model = Model::fit(symbols, block_size as usize * per_position, &Uniform);
        Header {
            histogram: histogram(symbols),
            ..Header::with_model(
                rules,
                cycles,
                level,
                symbols.len() / per_position,
                block_size,
                model,
            )
        }
    }

    /// A header of `positions` positions coded with `model` (no histogram
    /// yet, full encoding).
    fn with_model(
        rules: &Rules,
        cycles: Cycles,
        level: u32,
        positions: usize,
        block_size: u32,
        model: Model,
    ) -> Header {
        Header {
            variant: rules.variant().name().to_string(),
            pits: rules.pits() as u8,
            empty_capture: rules.empty_capture(),
            cycles: cycles.name().to_string(),
            level,
            positions: positions as u64,
            index_scheme: INDEX_SCHEME.to_string(),
            value_encoding: VALUE_ENCODING.to_string(),
            block_size,
            block_count: positions.div_ceil(block_size as usize) as u64,
            histogram: Vec::new(),
            model: model.to_stored(),
        }
    }

    /// The header and the entries to store for a solved even level. With
    /// [`Encoding::Compact`], in the Oware family, where only captures leave
    /// a level, a position whose value a reader restores
    /// ([`crate::omission`]) stores the entry the codec finds cheapest at
    /// or below its value ([`codec::lower_free_values`]). Kalah tables
    /// store every value: there, most moves leave the level (sowing into
    /// the store), so a reader would search deep.
    pub fn for_solution(
        rules: &Rules,
        level: u32,
        solution: &LevelSolution,
        encoding: Encoding,
        block_size: u32,
    ) -> (Header, Vec<i8>) {
        let values = &solution.values;
        if encoding == Encoding::Full || !rules.variant().is_oware_family() {
            return (
                Header::for_level(rules, level, values, block_size),
                values.clone(),
            );
        }
        let free = omission::free_entries(rules, level, values, &solution.exit_best);
        let block = block_size as usize;
        let ((entries, model), encoding) = if values.len() >= MOVER_CONTEXTS_MIN_POSITIONS {
            let contexts = MoverContexts::new(rules.pits(), level);
            let lowered = codec::lower_free_values(values, &free, block, &contexts);
            (lowered, VALUE_ENCODING_COMPACT)
        } else {
            let lowered = codec::lower_free_values(values, &free, block, &Uniform);
            (lowered, VALUE_ENCODING_COMPACT_SMALL)
        };
        let header = Header {
            value_encoding: encoding.to_string(),
            histogram: histogram(values),
            ..Header::with_model(rules, Cycles::Even, level, values.len(), block_size, model)
        };
        (header, entries)
    }

    /// Whether the table is compact: entries may be below the values they
    /// stand for (see [`crate::omission`]).
    pub fn compact(&self) -> bool {
        self.value_encoding == VALUE_ENCODING_COMPACT
            || self.value_encoding == VALUE_ENCODING_COMPACT_SMALL
    }

    /// The coding contexts of a table coded with the mover's stones
    /// (`None`: the plain order-1 model).
    fn mover_contexts(&self) -> Option<MoverContexts> {
        (self.value_encoding == VALUE_ENCODING_COMPACT)
            .then(|| MoverContexts::new(self.pits as usize, self.level))
    }

    /// The header's value model, checked.
    fn value_model(&self) -> std::result::Result<Model, String> {
        let features = self.mover_contexts().map_or(1, |c| c.features());
        Model::from_stored(&self.model, features)
    }

    /// The kind of table ([`Cycles`]) the header names.
    pub fn cycles(&self) -> Result<Cycles> {
        Cycles::from_name(&self.cycles)
    }

    /// Symbols per position (1 for even tables, 2 for forced ones; 1 if the
    /// header names no known kind, which validation rejects).
    pub fn symbols_per_position(&self) -> usize {
        self.cycles().map_or(1, Cycles::symbols_per_position)
    }

    /// Symbols per block.
    pub fn block_symbols(&self) -> usize {
        self.block_size as usize * self.symbols_per_position()
    }

    /// Positions whose forced bounds meet (`None` for even tables): those
    /// stored with a gap of 0, a non-negative second symbol.
    pub fn exact_positions(&self) -> Option<u64> {
        (self.cycles().ok()? == Cycles::Forced).then(|| {
            let inexact: u64 = self
                .histogram
                .iter()
                .filter(|&&(v, _)| v < 0)
                .map(|&(_, c)| c)
                .sum();
            self.positions - inexact
        })
    }

    /// The rule set the header names.
    pub fn rules(&self) -> Result<Rules> {
        Ok(
            Rules::new(Variant::from_name(&self.variant)?, self.pits as usize)?
                .with_empty_capture(self.empty_capture),
        )
    }

    /// A short human description: `oware-6 level 12`.
    pub fn describe(&self) -> String {
        match self.rules() {
            Ok(rules) => format!("{} level {}", rules.id(), self.level),
            Err(_) => format!("{}-{} level {}", self.variant, self.pits, self.level),
        }
    }
}

/// Counts of each value, ascending, zero counts left out.
pub fn histogram(values: &[i8]) -> Vec<(i8, u64)> {
    let counts = values
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

/// The file name of level `level`.
pub fn level_file_name(level: u32) -> String {
    format!("level-{level:03}.mtb")
}

/// Writes `values` (the stored symbols) as a table file at `path`,
/// atomically: the data goes to `path.tmp`, is synced, and is renamed over
/// `path` only when complete. Returns the file's size in bytes.
pub fn write_table(path: &Path, header: &Header, values: &[i8]) -> Result<u64> {
    let model = header.value_model().expect("the header's own model");
    let blocks = match header.mover_contexts() {
        Some(contexts) => encode_blocks(&model, values, header.block_symbols(), &contexts),
        None => encode_blocks(&model, values, header.block_symbols(), &Uniform),
    };
    let header_bytes =
        bincode::encode_to_vec(header, bincode::config::standard()).expect("header encodes");
    let groups = blocks.len().div_ceil(GROUP_BLOCKS);
    let head_len = 16 + header_bytes.len() + INDEX_ENTRY * blocks.len() + 8 * groups + 4;
    let mut head = Vec::with_capacity(head_len);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    head.extend_from_slice(&(header_bytes.len() as u32).to_le_bytes());
    head.extend_from_slice(&header_bytes);
    let mut bases = Vec::with_capacity(groups);
    let mut offset = head_len as u64;
    for (b, block) in blocks.iter().enumerate() {
        if b % GROUP_BLOCKS == 0 {
            bases.push(offset);
        }
        let relative = u32::try_from(offset - bases[b / GROUP_BLOCKS])
            .expect("a group of blocks spans less than 4 GiB");
        head.extend_from_slice(&relative.to_le_bytes());
        head.extend_from_slice(&crc32fast::hash(block).to_le_bytes());
        offset += block.len() as u64;
    }
    for base in bases {
        head.extend_from_slice(&base.to_le_bytes());
    }
    head.extend_from_slice(&crc32fast::hash(&head).to_le_bytes());
    debug_assert_eq!(head.len(), head_len);

    let tmp = path.with_extension("mtb.tmp");
    let write = || -> std::io::Result<u64> {
        let mut file = std::io::BufWriter::new(File::create(&tmp)?);
        let mut crc = crc32fast::Hasher::new();
        file.write_all(&head)?;
        crc.update(&head);
        for block in &blocks {
            file.write_all(block)?;
            crc.update(block);
        }
        file.write_all(&crc.finalize().to_le_bytes())?;
        file.write_all(END_MARKER)?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(offset + TRAILER as u64)
    };
    let bytes = write().map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    if let Some(dir) = path.parent() {
        // Make the rename itself durable; not every platform can open a
        // directory, and the data is already safe, so failure is ignored.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(bytes)
}

/// Codes `values` in blocks of `block_symbols`, in parallel.
fn encode_blocks(
    model: &Model,
    values: &[i8],
    block_symbols: usize,
    contexts: &impl Contexts,
) -> Vec<Vec<u8>> {
    values
        .par_chunks(block_symbols)
        .enumerate()
        .map(|(b, chunk)| model.encode_block(chunk, contexts.walk((b * block_symbols) as u64)))
        .collect()
}

/// Where the parts of a validated file lie.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Offset of the block index.
    index: usize,
    /// Offset of the group bases.
    bases: usize,
    /// Where the coded blocks begin and end.
    data: (u64, u64),
}

/// An open, validated table file.
pub struct Table {
    path: PathBuf,
    map: Mmap,
    header: Header,
    layout: Layout,
    decoder: Decoder,
    /// A compact table's coding contexts.
    contexts: Option<MoverContexts>,
    /// Whether the table is compact ([`Header::compact`]), looked up once:
    /// every probe asks.
    compact: bool,
}

impl Table {
    /// Opens and validates the table at `path`. With `expected`, the header
    /// must name that rule set and level, and be an even table.
    pub fn open(path: &Path, expected: Option<(&Rules, u32)>) -> Result<Table> {
        Table::open_kind(path, expected.map(|(rules, n)| (rules, Cycles::Even, n)))
    }

    /// Like [`Table::open`], for tables of either kind: with `expected`, the
    /// header must name that rule set, kind and level; the wrong kind is
    /// [`Error::WrongCycles`].
    pub fn open_kind(path: &Path, expected: Option<(&Rules, Cycles, u32)>) -> Result<Table> {
        let file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Missing {
                path: path.to_path_buf(),
                build: match expected {
                    Some((rules, cycles, level)) => {
                        let kind = match cycles {
                            Cycles::Even => String::new(),
                            Cycles::Forced => " --cycles forced".to_string(),
                        };
                        format!(
                            "mancala-tb build {}{kind} --stones {level}",
                            rules.cli_flags()
                        )
                    }
                    None => "mancala-tb build".to_string(),
                },
            },
            _ => Error::io(path, e),
        })?;
        // SAFETY: table files are written once and renamed into place; they
        // are never modified while mapped by this program.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        let (header, layout) = parse_layout(path, &map)?;
        let decoder = header
            .value_model()
            .expect("parse_layout checks the model")
            .decoder();
        let contexts = header.mover_contexts();
        if let Some((rules, cycles, level)) = expected {
            let found_cycles = header.cycles()?;
            if found_cycles != cycles {
                return Err(Error::WrongCycles {
                    path: path.to_path_buf(),
                    expected: cycles.describe().to_string(),
                    found: found_cycles.describe().to_string(),
                });
            }
            let found = header.rules().ok();
            if found.as_ref() != Some(rules) || header.level != level {
                return Err(Error::WrongRules {
                    path: path.to_path_buf(),
                    expected: format!("{} level {level}", rules.id()),
                    found: header.describe(),
                });
            }
        }
        let _ = map.advise(Advice::Random);
        Ok(Table {
            path: path.to_path_buf(),
            map,
            compact: header.compact(),
            header,
            layout,
            decoder,
            contexts,
        })
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Whether entries may be below values ([`Header::compact`]).
    pub fn compact(&self) -> bool {
        self.compact
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn bytes(&self) -> u64 {
        self.map.len() as u64
    }

    /// The block holding index `at`, and the offset of `at`'s first symbol
    /// in it.
    pub fn locate(&self, at: u64) -> Result<(u64, usize)> {
        if at >= self.header.positions {
            return Err(self.corrupted(format!(
                "index {at} beyond {} positions",
                self.header.positions
            )));
        }
        let block_size = self.header.block_size as u64;
        let per_position = self.header.symbols_per_position();
        Ok((at / block_size, (at % block_size) as usize * per_position))
    }

    /// The first symbol stored for index `at` (an even table's value),
    /// decoding its block only up to it (no caching: [`crate::Tablebase`]
    /// keeps decoded blocks).
    pub fn get(&self, at: u64) -> Result<i8> {
        let (block, offset) = self.locate(at)?;
        let data = self.block_data(block)?;
        let first = self.first_position(block);
        match &self.contexts {
            Some(c) => self.decoder.decode_at(data, offset, c.walk(first)),
            None => self.decoder.decode_at(data, offset, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// The forced bounds stored for index `at` (a forced table), decoding
    /// its block only up to them.
    pub fn get_bounds(&self, at: u64) -> Result<Bounds> {
        self.expect_cycles(Cycles::Forced)?;
        let (block, offset) = self.locate(at)?;
        let mut symbols = vec![0i8; offset + 2];
        self.decode_prefix(block, &mut symbols)?;
        self.bounds_from(&symbols[offset..], at)
    }

    /// Reads the bounds of index `at` from its two decoded symbols.
    pub fn bounds_from(&self, symbols: &[i8], at: u64) -> Result<Bounds> {
        Bounds::from_symbols(self.header.level, [symbols[0], symbols[1]])
            .ok_or_else(|| self.corrupted(format!("impossible bounds stored for index {at}")))
    }

    /// An error unless the table is of kind `cycles`.
    pub fn expect_cycles(&self, cycles: Cycles) -> Result<()> {
        let found = self.header.cycles()?;
        if found != cycles {
            return Err(Error::WrongCycles {
                path: self.path.clone(),
                expected: cycles.describe().to_string(),
                found: found.describe().to_string(),
            });
        }
        Ok(())
    }

    /// Every stored symbol: [`Header::symbols_per_position`] per position.
    pub fn symbols(&self) -> usize {
        self.header.positions as usize * self.header.symbols_per_position()
    }

    /// Decodes every stored symbol of the table (an even table's entries),
    /// in parallel.
    pub fn decode_all(&self) -> Result<Vec<i8>> {
        let mut values = vec![0i8; self.symbols()];
        self.decode_into(&mut values)?;
        Ok(values)
    }

    /// Every value of an even table's level, in index order: its entries
    /// decoded into `out` (exactly [`Table::symbols`] slots), and if the
    /// table is compact the values restored ([`solver::restore_values`])
    /// with `lower`, which must hold the levels below.
    pub fn decode_values_into(&self, out: &mut [i8], lower: &SolvedLevels) -> Result<()> {
        self.expect_cycles(Cycles::Even)?;
        self.decode_into(out)?;
        if self.compact {
            solver::restore_values(&self.header.rules()?, self.header.level, out, lower);
        }
        Ok(())
    }

    /// [`Table::decode_values_into`] a new vector.
    pub fn decode_values(&self, lower: &SolvedLevels) -> Result<Vec<i8>> {
        let mut values = vec![0i8; self.symbols()];
        self.decode_values_into(&mut values, lower)?;
        Ok(values)
    }

    /// Decodes every symbol into `out` (exactly [`Table::symbols`] slots),
    /// in parallel, without any other allocation of the level's size.
    pub fn decode_into(&self, out: &mut [i8]) -> Result<()> {
        if out.len() != self.symbols() {
            return Err(self.corrupted(format!(
                "{} symbols do not fit {} slots",
                self.symbols(),
                out.len()
            )));
        }
        out.par_chunks_mut(self.header.block_symbols())
            .enumerate()
            .try_for_each(|(block, values)| self.decode_block_into(block as u64, values))
    }

    /// Checks the CRC-32 of the whole file.
    pub fn check_file_checksum(&self) -> Result<()> {
        let body = &self.map[..self.map.len() - TRAILER];
        let stored = read_u32(&self.map, self.map.len() - TRAILER);
        if crc32fast::hash(body) != stored {
            return Err(self.corrupted("whole-file checksum mismatch".into()));
        }
        Ok(())
    }

    /// Decodes block `block` (its symbols), checking its CRC.
    pub fn decode_block(&self, block: u64) -> Result<Vec<i8>> {
        let block_size = self.header.block_size as u64;
        let len = block_size.min(self.header.positions - block * block_size) as usize;
        let mut values = vec![0i8; len * self.header.symbols_per_position()];
        self.decode_block_into(block, &mut values)?;
        Ok(values)
    }

    /// Decodes the first `out.len()` values of block `block` into `out`
    /// (at most the block's length): a batch of probes into one block
    /// decodes only up to the last of them.
    pub fn decode_prefix(&self, block: u64, out: &mut [i8]) -> Result<()> {
        let data = self.block_data(block)?;
        let first = self.first_position(block);
        match &self.contexts {
            Some(c) => self.decoder.decode_prefix(data, out, c.walk(first)),
            None => self.decoder.decode_prefix(data, out, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// Decodes block `block` into `out`, which must be exactly its length.
    fn decode_block_into(&self, block: u64, out: &mut [i8]) -> Result<()> {
        let data = self.block_data(block)?;
        let first = self.first_position(block);
        match &self.contexts {
            Some(c) => self.decoder.decode_block(data, out, c.walk(first)),
            None => self.decoder.decode_block(data, out, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// The index of block `block`'s first position.
    fn first_position(&self, block: u64) -> u64 {
        block * self.header.block_size as u64
    }

    /// The coded bytes of block `block`, bounds- and checksum-checked.
    fn block_data(&self, block: u64) -> Result<&[u8]> {
        let b = block as usize;
        let start = self.block_start(b);
        let end = if b + 1 < self.header.block_count as usize {
            self.block_start(b + 1)
        } else {
            self.layout.data.1
        };
        let (first, last) = self.layout.data;
        if !(first <= start && start <= end && end <= last) {
            return Err(self.corrupted(format!("block {block} lies outside the data")));
        }
        let data = &self.map[start as usize..end as usize];
        let crc = read_u32(&self.map, self.layout.index + b * INDEX_ENTRY + 4);
        if crc32fast::hash(data) != crc {
            return Err(self.corrupted(format!("block {block} checksum mismatch")));
        }
        Ok(data)
    }

    /// Where block `b` begins: its group's base plus its relative offset.
    fn block_start(&self, b: usize) -> u64 {
        let base = read_u64(&self.map, self.layout.bases + 8 * (b / GROUP_BLOCKS));
        let relative = read_u32(&self.map, self.layout.index + b * INDEX_ENTRY);
        base.saturating_add(relative as u64)
    }

    /// Bytes of decoding tables this table holds in memory.
    pub fn decoder_memory(&self) -> usize {
        self.decoder.memory()
    }

    fn corrupted(&self, what: String) -> Error {
        Error::Corrupted {
            path: self.path.clone(),
            what,
        }
    }
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Checks the fixed parts of a mapped file and returns its header and
/// layout. Every offset is bounds-checked before it is used; each block's
/// own bounds are checked when it is read.
fn parse_layout(path: &Path, bytes: &[u8]) -> Result<(Header, Layout)> {
    let corrupted = |what: &str| Error::Corrupted {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(Error::BadMagic {
            path: path.to_path_buf(),
        });
    }
    if bytes.len() < 16 + TRAILER {
        return Err(corrupted("truncated header"));
    }
    let version = read_u32(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    if &bytes[bytes.len() - 4..] != END_MARKER {
        return Err(corrupted("no end marker: truncated or incomplete file"));
    }
    let header_len = read_u32(bytes, 12) as usize;
    let header_end = 16usize
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len() - TRAILER);
    let header_end = header_end.ok_or_else(|| corrupted("header length beyond the file"))?;
    let (header, used): (Header, usize) =
        // The limit keeps a corrupted length field from asking for a huge
        // allocation before the checksum below can reject the header.
        bincode::decode_from_slice(&bytes[16..header_end], bincode::config::standard().with_limit::<HEADER_LIMIT>())
            .map_err(|e| corrupted(&format!("header does not decode: {e}")))?;
    if used != header_len {
        return Err(corrupted("header length mismatch"));
    }
    let blocks = header.block_count as usize;
    let index_end = blocks
        .checked_mul(INDEX_ENTRY)
        .and_then(|len| len.checked_add(8 * blocks.div_ceil(GROUP_BLOCKS)))
        .and_then(|len| header_end.checked_add(len))
        .filter(|&e| e + 4 <= bytes.len() - TRAILER)
        .ok_or_else(|| corrupted("block index beyond the file"))?;
    if crc32fast::hash(&bytes[..index_end]) != read_u32(bytes, index_end) {
        return Err(corrupted("header checksum mismatch"));
    }
    validate_header(&header).map_err(|what| corrupted(&what))?;
    let layout = Layout {
        index: header_end,
        bases: header_end + blocks * INDEX_ENTRY,
        data: ((index_end + 4) as u64, (bytes.len() - TRAILER) as u64),
    };
    if blocks > 0 && read_u64(bytes, layout.bases) != layout.data.0 {
        return Err(corrupted("the first block does not start the data"));
    }
    Ok((header, layout))
}

/// Checks that a decoded header describes a table this program can read.
fn validate_header(h: &Header) -> std::result::Result<(), String> {
    let rules = h.rules().map_err(|e| e.to_string())?;
    h.cycles().map_err(|e| e.to_string())?;
    if VALUE_ENCODINGS_EARLIER.contains(&h.value_encoding.as_str()) {
        return Err(format!(
            "value encoding '{}' was written by an earlier version; rebuild the table",
            h.value_encoding
        ));
    }
    let known_encoding =
        h.value_encoding == VALUE_ENCODING || (h.compact() && h.cycles == CYCLES_EVEN);
    if h.index_scheme != INDEX_SCHEME || !known_encoding {
        return Err(format!(
            "unknown index scheme '{}' or value encoding '{}'",
            h.index_scheme, h.value_encoding
        ));
    }
    if h.level > crate::solver::MAX_LEVEL {
        return Err(format!("level {} out of range", h.level));
    }
    if h.positions != LevelIndex::new(rules.pits(), h.level).count() {
        return Err(format!(
            "{} positions, but level {} has {}",
            h.positions,
            h.level,
            LevelIndex::new(rules.pits(), h.level).count()
        ));
    }
    if h.block_size == 0
        || h.block_size > MAX_BLOCK_SIZE
        || h.block_count != h.positions.div_ceil(h.block_size as u64)
    {
        return Err("block size and count do not match the positions".into());
    }
    let model = h
        .value_model()
        .map_err(|e| format!("bad value model: {e}"))?;
    let (low, high) = (h.histogram.first(), h.histogram.last());
    let (low, high) = (low.map(|&(v, _)| v), high.map(|&(v, _)| v));
    // Entries below values keep within the values' range.
    let spans = if h.compact() {
        low <= Some(model.min()) && Some(model.max()) <= high
    } else {
        low == Some(model.min()) && high == Some(model.max())
    };
    if !spans {
        return Err("the value model does not span the histogram".into());
    }
    let symbols = h.positions * h.symbols_per_position() as u64;
    if h.histogram.iter().map(|&(_, c)| c).sum::<u64>() != symbols {
        return Err("histogram does not add up to the stored symbols".into());
    }
    Ok(())
}
