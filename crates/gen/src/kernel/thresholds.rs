//! Phase 2, the threshold propagation: for `t = n, …, 1`, the two sets of
//! each threshold are attractors that only grow as `t` falls. Positions
//! that join on their own seed them; then each new member of either set
//! is propagated to its same-level parents, found by un-moving
//! ([`Rules::same_level_parents`]) and delivered by the [`Exchange`] to
//! whoever holds their state, until no set grows anywhere. Every position
//! joins each set at most once, so the level costs about two visits of
//! every same-level edge, whatever `n` is.
//!
//! Where the state lives is the [`Ledger`]: bytes a position in memory
//! ([`super::Held`]), or a few bits a position with its seeds and
//! decisions in lists on disk (the lean mode). Frontiers are processed in
//! bounded pieces, and the state may be checkpointed between thresholds:
//! the result does not depend on the order of work, so a resumed level
//! ends byte for byte as an uninterrupted one.
//!
//! The propagation goes in rounds, each the parents of the last round's
//! new members: the rounds are the depths to conversion ([`Depths`]),
//! which a ledger that asks for them is told. It then starts from the
//! terminal seeds alone (round 0) and takes the other seeds, which convert
//! at once, in with the first round's new members (round 1).

use mancala_core::{LevelIndex, Rules};
use rayon::prelude::*;

use super::{piece_len, Depths, Exchange, Frontier, Pacing, Part, Visit};
use crate::error::BuildError;

/// Where a level's threshold state lives, as the propagation sees it.
///
/// The visits are made from many threads, but never for one position from
/// two threads at once ([`Exchange::deliver`]).
pub(crate) trait Ledger: Sync {
    /// A new, empty frontier: held in memory, or spilling to disk where
    /// memory is short.
    fn frontier(&self) -> Frontier;

    /// Frontier members whose parents may be held at once (8 bytes an
    /// edge, twice while they are delivered), at most: where memory is
    /// short, less than the exchange would take.
    fn frontier_piece(&self) -> usize {
        usize::MAX
    }

    /// The positions that join threshold `t`'s first and second sets on
    /// their own (level indices), recorded as members.
    fn seed(&mut self, t: u32) -> Result<(Frontier, Frontier), BuildError>;

    /// A parent (index into this process's state) of `edges` new members
    /// of the first set: whether it joins the second set (and records it).
    fn parent_of_first(&self, t: u32, at: usize, edges: u8) -> bool;

    /// A parent of a new member of the second set: whether it joins the
    /// first set (and records it).
    fn parent_of_second(&self, t: u32, at: usize) -> bool;

    /// `at` will soon be a [`Ledger::parent_of_first`]: its state may be
    /// fetched into the cache meanwhile ([`Visit::prefetch`]).
    fn prefetch_parent_of_first(&self, _at: usize) {}

    /// `at` will soon be a [`Ledger::parent_of_second`].
    fn prefetch_parent_of_second(&self, _at: usize) {}

    /// `members` more frontier members were propagated from, for progress.
    fn drained(&self, _members: u64) {}

    /// Where the depths to conversion go, if they are asked for.
    fn depths(&self) -> Option<&Depths> {
        None
    }

    /// Threshold `t` is over: no set of it grows any more.
    fn threshold_done(&mut self, t: u32) -> Result<(), BuildError>;

    /// Saves a checkpoint from which the level goes on at threshold `next`.
    fn save(&mut self, next: u32) -> Result<(), BuildError>;
}

/// Thresholds `from, from − 1, …, 1` of `part`'s level, parents delivered
/// by `exchange`; `pacing` may save or stop the work before each.
pub(crate) fn thresholds(
    part: &Part,
    exchange: &impl Exchange,
    ledger: &mut impl Ledger,
    from: u32,
    pacing: &mut Pacing,
) -> Result<(), BuildError> {
    for t in (1..=from).rev() {
        pacing.between_steps(|| ledger.save(t))?;
        let seeds = ledger.seed(t)?;
        let seeds = match ledger.depths() {
            Some(depths) => by_round(part, ledger, depths, seeds)?,
            None => [seeds, (ledger.frontier(), ledger.frontier())],
        };
        propagate(part, exchange, &*ledger, t, seeds)?;
        ledger.threshold_done(t)?;
    }
    Ok(())
}

/// Both sets' seeds split by the round they join in, their depths written
/// to `depths`: the terminal positions (round 0), and the others (round
/// 1).
fn by_round(
    part: &Part,
    ledger: &impl Ledger,
    depths: &Depths,
    (firsts, seconds): (Frontier, Frontier),
) -> Result<[(Frontier, Frontier); 2], BuildError> {
    let mut rounds = [
        (ledger.frontier(), ledger.frontier()),
        (ledger.frontier(), ledger.frontier()),
    ];
    for (seeds, second) in [(firsts, false), (seconds, true)] {
        let recorded = !second || depths.records_second_set();
        let piece = piece_len(1 << 20, seeds.len(), 64) as usize;
        seeds.drain(piece, |members| {
            let terminal: Vec<bool> = members
                .par_iter()
                .map(|&at| {
                    let pos = part.index.unrank(at);
                    part.rules.for_each_move(&pos, |_| {}).is_some()
                })
                .collect();
            for (round, frontiers) in rounds.iter_mut().enumerate() {
                let joins: Vec<u64> = members
                    .iter()
                    .zip(&terminal)
                    .filter(|&(_, &terminal)| terminal == (round == 0))
                    .map(|(&at, _)| at)
                    .collect();
                if recorded {
                    depths.record(&joins, round as u32);
                }
                let frontier = if second {
                    &mut frontiers.1
                } else {
                    &mut frontiers.0
                };
                frontier.extend(joins)?;
            }
            Ok(())
        })?;
    }
    Ok(rounds)
}

/// Grows both sets of threshold `t` until neither grows at any process,
/// a round at a time: from `seeds[0]`, with `seeds[1]` taken in with the
/// first round's new members.
fn propagate(
    part: &Part,
    exchange: &impl Exchange,
    ledger: &impl Ledger,
    t: u32,
    [(mut firsts, mut seconds), later]: [(Frontier, Frontier); 2],
) -> Result<(), BuildError> {
    let mut later = Some(later);
    let later_len =
        |later: &Option<(Frontier, Frontier)>| later.as_ref().map_or(0, |(f, s)| f.len() + s.len());
    let mut round = 0;
    while exchange.most(firsts.len() + seconds.len() + later_len(&later)) > 0 {
        // A parent that joins now is one round further than its child;
        // its depth is written as it joins, while its state is in cache.
        let joined = |at: usize, joins: bool, second: bool| {
            if let (true, Some(depths)) = (joins, ledger.depths()) {
                if !second || depths.records_second_set() {
                    depths.record_local(at, round + 1);
                }
            }
            joins
        };
        let mut new_seconds = ledger.frontier();
        let parents_of_firsts = Visits {
            visit: |at, edges| joined(at, ledger.parent_of_first(t, at, edges), true),
            prefetch: |at| ledger.prefetch_parent_of_first(at),
        };
        visit_parents(
            part,
            exchange,
            ledger,
            firsts,
            &mut new_seconds,
            &parents_of_firsts,
        )?;
        let mut new_firsts = ledger.frontier();
        let parents_of_seconds = Visits {
            visit: |at, _| joined(at, ledger.parent_of_second(t, at), false),
            prefetch: |at| ledger.prefetch_parent_of_second(at),
        };
        visit_parents(
            part,
            exchange,
            ledger,
            seconds,
            &mut new_firsts,
            &parents_of_seconds,
        )?;
        if let Some((later_firsts, later_seconds)) = later.take() {
            new_firsts.append(later_firsts)?;
            new_seconds.append(later_seconds)?;
        }
        (firsts, seconds) = (new_firsts, new_seconds);
        round += 1;
    }
    Ok(())
}

/// A ledger's visit of one kind of parent and its prefetch, as a
/// [`Visit`].
struct Visits<V, P> {
    visit: V,
    prefetch: P,
}

impl<V: Fn(usize, u8) -> bool + Sync, P: Fn(usize) + Sync> Visit for Visits<V, P> {
    #[inline]
    fn visit(&self, at: usize, edges: u8) -> bool {
        (self.visit)(at, edges)
    }

    #[inline]
    fn prefetch(&self, at: usize) {
        (self.prefetch)(at)
    }
}

/// Visits the same-level parents of `frontier` (wherever their state is
/// held, [`Exchange::deliver`]), piece by piece so the parent buffer stays
/// bounded; adds the parents whose visit returned true to `joined` (the
/// next frontier).
fn visit_parents<E: Exchange>(
    part: &Part,
    exchange: &E,
    ledger: &impl Ledger,
    frontier: Frontier,
    joined: &mut Frontier,
    visit: &impl Visit,
) -> Result<(), BuildError> {
    let most = E::FRONTIER_PIECE.min(ledger.frontier_piece()) as u64;
    let piece = piece_len(most, frontier.len(), 64) as usize;
    let pieces = exchange.most(frontier.len().div_ceil(piece as u64));
    let mut delivered = 0;
    frontier.drain(piece, |members| {
        ledger.drained(members.len() as u64);

        let parents = same_level_parents(part.rules, &part.index, members);
        delivered += 1;
        joined.extend(exchange.deliver(parents, visit))
    })?;
    for _ in delivered..pieces {
        joined.extend(exchange.deliver(Vec::new(), visit))?;
    }
    Ok(())
}

/// Frontier members per unit of parallel work in the propagation.
const FRONTIER_CHUNK: usize = 1 << 10;

/// The same-level parents of every frontier member, one entry per edge, in
/// no particular order.
pub(crate) fn same_level_parents(rules: &Rules, index: &LevelIndex, frontier: &[u64]) -> Vec<u64> {
    let found: Vec<Vec<u64>> = frontier
        .par_chunks(FRONTIER_CHUNK)
        .map(|members| {
            let mut parents = Vec::with_capacity(members.len() * 2);
            for &member in members {
                let child = index.unrank(member);
                rules.same_level_parents(&child, |parent| parents.push(index.rank(&parent)));
            }
            parents
        })
        .collect();
    found.concat()
}
