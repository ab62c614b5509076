//! Wari: captures in both directions along the opponent's row, and neither
//! a grand-slam nor a feeding rule: every non-empty pit may be sown.

use super::sowing::{self, CaptureShape};
use super::{Move, MoveRules, Rules, Stays};
use crate::position::Position;

/// The Wari rule set.
pub(super) struct Wari;

impl Wari {
    /// The value of a position whose mover has no stone to sow: the
    /// remaining stones go to the opponent, on whose side they lie.
    #[inline]
    fn terminal(pos: &Position) -> i32 {
        -(pos.stones() as i32)
    }
}

impl MoveRules for Wari {
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool = false;

    #[inline]
    fn moves(_: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Option<i32> {
        let any_legal = sowing::moves(pos, CaptureShape::BothWays, |_| true, visit);
        (!any_legal).then(|| Wari::terminal(pos))
    }

    #[inline]
    fn exits(_: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Stays {
        match sowing::exits(pos, CaptureShape::BothWays, |_| true, visit) {
            Some(stays) => Stays::Moves(stays),
            None => Stays::Terminal(Wari::terminal(pos)),
        }
    }

    fn play(_: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        Some(sowing::sow_and_capture(pos, pit, CaptureShape::BothWays))
    }
}
