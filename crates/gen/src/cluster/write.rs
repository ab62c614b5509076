//! A level written across ranks: the file one process would write, byte
//! for byte, without any rank holding the whole level.
//!
//! The value model is fitted from counts every rank takes of its own
//! symbols and all of them sum ([`ModelCounts`]); each rank codes its own
//! blocks with it. The ranks then share their blocks' frames (length and
//! CRC), from which each knows the file's head and where its blocks go.
//! Rank 0 creates the temporary file with the head, every rank writes its
//! blocks at their offset, and rank 0 adds the trailer, syncs and renames:
//! the usual atomic write, on a directory every rank sees.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use mancala_format::{
    encode_blocks, histogram, table_head, table_trailer, temporary_path_of, BlockFrame, Header,
    Model, ModelCounts, Uniform,
};

use super::agree;
use super::transport::{all_gather, Transport};
use super::wire::{get_varint, put_varint};
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
    let blocks = encode_blocks(&header, share.symbols, share.first);
    let frames = frames_across(transport, &blocks);
    let head = table_head(&header, &frames);
    let before: u64 = frames[..frames_before(transport, blocks.len())]
        .iter()
        .map(|f| f.len)
        .sum();
    let blocks_len: u64 = frames.iter().map(|f| f.len).sum();
    let size = head.len() as u64 + blocks_len + 8;
    let tmp = temporary_path_of(share.path, share.writer);
    let rank = transport.rank();
    let io = |what: &str, e: std::io::Error| format!("{what} {}: {e}", tmp.display());
    // Rank 0 creates the file and its head.
    let created = if rank == 0 {
        create_with_head(&tmp, &head, size).map_err(|e| io("cannot create", e))
    } else {
        Ok(())
    };
    agree(transport, created)?;
    // Every rank writes its blocks where they go.
    let written = write_blocks(&tmp, head.len() as u64 + before, &blocks)
        .map_err(|e| io("cannot write blocks to", e));
    agree(transport, written)?;
    // Rank 0 closes the file: its checksum, its end, its name.
    let crc = blocks_crc_across(transport, &blocks);
    let finished = if rank == 0 {
        finish(&tmp, share.path, &head, &crc, size - 8).map_err(|e| io("cannot finish", e))
    } else {
        Ok(())
    };
    if finished.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    agree(transport, finished)?;
    Ok((header, size))
}

/// The level's header: its histogram and value model summed over every
/// rank's symbols.
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
    let counts = all_gather(transport, counts)
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| ModelCounts::from_bytes(c).expect("counts from a rank of this job"))
        .reduce(ModelCounts::merge)
        .expect("some rank holds positions of every level");
    let mut hist = Vec::new();
    for (value, count) in histogram(symbols) {
        put_varint(&mut hist, value as u8 as u64);
        put_varint(&mut hist, count);
    }
    let mut total = [0u64; 256];
    for bytes in all_gather(transport, hist) {
        let mut at = 0;
        while at < bytes.len() {
            let value = get_varint(&bytes, &mut at) as u8;
            total[value as usize] += get_varint(&bytes, &mut at);
        }
    }
    let histogram = (-128i16..=127)
        .map(|v| (v as i8, total[v as i8 as u8 as usize]))
        .filter(|&(_, c)| c > 0)
        .collect();
    Header::for_parts::<K>(
        rules,
        n,
        block_size,
        histogram,
        &Model::from_counts(&counts),
    )
}

/// Every rank's block frames, in rank order: the whole level's.
fn frames_across(transport: &impl Transport, blocks: &[Vec<u8>]) -> Vec<BlockFrame> {
    let mut mine = Vec::with_capacity(blocks.len() * 12);
    for block in blocks {
        let frame = BlockFrame::of(block);
        mine.extend_from_slice(&frame.len.to_le_bytes());
        mine.extend_from_slice(&frame.crc.to_le_bytes());
    }
    all_gather(transport, mine)
        .iter()
        .flat_map(|bytes| {
            bytes.chunks_exact(12).map(|f| BlockFrame {
                len: u64::from_le_bytes(f[..8].try_into().expect("8 bytes")),
                crc: u32::from_le_bytes(f[8..].try_into().expect("4 bytes")),
            })
        })
        .collect()
}

/// How many blocks the ranks before this one hold.
fn frames_before(transport: &impl Transport, mine: usize) -> usize {
    let counts = super::transport::gather_u64(transport, mine as u64);
    counts[..transport.rank()].iter().sum::<u64>() as usize
}

/// The CRC-32 state of every rank's blocks, one after another (at rank 0;
/// the others get theirs only).
fn blocks_crc_across(transport: &impl Transport, blocks: &[Vec<u8>]) -> crc32fast::Hasher {
    let mut mine = crc32fast::Hasher::new();
    let mut len = 0u64;
    for block in blocks {
        mine.update(block);
        len += block.len() as u64;
    }
    let mut bytes = mine.clone().finalize().to_le_bytes().to_vec();
    bytes.extend_from_slice(&len.to_le_bytes());
    let mut all = crc32fast::Hasher::new();
    for part in all_gather(transport, bytes) {
        let crc = u32::from_le_bytes(part[..4].try_into().expect("4 bytes"));
        let len = u64::from_le_bytes(part[4..12].try_into().expect("8 bytes"));
        all.combine(&crc32fast::Hasher::new_with_initial_len(crc, len));
    }
    all
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
