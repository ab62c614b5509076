//! The lean mode's forward pass: the kernel's (`crate::kernel`), every
//! position's exits, from the lower levels, written to the exit lists in
//! index order.
//!
//! The pass reads the lower levels (held flipped, so that a run of
//! positions reaches a few stretches of each: [`mancala_format::Order`])
//! and needs nothing of the level's own state, which is made only when the
//! pass is over: while the lower levels are read, the page cache has the
//! memory the state will take.
//!
//! A pass of a large level takes long, so it saves checkpoints of its own
//! ([`checkpoint::save_forward`]) between the kernel's groups of positions: its exit
//! lists sealed, and how many positions they cover. A killed pass goes on
//! from the last one, its lists cut back to their seals; the lists are
//! the same indices either way.

use std::path::Path;
use std::time::Instant;

use mancala_core::LevelIndex;

use super::lists::{List, ListWriter, Sealed};
use super::state::LeanState;
use super::{checkpoint, exit_path, recreate, LeanKind};
use crate::error::BuildError;
use crate::kernel::{forward_pass, LocalExchange, Pacing, Part, Record, Summary};
use crate::strategy::LevelJob;

/// Lists level `job.level`'s positions (of `index`) under their exits in
/// `dir`, going on from the pass's checkpoint if there is a valid one,
/// then makes the level's state. Returns the state, the exit lists and
/// when the level's work was last saved (or the pass began).
pub(super) fn pass<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    dir: &Path,
) -> Result<(K::Lean, Vec<List>, Instant), BuildError> {
    let count = index.count();
    let began = Instant::now();
    let (lists, listed) = match resumed::<K>(job, index, dir)? {
        Some((lists, listed)) => {
            job.report_resumed(listed as u64);
            (lists, listed)
        }
        None => (started::<K>(job, dir)?, 0),
    };
    let part = Part {
        rules: job.rules,
        index: *index,
        owned: 0..count,
    };
    let every = job.checkpoints.map(|c| c.every);
    let mut pacing = Pacing::new(job.interrupt, every, began);
    let mut listing = Listing { job, index, lists };
    let lower = (job.lower, &LocalExchange);
    forward_pass(&part, listed as u64, lower, &mut pacing, &mut listing)?;
    let lists = listing
        .lists
        .into_iter()
        .map(ListWriter::finish)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((K::Lean::new(count as usize), lists, pacing.last_saved()))
}

/// The forward pass's summaries written to the exit lists.
struct Listing<'a, K: LeanKind> {
    job: &'a LevelJob<'a, K>,
    index: &'a LevelIndex,
    lists: Vec<ListWriter>,
}

impl<K: LeanKind> Record<K> for Listing<'_, K> {
    fn record(&mut self, first: u64, summaries: Vec<Summary<K>>) -> Result<(), BuildError> {
        let (n, len) = (self.job.level, summaries.len() as u64);
        for (at, (exits, _)) in (first..).zip(summaries) {
            for k in K::lists_of(n, exits).into_iter().flatten() {
                self.lists[k].push(at)?;
            }
        }
        (self.job.progress)(len);
        Ok(())
    }

    fn save(&mut self, next: u64) -> Result<(), BuildError> {
        let lists = std::mem::take(&mut self.lists);
        self.lists = save(self.job, self.index, next as usize, lists)?;
        Ok(())
    }
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
