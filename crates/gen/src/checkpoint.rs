//! Checkpoints inside a level, so a killed build of a long level resumes
//! from the last saved threshold instead of from the level's start.
//!
//! The retrograde strategy's whole state between two thresholds is its
//! byte arrays ([`LevelState::arrays`]), and where depths to conversion
//! are asked for, the depths of the thresholds done, as two more arrays
//! (every depth's low bytes, then its high bytes); a checkpoint is those
//! arrays plus the threshold to continue from. Because the propagation's
//! result does not depend on the order of work, a resumed level ends with
//! the same entries and depths, byte for byte, as an uninterrupted one.
//!
//! ```text
//! magic "MTBCKPT3" | level u32 | next threshold u32 | positions u64 |
//! arrays u32 | arrays × positions bytes | CRC-32 of all before
//! ```
//!
//! Written to a temporary name and renamed, so a checkpoint that exists is
//! complete; one that fails any check is ignored.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU8;
use std::time::Duration;

use mancala_format::temporary_path;

use crate::error::BuildError;
use crate::solve::LevelState;

/// Version 3: any number of state arrays (forced tables have three), so
/// an earlier checkpoint is ignored rather than misread.
const MAGIC: &[u8; 8] = b"MTBCKPT3";
const HEADER: usize = 8 + 4 + 4 + 8 + 4;

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

/// Views atomic bytes as plain bytes for writing them out.
pub(crate) fn plain(atomics: &[AtomicU8]) -> &[u8] {
    // SAFETY: `AtomicU8` has the size, alignment and bit validity of `u8`;
    // checkpoints are written between thresholds, when no thread modifies
    // the state.
    unsafe { std::slice::from_raw_parts(atomics.as_ptr() as *const u8, atomics.len()) }
}

/// Saves the state `arrays` of level `level` before threshold
/// `next_threshold`, and the `extra` arrays after them (as many bytes
/// each).
pub(crate) fn save(
    path: &Path,
    level: u32,
    next_threshold: u32,
    arrays: &[&[AtomicU8]],
    extra: &[&[u8]],
) -> Result<(), BuildError> {
    let positions = arrays.first().map_or(0, |a| a.len());
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&level.to_le_bytes());
    header.extend_from_slice(&next_threshold.to_le_bytes());
    header.extend_from_slice(&(positions as u64).to_le_bytes());
    header.extend_from_slice(&((arrays.len() + extra.len()) as u32).to_le_bytes());
    let mut parts = vec![&header[..]];
    parts.extend(arrays.iter().map(|array| plain(array)));
    parts.extend(extra.iter().copied());
    write_checked(path, &parts)
}

/// Writes `parts` one after the other to `path`, then the CRC-32 of them
/// all: to a temporary name first, synced, then renamed, so a checkpoint
/// that exists is complete. Both modes' checkpoints are written so.
pub(crate) fn write_checked(path: &Path, parts: &[&[u8]]) -> Result<(), BuildError> {
    write_checked_reading(path, parts, &mut std::io::empty())
}

/// [`write_checked`] with `parts` followed by all that `rest` reads: a
/// state too large to be held in memory beside what is, read from its
/// file.
pub(crate) fn write_checked_reading(
    path: &Path,
    parts: &[&[u8]],
    rest: &mut dyn Read,
) -> Result<(), BuildError> {
    let tmp = temporary_path(path);
    let mut write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let mut crc = crc32fast::Hasher::new();
        for part in parts {
            crc.update(part);
            out.write_all(part)?;
        }
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let read = match rest.read(&mut buf) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            crc.update(&buf[..read]);
            out.write_all(&buf[..read])?;
        }
        out.write_all(&crc.finalize().to_le_bytes())?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        BuildError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Loads the checkpoint of level `level` with `positions` positions and
/// `extra` arrays after the state's, if one exists and passes every check:
/// the state, the threshold to continue from and the extra arrays.
pub(crate) fn load<S: LevelState>(
    path: &Path,
    level: u32,
    positions: u64,
    extra: usize,
) -> Option<(S, u32, Vec<Vec<u8>>)> {
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; HEADER];
    input.read_exact(&mut header).ok()?;
    let field = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let count = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
    let arrays = field(24) as u64;
    if &header[..8] != MAGIC
        || field(8) != level
        || count != positions
        || size != HEADER as u64 + arrays * positions + 4
    {
        return None;
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header);
    let mut state = Vec::with_capacity(arrays as usize);
    for _ in 0..arrays {
        let mut bytes = vec![0u8; positions as usize];
        input.read_exact(&mut bytes).ok()?;
        crc.update(&bytes);
        state.push(bytes);
    }
    let mut stored_crc = [0u8; 4];
    input.read_exact(&mut stored_crc).ok()?;
    if crc.finalize() != u32::from_le_bytes(stored_crc) || state.len() < extra {
        return None;
    }
    let extra = state.split_off(state.len() - extra);
    Some((S::from_arrays(state)?, field(12), extra))
}
