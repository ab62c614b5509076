//! Phase 1, the forward pass: for every position a process holds, the
//! summary of its moves that leave the level (read from the lower levels;
//! the terminal value for a terminal position) and the number of its moves
//! that stay in the level.
//!
//! Where the lower levels are held is the pass's seam ([`LowerReads`]): in
//! this process ([`Levels`]), or at the ranks that own them
//! (`cluster/exchange.rs`). Where the summaries go is the other
//! ([`Record`]): a state in memory, or the lean mode's lists on disk.

use std::ops::Range;

use mancala_core::{LevelIndex, Move, Position, Rules, Stays, MAX_PITS};
use mancala_format::Levels;
use rayon::prelude::*;

use super::{piece_len, Exchange, Pacing, Part};
use crate::error::BuildError;
use crate::solve::Solve;

/// A position's summary: its exits (or terminal value), and its number of
/// moves that keep the level.
pub(crate) type Summary<K> = (<K as Solve>::Exits, u8);

/// How the forward pass reads what the lower levels store of each exit.
pub(crate) trait LowerReads<K: Solve> {
    /// Positions summed up per step of the pass: bounds what a step holds
    /// (and, across ranks, sends). A multiple of 64.
    const GROUP: usize;

    /// The summary of every position of `range` (of the level `index`
    /// ranks), in index order. Across ranks every rank asks as often as
    /// the others, with an empty range once its own are done.
    fn summaries(&self, rules: &Rules, index: &LevelIndex, range: Range<u64>) -> Vec<Summary<K>>;
}

/// Where the forward pass's summaries go.
pub(crate) trait Record<K: Solve> {
    /// The summaries of the positions from level index `first` on.
    fn record(&mut self, first: u64, summaries: Vec<Summary<K>>) -> Result<(), BuildError>;

    /// Saves a checkpoint of a pass whose positions before level index
    /// `next` are recorded (a pass that keeps none does nothing).
    fn save(&mut self, next: u64) -> Result<(), BuildError>;
}

/// The forward pass over `part`'s positions from level index `from` on (an
/// earlier run recorded those before it), a group at a time: each group's
/// summaries read through `lower` and handed to `record` in index order.
/// `pacing` may save or stop the pass between two groups.
pub(crate) fn forward_pass<K: Solve, L: LowerReads<K>>(
    part: &Part,
    from: u64,
    (lower, exchange): (&L, &impl Exchange),
    pacing: &mut Pacing,
    record: &mut impl Record<K>,
) -> Result<(), BuildError> {
    let end = part.owned.end;
    // A whole number of 64 positions, so that a record that packs several
    // positions a byte (the lean state) never splits one at a save.
    let group = piece_len(L::GROUP as u64, end - from, 1 << 11).next_multiple_of(64);
    let groups = exchange.most((end - from).div_ceil(group));
    for g in 0..groups {
        let lo = (from + g * group).min(end);
        let hi = (lo + group).min(end);
        pacing.between_steps(|| record.save(lo))?;
        let summaries = lower.summaries(part.rules, &part.index, lo..hi);
        record.record(lo, summaries)?;
    }
    Ok(())
}

/// Positions per unit of parallel work.
const CHUNK: usize = 1 << 14;

/// Positions whose exits are all located (and prefetched) before the first
/// is read, so that the misses of their random lookups overlap.
const BATCH: usize = 32;

/// The lower levels held in this process, in memory or mapped.
impl<K: Solve> LowerReads<K> for Levels<K> {
    const GROUP: usize = 1 << 20;

    fn summaries(&self, rules: &Rules, index: &LevelIndex, range: Range<u64>) -> Vec<Summary<K>> {
        let n = index.stones();
        let mut out = vec![(K::no_exit(), 0); (range.end - range.start) as usize];
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, out)| {
                let mut positions = index.positions_from(range.start + (chunk * CHUNK) as u64);
                let mut batch = [Looked::default(); BATCH];
                for out in out.chunks_mut(BATCH) {
                    let batch = &mut batch[..out.len()];
                    for looked in batch.iter_mut() {
                        let pos = positions.next().expect("the chunk's positions");
                        looked.look(rules, n, &pos, |level, child| {
                            self.locate_prefetched(level, child)
                        });
                    }
                    for (out, looked) in out.iter_mut().zip(batch.iter()) {
                        *out = looked.summary::<K>(n, |_, level, at| self.entry_at(level, at));
                    }
                }
            });
        out
    }
}

/// One position's moves, looked at once: its exits located in the lower
/// levels, not yet read.
#[derive(Clone, Copy, Default)]
pub(crate) struct Looked {
    /// Its value, if it is terminal.
    terminal: Option<i32>,
    /// Moves that keep the level.
    stays: u8,
    /// Each exit, with its child's index in its level (`n − gain`).
    exits: [(Move, u64); MAX_PITS],
    /// Exits in use.
    len: usize,
}

impl Looked {
    /// One look at every move of `pos`, in level `n`: its exits located
    /// (`locate` gives each child's index in its level, and may prefetch
    /// it), its moves that keep the level counted, or its terminal value.
    #[inline]
    pub(crate) fn look(
        &mut self,
        rules: &Rules,
        n: u32,
        pos: &Position,
        mut locate: impl FnMut(u32, &Position) -> u64,
    ) {
        self.len = 0;
        let stays = rules.for_each_exit(pos, |m| {
            let at = locate(n - m.gain as u32, &m.child);
            self.exits[self.len] = (*m, at);
            self.len += 1;
        });
        (self.terminal, self.stays) = match stays {
            Stays::Terminal(value) => (Some(value), 0),
            Stays::Moves(stays) => (None, stays),
        };
    }

    /// Each exit's child: its level and index, in the exits' order.
    pub(crate) fn children(&self, n: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.exits[..self.len]
            .iter()
            .map(move |(m, at)| (n - m.gain as u32, *at))
    }

    /// The exits' summary (or the terminal value) and the number of moves
    /// that keep the level, `entry(j, level, index)` giving what exit `j`'s
    /// child stores.
    #[inline]
    pub(crate) fn summary<K: Solve>(
        &self,
        n: u32,
        entry: impl Fn(usize, u32, u64) -> K::Entry,
    ) -> Summary<K> {
        if let Some(value) = self.terminal {
            return (K::terminal(n, value), 0);
        }
        let mut exits = K::no_exit();
        for (j, (m, at)) in self.exits[..self.len].iter().enumerate() {
            K::add_exit(&mut exits, m, entry(j, n - m.gain as u32, *at));
        }
        (exits, self.stays)
    }
}
