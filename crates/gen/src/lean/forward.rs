//! The lean mode's forward pass: every position's exits, from the lower
//! levels, written to the exit lists in index order.
//!
//! The pass reads the lower levels (held flipped, so that a run of
//! positions reaches a few stretches of each: [`mancala_format::Order`])
//! and needs nothing of the level's own state, which is made only when the
//! pass is over: while the lower levels are read, the page cache has the
//! memory the state will take.

use std::path::Path;

use mancala_core::LevelIndex;
use rayon::prelude::*;

use super::lists::{List, ListWriter};
use super::state::LeanState;
use super::{exit_path, LeanKind};
use crate::error::BuildError;
use crate::strategy::{LevelJob, Looked};

/// Positions whose exits are found in parallel before they are listed.
/// Small in debug builds, so the tests list levels in several groups.
const GROUP: usize = if cfg!(debug_assertions) {
    1 << 10
} else {
    1 << 20
};
/// Positions per unit of parallel work.
const CHUNK: usize = 1 << 14;
/// Positions whose exits are located (and prefetched) before the first is
/// read, as in the retrograde strategy's forward pass.
const BATCH: usize = 32;
/// Lists level `job.level`'s positions (of `index`) under their exits in
/// `dir`, then makes the level's state. Returns the state and the exit
/// lists.
pub(super) fn pass<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    dir: &Path,
) -> Result<(K::Lean, Vec<List>), BuildError> {
    let n = job.level;
    let count = index.count() as usize;
    let mut lists = (0..K::exit_lists(n))
        .map(|k| ListWriter::create(exit_path(dir, k)))
        .collect::<Result<Vec<_>, _>>()?;
    for first in (0..count).step_by(GROUP) {
        if job.interrupted() {
            return Err(BuildError::Interrupted);
        }
        let len = GROUP.min(count - first);
        for (at, exits) in (first as u64..).zip(exits(job, index, first, len)) {
            for k in K::lists_of(n, exits).into_iter().flatten() {
                lists[k].push(at)?;
            }
        }
        (job.progress)(len as u64);
    }
    let lists = lists
        .into_iter()
        .map(ListWriter::finish)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((K::Lean::new(count), lists))
}

/// The exits (or terminal values) of positions `first..first + len`.
fn exits<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    first: usize,
    len: usize,
) -> Vec<K::Exits> {
    let (rules, lower, n) = (job.rules, job.lower, job.level);
    let mut exits = vec![K::no_exit(); len];
    exits
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(chunk, exits)| {
            let mut positions = index.positions_from((first + chunk * CHUNK) as u64);
            let mut batch = [Looked::default(); BATCH];
            for exits in exits.chunks_mut(BATCH) {
                let batch = &mut batch[..exits.len()];
                for looked in batch.iter_mut() {
                    let pos = positions.next().expect("the chunk's positions");
                    looked.look(rules, n, &pos, |level, child| {
                        lower.locate_prefetched(level, child)
                    });
                }
                for (exits, looked) in exits.iter_mut().zip(batch.iter()) {
                    *exits = looked
                        .summary::<K>(n, |_, level, at| lower.entry_at(level, at))
                        .0;
                }
            }
        });
    exits
}
