//! The lean mode's forward pass: every position's exits, from the lower
//! levels, written to the exit lists in index order.
//!
//! The pass reads the lower levels (held flipped, so that a run of
//! positions reaches a few stretches of each: [`mancala_format::Order`])
//! and needs nothing of the level's own state, which is made only when the
//! pass is over: while the lower levels are read, the page cache has the
//! memory the state will take.
//!
//! A pass of a large level takes long, so it saves checkpoints of its own
//! ([`checkpoint::save_forward`]) between groups of positions: its exit
//! lists sealed, and how many positions they cover. A killed pass goes on
//! from the last one, its lists cut back to their seals; the lists are
//! the same indices either way.

use std::path::Path;
use std::time::Instant;

use mancala_core::LevelIndex;
use rayon::prelude::*;

use super::lists::{List, ListWriter, Sealed};
use super::state::LeanState;
use super::{checkpoint, exit_path, recreate, LeanKind};
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
/// `dir`, going on from the pass's checkpoint if there is a valid one,
/// then makes the level's state. Returns the state, the exit lists and
/// when the level's work was last saved (or the pass began).
pub(super) fn pass<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    dir: &Path,
) -> Result<(K::Lean, Vec<List>, Instant), BuildError> {
    let n = job.level;
    let count = index.count() as usize;
    let mut last_saved = Instant::now();
    let (mut lists, listed) = match resumed::<K>(job, index, dir)? {
        Some((lists, listed)) => {
            job.report_resumed(listed as u64);
            (lists, listed)
        }
        None => (started::<K>(job, dir)?, 0),
    };
    for first in (listed..count).step_by(GROUP) {
        if job.interrupted() {
            save(job, index, first, lists)?;
            return Err(BuildError::Interrupted);
        }
        if job
            .checkpoints
            .is_some_and(|c| last_saved.elapsed() >= c.every)
        {
            lists = save(job, index, first, lists)?;
            last_saved = Instant::now();
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
    Ok((K::Lean::new(count), lists, last_saved))
}

/// New, empty exit lists in `dir` (emptied first), the level's checkpoint
/// removed: one that was not valid could otherwise seem to fit lists
/// written from now on.
fn started<K: LeanKind>(job: &LevelJob<K>, dir: &Path) -> Result<Vec<ListWriter>, BuildError> {
    if let Some(checkpoints) = job.checkpoints {
        checkpoints.remove(job.level);
    }
    recreate(dir)?;
    (0..K::exit_lists(job.level))
        .map(|k| ListWriter::create(exit_path(dir, k)))
        .collect()
}

/// The exit lists in `dir` reopened where the pass's checkpoint says they
/// stood, and the positions they cover, if the job keeps checkpoints and
/// a valid one is there, every list with it.
fn resumed<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    dir: &Path,
) -> Result<Option<(Vec<ListWriter>, usize)>, BuildError> {
    let n = job.level;
    let Some((listed, sealed)) = job
        .checkpoints
        .and_then(|c| checkpoint::load_forward(&c.path(n), n, index.count()))
    else {
        return Ok(None);
    };
    let fits = |(k, sealed): (usize, &Sealed)| ListWriter::can_reopen(&exit_path(dir, k), sealed);
    if sealed.len() != K::exit_lists(n) || !sealed.iter().enumerate().all(fits) {
        return Ok(None);
    }
    let lists = sealed
        .into_iter()
        .enumerate()
        .map(|(k, sealed)| ListWriter::reopen(exit_path(dir, k), sealed))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((lists, listed as usize)))
}

/// Seals `lists` and saves the pass's checkpoint (if the job keeps them):
/// positions `..listed` are in the lists. Returns the lists, to be
/// written on.
fn save<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    listed: usize,
    lists: Vec<ListWriter>,
) -> Result<Vec<ListWriter>, BuildError> {
    let Some(checkpoints) = job.checkpoints else {
        return Ok(lists);
    };
    let (lists, sealed): (Vec<_>, Vec<_>) = lists
        .into_iter()
        .map(ListWriter::seal)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .unzip();
    let n = job.level;
    checkpoint::save_forward(
        &checkpoints.path(n),
        n,
        index.count(),
        listed as u64,
        &sealed,
    )?;
    Ok(lists)
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
