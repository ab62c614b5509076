//! Checkpoints of a lean level, so that a killed build resumes inside the
//! level: between two thresholds, or inside its forward pass.
//!
//! Between thresholds: The lists on disk are complete for every
//! threshold done (a threshold's decisions are written before the next one
//! starts, and the exit lists before the first), so a checkpoint is the
//! level's state, the threshold to go on from and the length of every
//! list it relies on, and where depths to conversion are asked for, the
//! depths of the thresholds done (two bytes a position, little-endian):
//!
//! ```text
//! magic "MTBLEAN2" | level u32 | next threshold u32 | positions u64 |
//! lists u32 | lists × length u64 | state bytes | [depths] |
//! CRC-32 of all before
//! ```
//!
//! Written to a temporary name, synced and renamed, so a checkpoint that
//! exists is complete; one that fails any check, or whose lists are not
//! all there, is ignored and the level starts again. The default mode's
//! checkpoints have another magic: neither mode reads the other's.
//!
//! Inside the forward pass, the state is not in memory yet: a checkpoint
//! is the positions listed so far, the length of the state file then
//! (their first states) and the CRC-32 of those bytes, which the state
//! file is checked against when it is read, and where each exit list
//! stood, sealed, when they were ([`Sealed`]):
//!
//! ```text
//! magic "MTBLFWD4" | level u32 | positions u64 | listed u64 |
//! state file bytes u64 | state file CRC-32 u32 | lists u32 |
//! lists × (bytes u64, indices u64, last index u64) | CRC-32
//! ```
//!
//! A level has one checkpoint file: the forward pass's is replaced by the
//! thresholds' first one. (`MTBLFWD3`, whose forced starts were a byte a
//! position, is not read: with seven pits a side its state file would
//! have the size of the new starts.)

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::lists::Sealed;
use crate::checkpoint::{write_checked, write_checked_reading};
use crate::error::BuildError;

const MAGIC: &[u8; 8] = b"MTBLEAN2";
const HEADER: usize = 8 + 4 + 4 + 8 + 4;
const FORWARD_MAGIC: &[u8; 8] = b"MTBLFWD4";
const FORWARD_HEADER: usize = 8 + 4 + 8 + 8 + 8 + 4 + 4;

/// What a checkpoint holds.
pub(super) struct Saved {
    /// The threshold to go on from.
    pub(super) next_threshold: u32,
    /// The length of each list, in the order they were saved in.
    pub(super) lists: Vec<u64>,
    /// The state's bytes.
    pub(super) state: Vec<u8>,
}

/// Saves level `level` (of `positions` positions) before threshold
/// `next_threshold`: its `lists`' lengths and its state's bytes, which
/// `state` reads (from memory, or from the forward pass's state file).
pub(super) fn save(
    path: &Path,
    level: u32,
    positions: u64,
    next_threshold: u32,
    lists: &[u64],
    state: &mut dyn Read,
) -> Result<(), BuildError> {
    let mut head = Vec::with_capacity(HEADER + 8 * lists.len());
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&level.to_le_bytes());
    head.extend_from_slice(&next_threshold.to_le_bytes());
    head.extend_from_slice(&positions.to_le_bytes());
    head.extend_from_slice(&(lists.len() as u32).to_le_bytes());
    for len in lists {
        head.extend_from_slice(&len.to_le_bytes());
    }
    write_checked_reading(path, &[&head], state)
}

/// The checkpoint of level `level`, of `positions` positions and
/// `state_bytes` bytes of state, if one exists and passes every check.
pub(super) fn load(path: &Path, level: u32, positions: u64, state_bytes: usize) -> Option<Saved> {
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut head = [0u8; HEADER];
    input.read_exact(&mut head).ok()?;
    let word = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().expect("4 bytes"));
    let count = u64::from_le_bytes(head[16..24].try_into().expect("8 bytes"));
    let lists = word(24) as usize;
    let expected_size = (HEADER + 8 * lists + state_bytes + 4) as u64;
    if &head[..8] != MAGIC || word(8) != level || count != positions || size != expected_size {
        return None;
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&head);
    let mut lengths = vec![0u8; 8 * lists];
    input.read_exact(&mut lengths).ok()?;
    crc.update(&lengths);
    let mut state = vec![0u8; state_bytes];
    input.read_exact(&mut state).ok()?;
    crc.update(&state);
    let mut stored = [0u8; 4];
    input.read_exact(&mut stored).ok()?;
    if crc.finalize() != u32::from_le_bytes(stored) {
        return None;
    }
    Some(Saved {
        next_threshold: word(12),
        lists: lengths
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect(),
        state,
    })
}

/// What a checkpoint inside the forward pass holds.
pub(super) struct ForwardSaved {
    /// The positions listed.
    pub(super) listed: u64,
    /// The state file's length.
    pub(super) state_bytes: u64,
    /// The CRC-32 of the state file's bytes.
    pub(super) state_crc: u32,
    /// Where each exit list stood.
    pub(super) lists: Vec<Sealed>,
}

/// Saves level `level` (of `positions` positions) inside its forward pass,
/// its first `listed` positions in exit lists that were `sealed` so and in
/// the state file's first bytes (`state`: their length and CRC-32).
pub(super) fn save_forward(
    path: &Path,
    level: u32,
    positions: u64,
    listed: u64,
    (state_bytes, state_crc): (u64, u32),
    sealed: &[Sealed],
) -> Result<(), BuildError> {
    let mut bytes = Vec::with_capacity(FORWARD_HEADER + 24 * sealed.len());
    bytes.extend_from_slice(FORWARD_MAGIC);
    bytes.extend_from_slice(&level.to_le_bytes());
    bytes.extend_from_slice(&positions.to_le_bytes());
    bytes.extend_from_slice(&listed.to_le_bytes());
    bytes.extend_from_slice(&state_bytes.to_le_bytes());
    bytes.extend_from_slice(&state_crc.to_le_bytes());
    bytes.extend_from_slice(&(sealed.len() as u32).to_le_bytes());
    for list in sealed {
        for word in [list.bytes, list.len, list.last] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
    }
    write_checked(path, &[&bytes])
}

/// The forward pass's checkpoint of level `level`, of `positions`
/// positions, if one exists and passes every check.
pub(super) fn load_forward(path: &Path, level: u32, positions: u64) -> Option<ForwardSaved> {
    let bytes = std::fs::read(path).ok()?;
    let (body, stored) = bytes.split_last_chunk::<4>()?;
    if body.len() < FORWARD_HEADER
        || &body[..8] != FORWARD_MAGIC
        || crc32fast::hash(body) != u32::from_le_bytes(*stored)
    {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().expect("4 bytes"));
    let lists = half(40) as usize;
    let level_ok = half(8) == level;
    let listed = word(20);
    if !level_ok
        || word(12) != positions
        || listed > positions
        || body.len() != FORWARD_HEADER + 24 * lists
    {
        return None;
    }
    let sealed: Vec<Sealed> = (0..lists)
        .map(|k| {
            let at = FORWARD_HEADER + 24 * k;
            Sealed {
                bytes: word(at),
                len: word(at + 8),
                last: word(at + 16),
            }
        })
        .collect();
    Some(ForwardSaved {
        listed,
        state_bytes: word(28),
        state_crc: half(36),
        lists: sealed,
    })
}
