//! Writing table files: a level's symbols coded into blocks, framed with
//! its header and index, written to any [`Write`], and to a file
//! atomically.
//!
//! Coding and writing are separate steps ([`encode_blocks`], then
//! [`EncodedTable::from_blocks`]), so that workers holding parts of a level
//! can each code their own blocks with the model fitted from their summed
//! counts ([`crate::ModelCounts`]) and one of them writes the file.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::codec::{Contexts, Uniform};
use crate::error::FormatError;
use crate::file::{GROUP_BLOCKS, INDEX_ENTRY, TRAILER};
use crate::header::{Header, END_MARKER, FORMAT_VERSION, MAGIC};
use crate::kind::Stores;

/// A level's table, coded and framed: ready to be written anywhere.
pub struct EncodedTable {
    /// Magic, version, header, block index, group bases and their CRC.
    head: Vec<u8>,
    /// The coded blocks, in order.
    blocks: Vec<Vec<u8>>,
}

/// Codes `symbols`, the stored symbols of the positions from index
/// `first` on (a block boundary), in blocks of `header`'s size with its
/// model, in parallel.
pub fn encode_blocks(header: &Header, symbols: &[i8], first: u64) -> Vec<Vec<u8>> {
    debug_assert_eq!(first % header.block_size as u64, 0);
    match header.mover_contexts() {
        Some(contexts) => code(header, symbols, first, &contexts),
        None => code(header, symbols, first, &Uniform),
    }
}

/// Codes the blocks of `symbols` from position `first` on, each block's
/// walk of features starting at its first position.
fn code(header: &Header, symbols: &[i8], first: u64, contexts: &impl Contexts) -> Vec<Vec<u8>> {
    let model = header.value_model().expect("the header's own model");
    let block_size = header.block_size as u64;
    symbols
        .par_chunks(header.block_symbols())
        .enumerate()
        .map(|(b, chunk)| model.encode_block(chunk, contexts.walk(first + b as u64 * block_size)))
        .collect()
}

/// Where a file being written to `path` lives until it is complete:
/// `<name>.<pid>.tmp` beside it, so that two writers never share one, and
/// readers, which open only final names, never see it.
pub fn temporary_path(path: &Path) -> PathBuf {
    temporary_path_of(path, std::process::id())
}

/// The temporary name of a file being written to `path` by the writer
/// `writer` (a process id: [`temporary_path`] is this process's): a job of
/// many processes writing one file agrees on one of theirs.
pub fn temporary_path_of(path: &Path, writer: u32) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{writer}{TEMPORARY_SUFFIX}"));
    path.with_file_name(name)
}

/// The suffix of every temporary file: what a writer holding the directory
/// may sweep away as left by a killed run.
pub const TEMPORARY_SUFFIX: &str = ".tmp";

impl EncodedTable {
    /// Codes every symbol of a level (`header.positions` positions).
    pub fn new(header: &Header, symbols: &[i8]) -> EncodedTable {
        EncodedTable::from_blocks(header, encode_blocks(header, symbols, 0))
    }

    /// Frames blocks already coded with `header`'s model, in order.
    pub fn from_blocks(header: &Header, blocks: Vec<Vec<u8>>) -> EncodedTable {
        assert_eq!(blocks.len() as u64, header.block_count, "one block each");
        let framed: Vec<BlockFrame> = blocks.iter().map(|b| BlockFrame::of(b)).collect();
        EncodedTable {
            head: table_head(header, &framed),
            blocks,
        }
    }

    /// The size of the file in bytes.
    pub fn bytes(&self) -> u64 {
        let blocks: usize = self.blocks.iter().map(Vec::len).sum();
        (self.head.len() + blocks + TRAILER) as u64
    }

    /// Writes the whole file to `out`; returns its size in bytes.
    pub fn write_to(&self, mut out: impl Write) -> std::io::Result<u64> {
        let mut crc = crc32fast::Hasher::new();
        out.write_all(&self.head)?;
        crc.update(&self.head);
        for block in &self.blocks {
            out.write_all(block)?;
            crc.update(block);
        }
        out.write_all(&crc.finalize().to_le_bytes())?;
        out.write_all(END_MARKER)?;
        out.flush()?;
        Ok(self.bytes())
    }

    /// Writes the file at `path` atomically: to a temporary file of this
    /// process first ([`temporary_path`]), synced, then renamed over
    /// `path`, so a killed writer never leaves a file that looks complete.
    /// On an error (a full disk) the temporary file is removed. Returns the
    /// file's size in bytes.
    pub fn write_file(&self, path: &Path) -> Result<u64, FormatError> {
        write_atomically(path, |file| self.write_to(file))
    }
}

/// Positions coded between two writes of [`write_level`], about: bounds
/// the coded blocks held in memory however large the level.
const PIECE_POSITIONS: usize = 1 << 22;

/// Blocks coded between two writes of [`write_level`]. Debug builds write
/// every level of more than one block in pieces, so the tests exercise the
/// cuts, but in no more than a few dozen: a piece of one block would code
/// the level's blocks one at a time.
fn blocks_per_piece(header: &Header) -> usize {
    if cfg!(debug_assertions) {
        (header.block_count as usize / 32).max(1)
    } else {
        (PIECE_POSITIONS / header.block_size as usize).max(1)
    }
}

/// Codes every symbol of a level (`header.positions` positions) and writes
/// its table file at `path` atomically, as [`EncodedTable::write_file`]
/// does, a piece of blocks at a time: the coded level is never held
/// whole, only one piece of it. Returns the file's size in bytes.
pub fn write_level(header: &Header, symbols: &[i8], path: &Path) -> Result<u64, FormatError> {
    write_atomically(path, |file| {
        let blocks = header.block_count as usize;
        let head_len = head_len(&header_bytes(header), blocks);
        file.write_all(&vec![0; head_len])?;
        let mut framed = Vec::with_capacity(blocks);
        let mut blocks_crc = crc32fast::Hasher::new();
        let per_piece = blocks_per_piece(header);
        let piece_symbols = per_piece * header.block_symbols();
        for (piece, chunk) in symbols.chunks(piece_symbols).enumerate() {
            let first = (piece * per_piece) as u64 * header.block_size as u64;
            for block in encode_blocks(header, chunk, first) {
                file.write_all(&block)?;
                blocks_crc.update(&block);
                framed.push(BlockFrame::of(&block));
            }
        }
        assert_eq!(framed.len(), blocks, "one block each");
        let head = table_head(header, &framed);
        debug_assert_eq!(head.len(), head_len);
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&head)?;
        let end = file.seek(SeekFrom::End(0))?;
        file.write_all(&table_trailer(&head, &blocks_crc))?;
        file.flush()?;
        Ok(end + TRAILER as u64)
    })
}

/// What a table's head records of one coded block: workers that write
/// their blocks themselves tell the one that frames the file these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockFrame {
    /// The block's length in bytes.
    pub len: u64,
    /// The CRC-32 of its bytes.
    pub crc: u32,
}

impl BlockFrame {
    /// The frame of a coded block.
    pub fn of(block: &[u8]) -> BlockFrame {
        BlockFrame {
            len: block.len() as u64,
            crc: crc32fast::hash(block),
        }
    }
}

/// The header's bincode record, and a depth table's list of long depths
/// as a record of its own after it.
fn header_bytes(header: &Header) -> Vec<u8> {
    let config = bincode::config::standard();
    let mut bytes = bincode::encode_to_vec(header.to_raw(), config).expect("header encodes");
    if header.stores == Stores::Depths {
        bincode::encode_into_std_write(&header.long_depths, &mut bytes, config)
            .expect("long depths encode");
    }
    bytes
}

/// The length of a head ([`frame_head`]) with this header record and
/// `blocks` blocks.
fn head_len(header_bytes: &[u8], blocks: usize) -> usize {
    let groups = blocks.div_ceil(GROUP_BLOCKS);
    16 + header_bytes.len() + INDEX_ENTRY * blocks + 8 * groups + 4
}

/// The head of a table file: magic, version, header, the index of the
/// blocks (each one's offset in its group and CRC), the groups' bases and
/// the head's own CRC. Its length depends only on the header and the
/// number of blocks; the blocks follow it back to back, then
/// [`table_trailer`].
pub fn table_head(header: &Header, blocks: &[BlockFrame]) -> Vec<u8> {
    let header_bytes = header_bytes(header);
    let groups = blocks.len().div_ceil(GROUP_BLOCKS);
    let head_len = head_len(&header_bytes, blocks.len());
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
        head.extend_from_slice(&block.crc.to_le_bytes());
        offset += block.len;
    }
    for base in bases {
        head.extend_from_slice(&base.to_le_bytes());
    }
    head.extend_from_slice(&crc32fast::hash(&head).to_le_bytes());
    debug_assert_eq!(head.len(), head_len);
    head
}

/// The end of a table file whose head is `head` and whose blocks' bytes,
/// all of them in order, hash to `blocks` (a CRC-32 state that knows their
/// length, as [`crc32fast::Hasher::new_with_initial_len`] makes one): the
/// CRC-32 of every byte before it, then the end marker.
pub fn table_trailer(head: &[u8], blocks: &crc32fast::Hasher) -> [u8; TRAILER] {
    let mut crc = crc32fast::Hasher::new();
    crc.update(head);
    crc.combine(blocks);
    let mut trailer = [0; TRAILER];
    trailer[..4].copy_from_slice(&crc.finalize().to_le_bytes());
    trailer[4..].copy_from_slice(END_MARKER);
    trailer
}

/// The atomic write of [`EncodedTable::write_file`] and [`write_level`]:
/// `write` fills the temporary file, which is then synced and renamed over
/// `path`, or removed on an error. Returns what `write` returns, the
/// file's size in bytes.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<u64>,
) -> Result<u64, FormatError> {
    let tmp = temporary_path(path);
    let written = || -> std::io::Result<u64> {
        let mut file = BufWriter::new(File::create(&tmp)?);
        let bytes = write(&mut file)?;
        file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(bytes)
    };
    let bytes = written().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        FormatError::io(path, e)
    })?;
    if let Some(dir) = path.parent() {
        // Make the rename itself durable; not every platform can open a
        // directory, and the data is already safe, so failure is ignored.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use mancala_core::{LevelIndex, Rules, Variant};

    use super::*;
    use crate::file::TableFile;
    use crate::kind::Even;

    /// The file written atomically is the bytes written to any writer, and
    /// blocks coded in two parts (as two workers would) frame the same
    /// file; the file reads back every symbol.
    #[test]
    fn a_table_is_the_same_written_anywhere_and_coded_in_parts() {
        let rules = Rules::new(Variant::Oware, 2).unwrap();
        let level = 9;
        let positions = LevelIndex::new(2, level).count() as usize;
        let symbols: Vec<i8> = (0..positions)
            .map(|i| ((i * 7919) % 19) as i8 - 9)
            .collect();
        let header = Header::for_symbols::<Even>(&rules, level, &symbols, 16);
        let whole = EncodedTable::new(&header, &symbols);
        let mut bytes = Vec::new();
        assert_eq!(whole.write_to(&mut bytes).unwrap(), bytes.len() as u64);
        assert_eq!(whole.bytes(), bytes.len() as u64);

        let cut = 16 * 7;
        let mut blocks = encode_blocks(&header, &symbols[..cut], 0);
        blocks.extend(encode_blocks(&header, &symbols[cut..], cut as u64));
        let mut parts = Vec::new();
        EncodedTable::from_blocks(&header, blocks)
            .write_to(&mut parts)
            .unwrap();
        assert_eq!(parts, bytes);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("level-009.mtb");
        assert_eq!(whole.write_file(&path).unwrap(), bytes.len() as u64);
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(!temporary_path(&path).exists());
        // Written piece by piece (in debug builds a piece is 64 positions:
        // four of this header's blocks, one of the larger ones), the same
        // file.
        let streamed = dir.path().join("level-009-streamed.mtb");
        let big_blocks = Header::for_symbols::<Even>(&rules, level, &symbols, 4096);
        let mut expected = Vec::new();
        EncodedTable::new(&big_blocks, &symbols)
            .write_to(&mut expected)
            .unwrap();
        assert_eq!(
            write_level(&big_blocks, &symbols, &streamed).unwrap(),
            expected.len() as u64
        );
        assert_eq!(std::fs::read(&streamed).unwrap(), expected);
        assert_eq!(
            write_level(&header, &symbols, &streamed).unwrap(),
            bytes.len() as u64
        );
        assert_eq!(std::fs::read(&streamed).unwrap(), bytes);
        std::fs::remove_file(&streamed).unwrap();
        let table = TableFile::open(&path).unwrap();
        table.check_file_checksum().unwrap();
        assert_eq!(table.decode_all().unwrap(), symbols);

        // A write that fails after the temporary file was written (here the
        // rename, onto a directory) leaves nothing behind.
        let blocked = dir.path().join("level-010.mtb");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("keep"), b"x").unwrap();
        assert!(whole.write_file(&blocked).is_err());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "only the table and the directory: {left:?}");
    }

    /// A depth table writes and reads back every stored depth (the
    /// shortest, the longest short one, and long ones listed in its
    /// header), and is a kind of its own: neither it nor an even table
    /// opens as the other.
    #[test]
    fn a_depth_table_reads_back_and_opens_as_nothing_else() {
        use crate::error::FormatError;
        use crate::file::Table;
        use crate::kind::{Depth, StoredDepth, TableKind};
        use crate::levels::Levels;

        let rules = Rules::new(Variant::Oware, 2).unwrap();
        let level = 9;
        let positions = LevelIndex::new(2, level).count() as usize;
        let stored: Vec<StoredDepth> = (0..positions)
            .map(|i| match i % 7 {
                0 => StoredDepth::Long,
                1 => StoredDepth::Plies(Depth::LONG_PLIES - 1),
                2 => StoredDepth::Plies(0),
                k => StoredDepth::Plies((i * k % 130) as u16),
            })
            .collect();
        let mut symbols = vec![0i8; positions];
        for (entry, out) in stored.iter().zip(symbols.chunks_mut(1)) {
            Depth::<Even>::encode(level, *entry, out);
        }
        let long: Vec<(u64, u16)> = (0..positions as u64)
            .step_by(7)
            .map(|at| (at, Depth::LONG_PLIES + (at % 3) as u16 * 1000))
            .collect();
        let header = Header::for_depths::<Even>(&rules, level, &symbols, long.clone(), 16);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("depth-009.mtb");
        write_level(&header, &symbols, &path).unwrap();

        let table = Table::<Depth>::open(&path, None).unwrap();
        assert_eq!(table.header().kind(), Depth::<Even>::id());
        assert_eq!(table.header().long_depths, long);
        assert_eq!(table.header().long_depth(7), Some(Depth::LONG_PLIES + 1000));
        assert_eq!(table.header().long_depth(8), None);
        let read = table.decode_entries(&Levels::new()).unwrap();
        let read: Vec<StoredDepth> = read
            .chunks(1)
            .map(|symbol| Depth::<Even>::decode(level, symbol).unwrap())
            .collect();
        assert_eq!(read, stored);

        // A list out of order is a damaged header.
        let mut unordered = long.clone();
        unordered.swap(0, 1);
        let bad = dir.path().join("depth-bad.mtb");
        write_level(
            &Header::for_depths::<Even>(&rules, level, &symbols, unordered, 16),
            &symbols,
            &bad,
        )
        .unwrap();
        assert!(matches!(
            Table::<Depth>::open(&bad, None).err(),
            Some(FormatError::Corrupted { .. })
        ));

        let wrong = Table::<Even>::open(&path, None).err();
        assert!(
            matches!(wrong, Some(FormatError::WrongKind { expected, found, .. })
                if expected == Even::id() && found == Depth::<Even>::id()),
            "a depth table opened as values: {wrong:?}"
        );
        let values: Vec<i8> = (0..positions).map(|i| (i % 5) as i8 - 2).collect();
        let even = dir.path().join("level-009.mtb");
        write_level(
            &Header::for_symbols::<Even>(&rules, level, &values, 16),
            &values,
            &even,
        )
        .unwrap();
        assert!(matches!(
            Table::<Depth>::open(&even, None).err(),
            Some(FormatError::WrongKind { .. })
        ));
    }
}
