//! The new members of a set found in one round of a threshold: what the
//! next round propagates from.
//!
//! A frontier can hold a large part of a level (a threshold's seeds are
//! every position whose best exit has that value). Where memory is short
//! (the lean mode) it is held in memory only up to a bound and beyond it
//! written to a temporary file, the indices as they came, compressed with
//! zstd, and read back in pieces, once, so the memory a frontier costs is
//! bounded whatever its size. Elsewhere it is held whole.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::BuildError;

/// Members held in memory before a frontier goes to its file. Small in
/// debug builds, so the tests spill frontiers.
const HELD: usize = if cfg!(debug_assertions) {
    1 << 6
} else {
    1 << 22
};
/// zstd's level for the spilled members: one of its fast negative levels.
/// Members in the order a delivery found them are far less regular than
/// the lists' sorted gaps, so compressing them harder buys little room
/// and costs the solver's own time.
const LEVEL: i32 = -3;

/// A frontier being filled, then drained.
pub(crate) struct Frontier {
    /// Where it spills to; `None`: it is held whole.
    path: Option<PathBuf>,
    held: Vec<u64>,
    spill: Option<zstd::Encoder<'static, BufWriter<File>>>,
    len: u64,
}

impl Frontier {
    /// An empty frontier that spills, if it must, to `path`.
    pub(crate) fn spilling_to(path: PathBuf) -> Frontier {
        Frontier {
            path: Some(path),
            ..Frontier::held()
        }
    }

    /// An empty frontier held in memory whatever its size.
    pub(crate) fn held() -> Frontier {
        Frontier {
            path: None,
            held: Vec::new(),
            spill: None,
            len: 0,
        }
    }

    /// A frontier held in memory, of `members`.
    pub(crate) fn of(members: Vec<u64>) -> Frontier {
        Frontier {
            len: members.len() as u64,
            held: members,
            ..Frontier::held()
        }
    }

    /// How many members were added.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Adds `members` (taken as they are if the frontier held none).
    pub(crate) fn extend(&mut self, members: Vec<u64>) -> Result<(), BuildError> {
        self.len += members.len() as u64;
        let fits = self.held.len() + members.len() <= HELD;
        let Some(path) = self.path.clone().filter(|_| self.spill.is_some() || !fits) else {
            if self.held.is_empty() {
                self.held = members;
            } else {
                self.held.extend_from_slice(&members);
            }
            return Ok(());
        };
        let io = |source| io(&path, source);
        if self.spill.is_none() {
            let file = File::create(&path).map_err(io)?;
            let mut spill = zstd::Encoder::new(BufWriter::new(file), LEVEL).map_err(io)?;
            spill.include_checksum(true).map_err(io)?;
            self.spill = Some(spill);
        }
        let out = self.spill.as_mut().expect("opened above");
        out.write_all(bytemuck::cast_slice(&self.held))
            .map_err(io)?;
        out.write_all(bytemuck::cast_slice(&members)).map_err(io)?;
        self.held = Vec::new();
        Ok(())
    }

    /// Adds every member of `other`, in the order they were added there.
    pub(crate) fn append(&mut self, other: Frontier) -> Result<(), BuildError> {
        if other.spill.is_none() {
            return self.extend(other.held);
        }
        other.drain(HELD, |members| self.extend(members.to_vec()))
    }

    /// Hands every member to `visit`, in the order they were added, in
    /// pieces of at most `piece`, and removes the file it spilled to. The
    /// file is read to its end, its zstd checksum checked: a damaged one
    /// is [`BuildError::ScratchDamaged`].
    pub(crate) fn drain(
        self,
        piece: usize,
        mut visit: impl FnMut(&[u64]) -> Result<(), BuildError>,
    ) -> Result<(), BuildError> {
        let (Some(out), Some(path)) = (self.spill, self.path) else {
            return self.held.chunks(piece).try_for_each(visit);
        };
        let io = |source| io(&path, source);
        out.finish().map_err(io)?.flush().map_err(io)?;
        let mut input = zstd::Decoder::new(File::open(&path).map_err(io)?).map_err(io)?;
        let mut buf = vec![0u64; piece.min(self.len as usize)];
        let mut left = self.len;
        let damaged = |why: String| BuildError::ScratchDamaged {
            path: path.clone(),
            why,
        };
        let mut drained = || {
            while left > 0 {
                let len = piece.min(left as usize);
                input
                    .read_exact(bytemuck::cast_slice_mut(&mut buf[..len]))
                    .map_err(|e| damaged(e.to_string()))?;
                visit(&buf[..len])?;
                left -= len as u64;
            }
            match input.read(&mut [0u8; 8]) {
                Ok(0) => Ok(()),
                Ok(_) => Err(damaged("more than the frontier's members".into())),
                Err(e) => Err(damaged(e.to_string())),
            }
        };
        let drained = drained();
        let _ = std::fs::remove_file(&path);
        drained
    }
}

fn io(path: &Path, source: std::io::Error) -> BuildError {
    BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}
