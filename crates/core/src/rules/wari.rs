//! Wari: captures in both directions along the opponent's row, and neither
//! a grand-slam nor a feeding rule: every non-empty pit may be sown.

use super::sowing::{self, CaptureShape};
use super::{Move, MoveRules, Place, Rules};
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

    fn play(_: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        Some(sowing::sow_and_capture(pos, pit, CaptureShape::BothWays))
    }

    fn sowing_path(_: &Rules, pos: &Position, pit: usize) -> Vec<Place> {
        sowing::path(pos, pit)
    }

    #[inline]
    fn next_pit_within_level(pits: usize, origin: usize, last: usize) -> Option<usize> {
        sowing::next_pit(pits, origin, last)
    }

    #[inline]
    fn keeps_level(
        _: &Rules,
        after: &Position,
        _origin: usize,
        _stones: u8,
        last: usize,
        _opponent_before: u32,
    ) -> bool {
        !sowing::last_stone_captures(after, last)
    }
}
