//! Reading table files: mapping, validating, decoding blocks.
//!
//! The layout is `docs/FORMAT.md`'s. Opening checks magic, version, the
//! header and index checksum and the end marker, and that the header
//! describes a table this program reads; every block's checksum is checked
//! when it is decoded; [`TableFile::check_file_checksum`] checks the whole
//! file. A truncated, corrupted or mismatched file is an error, never a
//! panic or a wrong value.

use std::fs::File;
use std::marker::PhantomData;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use memmap2::{Advice, Mmap};
use rayon::prelude::*;

use crate::codec::{Contexts, Decoder, Uniform};
use crate::encoding::{Encoding, MoverContexts};
use crate::error::{FormatError, TableId};
use crate::header::{Header, RawHeader, END_MARKER, FORMAT_VERSION, HEADER_LIMIT, MAGIC};
use crate::kind::TableKind;
use crate::levels::Levels;

/// Blocks per group: every group has a 64-bit base offset, its blocks 32-bit
/// offsets from it.
pub(crate) const GROUP_BLOCKS: usize = 1 << 16;
/// Bytes per block in the block index: relative offset and CRC-32.
pub(crate) const INDEX_ENTRY: usize = 8;
/// Bytes after the blocks: whole-file CRC-32 and end marker.
pub(crate) const TRAILER: usize = 8;

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

/// An open, validated table file of either kind: what `info` lists. Probes
/// and builds read it through [`Table`], which knows its kind.
pub struct TableFile {
    path: PathBuf,
    map: Mmap,
    header: Header,
    layout: Layout,
    decoder: Decoder,
    /// A compact table's coding contexts.
    contexts: Option<MoverContexts>,
}

impl TableFile {
    /// Opens and validates the table file at `path`, whatever it holds.
    pub fn open(path: &Path) -> Result<TableFile, FormatError> {
        let file = File::open(path).map_err(|e| FormatError::io(path, e))?;
        // SAFETY: table files are written once and renamed into place; they
        // are never modified while mapped by this program.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| FormatError::io(path, e))?;
        let (header, layout) = parse_layout(path, &map)?;
        let decoder = header
            .value_model()
            .expect("parse_layout checks the model")
            .decoder();
        let contexts = header.mover_contexts();
        let _ = map.advise(Advice::Random);
        Ok(TableFile {
            path: path.to_path_buf(),
            map,
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

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn bytes(&self) -> u64 {
        self.map.len() as u64
    }

    /// Every stored symbol: [`Header::symbols_per_position`] per position.
    pub fn symbols(&self) -> usize {
        self.header.positions as usize * self.header.symbols_per_position()
    }

    /// The block holding index `at`, and the offset of `at`'s first symbol
    /// in it.
    pub fn locate(&self, at: u64) -> Result<(u64, usize), FormatError> {
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

    /// Checks the CRC-32 of the whole file.
    pub fn check_file_checksum(&self) -> Result<(), FormatError> {
        let body = &self.map[..self.map.len() - TRAILER];
        let stored = read_u32(&self.map, self.map.len() - TRAILER);
        if crc32fast::hash(body) != stored {
            return Err(self.corrupted("whole-file checksum mismatch".into()));
        }
        Ok(())
    }

    /// Decodes every stored symbol of the table (an even table's entries),
    /// in parallel.
    pub fn decode_all(&self) -> Result<Vec<i8>, FormatError> {
        let mut symbols = vec![0i8; self.symbols()];
        self.decode_into(&mut symbols)?;
        Ok(symbols)
    }

    /// Decodes every symbol into `out` (exactly [`TableFile::symbols`]
    /// slots), in parallel, without any other allocation of the level's
    /// size.
    pub fn decode_into(&self, out: &mut [i8]) -> Result<(), FormatError> {
        if out.len() != self.symbols() {
            return Err(self.corrupted(format!(
                "{} symbols do not fit {} slots",
                self.symbols(),
                out.len()
            )));
        }
        out.par_chunks_mut(self.header.block_symbols())
            .enumerate()
            .try_for_each(|(block, symbols)| self.decode_block_into(block as u64, symbols))
    }

    /// Decodes block `block` (its symbols), checking its CRC.
    pub fn decode_block(&self, block: u64) -> Result<Vec<i8>, FormatError> {
        let block_size = self.header.block_size as u64;
        let len = block_size.min(self.header.positions - block * block_size) as usize;
        let mut symbols = vec![0i8; len * self.header.symbols_per_position()];
        self.decode_block_into(block, &mut symbols)?;
        Ok(symbols)
    }

    /// Decodes the first `out.len()` symbols of block `block` into `out`
    /// (at most the block's length): a batch of probes into one block
    /// decodes only up to the last of them.
    pub fn decode_prefix(&self, block: u64, out: &mut [i8]) -> Result<(), FormatError> {
        let data = self.block_data(block)?;
        let first = self.first_position(block);
        match &self.contexts {
            Some(c) => self.decoder.decode_prefix(data, out, c.walk(first)),
            None => self.decoder.decode_prefix(data, out, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// The first symbol stored for index `at`, decoding its block only up
    /// to it (no caching: a tablebase keeps decoded blocks).
    pub fn first_symbol(&self, at: u64) -> Result<i8, FormatError> {
        let (block, offset) = self.locate(at)?;
        let data = self.block_data(block)?;
        let first = self.first_position(block);
        match &self.contexts {
            Some(c) => self.decoder.decode_at(data, offset, c.walk(first)),
            None => self.decoder.decode_at(data, offset, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// Decodes block `block` into `out`, which must be exactly its length.
    fn decode_block_into(&self, block: u64, out: &mut [i8]) -> Result<(), FormatError> {
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
    fn block_data(&self, block: u64) -> Result<&[u8], FormatError> {
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

    pub(crate) fn corrupted(&self, what: String) -> FormatError {
        FormatError::corrupted(&self.path, what)
    }

    /// This file as a table of kind `K`, or [`FormatError::WrongKind`].
    pub fn into_kind<K: TableKind>(self) -> Result<Table<K>, FormatError> {
        if self.header.cycles != K::CYCLES {
            return Err(FormatError::WrongKind {
                path: self.path,
                expected: K::CYCLES,
                found: self.header.cycles,
            });
        }
        Ok(Table {
            entries_are_values: self.header.encoding.entries_are_values(),
            file: self,
            kind: PhantomData,
        })
    }
}

/// An open, validated table file of kind `K`.
pub struct Table<K: TableKind> {
    file: TableFile,
    /// Whether every entry is its value, looked up once: every probe asks.
    entries_are_values: bool,
    kind: PhantomData<K>,
}

impl<K: TableKind> Deref for Table<K> {
    type Target = TableFile;

    fn deref(&self) -> &TableFile {
        &self.file
    }
}

impl<K: TableKind> Table<K> {
    /// Opens and validates the table at `path`, which must be of kind `K`
    /// and, with `expected`, of that rule set and level.
    pub fn open(path: &Path, expected: Option<TableId>) -> Result<Table<K>, FormatError> {
        let table = TableFile::open(path)?.into_kind::<K>()?;
        if let Some(expected) = expected {
            let header = table.header();
            let found = TableId {
                rules: header.rules,
                level: header.level,
            };
            if found != expected {
                return Err(FormatError::WrongTable {
                    path: path.to_path_buf(),
                    expected,
                    found,
                });
            }
        }
        Ok(table)
    }

    /// Whether every entry is its value (no search needed to read one).
    #[inline]
    pub fn entries_are_values(&self) -> bool {
        self.entries_are_values
    }

    /// The value encoding of the table's entries.
    pub fn encoding(&self) -> Encoding {
        self.header().encoding
    }

    /// Every entry of the table's level, in index order: the stored
    /// symbols decoded into `out` (exactly [`TableFile::symbols`] slots)
    /// and completed ([`TableKind::complete`]) with `lower`, which must hold
    /// the levels below.
    pub fn decode_entries_into(
        &self,
        out: &mut [i8],
        lower: &Levels<K>,
    ) -> Result<(), FormatError> {
        self.decode_into(out)?;
        K::complete(self, out, lower)
    }

    /// [`Table::decode_entries_into`] a new vector.
    pub fn decode_entries(&self, lower: &Levels<K>) -> Result<Vec<i8>, FormatError> {
        let mut symbols = vec![0i8; self.symbols()];
        self.decode_entries_into(&mut symbols, lower)?;
        Ok(symbols)
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
fn parse_layout(path: &Path, bytes: &[u8]) -> Result<(Header, Layout), FormatError> {
    let corrupted = |what: &str| FormatError::corrupted(path, what);
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(FormatError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    if bytes.len() < 16 + TRAILER {
        return Err(corrupted("truncated header"));
    }
    let version = read_u32(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(FormatError::UnsupportedVersion {
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
    // The limit keeps a corrupted length field from asking for a huge
    // allocation before the checksum below can reject the header.
    let config = bincode::config::standard().with_limit::<HEADER_LIMIT>();
    let (raw, used): (RawHeader, usize) =
        bincode::decode_from_slice(&bytes[16..header_end], config)
            .map_err(|e| corrupted(&format!("header does not decode: {e}")))?;
    if used != header_len {
        return Err(corrupted("header length mismatch"));
    }
    // The block count sizes the index whose checksum covers the record, so
    // it is read before the record is checked.
    let blocks = raw.block_count() as usize;
    let index_end = blocks
        .checked_mul(INDEX_ENTRY)
        .and_then(|len| len.checked_add(8 * blocks.div_ceil(GROUP_BLOCKS)))
        .and_then(|len| header_end.checked_add(len))
        .filter(|&e| e + 4 <= bytes.len() - TRAILER)
        .ok_or_else(|| corrupted("block index beyond the file"))?;
    if crc32fast::hash(&bytes[..index_end]) != read_u32(bytes, index_end) {
        return Err(corrupted("header checksum mismatch"));
    }
    let header = Header::from_raw(raw).map_err(|what| corrupted(&what))?;
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
