//! Exchange buffers compressed with zstd on their way between ranks.
//!
//! The sorted index lists are gap-coded already ([`super::wire`]), but
//! their varints still repeat (runs of one gap, one level's indices in
//! clusters), and the answers are a level's symbols in index order, which
//! repeat as much as the level's values do. A buffer for another rank
//! larger than [`SMALLEST`] is sent compressed when that makes it shorter;
//! a rank's buffer to itself never leaves the process and is passed as it
//! is.

use rayon::prelude::*;

use super::transport::Transport;

/// Buffers shorter than this are sent as they are: too short to gain.
const SMALLEST: usize = 256;
/// zstd's fastest level that still finds the repeats: the buffers are
/// compressed by the rank that sends them, between two compute phases.
const LEVEL: i32 = 1;
/// The last byte of a buffer sent as it is.
const RAW: u8 = 0;
/// The last byte of a compressed buffer, after its length uncompressed
/// (eight bytes, little-endian).
const ZSTD: u8 = 1;

/// A transport whose buffers to other ranks go through zstd.
pub(crate) struct Compressed<'a, T: Transport> {
    inner: &'a T,
}

impl<'a, T: Transport> Compressed<'a, T> {
    pub(crate) fn new(inner: &'a T) -> Self {
        Compressed { inner }
    }
}

impl<T: Transport> Transport for Compressed<'_, T> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    fn ranks(&self) -> usize {
        self.inner.ranks()
    }

    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let me = self.rank();
        let packed = outgoing
            .into_par_iter()
            .enumerate()
            .map(|(to, bytes)| pack(bytes, to != me))
            .collect();
        let received = self.inner.exchange(packed);
        received
            .into_par_iter()
            .enumerate()
            .map(|(from, bytes)| unpack(bytes, from))
            .collect()
    }
}

/// `bytes` tagged, and compressed if `remote` and that makes them shorter.
/// The tag is the last byte, so a buffer sent as it is is not copied.
fn pack(mut bytes: Vec<u8>, remote: bool) -> Vec<u8> {
    if remote && bytes.len() >= SMALLEST {
        let mut packed = zstd::bulk::compress(&bytes, LEVEL).expect("zstd compresses any buffer");
        if packed.len() + 9 < bytes.len() {
            packed.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            packed.push(ZSTD);
            return packed;
        }
    }
    bytes.push(RAW);
    bytes
}

/// The bytes rank `from` packed.
fn unpack(mut packed: Vec<u8>, from: usize) -> Vec<u8> {
    match packed.pop() {
        Some(RAW) => packed,
        Some(ZSTD) if packed.len() >= 8 => {
            let (data, len) = packed.split_at(packed.len() - 8);
            let len = u64::from_le_bytes(len.try_into().expect("eight bytes")) as usize;
            zstd::bulk::decompress(data, len)
                .unwrap_or_else(|e| panic!("rank {from} sent a damaged buffer: {e}"))
        }
        _ => panic!("rank {from} sent a buffer without its tag"),
    }
}
