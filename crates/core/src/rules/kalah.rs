//! Kalah: each player's store lies on the sowing path after his own pits, a
//! last seed in the store gives another turn, and a last seed in an empty
//! own pit captures it with the opposite pit (by default even when that pit
//! is empty: `Rules::with_empty_capture`). The game ends as soon as one row
//! is empty.

use std::cmp::Ordering;

use super::bits::{ones, row_mask};
use super::{Move, MoveRules, Place, RowMove, Rules};
use crate::position::Position;

/// The Kalah rule set.
pub(super) struct Kalah;

impl Kalah {
    /// Sows `origin` of the mover's row `row` (row bits, [`RowMove`]): the
    /// path is the mover's pits, his store, the opponent's pits (the
    /// opponent's store is skipped); the origin is not skipped.
    ///
    /// Whole laps add one stone to every pit; the rest of the sowing covers
    /// path slots `origin + 1 ..= origin + rest` (slot `P` is the store,
    /// slots after it are pit `slot − 1`), at most one wrap round. A run of
    /// slots is a run of pits, so each part is one 128-bit addition of a
    /// byte mask: this runs for every move the solver and the searches
    /// generate.
    pub(super) fn row_move(rules: &Rules, row: u64, origin: usize) -> RowMove {
        let p = rules.pits();
        let ring = 2 * p + 1; // path slots; slot p is the store
        let seeds = (row >> (8 * origin)) as u8 as usize;
        let mut board = (row & !(0xff << (8 * origin))) as u128;
        let (laps, rest) = (seeds / ring, seeds % ring);
        let mut stored = laps;
        board += laps as u128 * ones(0, 2 * p);
        let last = origin + rest; // the last slot, before wrapping
        let (first, end) = (origin + 1, last.min(2 * p) + 1); // slots first..end
        let pit = |slot: usize| if slot > p { slot - 1 } else { slot };
        board += ones(pit(first), pit(end));
        if first <= p && p < end {
            stored += 1;
        }
        if last >= ring {
            // Wrapped: slots 0..=last − ring, all the mover's pits before
            // the origin.
            board += ones(0, last - ring + 1);
        }
        let last_slot = last % ring;
        let mover_row = (board as u64) & row_mask(p);
        let lands_in_empty =
            (last_slot < p && (mover_row >> (8 * last_slot)) as u8 == 1).then_some(last_slot as u8);
        RowMove {
            pit: origin as u8,
            mover_row,
            opponent_adds: (board >> (8 * p)) as u64,
            stored: stored as u8,
            extra_turn: last_slot == p,
            lands_in_empty,
        }
    }

    /// Sows `origin` in `pos`: its row move played onto its opponent row.
    #[inline]
    fn sow(rules: &Rules, pos: &Position, origin: usize) -> Move {
        let p = rules.pits();
        let board = pos.board_bits();
        let row = Kalah::row_move(rules, board as u64 & row_mask(p), origin);
        let (gain, mover, opponent) = row.onto(rules, (board >> (8 * p)) as u64);
        let (first, second) = if row.extra_turn {
            (mover, opponent)
        } else {
            (opponent, mover)
        };
        Move {
            pit: origin as u8,
            gain,
            extra_turn: row.extra_turn,
            child: pos.with_board_bits(first as u128 | (second as u128) << (8 * p)),
        }
    }
}

impl MoveRules for Kalah {
    /// A position whose opponent row is empty is terminal: nobody moves
    /// into it from the same level.
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool = true;

    #[inline]
    fn moves(rules: &Rules, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        let (mine, theirs) = (pos.mover_stones() as i32, pos.opponent_stones() as i32);
        if mine == 0 || theirs == 0 {
            return Some(mine - theirs);
        }
        for pit in 0..pos.pits() {
            if pos.get(pit) > 0 {
                visit(&Kalah::sow(rules, pos, pit));
            }
        }
        None
    }

    fn play(rules: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        (pos.opponent_stones() > 0).then(|| Kalah::sow(rules, pos, pit))
    }

    fn sowing_path(rules: &Rules, pos: &Position, pit: usize) -> Vec<Place> {
        let p = rules.pits();
        let mut slot = pit;
        (0..pos.get(pit))
            .map(|_| {
                slot = (slot + 1) % (2 * p + 1);
                match slot.cmp(&p) {
                    Ordering::Less => Place::Pit(slot),
                    Ordering::Equal => Place::Store,
                    Ordering::Greater => Place::Pit(slot - 1),
                }
            })
            .collect()
    }

    /// A sowing that reaches the store leaves the level.
    #[inline]
    fn next_pit_within_level(pits: usize, _origin: usize, last: usize) -> Option<usize> {
        (last + 1 < pits).then_some(last + 1)
    }

    #[inline]
    fn keeps_level(
        rules: &Rules,
        after: &Position,
        _origin: usize,
        _stones: u8,
        last: usize,
        _opponent_before: u32,
    ) -> bool {
        let opposite = 2 * after.pits() - 1 - last;
        !(after.get(last) == 1 && (rules.empty_capture() || after.get(opposite) > 0))
    }
}
