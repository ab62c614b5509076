//! The order in which a level that cannot cycle is solved, shared by the
//! one-pass strategy ([`super::OnePass`]) and its form across ranks.
//!
//! There a move that keeps the level sows inside the mover's row and never
//! reaches his store: every seed it sows ends nearer that store than the
//! sown pit was. So the *distance* of a position, `f(mover's row) +
//! f(opponent's row)` with `f(row) = Σ (P − i) · row[i]` (the steps the
//! row's seeds still have to go to their owner's store), strictly falls
//! along every same-level move: the child's rows are the parent's opponent
//! row, untouched, and its mover's row after sowing. Solving the positions
//! of a level by increasing distance therefore finds every same-level
//! child solved.
//!
//! The level is walked as pairs of rows, each row's part of the rank
//! computed once ([`mover_row_rank`], [`opponent_row_rank`]). A [`Task`] is
//! a few mover rows, each with every opponent row that completes the
//! distance: a child's opponent row is the parent's mover row after the
//! move, the major part of the child's rank, so the children one move of
//! one mover row reaches lie in one short stretch of their level.

use std::ops::Range;

use mancala_core::{mover_row_rank, opponent_row_rank, Move, Position, RowMove, Rules, MAX_PITS};

/// Positions per task, about.
const TASK_POSITIONS: usize = 1 << 12;

/// The moves of one mover's row ([`RowMove`]), with the parts of their
/// children's ranks that do not depend on the opponent's row.
pub(crate) struct RowMoves {
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
    pub(crate) fn new(rules: &Rules, mover: &Row, n: u32) -> RowMoves {
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
pub(crate) struct Pending {
    /// Its rank.
    pub at: u64,
    /// Its value, if it is terminal.
    pub terminal: Option<i32>,
    children: [Child; MAX_PITS],
    /// Children in use.
    len: usize,
}

impl Pending {
    /// Makes this the position `mover` / `opponent` of level `n` (`moves`
    /// are the mover's row's), its children located; `located(level,
    /// index)` is told of each child as soon as it is known (to prefetch
    /// it).
    #[inline]
    pub(crate) fn locate(
        &mut self,
        rules: &Rules,
        n: u32,
        (moves, mover): (&RowMoves, &Row),
        opponent: &Row,
        mut located: impl FnMut(u32, u64),
    ) {
        let pits = rules.pits();
        self.at = mover.mover_rank + opponent.opponent_rank;
        self.len = 0;
        self.terminal = None;
        debug_assert_eq!(
            self.at,
            mancala_core::LevelIndex::new(pits, n).rank(&Position::from_rows(
                &mover.cells[..pits],
                &opponent.cells[..pits]
            ))
        );
        if moves.len == 0 || opponent.bits == 0 {
            let pos = Position::from_rows(&mover.cells[..pits], &opponent.cells[..pits]);
            self.terminal = rules.for_each_move(&pos, |_| {});
            debug_assert!(self.terminal.is_some(), "a row without moves ends the game");
            return;
        }
        for m in &moves.moves[..moves.len] {
            let (gain, mover_after, opponent_after) = m.row.onto(rules, opponent.bits);
            let index = if gain == 0 {
                opponent.mover_rank + m.same_level_part
            } else if m.row.extra_turn {
                m.own_part + opponent_row_rank(m.own_stones, &opponent_after.to_le_bytes()[..pits])
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
            let level = n - gain as u32;
            located(level, index);
            self.children[self.len] = Child {
                level,
                index,
                gain,
                extra_turn: m.row.extra_turn,
            };
            self.len += 1;
        }
    }

    /// Its children, in the order of its moves.
    #[inline]
    pub(crate) fn children(&self) -> &[Child] {
        &self.children[..self.len]
    }

    /// Its value, given each child's value (in [`Pending::children`]'s
    /// order).
    #[inline]
    pub(crate) fn value(&self, mut child_value: impl FnMut(usize, &Child) -> i32) -> i32 {
        self.terminal.unwrap_or_else(|| {
            self.children()
                .iter()
                .enumerate()
                .map(|(j, child)| child.value_for_parent(child_value(j, child)))
                .max()
                .expect("a position that is not terminal has a move")
        })
    }

    /// Its value, and whether its best restoring exit (a move that leaves
    /// the level without an extra turn) or its terminal value gives it:
    /// the mark a compact table is written from
    /// ([`crate::Solution::exit_best`]).
    #[inline]
    pub(crate) fn value_and_exit_best(
        &self,
        mut child_value: impl FnMut(&Child) -> i32,
    ) -> (i32, bool) {
        if let Some(terminal) = self.terminal {
            return (terminal, true);
        }
        let (mut best, mut best_exit) = (i32::MIN, i32::MIN);
        for child in self.children() {
            let value = child.value_for_parent(child_value(child));
            best = best.max(value);
            if child.gain > 0 && !child.extra_turn {
                best_exit = best_exit.max(value);
            }
        }
        (best, best_exit == best)
    }
}

/// One move's child: where it is and what the move adds.
#[derive(Clone, Copy, Default)]
pub(crate) struct Child {
    /// Its level.
    pub level: u32,
    /// Its rank in its level.
    pub index: u64,
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
pub(crate) struct Row {
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
pub(crate) struct Rows {
    by_distance: Vec<Vec<Row>>,
}

impl Rows {
    /// Every row of `stones` stones in `pits` pits, for level `level`.
    pub(crate) fn new(pits: usize, stones: u32, level: u32) -> Rows {
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

    /// The rows of every stone count of level `level`, indexed by their
    /// stones.
    pub(crate) fn of_level(pits: usize, level: u32) -> Vec<Rows> {
        (0..=level)
            .map(|stones| Rows::new(pits, stones, level))
            .collect()
    }

    /// Only the rows that, as the opponent's row against some row of
    /// `movers` (the rows of the other stone count), give a position of
    /// rank in `range`.
    pub(crate) fn opponents_within(&self, movers: &Rows, range: &Range<u64>) -> Rows {
        let ranks = movers.by_distance.iter().flatten().map(|r| r.mover_rank);
        let (lowest, highest) = ranks.fold((u64::MAX, 0), |(lo, hi), r| (lo.min(r), hi.max(r)));
        let by_distance = self
            .by_distance
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|r| {
                        r.opponent_rank + lowest < range.end
                            && r.opponent_rank + highest >= range.start
                    })
                    .copied()
                    .collect()
            })
            .collect();
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
pub(crate) struct Task<'r> {
    /// The mover rows.
    pub movers: &'r [Row],
    /// The opponent rows each mover row is paired with.
    pub opponents: &'r [Row],
}

impl Task<'_> {
    /// Its positions (some may lie outside a rank's range: see
    /// [`Rows::opponents_within`]).
    pub(crate) fn positions(&self) -> usize {
        self.movers.len() * self.opponents.len()
    }
}

/// The positions at `distance` of level `movers.len() - 1`, in tasks of
/// about [`TASK_POSITIONS`]: `movers[s]` are the mover rows of `s` stones,
/// `opponents[s]` the opponent rows of `s` stones ([`Rows::of_level`] for
/// both, or fewer opponent rows for a rank's part of the level).
pub(crate) fn tasks_at<'r>(
    movers: &'r [Rows],
    opponents: &'r [Rows],
    distance: usize,
) -> Vec<Task<'r>> {
    let n = movers.len() - 1;
    let mut tasks = Vec::new();
    for mover_stones in 0..=n {
        let opponent_rows = &opponents[n - mover_stones];
        let mover_rows = &movers[mover_stones].by_distance;
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

/// The largest distance of a position of `pits` pits and `n` stones.
pub(crate) fn largest_distance(pits: usize, n: u32) -> usize {
    pits * n as usize
}
