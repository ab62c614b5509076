//! The lean mode's forward pass: every position's exits, from the lower
//! levels, written to the exit lists in index order.
//!
//! The pass reads the lower levels at random and needs nothing of the
//! level's own state but one mark per position (a single move keeps the
//! level), so that mark goes to a list too and the state is made only
//! when the pass is over: while the lower levels are read, the page cache
//! has the memory the state will take.

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
/// The list of the positions with a single move that keeps the level.
const SINGLE: &str = "single";

/// Lists level `job.level`'s positions (of `index`) under their exits in
/// `dir`, then makes the level's state: the positions eligible from the
/// start unblocked, those with a single same-level move marked. Returns
/// the state and the exit lists.
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
    let mut single = ListWriter::create(dir.join(SINGLE))?;
    for first in (0..count).step_by(GROUP) {
        if job.interrupted() {
            return Err(BuildError::Interrupted);
        }
        let len = GROUP.min(count - first);
        for (at, (exits, stays)) in (first as u64..).zip(exits(job, index, first, len)) {
            for k in K::lists_of(n, exits).into_iter().flatten() {
                lists[k].push(at)?;
            }
            if stays == 1 {
                single.push(at)?;
            }
        }
        (job.progress)(len as u64);
    }
    let lists = lists
        .into_iter()
        .map(ListWriter::finish)
        .collect::<Result<Vec<_>, _>>()?;
    let single = single.finish()?;
    let state = K::Lean::new(count);
    lists[K::eligible_from_start(n)].for_each(|at| {
        state.unblock(at as usize);
    })?;
    single.for_each(|at| state.mark_single(at as usize))?;
    let _ = std::fs::remove_file(&single.path);
    Ok((state, lists))
}

/// The exits (or terminal values) of positions `first..first + len` and
/// their numbers of moves that keep the level.
fn exits<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    first: usize,
    len: usize,
) -> Vec<(K::Exits, u8)> {
    let (rules, lower, n) = (job.rules, job.lower, job.level);
    let mut exits = vec![(K::no_exit(), 0); len];
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
                    looked.look(rules, n, &pos, |level, at| lower.prefetch(level, at));
                }
                for (exits, looked) in exits.iter_mut().zip(batch.iter()) {
                    *exits = looked.summary::<K>(n, |_, level, at| lower.entry_at(level, at));
                }
            }
        });
    exits
}
