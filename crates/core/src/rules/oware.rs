//! Oware, tournament rules ("abapa"): a capture of every stone the opponent
//! has is void (the grand slam), and a mover must feed an opponent who has
//! no stones.

use super::sowing::{self, CaptureShape};
use super::{Move, MoveRules, Rules, Stays};
use crate::position::Position;

/// The Oware rule set.
pub(super) struct Oware;

impl Oware {
    /// Whether sowing `pit` reaches the opponent's row.
    #[inline(always)]
    fn feeds(pos: &Position, pit: usize) -> bool {
        pit + pos.get(pit) as usize >= pos.pits()
    }
}

impl MoveRules for Oware {
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool = false;

    #[inline]
    fn moves(_: &Rules, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        let opponent_empty = pos.opponent_stones() == 0;
        let mut any_legal = false;
        for pit in 0..pos.pits() {
            if pos.get(pit) == 0 || (opponent_empty && !Oware::feeds(pos, pit)) {
                continue;
            }
            visit(&sowing::sow_and_capture(
                pos,
                pit,
                CaptureShape::GrandSlamVoid,
            ));
            any_legal = true;
        }
        // No move at all, or no move can feed: stones go to the side they
        // lie on.
        (!any_legal).then(|| pos.mover_stones() as i32 - pos.opponent_stones() as i32)
    }

    #[inline]
    fn exits(_: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Stays {
        let opponent_empty = pos.opponent_stones() == 0;
        let legal = |pit| !opponent_empty || Oware::feeds(pos, pit);
        match sowing::exits(pos, CaptureShape::GrandSlamVoid, legal, visit) {
            Some(stays) => Stays::Moves(stays),
            None => Stays::Terminal(pos.mover_stones() as i32 - pos.opponent_stones() as i32),
        }
    }

    fn play(_: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        if pos.opponent_stones() == 0 && !Oware::feeds(pos, pit) {
            return None;
        }
        Some(sowing::sow_and_capture(
            pos,
            pit,
            CaptureShape::GrandSlamVoid,
        ))
    }

    #[inline]
    fn keeps_level(
        _: &Rules,
        after: &Position,
        origin: usize,
        stones: u8,
        last: usize,
        opponent_before: u32,
    ) -> bool {
        let p = after.pits();
        if opponent_before == 0 && origin + (stones as usize) < p {
            return false; // does not feed a starving opponent
        }
        if !sowing::last_stone_captures(after, last) {
            return true;
        }
        // A capture: it keeps the level only as a void grand slam.
        let mut chain = 0;
        let mut pit = last;
        while pit >= p && sowing::capturable(after.get(pit)) {
            chain += after.get(pit);
            pit -= 1;
        }
        chain == after.opponent_stones()
    }
}
