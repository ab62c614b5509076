//! One level solved across ranks: the retrograde strategy
//! ([`crate::Retrograde`]) with each rank holding the state of its own
//! range only.
//!
//! - **Forward pass**, a piece of the range at a time: every position's
//!   exits are located, the lookups bucketed by the rank that owns the
//!   child, sorted and deduplicated, sent as gap-coded lists, answered
//!   from the owner's share in index order, and sent back in the order
//!   asked.
//! - **Thresholds** in bulk-synchronous rounds: each rank seeds from its
//!   own positions, finds the same-level parents of its frontier by
//!   un-moving, and sends each parent to its owner, which applies it as
//!   one process would ([`LocalExchange`]). A round ends when the sum of
//!   every rank's frontier is zero.
//!
//! Every exchange is one collective step that every rank takes, empty or
//! not; the pieces bound the buffers however large a level grows. The
//! result does not depend on how the work was cut, so every rank count
//! writes the same tables.

use mancala_core::{rank, LevelIndex, Rules, MAX_PITS};
use rayon::prelude::*;

use super::shares::{LowerShares, Split};
use super::transport::{max, sum, Transport};
use super::wire::{get_sorted, get_varint, put_sorted, put_varint};
use crate::exchange::{Exchange, LocalExchange};
use crate::solve::{LevelState, Solve};
use crate::strategy::{same_level_parents, Looked, Seeds};

/// Positions of a rank's range looked at per exchange of the forward
/// pass; frontier members whose parents are sent per exchange of the
/// propagation. Tiny in debug builds, so the tests cut levels into many
/// pieces.
const PIECE: usize = if cfg!(debug_assertions) {
    1 << 11
} else {
    1 << 16
};
const FRONTIER_PIECE: usize = if cfg!(debug_assertions) {
    1 << 11
} else {
    1 << 19
};
/// Positions per unit of parallel work when a piece is looked at.
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
    /// This rank's range of the level, solved by the retrograde strategy:
    /// its symbols in index order.
    pub(crate) fn solve(&self) -> Vec<i8> {
        let n = self.level;
        let range = self.split.range(self.transport.rank());
        let len = (range.end - range.start) as usize;
        let state = K::State::new(len);
        self.forward_pass(&state);
        let seeds = Seeds::of(&state);
        for t in (1..=n).rev() {
            self.threshold(t as u8, &state, &seeds);
            (self.progress)(len as u64 / n as u64);
        }
        state.into_solution(n).symbols
    }

    fn first(&self) -> u64 {
        self.split.range(self.transport.rank()).start
    }

    /// Records every position's exits and same-level moves, a piece at a
    /// time.
    fn forward_pass(&self, state: &K::State) {
        let index = LevelIndex::new(self.rules.pits(), self.level);
        let range = self.split.range(self.transport.rank());
        let pieces = (self.split.largest() as usize).div_ceil(PIECE);
        for piece in 0..pieces {
            let lo = (range.start + (piece * PIECE) as u64).min(range.end);
            let hi = (lo + PIECE as u64).min(range.end);
            let looked = self.look(&index, lo, hi);
            let entries = self.read_exits(&looked);
            let n = self.level;
            looked
                .par_iter()
                .zip(entries.par_chunks(MAX_PITS))
                .enumerate()
                .for_each(|(i, (looked, entries))| {
                    let (exits, stays) = looked
                        .summary::<K>(n, |j, level, _| K::read(level, &entries[j][..K::WIDTH]));
                    state.record((lo - range.start) as usize + i, exits, stays);
                });
            (self.progress)(hi - lo);
        }
    }

    /// One look at every position `lo..hi`.
    fn look(&self, index: &LevelIndex, lo: u64, hi: u64) -> Vec<Looked> {
        let (rules, n) = (self.rules, self.level);
        (lo..hi)
            .step_by(CHUNK)
            .collect::<Vec<_>>()
            .into_par_iter()
            .flat_map_iter(|start| {
                let len = CHUNK.min((hi - start) as usize);
                index.positions_from(start).take(len).map(move |pos| {
                    let mut looked = Looked::default();
                    looked.look(rules, n, &pos, |_, child| rank(child));
                    looked
                })
            })
            .collect()
    }

    /// The stored symbols of every exit of `looked`, asked of their owners:
    /// `MAX_PITS` slots a position, in its exits' order.
    fn read_exits(&self, looked: &[Looked]) -> Vec<[i8; 2]> {
        let mut asks = Asks::new(self.transport.ranks());
        for (i, looked) in looked.iter().enumerate() {
            for (j, (level, at)) in looked.children(self.level).enumerate() {
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

    /// Grows both sets of threshold `t` until no rank's grows.
    fn threshold(&self, t: u8, state: &K::State, seeds: &Seeds) {
        let first = self.first();
        let globalize = |v: Vec<u64>| -> Vec<u64> { v.into_iter().map(|a| a + first).collect() };
        let (firsts, seconds) = seeds.scan(t, state.flags(), |at, flag| state.seed(t, at, flag));
        let (mut firsts, mut seconds) = (globalize(firsts), globalize(seconds));
        while sum(self.transport, (firsts.len() + seconds.len()) as u64) > 0 {
            let new_seconds =
                self.visit_parents(&firsts, |at, edges| state.parent_of_first(t, at, edges));
            firsts = self.visit_parents(&seconds, |at, _| state.parent_of_second(t, at));
            seconds = new_seconds;
        }
    }

    /// Sends the same-level parents of this rank's `frontier` to their
    /// owners, and calls `visit(parent, edges)` for the parents this rank
    /// owns that any rank sent, as [`Exchange::deliver`] does; returns the
    /// parents for which it returned true, this rank's next frontier.
    fn visit_parents(
        &self,
        frontier: &[u64],
        visit: impl Fn(usize, u8) -> bool + Sync,
    ) -> Vec<u64> {
        let index = LevelIndex::new(self.rules.pits(), self.level);
        let first = self.first();
        let ranks = self.transport.ranks();
        let pieces = max(
            self.transport,
            frontier.len().div_ceil(FRONTIER_PIECE) as u64,
        ) as usize;
        let mut joined = Vec::new();
        for piece in 0..pieces {
            let members = frontier.chunks(FRONTIER_PIECE).nth(piece).unwrap_or(&[]);
            let mut parents = same_level_parents(self.rules, &index, members);
            parents.par_sort_unstable();
            let outgoing = (0..ranks)
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
            let found = LocalExchange.deliver(mine, &visit);
            joined.extend(found.into_iter().map(|at| at + first));
        }
        joined
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
