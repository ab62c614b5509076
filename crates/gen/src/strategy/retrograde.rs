//! The retrograde strategy: a forward pass, then threshold propagation,
//! for every rule set and both kinds of table.
//!
//! The kernel (`crate::kernel`) over a state held in memory
//! ([`LevelState`]) in one process, its parents delivered by an
//! [`Exchange`]: the forward pass, then the threshold propagation, the
//! state checkpointed between thresholds. A level resumed from a
//! checkpoint goes on at its threshold; one killed in its forward pass
//! does the pass again.

use std::time::Instant;

use mancala_core::LevelIndex;

use super::{LevelJob, Strategy};
use crate::checkpoint;
use crate::error::BuildError;
use crate::kernel::{
    forward_pass, thresholds, Exchange, Held, HeldThresholds, LocalExchange, Pacing, Part, Seeds,
};
use crate::solve::{LevelState, Solution, Solve};

/// Forward pass and threshold propagation, with parents delivered by `E`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Retrograde<E: Exchange = LocalExchange> {
    /// How parents reach the state they update.
    pub exchange: E,
}

impl Retrograde {
    /// The strategy of one process ([`LocalExchange`]).
    pub fn local() -> Retrograde {
        Retrograde {
            exchange: LocalExchange,
        }
    }
}

impl<E: Exchange + Sync> Strategy for Retrograde<E> {
    fn solve<K: Solve>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError> {
        let n = job.level;
        job.assert_in_order();
        let started = Instant::now();
        let index = LevelIndex::new(job.rules.pits(), n);
        let part = Part {
            rules: job.rules,
            owned: self.exchange.owned(index.count()),
            index,
        };
        let count = part.owned.end - part.owned.start;
        // Depths asked for are saved with the state, as two more arrays.
        let checkpoint = job.checkpoints.map(|c| c.path(n));
        let extra = if job.depths.is_some() { 2 } else { 0 };
        let saved = checkpoint
            .as_ref()
            .and_then(|path| checkpoint::load::<K::State>(path, n, count, extra))
            .filter(|(_, _, planes)| {
                job.depths
                    .is_none_or(|depths| depths.restore_planes(planes))
            });
        let resumed = saved.is_some();
        let (state, from) = match saved {
            Some((state, from, _)) => (state, from),
            None => (K::State::new(count as usize), n),
        };
        let mut held = Held::<K> {
            state: &state,
            first: part.owned.start,
            progress: job.progress,
        };
        if !resumed {
            // Not checkpointed: a level resumed before its thresholds
            // does the pass again.
            let mut pacing = Pacing::new(job.interrupt, None, started);
            let lower = (job.lower, &self.exchange);
            forward_pass(&part, part.owned.start, lower, &mut pacing, &mut held)?;
            job.lower.release_mapped_pages();
        }
        let mut ledger = HeldThresholds {
            held,
            seeds: Seeds::of(&state),
            level: n,
            checkpoint,
            depths: job.depths,
        };
        if resumed {
            job.report_resumed(count + ledger.propagation_done(from));
        }
        let every = job.checkpoints.map(|c| c.every);
        let mut pacing = Pacing::new(job.interrupt, every, started);
        thresholds(&part, &self.exchange, &mut ledger, from, &mut pacing)?;
        if n == 0 {
            (job.progress)(count);
        }
        let mut solution = state.into_solution(n);
        if job.rules.variant().gives_extra_turns() {
            // The best exits marked may be extra turns, which restore
            // nothing: the marks would free entries no reader restores.
            solution.exit_best = None;
        }
        Ok(solution)
    }
}
