//! Checkpoints inside a level, so a killed build of a long level resumes
//! from the last saved threshold instead of from the level's start.
//!
//! The solver's whole state between two thresholds is its two bytes per
//! position (see [`crate::solver`]); a checkpoint is that state plus the
//! threshold to continue from. Because the propagation's result does not
//! depend on the order of work, a resumed level ends with the same values,
//! byte for byte, as an uninterrupted one.
//!
//! ```text
//! magic "MTBCKPT2" | level u32 | next threshold u32 | positions u64 |
//! values (positions bytes) | flags (positions bytes) | CRC-32 of all before
//! ```
//!
//! Written to a temporary name and renamed, so a checkpoint that exists is
//! complete; one that fails any check is ignored.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI8, AtomicU8};
use std::time::Duration;

use crate::error::{Error, Result};

/// Version 2: flag bytes no longer carry a bit for compact tables, so a
/// version-1 checkpoint (whose flags may) is ignored rather than misread.
const MAGIC: &[u8; 8] = b"MTBCKPT2";
const HEADER: usize = 8 + 4 + 4 + 8;

/// Where and how often a level being solved saves its state.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    /// Directory of the checkpoint files (one per level).
    pub dir: PathBuf,
    /// Least solving time between two checkpoints of a level.
    pub every: Duration,
}

impl Checkpoints {
    /// The checkpoint file of level `n`.
    pub fn path(&self, n: u32) -> PathBuf {
        self.dir.join(format!("level-{n:03}.ckpt"))
    }

    /// Removes level `n`'s checkpoint (once the level is written).
    pub fn remove(&self, n: u32) {
        let _ = std::fs::remove_file(self.path(n));
    }
}

/// A loaded checkpoint: the threshold to continue from and the state.
pub(crate) struct Saved {
    pub next_threshold: u32,
    pub value: Vec<AtomicI8>,
    pub flags: Vec<AtomicU8>,
}

/// Views atomic bytes as plain bytes for writing them out.
fn atomic_bytes<T>(atomics: &[T]) -> &[u8] {
    assert_eq!(std::mem::size_of::<T>(), 1);
    // SAFETY: `AtomicI8`/`AtomicU8` have the size, alignment and bit validity
    // of `u8`; checkpoints are written between thresholds, when no thread
    // modifies the state.
    unsafe { std::slice::from_raw_parts(atomics.as_ptr() as *const u8, atomics.len()) }
}

/// Saves the state of level `level` before threshold `next_threshold`.
pub(crate) fn save(
    path: &Path,
    level: u32,
    next_threshold: u32,
    value: &[AtomicI8],
    flags: &[AtomicU8],
) -> Result<()> {
    let tmp = path.with_extension("ckpt.tmp");
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let mut crc = crc32fast::Hasher::new();
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&level.to_le_bytes());
        header.extend_from_slice(&next_threshold.to_le_bytes());
        header.extend_from_slice(&(value.len() as u64).to_le_bytes());
        for part in [&header[..], atomic_bytes(value), atomic_bytes(flags)] {
            crc.update(part);
            out.write_all(part)?;
        }
        out.write_all(&crc.finalize().to_le_bytes())?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| Error::io(path, e))
}

/// Loads the checkpoint of level `level` with `positions` positions, if one
/// exists and passes every check.
pub(crate) fn load(path: &Path, level: u32, positions: usize) -> Option<Saved> {
    let file = File::open(path).ok()?;
    if file.metadata().ok()?.len() != (HEADER + 2 * positions + 4) as u64 {
        return None;
    }
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER];
    input.read_exact(&mut header).ok()?;
    let field = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let count = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
    if &header[..8] != MAGIC || field(8) != level || count != positions as u64 {
        return None;
    }
    let mut value = vec![0u8; positions];
    let mut flags = vec![0u8; positions];
    let mut stored_crc = [0u8; 4];
    input.read_exact(&mut value).ok()?;
    input.read_exact(&mut flags).ok()?;
    input.read_exact(&mut stored_crc).ok()?;
    let mut crc = crc32fast::Hasher::new();
    for part in [&header[..], &value, &flags] {
        crc.update(part);
    }
    if crc.finalize() != u32::from_le_bytes(stored_crc) {
        return None;
    }
    Some(Saved {
        next_threshold: field(12),
        value: value.into_iter().map(|b| AtomicI8::new(b as i8)).collect(),
        flags: flags.into_iter().map(AtomicU8::new).collect(),
    })
}
