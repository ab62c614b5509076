//! A level walked in the VU files' order, a piece at a time.
//!
//! The VU order is our index's reversed, without the positions the
//! numbering leaves out ([`crate::is_numbered`]). So a level is cut into
//! *stretches* of our index, and a file is the stretches' numbered values
//! from our highest stretch down, each stretch's reversed. Stretches are
//! taken a *group* at a time: its stretches are worked in parallel, and
//! the group's bytes are one sequential read or write of the file.

use std::ops::Range;

use mancala_core::{LevelIndex, Position};
use rayon::prelude::*;

use crate::godel::is_numbered;

/// Positions of our index per stretch.
pub(crate) const STRETCH: u64 = 1 << 15;

/// Stretches per group.
const GROUP: u64 = 64;

/// One group of a level: our ranks `ranks`, and the VU numbers of its
/// numbered positions, which start at `first_number`.
pub(crate) struct Group {
    /// Our ranks, from a stretch boundary.
    pub ranks: Range<u64>,
    /// The VU number of the group's first byte (the numbered position with
    /// the highest rank in `ranks`).
    pub first_number: u64,
}

impl Group {
    /// The stretches of the group, from the lowest rank up: each one's
    /// first rank and length.
    pub fn stretches(&self) -> impl IndexedParallelIterator<Item = Range<u64>> + '_ {
        let count = (self.ranks.end - self.ranks.start).div_ceil(STRETCH) as usize;
        (0..count).into_par_iter().map(|s| {
            let first = self.ranks.start + s as u64 * STRETCH;
            first..(first + STRETCH).min(self.ranks.end)
        })
    }

    /// Positions of the group, numbered or not.
    pub fn positions(&self) -> u64 {
        self.ranks.end - self.ranks.start
    }
}

/// Walks the groups of `index` in VU order, calling `visit` with each and
/// the numbered positions per stretch (lowest rank first); stops at the
/// first error.
pub(crate) fn for_each_group<E>(
    index: &LevelIndex,
    mut visit: impl FnMut(&Group, &[usize]) -> Result<(), E>,
) -> Result<(), E> {
    let count = index.count();
    let groups = count.div_ceil(STRETCH * GROUP);
    let mut first_number = 0;
    for g in (0..groups).rev() {
        let ranks = g * STRETCH * GROUP..((g + 1) * STRETCH * GROUP).min(count);
        let group = Group {
            ranks,
            first_number,
        };
        let numbered: Vec<usize> = group
            .stretches()
            .map(|stretch| numbered_in(index, stretch))
            .collect();
        visit(&group, &numbered)?;
        first_number += numbered.iter().sum::<usize>() as u64;
    }
    Ok(())
}

/// Where each stretch's bytes start in its group's, lowest rank first: the
/// stretches above it come first in the file.
pub(crate) fn offsets(numbered: &[usize]) -> Vec<usize> {
    let mut offsets = vec![0; numbered.len()];
    let mut at = 0;
    for s in (0..numbered.len()).rev() {
        offsets[s] = at;
        at += numbered[s];
    }
    offsets
}

/// The numbered positions of a stretch.
fn numbered_in(index: &LevelIndex, ranks: Range<u64>) -> usize {
    positions(index, ranks.clone())
        .filter(|(_, pos)| is_numbered(pos))
        .count()
}

/// The positions of `ranks`, with their ranks.
pub(crate) fn positions(
    index: &LevelIndex,
    ranks: Range<u64>,
) -> impl Iterator<Item = (u64, Position)> + '_ {
    let len = (ranks.end - ranks.start) as usize;
    ranks
        .clone()
        .zip(index.positions_from(ranks.start).take(len))
}

/// The numbered positions of the stretch `ranks`, each with the offset
/// of its byte among the stretch's `numbered` bytes (in VU order: the
/// highest rank first).
pub(crate) fn numbered_positions(
    index: &LevelIndex,
    ranks: Range<u64>,
    numbered: usize,
) -> impl Iterator<Item = (u64, usize, Position)> + '_ {
    positions(index, ranks)
        .filter(|(_, pos)| is_numbered(pos))
        .enumerate()
        .map(move |(k, (rank, pos))| (rank, numbered - 1 - k, pos))
}
