//! One level solved across ranks: the retrograde kernel
//! (`crate::kernel`) with each rank holding the state of its own range
//! only, its lower-level reads and parent deliveries across the ranks
//! ([`RankLower`], [`RankExchange`]).
//!
//! - **Forward pass**, a group of the range at a time: every position's
//!   exits are located, the lookups bucketed by the rank that owns the
//!   child, sorted and deduplicated, sent as gap-coded lists, answered
//!   from the owner's share in index order, and sent back in the order
//!   asked.
//! - **Thresholds** in bulk-synchronous rounds: each rank seeds from its
//!   own positions, finds the same-level parents of its frontier by
//!   un-moving, and sends each parent to its owner, which applies it as
//!   one process would ([`LocalExchange`]). A round ends when no rank's
//!   frontier has a member left.
//!
//! Every exchange is one collective step that every rank takes, empty or
//! not; the pieces bound the buffers however large a level grows. The
//! result does not depend on how the work was cut, so every rank count
//! writes the same tables.

use std::ops::Range;
use std::time::Instant;

use mancala_core::{rank, LevelIndex, Rules, MAX_PITS};
use rayon::prelude::*;

use super::shares::{LowerShares, Split};
use super::transport::{max, Transport};
use super::wire::{get_sorted, get_varint, put_sorted, put_varint};
use crate::error::BuildError;
use crate::kernel::{
    forward_pass, thresholds, Depths, Exchange, Held, HeldThresholds, LocalExchange, Looked,
    LowerReads, Pacing, Part, Seeds, Summary, Visit,
};
use crate::solve::{LevelState, Solve};

/// Positions per unit of parallel work when a group is looked at.
const CHUNK: usize = 1 << 10;

/// One level across the ranks of `transport`.
pub(crate) struct LevelAcross<'a, K: Solve, T: Transport> {
    pub transport: &'a T,
    pub rules: &'a Rules,
    pub level: u32,
    pub split: &'a Split,
    pub lower: &'a LowerShares<K>,
    /// Receives this rank's work units (two a position: for the
    /// retrograde strategy one for the forward pass, the rest over the
    /// thresholds).
    pub progress: &'a (dyn Fn(u64) + Sync),
}

impl<K: Solve, T: Transport> LevelAcross<'_, K, T> {
    /// This rank's range of the level, solved by the retrograde kernel:
    /// its symbols in index order; with `depths` (this rank's range), each
    /// position's depth to conversion too.
    pub(crate) fn solve(&self, depths: Option<&Depths>) -> Result<Vec<i8>, BuildError> {
        let n = self.level;
        let exchange = RankExchange {
            transport: self.transport,
            split: self.split,
        };
        let index = LevelIndex::new(self.rules.pits(), n);
        let part = Part {
            rules: self.rules,
            owned: exchange.owned(index.count()),
            index,
        };
        let state = K::State::new((part.owned.end - part.owned.start) as usize);
        let mut held = Held::<K> {
            state: &state,
            first: part.owned.start,
            progress: self.progress,
        };
        // Across ranks a level is neither checkpointed nor interrupted: a
        // killed job resumes from its last level written.
        let mut pacing = Pacing::new(None, None, Instant::now());
        let lower = RankLower {
            transport: self.transport,
            lower: self.lower,
        };
        forward_pass(
            &part,
            part.owned.start,
            (&lower, &exchange),
            &mut pacing,
            &mut held,
        )?;
        let mut ledger = HeldThresholds {
            held,
            seeds: Seeds::of(&state),
            level: n,
            checkpoint: None,
            depths,
        };
        thresholds(&part, &exchange, &mut ledger, n, &mut pacing)?;
        Ok(state.into_solution(n).symbols)
    }
}

/// Parent deliveries across the ranks of a level's [`Split`].
pub(crate) struct RankExchange<'a, T: Transport> {
    pub transport: &'a T,
    pub split: &'a Split,
}

impl<T: Transport> Exchange for RankExchange<'_, T> {
    /// Bounds each rank's outgoing buffers as well.
    const FRONTIER_PIECE: usize = 1 << 19;

    /// Sends the parents to their owners, sorted and gap-coded, and applies
    /// the ones this rank owns that any rank sent as one process would.
    fn deliver(&self, mut parents: Vec<u64>, visit: &impl Visit) -> Vec<u64> {
        let first = self.split.range(self.transport.rank()).start;
        parents.par_sort_unstable();
        let outgoing = (0..self.transport.ranks())
            .map(|r| {
                let range = self.split.range(r);
                let lo = parents.partition_point(|&p| p < range.start);
                let hi = parents.partition_point(|&p| p < range.end);
                let mut bytes = Vec::new();
                put_sorted(&mut bytes, &parents[lo..hi]);
                bytes
            })
            .collect();
        drop(parents);
        let mut mine = Vec::new();
        for bytes in self.transport.exchange(outgoing) {
            get_sorted(&bytes, &mut 0, |p| mine.push(p - first));
        }
        let joined = LocalExchange.deliver(mine, visit);
        joined.into_iter().map(|at| at + first).collect()
    }

    fn owned(&self, count: u64) -> Range<u64> {
        debug_assert_eq!(self.split.range(self.split.ranks() - 1).end, count);
        self.split.range(self.transport.rank())
    }

    fn most(&self, value: u64) -> u64 {
        max(self.transport, value)
    }
}

/// Lower-level reads across the ranks: each exit's entry asked of the rank
/// that owns it.
pub(crate) struct RankLower<'a, K: Solve, T: Transport> {
    pub transport: &'a T,
    pub lower: &'a LowerShares<K>,
}

impl<K: Solve, T: Transport> LowerReads<K> for RankLower<'_, K, T> {
    /// Bounds each rank's questions and answers.
    const GROUP: usize = 1 << 16;

    fn summaries(&self, rules: &Rules, index: &LevelIndex, range: Range<u64>) -> Vec<Summary<K>> {
        let n = index.stones();
        let looked = look(rules, index, range);
        let entries = self.read_exits(n, &looked);
        looked
            .par_iter()
            .zip(entries.par_chunks(MAX_PITS))
            .map(|(looked, entries)| {
                looked.summary::<K>(n, |j, level, _| K::read(level, &entries[j][..K::WIDTH]))
            })
            .collect()
    }
}

/// One look at every position of `range`, its exits located by rank.
fn look(rules: &Rules, index: &LevelIndex, range: Range<u64>) -> Vec<Looked> {
    let n = index.stones();
    range
        .clone()
        .step_by(CHUNK)
        .collect::<Vec<_>>()
        .into_par_iter()
        .flat_map_iter(|start| {
            let len = CHUNK.min((range.end - start) as usize);
            index.positions_from(start).take(len).map(move |pos| {
                let mut looked = Looked::default();
                looked.look(rules, n, &pos, |_, child| rank(child));
                looked
            })
        })
        .collect()
}

impl<K: Solve, T: Transport> RankLower<'_, K, T> {
    /// The stored symbols of every exit of `looked` (positions of level
    /// `n`), asked of their owners: `MAX_PITS` slots a position, in its
    /// exits' order.
    fn read_exits(&self, n: u32, looked: &[Looked]) -> Vec<[i8; 2]> {
        let mut asks = Asks::new(self.transport.ranks());
        for (i, looked) in looked.iter().enumerate() {
            for (j, (level, at)) in looked.children(n).enumerate() {
                let owner = self.lower.split(level).owner(at);
                asks.push(owner, level, at, i * MAX_PITS + j);
            }
        }
        asks.send(
            self.transport,
            looked.len() * MAX_PITS,
            K::WIDTH,
            |level, index, out| {
                out.extend(self.lower.symbols(level, index).iter().map(|&s| s as u8))
            },
        )
    }
}

/// Lookups of single positions, bucketed by the rank that owns them.
pub(super) struct Asks {
    /// Per owner: `level << 96 | index << 32 | slot`.
    by_owner: Vec<Vec<u128>>,
}

impl Asks {
    pub(super) fn new(ranks: usize) -> Asks {
        Asks {
            by_owner: vec![Vec::new(); ranks],
        }
    }

    /// Asks `owner` for position `index` of level `level`, the answer to
    /// go to `slot`.
    #[inline]
    pub(super) fn push(&mut self, owner: usize, level: u32, index: u64, slot: usize) {
        debug_assert!(slot < 1 << 32, "a slot takes 32 bits");
        self.by_owner[owner].push((level as u128) << 96 | (index as u128) << 32 | slot as u128);
    }

    /// Sends every lookup to its owner, each distinct position once, and
    /// returns the answers by slot (`slots` of them, unasked ones zero).
    /// Each owner appends `width` bytes for a position with
    /// `answer(level, index, out)`.
    pub(super) fn send(
        mut self,
        transport: &impl Transport,
        slots: usize,
        width: usize,
        answer: impl Fn(u32, u64, &mut Vec<u8>) + Sync,
    ) -> Vec<[i8; 2]> {
        let mut entries = vec![[0i8; 2]; slots];
        // This rank's own lookups are answered here, not sent.
        let own = std::mem::take(&mut self.by_owner[transport.rank()]);
        let mut bytes = Vec::with_capacity(width);
        for a in own {
            bytes.clear();
            answer((a >> 96) as u32, (a >> 32) as u64, &mut bytes);
            let slot = (a & 0xffff_ffff) as usize;
            for (w, &b) in bytes.iter().enumerate() {
                entries[slot][w] = b as i8;
            }
        }
        self.by_owner.par_iter_mut().for_each(|a| a.sort_unstable());
        let outgoing = self.by_owner.par_iter().map(|a| encode_asks(a)).collect();
        let questions = transport.exchange(outgoing);
        let answers = questions
            .par_iter()
            .map(|q| answer_all(q, &answer))
            .collect();
        let answers = transport.exchange(answers);
        for (asked, answer) in self.by_owner.iter().zip(&answers) {
            let mut k = usize::MAX;
            let mut last = None;
            for &a in asked {
                let key = a >> 32;
                if last != Some(key) {
                    last = Some(key);
                    k = k.wrapping_add(1);
                }
                let slot = (a & 0xffff_ffff) as usize;
                for w in 0..width {
                    entries[slot][w] = answer[k * width + w] as i8;
                }
            }
        }
        entries
    }
}

/// The gap-coded lookups of one owner: for each level asked, its number,
/// then its distinct indices ascending.
fn encode_asks(asks: &[u128]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut groups: Vec<(u32, Vec<u64>)> = Vec::new();
    for &a in asks {
        let level = (a >> 96) as u32;
        let at = (a >> 32) as u64;
        match groups.last_mut() {
            Some((l, indices)) if *l == level => {
                if indices.last() != Some(&at) {
                    indices.push(at);
                }
            }
            _ => groups.push((level, vec![at])),
        }
    }
    put_varint(&mut bytes, groups.len() as u64);
    for (level, indices) in groups {
        put_varint(&mut bytes, level as u64);
        put_sorted(&mut bytes, &indices);
    }
    bytes
}

/// The answers to every position `question` asks for, in the order asked.
fn answer_all(question: &[u8], answer: &impl Fn(u32, u64, &mut Vec<u8>)) -> Vec<u8> {
    let mut at = 0;
    let mut answers = Vec::new();
    if question.is_empty() {
        return answers;
    }
    let groups = get_varint(question, &mut at);
    for _ in 0..groups {
        let level = get_varint(question, &mut at) as u32;
        get_sorted(question, &mut at, |index| {
            answer(level, index, &mut answers)
        });
    }
    answers
}
