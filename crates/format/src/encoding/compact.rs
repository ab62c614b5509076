//! The compact encoding: which values a table leaves out, how a reader
//! gets them back, and the contexts its entries are coded in.
//!
//! A compact table stores for each position an *entry* at most its value,
//! and
//!
//! ```text
//! value(p) = max(entry(p), best value of p's restoring moves)
//! ```
//!
//! where a move is worth `gain − value(child)` and a position without a
//! legal move is worth its terminal value. A move that gives an extra turn
//! (Kalah) never restores: it is worth `gain + value(child)`, which a
//! child's entry bounds from below only, so a search could not cut it off.
//! The other moves restore ([`Restoring`]):
//!
//! - where levels cannot cycle (Kalah,
//!   [`mancala_core::Variant::can_cycle`]), every one of them;
//! - in the Oware family, every legal move if no move leads to `p`, and
//!   otherwise the moves that leave the level (captures) and the moves
//!   that *descend*: they leave the new mover fewer stones on his side
//!   than the old mover had on his, or as many and a lower index rank.
//!
//! Wherever the restoring moves alone give the value, the entry is free,
//! and the writer stores the one the codec finds cheapest
//! ([`crate::codec::lower_free_values`]).
//!
//! That this is exactly the value is the recursion of `docs/RULES.md`: a
//! table holds its fixpoint, endless play included. That a reader's search
//! ends: levels only fall, and a same-level restoring move descends in an
//! order: in Kalah the distance of the mover's seeds to his store, which
//! every same-level move lowers; in the Oware family (mover's stones,
//! rank), except from an unreachable position, which is nobody's child. A
//! probe searches the restoring moves best bound first
//! (a move is worth at most its gain minus its child's entry) within an
//! alpha-beta window, so most of it is reading a few entries.
//!
//! Entries are coded in the context of the previous entry and the mover's
//! stones, capped at [`MOVER_CAP`] ([`MoverContexts`]): the stones on the
//! mover's side say much about the value, and a reader walking a block
//! gets them for the cost of stepping to the next position. Where moves
//! give extra turns, the context also says whether the position has one:
//! a position without is always free, so its entries cost next to
//! nothing. Levels under
//! [`MOVER_CONTEXTS_MIN_POSITIONS`] positions use the plain order-1 model,
//! where the larger model would cost more header than it saves.

use std::sync::atomic::{
    AtomicBool, AtomicI8,
    Ordering::{Acquire, Relaxed, Release},
};

use mancala_core::{rank, LevelIndex, Move, MoveList, Position, Rules, Successors, MAX_PITS};
use rayon::prelude::*;

use super::{ChosenEntries, ContextModel, EntryReader, SolvedValues, ValueEncoding, Window};
use crate::codec::{self, Contexts, Uniform};
use crate::kind::Even;
use crate::levels::Levels;

/// Positions per unit of parallel work.
const CHUNK: usize = 1 << 14;

/// Mover's-stone counts above this share one context.
pub(crate) const MOVER_CAP: u32 = 12;

/// Compact levels of at least this many positions code their entries in
/// the mover's-stones contexts.
const MOVER_CONTEXTS_MIN_POSITIONS: usize = 1 << 14;

/// The header's names: entries in the mover's-stones contexts, and in the
/// plain order-1 model.
const NAME_MOVER: &str = "rans-order1-mover-11-descending";
const NAME_UNIFORM: &str = "rans-order1-11-descending";

/// Entries at most the values, restored by a search of the restoring moves.
pub struct Compact;

impl ValueEncoding for Compact {
    /// Probes read several entries anyway, so blocks favour size.
    fn default_block_size() -> u32 {
        2048
    }

    /// A reader's search ends where levels cannot cycle, and in the Oware
    /// family, whose restoring moves are captures and moves inside the
    /// level, and whose unreachable positions are those with the previous
    /// mover's row full.
    fn applies_to(rules: &Rules) -> bool {
        let variant = rules.variant();
        !variant.can_cycle()
            || (variant.only_captures_leave_level() && variant.sown_pit_stays_empty())
    }

    fn name(contexts: ContextModel) -> Option<&'static str> {
        Some(match contexts {
            ContextModel::Mover => NAME_MOVER,
            ContextModel::Uniform => NAME_UNIFORM,
        })
    }

    fn contexts_of(name: &str) -> Option<ContextModel> {
        match name {
            NAME_MOVER => Some(ContextModel::Mover),
            NAME_UNIFORM => Some(ContextModel::Uniform),
            _ => None,
        }
    }

    fn choose(level: SolvedValues<'_>, block_size: usize) -> ChosenEntries<'_> {
        let exit_best = level
            .exit_best
            .expect("compact tables are written from levels whose best exits are marked");
        let free = free_entries(&level.rules, level.level, level.values, exit_best);
        let values = level.values;
        if values.len() >= MOVER_CONTEXTS_MIN_POSITIONS {
            let contexts = MoverContexts::new(&level.rules, level.level);
            let (entries, model) = codec::lower_free_values(values, &free, block_size, &contexts);
            ChosenEntries {
                entries: entries.into(),
                contexts: ContextModel::Mover,
                model,
            }
        } else {
            let (entries, model) = codec::lower_free_values(values, &free, block_size, &Uniform);
            ChosenEntries {
                entries: entries.into(),
                contexts: ContextModel::Uniform,
                model,
            }
        }
    }

    fn entries_are_values() -> bool {
        false
    }

    /// An alpha-beta search of the restoring moves, best bound first
    /// (a move is worth at most its gain minus its child's entry). The entry is a lower bound of the value and each bound
    /// an upper bound of a move's, so a search stops as soon as no move
    /// left can matter, and a child is searched only as far as its
    /// parent's window needs. (Without windows, a search would follow each
    /// capture into a lower level's search, and so on down, in full.)
    fn value<R: EntryReader>(
        rules: &Rules,
        reader: &R,
        pos: &Position,
        entry: i32,
        window: Window,
    ) -> Result<i32, R::Error> {
        if entry >= window.beta {
            return Ok(entry);
        }
        // Moves, and (bound, move, child's entry) per move, on the stack:
        // probes are hot paths.
        let mut moves = [Move::default(); MAX_PITS];
        let mut count = 0;
        let restored = for_each_restoring_move(rules, pos, |m| {
            moves[count] = *m;
            count += 1;
        });
        if let Some(terminal) = restored {
            return Ok(terminal);
        }
        let mut child_entries = [0i32; MAX_PITS];
        reader.child_entries(&moves[..count], &mut child_entries[..count])?;
        let mut searched = [(0i32, 0usize, 0i32); MAX_PITS];
        for (i, (m, &child_entry)) in moves[..count].iter().zip(&child_entries).enumerate() {
            searched[i] = (bound(m, child_entry), i, child_entry);
        }
        let searched = &mut searched[..count];
        searched.sort_unstable_by_key(|&(bound, _, _)| std::cmp::Reverse(bound));
        let mut best = entry;
        for &(bound, i, child_entry) in searched.iter() {
            if best >= window.beta {
                break;
            }
            let floor = best.max(window.alpha);
            if bound <= floor {
                break;
            }
            let m = &moves[i];
            let child = reader.value(&m.child, child_entry, child_window(m, floor, window.beta))?;
            best = best.max(m.value_given_child(child));
        }
        Ok(best)
    }

    /// First every position gets the larger of its entry and its best exit
    /// (or its terminal value), which is final unless it has a same-level
    /// restoring move. Then each such position takes the best of that and
    /// its same-level restoring moves, restoring first, depth first, any
    /// child not done yet: those moves descend, so this ends. Two threads
    /// may restore the same child at once; both find the same value.
    fn restore(rules: &Rules, n: u32, entries: &mut [i8], lower: &Levels<Even>) {
        let index = LevelIndex::new(rules.pits(), n);
        let pending: Vec<AtomicBool> = entries
            .par_chunks_mut(CHUNK)
            .enumerate()
            .flat_map_iter(|(chunk, values)| {
                let first = (chunk * CHUNK) as u64;
                let positions = index.positions_from(first);
                let mut pending = Vec::with_capacity(values.len());
                for (i, (value, pos)) in values.iter_mut().zip(positions).enumerate() {
                    let look = look_at_exits(rules, &pos, first + i as u64, lower);
                    *value = (*value).max(look.best_exit);
                    pending.push(AtomicBool::new(look.restoring_stay));
                }
                pending
            })
            .collect();
        // SAFETY: `AtomicI8` has the same size, alignment and bit validity as
        // `i8`, and `entries` is borrowed mutably for as long as this view
        // lives.
        let values: &[AtomicI8] = unsafe { &*(entries as *mut [i8] as *const [AtomicI8]) };
        pending
            .par_chunks(CHUNK)
            .enumerate()
            .for_each(|(chunk, flags)| {
                let positions = index.positions_from((chunk * CHUNK) as u64);
                for (i, (flag, pos)) in flags.iter().zip(positions).enumerate() {
                    if flag.load(Acquire) {
                        restore_same_level(rules, chunk * CHUNK + i, pos, values, &pending);
                    }
                }
            });
    }
}

/// The most a restoring move can be worth, given its child's entry:
/// entries never exceed values, so `gain − entry(child)`.
#[inline]
fn bound(m: &Move, child_entry: i32) -> i32 {
    debug_assert!(!m.extra_turn, "an extra turn never restores");
    m.value_given_child(child_entry)
}

/// The window a restoring move `m`'s child is searched with, when the move
/// matters only if it is worth more than `floor`, and exactly only below
/// `beta`: the move is worth `gain − child`.
#[inline]
fn child_window(m: &Move, floor: i32, beta: i32) -> Window {
    let gain = m.gain as i32;
    Window {
        alpha: gain - beta,
        beta: gain - floor,
    }
}

/// Visits the restoring moves of `pos`, in pit order; returns its value
/// instead if it has no legal move.
pub(crate) fn for_each_restoring_move(
    rules: &Rules,
    pos: &Position,
    mut visit: impl FnMut(&Move),
) -> Option<i32> {
    let restoring = Restoring::of(rules, pos, rank(pos));
    rules.for_each_move(pos, |m| {
        if restoring.restores(m) {
            visit(m)
        }
    })
}

/// Which moves of one position restore its value: what the rule needs to
/// know of the position, worked out once for all its moves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Restoring {
    /// Every move but an extra turn restores: the level cannot cycle, or
    /// no move leads to the position.
    everything: bool,
    /// The position's stones on the mover's side.
    mover: u32,
    /// The position's rank in its level.
    rank: u64,
}

impl Restoring {
    /// The rule for `pos`, of rank `rank` in its level, in a rule set a
    /// compact table applies to.
    pub fn of(rules: &Rules, pos: &Position, rank: u64) -> Restoring {
        Restoring {
            everything: !rules.variant().can_cycle() || unreachable_by_moves(pos),
            mover: pos.mover_stones(),
            rank,
        }
    }

    /// Whether `m`, a legal move of the position, is one of its restoring
    /// moves.
    #[inline]
    pub fn restores(&self, m: &Move) -> bool {
        !m.extra_turn
            && (self.everything || m.leaves_level() || descends(self.mover, self.rank, &m.child))
    }
}

/// Whether no move leads to `pos`: its opponent (who moved last) has no
/// empty pit, but the pit he sowed from would be empty.
pub fn unreachable_by_moves(pos: &Position) -> bool {
    let p = pos.pits();
    (p..2 * p).all(|pit| pos.get(pit) > 0)
}

/// Whether a same-level `child` comes before its parent, which had
/// `parent_mover` stones on the mover's side and rank `parent_rank`, in
/// the order (mover's stones, rank) that restoring moves descend.
#[inline]
pub fn descends(parent_mover: u32, parent_rank: u64, child: &Position) -> bool {
    let mover = child.mover_stones();
    mover < parent_mover || (mover == parent_mover && rank(child) < parent_rank)
}

/// The coding contexts of a compact level: each position's stones on the
/// mover's side, capped at [`MOVER_CAP`], and where moves give extra turns
/// whether one of its moves does.
pub(crate) struct MoverContexts {
    index: LevelIndex,
    extra_turns: bool,
}

impl MoverContexts {
    /// The contexts of the level of `stones` stones of `rules`.
    pub fn new(rules: &Rules, stones: u32) -> MoverContexts {
        MoverContexts {
            index: LevelIndex::new(rules.pits(), stones),
            extra_turns: rules.variant().gives_extra_turns(),
        }
    }
}

/// Features per answer to "has the position an extra turn?".
const MOVER_FEATURES: usize = MOVER_CAP as usize + 1;

impl Contexts for MoverContexts {
    type Walk = MoverWalk;

    fn features(&self) -> usize {
        MOVER_FEATURES * (1 + self.extra_turns as usize)
    }

    fn walk(&self, first: u64) -> MoverWalk {
        let pos = (first < self.index.count()).then(|| self.index.unrank(first));
        let reaching = match &pos {
            Some(pos) if self.extra_turns => Some(reaching_pits(pos, pos.pits())),
            _ => None,
        };
        MoverWalk {
            mover: pos.as_ref().map_or(0, |p| p.mover_stones()),
            pos,
            stones: self.index.stones(),
            reaching,
        }
    }
}

/// Walks a level in index order from some position, yielding each
/// position's features ([`MoverContexts`]).
pub struct MoverWalk {
    /// The next position; `None` past the level's end.
    pos: Option<Position>,
    /// Its mover's stones, kept up to date as the walk steps.
    mover: u32,
    /// The level's stones: a position with all of them on the mover's side
    /// is over.
    stones: u32,
    /// Where moves give extra turns, its mover's pits whose move does (bit
    /// `i` for pit `i`), kept up to date as the walk steps.
    reaching: Option<u32>,
}

/// The pits `0..end` of the mover's row of `pos` whose move gives an
/// extra turn (bit `i` for pit `i`): the last seed falls into the store,
/// `pits − i` slots on from pit `i`, on some lap of the `2 · pits + 1`
/// slots a sowing passes (the opponent's store skipped).
#[inline]
fn reaching_pits(pos: &Position, end: usize) -> u32 {
    let pits = pos.pits();
    let ring = 2 * pits as u32 + 1;
    (0..end).fold(0, |mask, i| {
        let (seeds, store) = (pos.get(i), (pits - i) as u32);
        let reaches = seeds == store || (seeds > ring && seeds % ring == store);
        mask | (reaches as u32) << i
    })
}

impl Iterator for MoverWalk {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let pos = self.pos.as_mut()?;
        let mut feature = self.mover.min(MOVER_CAP) as usize;
        if self.reaching.is_some_and(|r| r != 0) && self.mover < self.stones {
            feature += MOVER_FEATURES;
        }
        let pits = pos.pits();
        let stepped = mancala_core::advance_at(pos);
        if let (Some(reaching), Some(pit)) = (&mut self.reaching, stepped) {
            // Pits `0..=pit + 1` changed: the mover's row up to there, or
            // all of it.
            let changed = (pit + 2).min(pits);
            *reaching = (*reaching >> changed << changed) | reaching_pits(pos, changed);
        }
        match stepped {
            // Stones moved within the mover's row.
            Some(pit) if pit + 1 < pits => {}
            // The mover's stones gathered in his last pit, and one more
            // from the opponent's first.
            Some(pit) if pit + 1 == pits => self.mover += 1,
            // The mover's stones gathered in the opponent's row.
            Some(_) => self.mover = 0,
            None => self.pos = None,
        }
        debug_assert!(self
            .pos
            .as_ref()
            .is_none_or(|p| p.mover_stones() == self.mover));
        Some(feature)
    }
}

/// Which entries of a solved level a compact table may lower: a position
/// is free where its restoring moves give its value. `exit_best` marks the
/// positions whose best restoring exit (or terminal value) is their value,
/// as the solver found; the rest look at their same-level restoring moves
/// with the level's `values`.
pub fn free_entries(rules: &Rules, level: u32, values: &[i8], exit_best: &[bool]) -> Vec<bool> {
    let index = LevelIndex::new(rules.pits(), level);
    values
        .par_chunks(CHUNK)
        .zip(exit_best.par_chunks(CHUNK))
        .enumerate()
        .flat_map_iter(|(chunk, (values_here, exit_best))| {
            let first = (chunk * CHUNK) as u64;
            index
                .positions_from(first)
                .zip(values_here.iter().zip(exit_best))
                .enumerate()
                .map(move |(i, (pos, (&value, &exit_best)))| {
                    exit_best || same_level_move_gives(rules, &pos, first + i as u64, value, values)
                })
        })
        .collect()
}

/// Whether a same-level restoring move of `pos` (rank `rank`) is worth
/// `value`, given the level's `values`.
fn same_level_move_gives(
    rules: &Rules,
    pos: &Position,
    rank_of_pos: u64,
    value: i8,
    values: &[i8],
) -> bool {
    let restoring = Restoring::of(rules, pos, rank_of_pos);
    let mut gives = false;
    rules.for_each_move(pos, |m| {
        if !gives && !m.leaves_level() && restoring.restores(m) {
            let child = values[rank(&m.child) as usize];
            gives = m.value_given_child(child as i32) == value as i32;
        }
    });
    gives
}

/// What one look at a position's moves tells the whole-level restore.
struct Exits {
    /// The best exit's value, or the terminal value, or `i8::MIN` if no
    /// move leaves the level.
    best_exit: i8,
    /// Whether a same-level move is one of its restoring moves.
    restoring_stay: bool,
}

/// Looks at every move of `pos` (rank `at`), reading its exits' values in
/// `lower`: every exit, restoring or not, since none is worth more than
/// the value and the lower levels are restored already.
fn look_at_exits(rules: &Rules, pos: &Position, at: u64, lower: &Levels<Even>) -> Exits {
    let restoring = Restoring::of(rules, pos, at);
    let mut best = i8::MIN as i32;
    let mut restoring_stay = false;
    let terminal = rules.for_each_move(pos, |m| {
        if m.leaves_level() {
            best = best.max(m.value_given_child(lower.value(&m.child)));
        } else {
            restoring_stay = restoring_stay || restoring.restores(m);
        }
    });
    match terminal {
        Some(value) => Exits {
            best_exit: value as i8,
            restoring_stay: false,
        },
        None => Exits {
            best_exit: best as i8,
            restoring_stay,
        },
    }
}

/// One position being restored: its same-level restoring moves, the next
/// one to look at, and the best value so far.
struct RestoreFrame {
    at: usize,
    moves: MoveList,
    next: usize,
    best: i32,
}

impl RestoreFrame {
    fn new(rules: &Rules, at: usize, pos: &Position, values: &[AtomicI8]) -> RestoreFrame {
        let mut moves = match rules.successors(pos) {
            Successors::Moves(moves) => moves,
            Successors::Terminal(_) => unreachable!("a terminal position is never pending"),
        };
        let restoring = Restoring::of(rules, pos, at as u64);
        moves.retain(|m| !m.leaves_level() && restoring.restores(m));
        RestoreFrame {
            at,
            moves,
            next: 0,
            best: values[at].load(Relaxed) as i32,
        }
    }
}

/// Restores the pending position `pos`, at `at`, and every pending
/// position it needs: the larger of what each holds and the best of its
/// same-level restoring moves. An explicit stack, because chains of
/// descending moves can be long.
fn restore_same_level(
    rules: &Rules,
    at: usize,
    pos: Position,
    values: &[AtomicI8],
    pending: &[AtomicBool],
) {
    let mut stack = vec![RestoreFrame::new(rules, at, &pos, values)];
    while let Some(frame) = stack.last_mut() {
        let Some(m) = frame.moves.get(frame.next) else {
            values[frame.at].store(frame.best as i8, Relaxed);
            pending[frame.at].store(false, Release);
            stack.pop();
            continue;
        };
        let child = rank(&m.child) as usize;
        if pending[child].load(Acquire) {
            let child_frame = RestoreFrame::new(rules, child, &m.child, values);
            stack.push(child_frame);
            continue;
        }
        frame.best = frame
            .best
            .max(m.value_given_child(values[child].load(Relaxed) as i32));
        frame.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk from any index yields the features of every position from
    /// there to the level's end, and nothing after: the capped mover's
    /// stones, plus in Kalah whether a move gives an extra turn (asked of
    /// the rules' own moves, laps of the sowing included).
    #[test]
    fn a_walk_follows_the_index() {
        use mancala_core::Variant;
        for (variant, pits, stones) in [
            (Variant::Oware, 6, 14),
            (Variant::Oware, 3, 20),
            (Variant::Oware, 4, 0),
            (Variant::Kalah, 6, 14),
            (Variant::Kalah, 3, 20),
            (Variant::Kalah, 2, 30),
        ] {
            let rules = Rules::new(variant, pits).unwrap();
            let contexts = MoverContexts::new(&rules, stones);
            let index = LevelIndex::new(pits, stones);
            let count = index.count();
            let feature = |at: u64| {
                let pos = index.unrank(at);
                let mut extra = false;
                rules.for_each_move(&pos, |m| extra |= m.extra_turn);
                pos.mover_stones().min(MOVER_CAP) as usize + MOVER_FEATURES * extra as usize
            };
            for first in [0, 1, count / 3, count - 1] {
                let walked: Vec<usize> = contexts.walk(first).collect();
                let expected: Vec<usize> = (first..count).map(feature).collect();
                assert_eq!(
                    walked, expected,
                    "{variant} {pits} pits, {stones} stones from {first}"
                );
                assert!(walked.iter().all(|&f| f < contexts.features()));
            }
        }
    }
}
