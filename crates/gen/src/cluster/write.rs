//! A level written across ranks: the file one process would write, byte
//! for byte, without any rank holding the whole level.
//!
//! The header's model and histogram come from counts every rank takes of
//! its own symbols and all of them sum ([`ModelCounts`]); each rank codes
//! its own blocks with that model. The ranks then share their blocks'
//! frames (length and CRC) and the CRC of their bytes, from which each
//! knows the file's head and where its blocks go.
//! Rank 0 creates the temporary file with the head, every rank writes its
//! blocks at their offset, and rank 0 adds the trailer, syncs and renames:
//! the usual atomic write, on a directory every rank sees.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use mancala_format::{
    encode_blocks, table_head, table_trailer, temporary_path_of, BlockFrame, Header, ModelCounts,
    Uniform,
};

use super::agree;
use super::transport::{all_gather, Transport};
use crate::depth_table::listable;
use crate::error::BuildError;
use crate::solve::Solve;

/// What a rank writes of one level.
pub(crate) struct LevelShare<'a> {
    /// The level's file.
    pub path: &'a Path,
    /// The process id the job names its temporary files after.
    pub writer: u32,
    /// This rank's first position.
    pub first: u64,
    /// This rank's stored symbols.
    pub symbols: &'a [i8],
}

/// Writes the level of `n` stones; every rank calls it with its share.
/// Returns the header and the file's size.
pub(crate) fn write_across<K: Solve>(
    transport: &impl Transport,
    rules: &mancala_core::Rules,
    n: u32,
    block_size: u32,
    share: &LevelShare,
) -> Result<(Header, u64), BuildError> {
    let header = header_across::<K>(transport, rules, n, block_size, share.symbols);
    write_with_header(transport, header, share)
}

/// Writes the depth table of level `n` (`docs/FORMAT.md`, "Depth
/// tables"); every rank calls it with its share of the symbols and of the
/// long depths.
pub(crate) fn write_depths_across<K: Solve>(
    transport: &impl Transport,
    rules: &mancala_core::Rules,
    n: u32,
    block_size: u32,
    share: &LevelShare,
    long: &[(u64, u16)],
) -> Result<(), BuildError> {
    let counts = match share.symbols {
        [] => Vec::new(),
        symbols => Header::depth_counts(rules, n, symbols, share.first, block_size).to_bytes(),
    };
    let counts = merged_counts(transport, counts);
    let mine: Vec<u8> = long
        .iter()
        .flat_map(|&(at, plies)| at.to_le_bytes().into_iter().chain(plies.to_le_bytes()))
        .collect();
    // The ranks' ranges ascend, so their lists joined in rank order do.
    let long: Vec<(u64, u16)> = all_gather(transport, mine)
        .iter()
        .flat_map(|bytes| bytes.chunks_exact(10).map(long_depth).collect::<Vec<_>>())
        .collect();
    let long = listable(n, long);
    let long = agree(transport, long)?;
    let header = Header::for_depth_counts::<K>(rules, n, block_size, &counts, long);
    write_with_header(transport, header, share)?;
    Ok(())
}

/// One long depth as [`write_depths_across`] sends it: index and plies,
/// little-endian.
fn long_depth(bytes: &[u8]) -> (u64, u16) {
    let at = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let plies = u16::from_le_bytes(bytes[8..].try_into().expect("2 bytes"));
    (at, plies)
}

/// Writes a level whose header every rank has; every rank calls it with
/// its share.
fn write_with_header(
    transport: &impl Transport,
    header: Header,
    share: &LevelShare,
) -> Result<(Header, u64), BuildError> {
    let blocks = encode_blocks(&header, share.symbols, share.first);
    let framed = frames_across(transport, &blocks);
    let frames: Vec<BlockFrame> = framed
        .iter()
        .flat_map(|r| r.frames.iter().copied())
        .collect();
    let head = table_head(&header, &frames);
    let rank = transport.rank();
    let before: u64 = framed[..rank].iter().map(RankBlocks::len).sum();
    let blocks_len: u64 = framed.iter().map(RankBlocks::len).sum();
    let size = head.len() as u64 + blocks_len + 8;
    let tmp = temporary_path_of(share.path, share.writer);
    let io = |source| BuildError::Io {
        path: tmp.clone(),
        source,
    };
    // Rank 0 creates the file and its head.
    let created = if rank == 0 {
        create_with_head(&tmp, &head, size).map_err(io)
    } else {
        Ok(())
    };
    agree(transport, created)?;
    // Every rank writes its blocks where they go.
    let written = write_blocks(&tmp, head.len() as u64 + before, &blocks).map_err(io);
    agree(transport, written)?;
    // Rank 0 closes the file: its checksum, its end, its name.
    let finished = if rank == 0 {
        let mut crc = crc32fast::Hasher::new();
        for r in &framed {
            crc.combine(&crc32fast::Hasher::new_with_initial_len(r.crc, r.len()));
        }
        finish(&tmp, share.path, &head, &crc, size - 8).map_err(io)
    } else {
        Ok(())
    };
    if finished.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    agree(transport, finished)?;
    Ok((header, size))
}

/// The level's header, from the model counts of every rank's symbols
/// summed (which give the histogram too).
fn header_across<K: Solve>(
    transport: &impl Transport,
    rules: &mancala_core::Rules,
    n: u32,
    block_size: u32,
    symbols: &[i8],
) -> Header {
    let block_symbols = block_size as usize * K::WIDTH;
    let counts = if symbols.is_empty() {
        Vec::new()
    } else {
        ModelCounts::count(symbols, 0, block_symbols, &Uniform).to_bytes()
    };
    Header::for_counts::<K>(rules, n, block_size, &merged_counts(transport, counts))
}

/// The sum of every rank's model counts (`counts`, this rank's, empty if
/// it holds no position of the level).
fn merged_counts(transport: &impl Transport, counts: Vec<u8>) -> ModelCounts {
    all_gather(transport, counts)
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| ModelCounts::from_bytes(c).expect("counts from a rank of this job"))
        .reduce(ModelCounts::merge)
        .expect("some rank holds positions of every level")
}

/// One rank's coded blocks, as the others learn of them.
struct RankBlocks {
    frames: Vec<BlockFrame>,
    /// The CRC-32 of all its blocks' bytes, one after another.
    crc: u32,
}

impl RankBlocks {
    /// Its blocks' bytes in all.
    fn len(&self) -> u64 {
        self.frames.iter().map(|f| f.len).sum()
    }
}

/// Every rank's blocks, in rank order: their frames, and the CRC of each
/// rank's bytes (the file's checksum combines one per rank, not one per
/// block).
fn frames_across(transport: &impl Transport, blocks: &[Vec<u8>]) -> Vec<RankBlocks> {
    let mut crc = crc32fast::Hasher::new();
    let mut mine = Vec::with_capacity(4 + blocks.len() * 12);
    for block in blocks {
        crc.update(block);
    }
    mine.extend_from_slice(&crc.finalize().to_le_bytes());
    for block in blocks {
        let frame = BlockFrame::of(block);
        mine.extend_from_slice(&frame.len.to_le_bytes());
        mine.extend_from_slice(&frame.crc.to_le_bytes());
    }
    all_gather(transport, mine)
        .iter()
        .map(|bytes| RankBlocks {
            crc: u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")),
            frames: bytes[4..]
                .chunks_exact(12)
                .map(|f| BlockFrame {
                    len: u64::from_le_bytes(f[..8].try_into().expect("8 bytes")),
                    crc: u32::from_le_bytes(f[8..].try_into().expect("4 bytes")),
                })
                .collect(),
        })
        .collect()
}

fn create_with_head(tmp: &Path, head: &[u8], size: u64) -> std::io::Result<()> {
    let file = File::create(tmp)?;
    file.set_len(size)?;
    file.write_all_at(head, 0)?;
    file.sync_data()
}

fn write_blocks(tmp: &Path, mut offset: u64, blocks: &[Vec<u8>]) -> std::io::Result<()> {
    if blocks.is_empty() {
        return Ok(());
    }
    let file = OpenOptions::new().write(true).open(tmp)?;
    for block in blocks {
        file.write_all_at(block, offset)?;
        offset += block.len() as u64;
    }
    file.sync_data()
}

fn finish(
    tmp: &Path,
    path: &Path,
    head: &[u8],
    blocks: &crc32fast::Hasher,
    trailer_at: u64,
) -> std::io::Result<()> {
    let file = OpenOptions::new().write(true).open(tmp)?;
    file.write_all_at(&table_trailer(head, blocks), trailer_at)?;
    file.sync_all()?;
    std::fs::rename(tmp, path)?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
