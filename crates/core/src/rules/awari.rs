//! Awari, computer-olympiad rules (the rules Awari was solved under): a
//! move that leaves the opponent without stones is illegal unless every
//! move does, and then the mover takes every stone on the board.

use super::sowing::{self, CaptureShape};
use super::{Move, MoveRules, Rules, Successors};
use crate::position::Position;

/// The Awari rule set.
pub(super) struct Awari;

impl MoveRules for Awari {
    /// A move that leaves the opponent empty is illegal.
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool = true;

    #[inline]
    fn moves(_: &Rules, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        let mut any_legal = false;
        let mut any_move = false;
        for pit in 0..pos.pits() {
            if pos.get(pit) == 0 {
                continue;
            }
            any_move = true;
            let m = sowing::sow_and_capture(pos, pit, CaptureShape::Backward);
            // The child is seen from the opponent: his row is the child's
            // first row. A move that leaves it empty starves him.
            if m.child.mover_stones() > 0 {
                visit(&m);
                any_legal = true;
            }
        }
        if any_legal {
            return None;
        }
        Some(if any_move {
            // Every move starves the opponent: the mover takes all.
            pos.stones() as i32
        } else {
            // No stone to move: they all lie on the opponent's side.
            -(pos.opponent_stones() as i32)
        })
    }

    fn play(rules: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        // Legality depends on every other move.
        match rules.successors(pos) {
            Successors::Moves(list) => list.iter().find(|m| m.pit as usize == pit).copied(),
            Successors::Terminal(_) => None,
        }
    }
}
