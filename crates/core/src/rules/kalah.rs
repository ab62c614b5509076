//! Kalah: each player's store lies on the sowing path after his own pits, a
//! last seed in the store gives another turn, and a last seed in an empty
//! own pit captures it with the opposite pit (by default even when that pit
//! is empty: `Rules::with_empty_capture`). The game ends as soon as one row
//! is empty.

use std::cmp::Ordering;

use super::{Move, MoveRules, Place, Rules};
use crate::position::Position;

/// The Kalah rule set.
pub(super) struct Kalah;

impl Kalah {
    /// Sows `origin`: the path is the mover's pits, his store, the
    /// opponent's pits (the opponent's store is skipped); the origin is not
    /// skipped.
    fn sow(rules: &Rules, pos: &Position, origin: usize) -> Move {
        let p = rules.pits();
        let ring = 2 * p + 1; // path slots; slot p is the store
        let mut board = *pos;
        let cells = board.cells_mut();
        let seeds = cells[origin] as usize;
        cells[origin] = 0;
        let (laps, rest) = (seeds / ring, seeds % ring);
        let mut gain = laps;
        if laps > 0 {
            cells.iter_mut().for_each(|c| *c += laps as u8);
        }
        let mut slot = origin;
        for _ in 0..rest {
            slot = (slot + 1) % ring;
            match slot.cmp(&p) {
                Ordering::Less => cells[slot] += 1,
                Ordering::Equal => gain += 1,
                Ordering::Greater => cells[slot - 1] += 1,
            }
        }
        let last_slot = (origin + seeds) % ring;
        if last_slot == p {
            return Move {
                pit: origin as u8,
                gain: gain as u8,
                extra_turn: true,
                child: board,
            };
        }
        if last_slot < p && cells[last_slot] == 1 {
            let opposite = 2 * p - 1 - last_slot;
            if rules.empty_capture() || cells[opposite] > 0 {
                gain += 1 + cells[opposite] as usize;
                cells[last_slot] = 0;
                cells[opposite] = 0;
            }
        }
        Move {
            pit: origin as u8,
            gain: gain as u8,
            extra_turn: false,
            child: board.flipped(),
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
