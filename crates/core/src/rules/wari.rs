//! Wari: captures in both directions along the opponent's row, and neither
//! a grand-slam nor a feeding rule: every non-empty pit may be sown.

use super::sowing::{self, CaptureShape};
use super::{Move, MoveRules, Rules, Stays};
use crate::position::Position;

/// The Wari rule set.
pub(super) struct Wari;

impl MoveRules for Wari {
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool = false;

    #[inline]
    fn moves(_: &Rules, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        if pos.mover_stones() == 0 {
            // The remaining stones go to the opponent, on whose side they lie.
            return Some(-(pos.stones() as i32));
        }
        for pit in 0..pos.pits() {
            if pos.get(pit) > 0 {
                visit(&sowing::sow_and_capture(pos, pit, CaptureShape::BothWays));
            }
        }
        None
    }

    #[inline]
    fn exits(_: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Stays {
        match sowing::exits(pos, CaptureShape::BothWays, |_| true, visit) {
            Some(stays) => Stays::Moves(stays),
            None => Stays::Terminal(-(pos.stones() as i32)),
        }
    }

    fn play(_: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        Some(sowing::sow_and_capture(pos, pit, CaptureShape::BothWays))
    }
}
