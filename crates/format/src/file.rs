//! Reading table files: mapping, validating, decoding blocks.
//!
//! The layout is `docs/FORMAT.md`'s. Opening checks magic, version, the
//! header and index checksum and the end marker, and that the header
//! describes a table this program reads; every block's checksum is checked
//! when it is decoded; [`TableFile::check_file_checksum`] checks the whole
//! file. A truncated, corrupted or mismatched file is an error, never a
//! panic or a wrong value.
//!
//! A file is read one of two ways ([`Access`]). Mapped (the default) is the
//! fastest, and assumes the file does not change while it is open: a file
//! truncated under a mapping makes the process fault when it touches the
//! lost pages. Read keeps the header and the block index in memory and
//! reads each block with a positioned read: a file changed under it gives
//! errors (checksums, short reads), never a fault, which is what a server
//! needs. [`TableFile::changed_on_disk`] tells that the file at the path is
//! no longer the one opened.

use std::borrow::Cow;
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
use crate::huge_pages::filled_on_huge_pages;
use crate::kind::{Depth, Realized, TableKind};
use crate::levels::Levels;
use crate::order::Order;

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

/// How a table file's bytes are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// Memory-mapped: the fastest; the file must not change while open.
    #[default]
    Mapped,
    /// Positioned reads of each block: a file that changes while open gives
    /// errors, never a fault.
    Read,
}

/// Where a file's bytes come from.
enum Source {
    Mapped(Mmap),
    /// The open file, and its bytes up to the end of the block index.
    Read {
        file: File,
        head: Vec<u8>,
    },
}

/// What identifies the file a path named when it was opened: a file
/// renamed over it, rewritten or truncated no longer matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            inode: (metadata.dev(), metadata.ino()),
        }
    }
}

/// An open, validated table file of either kind: what `info` lists. Probes
/// and builds read it through [`Table`], which knows its kind.
pub struct TableFile {
    path: PathBuf,
    source: Source,
    len: u64,
    stamp: Stamp,
    header: Header,
    layout: Layout,
    decoder: Decoder,
    /// A compact table's coding contexts.
    contexts: Option<MoverContexts>,
}

/// Opens `path` for reading if it is a regular file: anything else is
/// [`FormatError::NotRegularFile`]. Looked at first (a socket cannot be
/// opened at all), then opened without blocking (a FIFO's open would wait
/// for a writer for ever) and looked at again, in case it was swapped.
pub fn open_regular(path: &Path) -> Result<File, FormatError> {
    use std::os::unix::fs::OpenOptionsExt;
    let not_regular = || FormatError::NotRegularFile {
        path: path.to_path_buf(),
    };
    let metadata = std::fs::metadata(path).map_err(|e| FormatError::io(path, e))?;
    if !metadata.file_type().is_file() {
        return Err(not_regular());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| FormatError::io(path, e))?;
    let metadata = file.metadata().map_err(|e| FormatError::io(path, e))?;
    if !metadata.file_type().is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

impl TableFile {
    /// Opens and validates the table file at `path`, whatever it holds,
    /// mapped.
    pub fn open(path: &Path) -> Result<TableFile, FormatError> {
        TableFile::open_with(path, Access::Mapped)
    }

    /// Opens and validates the table file at `path`, read as `access`
    /// says.
    pub fn open_with(path: &Path, access: Access) -> Result<TableFile, FormatError> {
        let file = open_regular(path)?;
        let metadata = file.metadata().map_err(|e| FormatError::io(path, e))?;
        let len = metadata.len();
        let (source, header, layout) = match access {
            Access::Mapped => {
                // SAFETY: table files are written once and renamed into
                // place; a mapped table must not change while open (see the
                // module's documentation; servers read with `Access::Read`).
                let map = unsafe { Mmap::map(&file) }.map_err(|e| FormatError::io(path, e))?;
                let _ = map.advise(Advice::Random);
                let (header, layout, _) =
                    parse_layout(path, len, |at, n| Ok(map[at..at + n].into()))?;
                (Source::Mapped(map), header, layout)
            }
            Access::Read => {
                let read =
                    |at: usize, n: usize| read_exactly(&file, path, at as u64, n).map(Cow::Owned);
                let (header, layout, head) = parse_layout(path, len, read)?;
                let head = head.into_owned();
                (Source::Read { file, head }, header, layout)
            }
        };
        let decoder = header
            .value_model()
            .expect("parse_layout checks the model")
            .decoder();
        let contexts = header.mover_contexts();
        Ok(TableFile {
            path: path.to_path_buf(),
            source,
            len,
            stamp: Stamp::of(&metadata),
            header,
            layout,
            decoder,
            contexts,
        })
    }

    /// Whether the file at this table's path is not the one opened any
    /// more: removed, replaced, rewritten or truncated.
    pub fn changed_on_disk(&self) -> bool {
        std::fs::metadata(&self.path).map_or(true, |m| Stamp::of(&m) != self.stamp)
    }

    /// The bytes from the start of the file to the end of its block index.
    fn head(&self) -> &[u8] {
        match &self.source {
            Source::Mapped(map) => map,
            Source::Read { head, .. } => head,
        }
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
        self.len
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

    /// The CRC-32 of the whole file (all but its last 8 bytes) as the file
    /// stores it: the same for the same table on any machine.
    pub fn stored_checksum(&self) -> Result<u32, FormatError> {
        let at = self.len as usize - TRAILER;
        match &self.source {
            Source::Mapped(map) => Ok(read_u32(map, at)),
            Source::Read { file, .. } => {
                Ok(read_u32(&read_exactly(file, &self.path, at as u64, 4)?, 0))
            }
        }
    }

    /// Checks the CRC-32 of the whole file.
    pub fn check_file_checksum(&self) -> Result<(), FormatError> {
        let body = self.len as usize - TRAILER;
        let (crc, stored) = match &self.source {
            Source::Mapped(map) => (crc32fast::hash(&map[..body]), read_u32(map, body)),
            Source::Read { file, .. } => {
                let mut crc = crc32fast::Hasher::new();
                let mut at = 0;
                while at < body {
                    let n = (body - at).min(1 << 20);
                    crc.update(&read_exactly(file, &self.path, at as u64, n)?);
                    at += n;
                }
                let trailer = read_exactly(file, &self.path, body as u64, 4)?;
                (crc.finalize(), read_u32(&trailer, 0))
            }
        };
        if crc != stored {
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
            Some(c) => self.decoder.decode_prefix(&data, out, c.walk(first)),
            None => self.decoder.decode_prefix(&data, out, Uniform.walk(first)),
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
            Some(c) => self.decoder.decode_at(&data, offset, c.walk(first)),
            None => self.decoder.decode_at(&data, offset, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// Decodes block `block` into `out`, which must be exactly its length.
    fn decode_block_into(&self, block: u64, out: &mut [i8]) -> Result<(), FormatError> {
        let data = self.block_data(block)?;
        let first = self.first_position(block);
        match &self.contexts {
            Some(c) => self.decoder.decode_block(&data, out, c.walk(first)),
            None => self.decoder.decode_block(&data, out, Uniform.walk(first)),
        }
        .map_err(|e| self.corrupted(format!("block {block} does not decode: {e:?}")))
    }

    /// The index of block `block`'s first position.
    fn first_position(&self, block: u64) -> u64 {
        block * self.header.block_size as u64
    }

    /// The coded bytes of block `block`, bounds- and checksum-checked.
    fn block_data(&self, block: u64) -> Result<Cow<'_, [u8]>, FormatError> {
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
        let data: Cow<[u8]> = match &self.source {
            Source::Mapped(map) => map[start as usize..end as usize].into(),
            Source::Read { file, .. } => {
                read_exactly(file, &self.path, start, (end - start) as usize)?.into()
            }
        };
        let crc = read_u32(self.head(), self.layout.index + b * INDEX_ENTRY + 4);
        if crc32fast::hash(&data) != crc {
            return Err(self.corrupted(format!("block {block} checksum mismatch")));
        }
        Ok(data)
    }

    /// Where block `b` begins: its group's base plus its relative offset.
    fn block_start(&self, b: usize) -> u64 {
        let head = self.head();
        let base = read_u64(head, self.layout.bases + 8 * (b / GROUP_BLOCKS));
        let relative = read_u32(head, self.layout.index + b * INDEX_ENTRY);
        base.saturating_add(relative as u64)
    }

    pub(crate) fn corrupted(&self, what: String) -> FormatError {
        FormatError::corrupted(&self.path, what)
    }

    /// This file as a table of kind `K`, or [`FormatError::WrongKind`].
    pub fn into_kind<K: TableKind>(self) -> Result<Table<K>, FormatError> {
        if self.header.kind() != K::id() {
            return Err(FormatError::WrongKind {
                path: self.path,
                expected: K::id(),
                found: self.header.kind(),
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
    /// Opens and validates the table at `path`, mapped, which must be of
    /// kind `K` and, with `expected`, of that rule set and level.
    pub fn open(path: &Path, expected: Option<TableId>) -> Result<Table<K>, FormatError> {
        Table::open_with(path, expected, Access::Mapped)
    }

    /// [`Table::open`], read as `access` says.
    pub fn open_with(
        path: &Path,
        expected: Option<TableId>,
        access: Access,
    ) -> Result<Table<K>, FormatError> {
        let table = TableFile::open_with(path, access)?.into_kind::<K>()?;
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
        K::complete(self, out, Order::Rank, lower)
    }

    /// [`Table::decode_entries_into`] a new vector.
    pub fn decode_entries(&self, lower: &Levels<K>) -> Result<Vec<i8>, FormatError> {
        let mut symbols = filled_on_huge_pages(self.symbols(), 0i8);
        self.decode_entries_into(&mut symbols, lower)?;
        Ok(symbols)
    }
}

impl<V: Realized> Table<Depth<V>> {
    /// The depth of index `at` whose symbol says it is long
    /// ([`crate::StoredDepth::Long`]), from the header's list; an index the
    /// list lacks is a damaged table.
    pub fn long_depth(&self, at: u64) -> Result<u16, FormatError> {
        self.header()
            .long_depth(at)
            .ok_or_else(|| self.corrupted(format!("a long depth not listed for index {at}")))
    }
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads exactly `n` bytes of `file` at `at`: a file shorter than that now
/// (truncated since it was opened) is a corrupted table, not a fault.
fn read_exactly(file: &File, path: &Path, at: u64, n: usize) -> Result<Vec<u8>, FormatError> {
    let mut bytes = vec![0u8; n];
    read_at(file, &mut bytes, at).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            FormatError::corrupted(path, "the file is shorter than when it was opened")
        }
        _ => FormatError::io(path, e),
    })?;
    Ok(bytes)
}

#[cfg(unix)]
fn read_at(file: &File, out: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(out, at)
}

#[cfg(not(unix))]
fn read_at(file: &File, out: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(out)
}

/// Checks the fixed parts of a file of `len` bytes and returns its header,
/// its layout and its bytes up to the end of the block index; `read(at, n)`
/// gives the `n` bytes at `at` (all in range).
/// Every offset is bounds-checked before it is read; each block's own
/// bounds are checked when it is read.
fn parse_layout<'a>(
    path: &Path,
    len: u64,
    read: impl Fn(usize, usize) -> Result<Cow<'a, [u8]>, FormatError>,
) -> Result<(Header, Layout, Cow<'a, [u8]>), FormatError> {
    let corrupted = |what: &str| FormatError::corrupted(path, what);
    let len = usize::try_from(len).map_err(|_| corrupted("larger than memory can address"))?;
    if len < MAGIC.len() || &read(0, MAGIC.len())?[..] != MAGIC {
        return Err(FormatError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    if len < 16 + TRAILER {
        return Err(corrupted("truncated header"));
    }
    let start = read(0, 16)?;
    let version = read_u32(&start, 8);
    if version != FORMAT_VERSION {
        return Err(FormatError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    if &read(len - 4, 4)?[..] != END_MARKER {
        return Err(corrupted("no end marker: truncated or incomplete file"));
    }
    let header_len = read_u32(&start, 12) as usize;
    let header_end = 16usize
        .checked_add(header_len)
        .filter(|&e| e <= len - TRAILER);
    let header_end = header_end.ok_or_else(|| corrupted("header length beyond the file"))?;
    let header_bytes = read(16, header_len)?;
    // The limit keeps a corrupted length field from asking for a huge
    // allocation before the checksum below can reject the header.
    let config = bincode::config::standard().with_limit::<HEADER_LIMIT>();
    let (raw, used): (RawHeader, usize) = bincode::decode_from_slice(&header_bytes, config)
        .map_err(|e| corrupted(&format!("header does not decode: {e}")))?;
    // A depth table lists its long depths in a record after the header's.
    let (long_depths, used) = if raw.lists_long_depths() {
        let (long, more): (Vec<(u64, u16)>, usize) =
            bincode::decode_from_slice(&header_bytes[used..], config)
                .map_err(|e| corrupted(&format!("long depths do not decode: {e}")))?;
        (long, used + more)
    } else {
        (Vec::new(), used)
    };
    if used != header_len {
        return Err(corrupted("header length mismatch"));
    }
    // The block count sizes the index whose checksum covers the record, so
    // it is read before the record is checked.
    let blocks = raw.block_count() as usize;
    let index_end = blocks
        .checked_mul(INDEX_ENTRY)
        .and_then(|n| n.checked_add(8 * blocks.div_ceil(GROUP_BLOCKS)))
        .and_then(|n| header_end.checked_add(n))
        .filter(|&e| e + 4 <= len - TRAILER)
        .ok_or_else(|| corrupted("block index beyond the file"))?;
    let head = read(0, index_end + 4)?;
    if crc32fast::hash(&head[..index_end]) != read_u32(&head, index_end) {
        return Err(corrupted("header checksum mismatch"));
    }
    let mut header = Header::from_raw(raw).map_err(|what| corrupted(&what))?;
    header.long_depths = long_depths;
    header
        .check_long_depths()
        .map_err(|what| corrupted(&what))?;
    let layout = Layout {
        index: header_end,
        bases: header_end + blocks * INDEX_ENTRY,
        data: ((index_end + 4) as u64, (len - TRAILER) as u64),
    };
    if blocks > 0 && read_u64(&head, layout.bases) != layout.data.0 {
        return Err(corrupted("the first block does not start the data"));
    }
    // Every coded block holds at least its two rANS states (8 bytes): a
    // header claiming more blocks than the data can hold is damaged, and
    // would otherwise make a reader allocate for positions that are not
    // there.
    if (blocks as u64).saturating_mul(8) > layout.data.1 - layout.data.0 {
        return Err(corrupted("more blocks than the data can hold"));
    }
    Ok((header, layout, head))
}
