//! The kernel over a state held whole in memory ([`LevelState`]: two bytes
//! a position for even values, three for forced bounds): what the forward
//! pass records into and the thresholds grow, in one process or in each
//! rank's share of a level.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use mancala_format::prefetch;
use rayon::prelude::*;

use super::forward::{Record, Summary};
use super::{Depths, Frontier, Ledger};
use crate::checkpoint;
use crate::error::BuildError;
use crate::solve::{threshold_bit, LevelState, Solve};

/// A state held in memory, for the positions from level index `first` on.
pub(crate) struct Held<'a, K: Solve> {
    pub state: &'a K::State,
    /// The level index of the state's first position.
    pub first: u64,
    /// Receives the work units done.
    pub progress: &'a (dyn Fn(u64) + Sync),
}

impl<K: Solve> Record<K> for Held<'_, K> {
    fn record(&mut self, first: u64, summaries: Vec<Summary<K>>) -> Result<(), BuildError> {
        let base = (first - self.first) as usize;
        let len = summaries.len() as u64;
        summaries
            .into_par_iter()
            .enumerate()
            .for_each(|(i, (exits, stays))| self.state.record(base + i, exits, stays));
        (self.progress)(len);
        Ok(())
    }

    /// A pass in memory is not checkpointed: a resumed level does it again.
    fn save(&mut self, _next: u64) -> Result<(), BuildError> {
        Ok(())
    }
}

/// A held state's thresholds: seeded from [`Seeds`], checkpointed whole.
pub(crate) struct HeldThresholds<'a, K: Solve> {
    pub held: Held<'a, K>,
    pub seeds: Seeds,
    /// The level, and where its checkpoints go (`None`: never saved).
    pub level: u32,
    pub checkpoint: Option<PathBuf>,
    /// Where the depths to conversion go, if they are asked for.
    pub depths: Option<&'a Depths>,
}

impl<K: Solve> HeldThresholds<'_, K> {
    /// Level indices of the state's positions at `local` indices.
    fn global(&self, local: Vec<u64>) -> Frontier {
        let first = self.held.first;
        Frontier::of(local.into_iter().map(|at| at + first).collect())
    }

    /// Work units of the propagation done when every threshold above
    /// `next` is finished.
    pub(crate) fn propagation_done(&self, next: u32) -> u64 {
        let (n, count) = (self.level, self.held.state.flags().len() as u64);
        if n == 0 {
            return 0;
        }
        count * (n - next) as u64 / n as u64
    }
}

impl<K: Solve> Ledger for HeldThresholds<'_, K> {
    fn frontier(&self) -> Frontier {
        Frontier::held()
    }

    fn seed(&mut self, t: u32) -> Result<(Frontier, Frontier), BuildError> {
        let state = self.held.state;
        let t = t as u8;
        let (firsts, seconds) = self
            .seeds
            .scan(t, state.flags(), |at, flag| state.seed(t, at, flag));
        Ok((self.global(firsts), self.global(seconds)))
    }

    #[inline]
    fn parent_of_first(&self, t: u32, at: usize, edges: u8) -> bool {
        self.held.state.parent_of_first(t as u8, at, edges)
    }

    #[inline]
    fn parent_of_second(&self, t: u32, at: usize) -> bool {
        self.held.state.parent_of_second(t as u8, at)
    }

    /// Both visits read the flags first.
    #[inline]
    fn prefetch_parent_of_first(&self, at: usize) {
        prefetch(self.held.state.flags(), at);
    }

    #[inline]
    fn prefetch_parent_of_second(&self, at: usize) {
        prefetch(self.held.state.flags(), at);
    }

    fn depths(&self) -> Option<&Depths> {
        self.depths
    }

    fn threshold_done(&mut self, t: u32) -> Result<(), BuildError> {
        (self.held.progress)(self.propagation_done(t - 1) - self.propagation_done(t));
        Ok(())
    }

    fn save(&mut self, next: u32) -> Result<(), BuildError> {
        match &self.checkpoint {
            Some(path) => {
                let planes = self.depths.map(Depths::planes);
                let extra: Vec<&[u8]> = planes.iter().flatten().map(Vec::as_slice).collect();
                checkpoint::save(path, self.level, next, &self.held.state.arrays(), &extra)
            }
            None => Ok(()),
        }
    }
}

/// Positions per block of [`Seeds`].
const SEED_BLOCK: usize = 1 << 8;
/// Positions per unit of parallel work when seeds are taken or scanned; a
/// multiple of [`SEED_BLOCK`].
const SEED_CHUNK: usize = 1 << 14;

/// For each block of a level's positions, the thresholds at which one of
/// them could join a set on its own. A position seeds only at the size of
/// an exit, and most levels' exits are small, so most thresholds find
/// seeds in few blocks: seeding scans those instead of the whole state.
/// Taken once, after the forward pass (or from a resumed state): positions
/// only ever lose thresholds, so the sets stay a superset, and a level is
/// solved exactly as a scan of every position would solve it.
pub(crate) struct Seeds {
    blocks: Vec<u64>,
}

impl Seeds {
    /// The seed thresholds of every block of `state`.
    pub(crate) fn of<S: LevelState>(state: &S) -> Seeds {
        let count = state.flags().len();
        let blocks = (0..count.div_ceil(SEED_BLOCK))
            .into_par_iter()
            .map(|block| {
                let first = block * SEED_BLOCK;
                (first..count.min(first + SEED_BLOCK))
                    .fold(0, |set, at| set | state.seed_thresholds(at))
            })
            .collect();
        Seeds { blocks }
    }

    /// Scans the positions that could seed threshold `t` in parallel,
    /// `classify(index, flag)` saying whether each joins the first and/or
    /// the second new frontier (and recording that itself); returns both
    /// frontiers in index order.
    fn scan(
        &self,
        t: u8,
        flags: &[AtomicU8],
        classify: impl Fn(usize, u8) -> (bool, bool) + Sync,
    ) -> (Vec<u64>, Vec<u64>) {
        // The top bit stands for every threshold from 63 up, and an even
        // level's byte arithmetic wraps from 128 on: those thresholds scan
        // every block.
        let skip = |set: u64| t < 63 && set & threshold_bit(t) == 0;
        let found: Vec<(Vec<u64>, Vec<u64>)> = flags
            .par_chunks(SEED_CHUNK)
            .zip(self.blocks.par_chunks(SEED_CHUNK / SEED_BLOCK))
            .enumerate()
            .map(|(chunk, (flags, blocks))| {
                let (mut first, mut second) = (Vec::new(), Vec::new());
                for (block, flags) in flags.chunks(SEED_BLOCK).enumerate() {
                    if skip(blocks[block]) {
                        continue;
                    }
                    let base = chunk * SEED_CHUNK + block * SEED_BLOCK;
                    for (i, flag) in flags.iter().enumerate() {
                        let at = base + i;
                        let (joins_first, joins_second) = classify(at, flag.load(Relaxed));
                        if joins_first {
                            first.push(at as u64);
                        }
                        if joins_second {
                            second.push(at as u64);
                        }
                    }
                }
                (first, second)
            })
            .collect();
        let first = found.iter().flat_map(|(f, _)| f.iter().copied()).collect();
        let second = found.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        (first, second)
    }
}
