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

    /// Which non-empty pits of `pos` may be sown: any, unless the
    /// opponent has no stones, then those that feed him.
    #[inline(always)]
    fn legal(pos: &Position) -> impl Fn(usize) -> bool + '_ {
        let opponent_empty = pos.opponent_stones() == 0;
        move |pit| !opponent_empty || Oware::feeds(pos, pit)
    }

    /// The value of a position with no legal move: no move at all, or no
    /// move can feed, and stones go to the side they lie on.
    #[inline]
    fn terminal(pos: &Position) -> i32 {
        pos.mover_stones() as i32 - pos.opponent_stones() as i32
    }
}

impl MoveRules for Oware {
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool = false;

    #[inline]
    fn moves(_: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Option<i32> {
        let any_legal = sowing::moves(pos, CaptureShape::GrandSlamVoid, Oware::legal(pos), visit);
        (!any_legal).then(|| Oware::terminal(pos))
    }

    #[inline]
    fn exits(_: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Stays {
        match sowing::exits(pos, CaptureShape::GrandSlamVoid, Oware::legal(pos), visit) {
            Some(stays) => Stays::Moves(stays),
            None => Stays::Terminal(Oware::terminal(pos)),
        }
    }

    fn play(_: &Rules, pos: &Position, pit: usize) -> Option<Move> {
        if !Oware::legal(pos)(pit) {
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
