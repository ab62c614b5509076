//! The one-pass strategy, for rule sets whose levels cannot cycle
//! ([`mancala_core::Variant::can_cycle`]: Kalah, with either capture rule).
//!
//! There a move that keeps the level sows inside the mover's row and never
//! reaches his store: every seed it sows ends nearer that store than the
//! sown pit was. So the *distance* of a position, `f(mover's row) +
//! f(opponent's row)` with `f(row) = Σ (P − i) · row[i]` (the steps the
//! row's seeds still have to go to their owner's store), strictly falls
//! along every same-level move: the child's rows are the parent's opponent
//! row, untouched, and its mover's row after sowing. Solving the positions
//! of a level by increasing distance therefore finds every same-level
//! child solved, and each position is one look at its moves: a minimax
//! over the lower levels and the solved part of its own, one byte of state
//! per position, no counters, no thresholds, no un-moves.
//!
//! Positions of one distance are independent and are solved in parallel.
//! The level is walked as pairs of rows, each row's part of the rank
//! computed once ([`mover_row_rank`], [`opponent_row_rank`]). A task is a
//! few mover rows, each with every opponent row that completes the
//! distance: a child's opponent row is the parent's mover row after the
//! move, the major part of the child's rank, so the children one move of
//! one mover row reaches lie in one short stretch of their level.
//!
//! A level is a single pass: it is not checkpointed.

use std::sync::atomic::{AtomicI8, Ordering::Relaxed};

use mancala_core::{
    mover_row_rank, opponent_row_rank, LevelIndex, Move, Position, RowMove, Rules, MAX_PITS,
};
use mancala_format::{prefetch, Levels};
use rayon::prelude::*;

use super::{LevelJob, Strategy};
use crate::error::BuildError;
use crate::solve::{Solution, Solve};

/// Positions per unit of parallel work, about.
const TASK_POSITIONS: usize = 1 << 12;
/// Positions whose children are located (and prefetched) before the
/// first is read.
const BATCH: usize = 32;
/// A position not solved yet.
const UNSOLVED: i8 = i8::MIN;

/// Every position solved once, same-level children first.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnePass;

impl Strategy for OnePass {
    fn solve<K: Solve>(&self, job: &LevelJob<K>) -> Result<Solution, BuildError> {
        let n = job.level;
        job.assert_in_order();
        assert!(
            !job.rules.variant().can_cycle(),
            "one pass solves only levels that cannot cycle"
        );
        let pits = job.rules.pits();
        let rows: Vec<Rows> = (0..=n).map(|stones| Rows::new(pits, stones, n)).collect();
        let level = Level {
            rules: job.rules,
            index: LevelIndex::new(pits, n),
            lower: job.lower,
            values: (0..LevelIndex::new(pits, n).count())
                .map(|_| AtomicI8::new(UNSOLVED))
                .collect(),
        };
        for distance in 0..=pits * n as usize {
            let tasks = tasks_at(&rows, distance);
            tasks.par_iter().for_each(|task| level.solve_task(task));
            let positions: usize = tasks.iter().map(Task::positions).sum();
            // A level is two units a position (`LevelJob::progress`).
            (job.progress)(2 * positions as u64);
        }
        // Writing the level reads no lower level: their mapped pages may go.
        job.lower.release_mapped_pages();
        let values = level.values.into_iter().map(AtomicI8::into_inner).collect();
        Ok(K::from_values(n, values))
    }
}

/// The level being solved.
struct Level<'a, K: Solve> {
    rules: &'a Rules,
    index: LevelIndex,
    lower: &'a Levels<K>,
    /// Every position's value once solved, [`UNSOLVED`] before.
    values: Vec<AtomicI8>,
}

impl<K: Solve> Level<'_, K> {
    /// Solves a task's positions in batches: every child of a batch is
    /// located and prefetched before any is read, so the misses of a
    /// batch's random lookups overlap.
    fn solve_task(&self, task: &Task) {
        let mut batch = [Pending::default(); BATCH];
        let mut filled = 0;
        for mover in task.movers {
            let moves = RowMoves::new(self.rules, mover, self.index.stones());
            for opponent in task.opponents {
                let pending = &mut batch[filled];
                pending.at = (mover.mover_rank + opponent.opponent_rank) as usize;
                self.locate_children(&moves, mover, opponent, pending);
                filled += 1;
                if filled == BATCH {
                    self.finish(&batch);
                    filled = 0;
                }
            }
        }
        self.finish(&batch[..filled]);
    }

    /// Notes in `pending` where the children of the position `mover` /
    /// `opponent` are (`moves` are the mover's row's), each prefetched.
    #[inline]
    fn locate_children(
        &self,
        moves: &RowMoves,
        mover: &Row,
        opponent: &Row,
        pending: &mut Pending,
    ) {
        let pits = self.rules.pits();
        debug_assert_eq!(
            pending.at as u64,
            self.index.rank(&Position::from_rows(
                &mover.cells[..pits],
                &opponent.cells[..pits]
            ))
        );
        pending.len = 0;
        pending.terminal = None;
        if moves.len == 0 || opponent.bits == 0 {
            let pos = Position::from_rows(&mover.cells[..pits], &opponent.cells[..pits]);
            pending.terminal = self.rules.for_each_move(&pos, |_| {});
            debug_assert!(
                pending.terminal.is_some(),
                "a row without moves ends the game"
            );
            return;
        }
        let n = self.index.stones();
        for m in &moves.moves[..moves.len] {
            let (gain, mover_after, opponent_after) = m.row.onto(self.rules, opponent.bits);
            let level = n - gain as u32;
            let index = if gain == 0 {
                let index = opponent.mover_rank + m.same_level_part;
                prefetch(&self.values, index as usize);
                index
            } else {
                let index = if m.row.extra_turn {
                    m.own_part
                        + opponent_row_rank(m.own_stones, &opponent_after.to_le_bytes()[..pits])
                } else {
                    let opponent_part = if gain == m.row.stored {
                        m.turned_part
                    } else {
                        opponent_row_rank(
                            stones_in(opponent_after),
                            &mover_after.to_le_bytes()[..pits],
                        )
                    };
                    mover_row_rank(&opponent_after.to_le_bytes()[..pits]) + opponent_part
                };
                self.lower.prefetch(level, index);
                index
            };
            pending.children[pending.len] = Child {
                level,
                index,
                gain,
                extra_turn: m.row.extra_turn,
            };
            pending.len += 1;
        }
    }

    /// Reads the children of every position of `batch` and stores its
    /// values.
    fn finish(&self, batch: &[Pending]) {
        for pending in batch {
            let value = pending.terminal.unwrap_or_else(|| {
                pending.children[..pending.len]
                    .iter()
                    .map(|child| child.value_for_parent(self.child_value(child)))
                    .max()
                    .expect("a position that is not terminal has a move")
            });
            self.values[pending.at].store(value as i8, Relaxed);
        }
    }

    /// The value of a solved child.
    #[inline]
    fn child_value(&self, child: &Child) -> i32 {
        if child.level < self.index.stones() {
            K::acyclic_value(child.level, self.lower.entry_at(child.level, child.index))
        } else {
            let value = self.values[child.index as usize].load(Relaxed);
            debug_assert_ne!(value, UNSOLVED, "a same-level child is not solved yet");
            value as i32
        }
    }
}

/// The moves of one mover's row ([`RowMove`]), with the parts of their
/// children's ranks that do not depend on the opponent's row.
struct RowMoves {
    moves: [Template; MAX_PITS],
    len: usize,
}

/// One row move and its children's rank parts.
#[derive(Clone, Copy, Default)]
struct Template {
    row: RowMove,
    /// Stones in the mover's row after the move (no capture).
    own_stones: u32,
    /// A same-level child (nothing stored, no capture; the opponent's row
    /// unchanged): its rank less its mover's row's part.
    same_level_part: u64,
    /// After an extra turn: the mover's row's part of the child's rank.
    own_part: u64,
    /// A child after the turn passes without a capture: its rank less its
    /// mover's row's part.
    turned_part: u64,
}

impl RowMoves {
    /// The moves of `mover`, a row of a position of level `n`.
    fn new(rules: &Rules, mover: &Row, n: u32) -> RowMoves {
        let pits = rules.pits();
        let opponent_stones = n - stones_in(mover.bits);
        let mut moves = RowMoves {
            moves: [Template::default(); MAX_PITS],
            len: 0,
        };
        rules.row_moves(&mover.cells[..pits], |row| {
            let after = row.mover_row.to_le_bytes();
            let after = &after[..pits];
            let own_stones = stones_in(row.mover_row);
            moves.moves[moves.len] = Template {
                row: *row,
                own_stones,
                same_level_part: opponent_row_rank(opponent_stones, after),
                own_part: mover_row_rank(after),
                turned_part: opponent_row_rank(
                    opponent_stones + stones_in(row.opponent_adds),
                    after,
                ),
            };
            moves.len += 1;
        });
        moves
    }
}

/// The stones in a row, from its bits (a row holds fewer than 256).
#[inline]
fn stones_in(bits: u64) -> u32 {
    (bits.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u32
}

/// A position whose children are located, not yet read.
#[derive(Clone, Copy, Default)]
struct Pending {
    /// Its rank.
    at: usize,
    /// Its value, if it is terminal.
    terminal: Option<i32>,
    children: [Child; MAX_PITS],
    /// Children in use.
    len: usize,
}

/// One move's child: where it is and what the move adds.
#[derive(Clone, Copy, Default)]
struct Child {
    level: u32,
    index: u64,
    gain: u8,
    extra_turn: bool,
}

impl Child {
    /// The move's value for the parent given the child's value
    /// ([`mancala_core::Move::value_given_child`]).
    #[inline]
    fn value_for_parent(&self, value: i32) -> i32 {
        let m = Move {
            gain: self.gain,
            extra_turn: self.extra_turn,
            ..Move::default()
        };
        m.value_given_child(value)
    }
}

/// One row of pits, with the two parts of a rank it gives.
#[derive(Clone, Copy)]
struct Row {
    cells: [u8; MAX_PITS],
    /// The same pits as row bits ([`RowMove`]).
    bits: u64,
    /// [`mover_row_rank`]: its part of a position's rank as the mover's row.
    mover_rank: u64,
    /// [`opponent_row_rank`] in the level being solved: its part as the
    /// opponent's row.
    opponent_rank: u64,
}

/// The rows holding one number of stones, by distance (`f` above).
struct Rows {
    by_distance: Vec<Vec<Row>>,
}

impl Rows {
    /// Every row of `stones` stones in `pits` pits, for level `level`.
    fn new(pits: usize, stones: u32, level: u32) -> Rows {
        let mut by_distance = vec![Vec::new(); pits * stones as usize + 1];
        let mut cells = [0u8; MAX_PITS];
        for_each_row(&mut cells[..pits], stones, &mut |cells| {
            let mut row = Row {
                cells: [0; MAX_PITS],
                bits: 0,
                mover_rank: mover_row_rank(cells),
                opponent_rank: opponent_row_rank(level - stones, cells),
            };
            row.cells[..pits].copy_from_slice(cells);
            row.bits = u64::from_le_bytes(row.cells);
            by_distance[distance(cells)].push(row);
        });
        Rows { by_distance }
    }

    /// The rows at `distance` (none outside the range).
    fn at(&self, distance: usize) -> &[Row] {
        self.by_distance.get(distance).map_or(&[], Vec::as_slice)
    }
}

/// Calls `visit` with every filling of `cells` by `stones` stones.
fn for_each_row(cells: &mut [u8], stones: u32, visit: &mut impl FnMut(&[u8])) {
    fn fill(cells: &mut [u8], from: usize, left: u32, visit: &mut impl FnMut(&[u8])) {
        if from + 1 == cells.len() {
            cells[from] = left as u8;
            visit(cells);
            return;
        }
        for here in 0..=left {
            cells[from] = here as u8;
            fill(cells, from + 1, left - here, visit);
        }
    }
    fill(cells, 0, stones, visit);
}

/// The steps a row's seeds have to go to their owner's store: `Σ (P − i) ·
/// row[i]`.
fn distance(cells: &[u8]) -> usize {
    let pits = cells.len();
    cells
        .iter()
        .enumerate()
        .map(|(i, &c)| (pits - i) * c as usize)
        .sum()
}

/// Some mover rows, each with every opponent row of the distance solved.
struct Task<'r> {
    movers: &'r [Row],
    opponents: &'r [Row],
}

impl Task<'_> {
    fn positions(&self) -> usize {
        self.movers.len() * self.opponents.len()
    }
}

/// The positions at `distance`, in tasks of about [`TASK_POSITIONS`].
fn tasks_at(rows: &[Rows], distance: usize) -> Vec<Task<'_>> {
    let n = rows.len() - 1;
    let mut tasks = Vec::new();
    for mover_stones in 0..=n {
        let opponent_rows = &rows[n - mover_stones];
        let mover_rows = &rows[mover_stones].by_distance;
        for (own, movers) in mover_rows.iter().enumerate().take(distance + 1) {
            let opponents = opponent_rows.at(distance - own);
            if movers.is_empty() || opponents.is_empty() {
                continue;
            }
            let per_task = (TASK_POSITIONS / opponents.len()).max(1);
            tasks.extend(
                movers
                    .chunks(per_task)
                    .map(|movers| Task { movers, opponents }),
            );
        }
    }
    tasks
}
