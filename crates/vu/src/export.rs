//! Our awari tables written as VU files: each level's values in the VU
//! order, one sequential write, to a temporary file renamed when complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mancala_core::LevelIndex;
use mancala_format::temporary_path;
use rayon::prelude::*;

use crate::error::VuError;
use crate::files::{file_path, PITS};
use crate::order::{for_each_group, numbered_positions};
use crate::ours::OurLevels;
use crate::Progress;

/// One level written.
#[derive(Clone, Debug)]
pub struct ExportedLevel {
    /// Stones on the board.
    pub level: u32,
    /// The file written.
    pub path: PathBuf,
    /// Its bytes: the level's numbered positions.
    pub bytes: u64,
    /// Seconds it took, reading our table included.
    pub seconds: f64,
}

/// Writes `scores.0` … `scores.max` to `out` (created if needed) from the
/// even awari tables under `root`; without `max`, every level present from
/// 0 up. Levels too large for memory are held under `scratch` while
/// higher ones are read (compact tables restore from them).
pub fn export(
    root: &Path,
    max: Option<u32>,
    out: &Path,
    scratch: &Path,
    progress: &dyn Progress,
) -> Result<Vec<ExportedLevel>, VuError> {
    let mut ours = OurLevels::new(root, scratch);
    let last = ours.last_level(max)?;
    std::fs::create_dir_all(out).map_err(|e| VuError::io(out, e))?;
    (0..=last)
        .map(|n| {
            let start = Instant::now();
            let positions = LevelIndex::new(PITS, n).count();
            progress.level_started(n, positions, positions);
            let values = ours.values(n)?;
            let path = file_path(out, n);
            let bytes = write_atomically(&path, |file| write_level(n, &values, file, progress))?;
            Ok(ExportedLevel {
                level: n,
                path,
                bytes,
                seconds: start.elapsed().as_secs_f64(),
            })
        })
        .collect()
}

/// Writes level `n`'s file from its `values` in our order; returns its
/// length.
fn write_level(
    n: u32,
    values: &[i8],
    out: &mut impl Write,
    progress: &dyn Progress,
) -> std::io::Result<u64> {
    let index = LevelIndex::new(PITS, n);
    let mut written = 0;
    for_each_group(&index, |group, numbered| {
        let stretches: Vec<Vec<u8>> = group
            .stretches()
            .zip(numbered)
            .map(|(ranks, &numbered)| {
                let mut bytes = vec![0u8; numbered];
                for (rank, at, _) in numbered_positions(&index, ranks, numbered) {
                    bytes[at] = values[rank as usize] as u8;
                }
                bytes
            })
            .collect();
        // The stretch with the highest ranks comes first in the file.
        for bytes in stretches.iter().rev() {
            out.write_all(bytes)?;
            written += bytes.len() as u64;
        }
        progress.advanced(group.positions());
        Ok::<(), std::io::Error>(())
    })?;
    Ok(written)
}

/// Runs `write` on a temporary file beside `path`, then syncs it and
/// renames it to `path`: a killed export never leaves a file of the final
/// name that is not complete. The temporary file goes on any error.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<u64>,
) -> Result<u64, VuError> {
    let temporary = temporary_path(path);
    let written = (|| {
        let file = File::create(&temporary)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let written = write(&mut out)?;
        out.into_inner()
            .map_err(std::io::IntoInnerError::into_error)?
            .sync_all()?;
        std::fs::rename(&temporary, path)?;
        Ok(written)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        VuError::io(path, e)
    })
}
