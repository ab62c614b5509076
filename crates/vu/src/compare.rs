//! Our awari tables against VU files, value by value: what
//! `verify --against vu` reports.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use mancala_core::{LevelIndex, Position};
use rayon::prelude::*;

use crate::error::VuError;
use crate::files::{LevelFile, PITS};
use crate::order::{for_each_group, numbered_positions, offsets};
use crate::ours::OurLevels;
use crate::Progress;

/// Mismatches kept per level, the lowest numbers.
pub const FIRST_MISMATCHES: usize = 10;

/// One position whose values differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Its number: its byte's offset in the VU file.
    pub number: u64,
    /// The position.
    pub position: Position,
    /// Our table's value.
    pub ours: i8,
    /// The VU file's.
    pub theirs: i8,
}

/// One level compared, or found in one place only.
#[derive(Clone, Debug)]
pub struct LevelComparison {
    /// Stones on the board.
    pub level: u32,
    /// The VU file.
    pub path: PathBuf,
    /// Whether the VU file is present; a level it lacks is not compared.
    pub compared: bool,
    /// Positions compared: the level's numbered positions.
    pub positions: u64,
    /// Positions whose values differ.
    pub mismatches: u64,
    /// The first [`FIRST_MISMATCHES`] of them, by number.
    pub first: Vec<Mismatch>,
}

impl LevelComparison {
    /// Whether the level was compared and every value agrees.
    pub fn agrees(&self) -> bool {
        self.compared && self.mismatches == 0
    }
}

/// Compares levels `0..=max` of the even awari tables under `root` (without
/// `max`, every level present from 0 up) with the VU files in `vu`. A level
/// whose VU file is absent is reported as not compared; a VU file of the
/// wrong size, or a table that fails its checks, is an error.
pub fn compare(
    root: &Path,
    vu: &Path,
    max: Option<u32>,
    scratch: &Path,
    progress: &dyn Progress,
) -> Result<Vec<LevelComparison>, VuError> {
    let mut ours = OurLevels::new(root, scratch);
    let last = ours.last_level(max)?;
    (0..=last)
        .map(|n| {
            let values = ours.values(n)?;
            let file = match LevelFile::open(vu, n) {
                Ok(file) => file,
                Err(VuError::Missing { path, .. }) => {
                    return Ok(LevelComparison {
                        level: n,
                        path,
                        compared: false,
                        positions: 0,
                        mismatches: 0,
                        first: Vec::new(),
                    })
                }
                Err(e) => return Err(e),
            };
            progress.level_started(n, values.len() as u64, values.len() as u64);
            compare_level(n, &values, file, progress)
        })
        .collect()
}

/// Compares level `n`'s `values` (our order) with its VU file.
fn compare_level(
    n: u32,
    values: &[i8],
    mut file: LevelFile,
    progress: &dyn Progress,
) -> Result<LevelComparison, VuError> {
    let index = LevelIndex::new(PITS, n);
    let mut positions = 0;
    let mut mismatches = 0;
    let mut first: Vec<Mismatch> = Vec::new();
    for_each_group(&index, |group, numbered| {
        let total: usize = numbered.iter().sum();
        let bytes = file.read(total)?;
        let found: Vec<(u64, VecDeque<Mismatch>)> = group
            .stretches()
            .zip(numbered)
            .zip(offsets(numbered))
            .map(|((ranks, &count), offset)| {
                let bytes = &bytes[offset..offset + count];
                let mut count_bad = 0;
                // Numbers fall as ranks rise: the lowest are the last seen.
                let mut lowest = VecDeque::new();
                for (rank, at, position) in numbered_positions(&index, ranks, count) {
                    let (ours, theirs) = (values[rank as usize], bytes[at]);
                    if ours != theirs {
                        count_bad += 1;
                        if lowest.len() == FIRST_MISMATCHES {
                            lowest.pop_front();
                        }
                        lowest.push_back(Mismatch {
                            number: group.first_number + (offset + at) as u64,
                            position,
                            ours,
                            theirs,
                        });
                    }
                }
                (count_bad, lowest)
            })
            .collect();
        for (count_bad, lowest) in found {
            mismatches += count_bad;
            first.extend(lowest);
        }
        first.sort_by_key(|m| m.number);
        first.truncate(FIRST_MISMATCHES);
        positions += total as u64;
        progress.advanced(group.positions());
        Ok::<(), VuError>(())
    })?;
    Ok(LevelComparison {
        level: n,
        path: file.path.clone(),
        compared: true,
        positions,
        mismatches,
        first,
    })
}
