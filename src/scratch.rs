//! Scratch space for solved lower levels while higher ones are built.
//!
//! Every level below the one being solved is read at random by the forward
//! pass, so it must be held uncompressed. Small levels stay in memory; a
//! large level ([`MAPPED_MIN_POSITIONS`] by default) is written to an uncompressed
//! file in a scratch directory and memory-mapped, so the OS pages it and the
//! build's own memory stays at the level being solved. The directory is
//! removed when the [`Scratch`] is dropped (mappings stay valid until they
//! are dropped too).

use std::fs::OpenOptions;
use std::path::PathBuf;

use memmap2::{Mmap, MmapMut};

use crate::error::{Error, Result};
use crate::solver::SolvedLevels;
use crate::table::Table;

/// Levels with at least this many positions are held as mapped files by
/// default (64 Mi positions: oware levels from 21 stones on).
pub const MAPPED_MIN_POSITIONS: u64 = 1 << 26;

/// A scratch directory holding mapped lower levels.
pub struct Scratch {
    dir: PathBuf,
    mapped_min_positions: u64,
}

impl Scratch {
    /// Creates (or empties) the scratch directory `dir`; levels of at least
    /// `mapped_min_positions` positions go to mapped files.
    pub fn create(dir: impl Into<PathBuf>, mapped_min_positions: u64) -> Result<Scratch> {
        let dir = dir.into();
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Scratch {
            dir,
            mapped_min_positions,
        })
    }

    /// Appends solved level `n` (`values`) to `solved`.
    pub fn hold(&self, solved: &mut SolvedLevels, n: u32, values: Vec<i8>) -> Result<()> {
        if (values.len() as u64) < self.mapped_min_positions {
            solved.push(values);
            return Ok(());
        }
        let mut map = self.new_level_file(n, values.len())?;
        map.copy_from_slice(bytemuck::cast_slice(&values));
        drop(values);
        solved.push_mapped(self.read_only(n, map)?);
        Ok(())
    }

    /// Appends the level stored in `table` to `solved`, decoding it and
    /// restoring the values it left to its reader (from the levels below,
    /// which `solved` holds).
    pub fn hold_table(&self, solved: &mut SolvedLevels, table: &Table) -> Result<()> {
        let header = table.header();
        if header.positions < self.mapped_min_positions {
            let values = table.decode_values(solved)?;
            solved.push(values);
            return Ok(());
        }
        let mut map = self.new_level_file(header.level, header.positions as usize)?;
        table.decode_values_into(bytemuck::cast_slice_mut(&mut map[..]), solved)?;
        solved.push_mapped(self.read_only(header.level, map)?);
        Ok(())
    }

    fn path(&self, n: u32) -> PathBuf {
        self.dir.join(format!("level-{n:03}.raw"))
    }

    fn new_level_file(&self, n: u32, len: usize) -> Result<MmapMut> {
        let path = self.path(n);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        file.set_len(len as u64).map_err(|e| Error::io(&path, e))?;
        // SAFETY: the file is private to this scratch directory.
        unsafe { MmapMut::map_mut(&file) }.map_err(|e| Error::io(&path, e))
    }

    fn read_only(&self, n: u32, map: MmapMut) -> Result<Mmap> {
        let map = map
            .make_read_only()
            .map_err(|e| Error::io(self.path(n), e))?;
        let _ = map.advise(memmap2::Advice::Random);
        Ok(map)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
