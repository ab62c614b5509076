//! Sowing and capturing as the Oware family does them (Oware, Awari, Wari):
//! the emptied pit is skipped on every lap, and a last stone that makes an
//! opponent pit hold 2 or 3 captures. The rule sets differ only in the
//! shape of the capture ([`CaptureShape`]) and in which moves are legal.

use super::bits::ones;
use super::{Move, Place};
use crate::position::Position;

/// Which pits a capture takes, and whether taking all is void.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum CaptureShape {
    /// Oware: backward chain; a capture of every opponent stone is void.
    GrandSlamVoid,
    /// Awari: backward chain; starving captures are filtered as illegal.
    Backward,
    /// Wari: the whole run of 2s and 3s around the last pit.
    BothWays,
}

/// Whether a pit count is taken by a capture.
#[inline(always)]
pub(super) fn capturable(count: u32) -> bool {
    count == 2 || count == 3
}

/// A sowing of one pit, as laps and rest: `2P − 1` stones make a lap
/// (every pit but the origin takes one), and the rest cover the pits after
/// the origin, wrapping round at most once and never reaching it again.
#[derive(Clone, Copy)]
struct Sowing {
    laps: usize,
    rest: usize,
    /// The last pit sown.
    last: usize,
}

impl Sowing {
    /// The sowing of pit `origin` (not empty) of `pos`.
    #[inline(always)]
    fn of(pos: &Position, origin: usize) -> Sowing {
        let ring = 2 * pos.pits();
        let stones = pos.get(origin) as usize;
        let (laps, rest) = (stones / (ring - 1), stones % (ring - 1));
        // Whole laps end in the pit before the origin.
        let last = (origin + if rest == 0 { ring - 1 } else { rest }) % ring;
        Sowing { laps, rest, last }
    }

    /// What the last pit sown holds after the sowing: known without
    /// sowing, so that a move that cannot capture is told apart cheaply.
    #[inline(always)]
    fn last_count(&self, pos: &Position) -> u32 {
        pos.get(self.last) + self.laps as u32 + u32::from(self.rest > 0)
    }
}

/// Sows pit `origin` (the origin is skipped on every lap) and returns the
/// board (still from the mover's view) and the last pit sown: the laps
/// and the rest are each one addition of board bits.
#[inline(always)]
pub(super) fn sow_skipping_origin(pos: &Position, origin: usize) -> (Position, usize) {
    let ring = 2 * pos.pits();
    let sowing = Sowing::of(pos, origin);
    let mut board = pos.board_bits() & !(0xffu128 << (8 * origin));
    board += sowing.laps as u128 * (ones(0, ring) - ones(origin, origin + 1));
    let end = origin + 1 + sowing.rest; // past the last pit, before wrapping
    board += ones(origin + 1, end.min(ring)) + ones(0, end.saturating_sub(ring));
    (pos.with_board_bits(board), sowing.last)
}

/// Applies the capture after a sowing from `pit` that ended in `last`, then
/// hands the board to the opponent.
#[inline(always)]
pub(super) fn finish_move(
    pit: usize,
    mut board: Position,
    last: usize,
    shape: CaptureShape,
) -> Move {
    let p = board.pits();
    let cells = board.cells_mut();
    let taken_by_capture = |c: u8| capturable(c as u32);
    let mut gain = 0u32;
    if last >= p && taken_by_capture(cells[last]) {
        let mut low = last;
        while low > p && taken_by_capture(cells[low - 1]) {
            low -= 1;
        }
        let mut high = last;
        if shape == CaptureShape::BothWays {
            while high + 1 < 2 * p && taken_by_capture(cells[high + 1]) {
                high += 1;
            }
        }
        let taken: u32 = cells[low..=high].iter().map(|&c| c as u32).sum();
        let opponent_total: u32 = cells[p..].iter().map(|&c| c as u32).sum();
        if !(shape == CaptureShape::GrandSlamVoid && taken == opponent_total) {
            cells[low..=high].iter_mut().for_each(|c| *c = 0);
            gain = taken;
        }
    }
    Move {
        pit: pit as u8,
        gain: gain as u8,
        extra_turn: false,
        child: board.flipped(),
    }
}

/// Sows `pit` and captures with `shape`: one whole move, legality aside.
#[inline(always)]
pub(super) fn sow_and_capture(pos: &Position, pit: usize, shape: CaptureShape) -> Move {
    let (board, last) = sow_skipping_origin(pos, pit);
    finish_move(pit, board, last, shape)
}

/// The family's legal moves, played and handed to `visit` in pit order
/// (`legal` is asked of the non-empty pits): whether there was any.
#[inline(always)]
pub(super) fn moves(
    pos: &Position,
    shape: CaptureShape,
    legal: impl Fn(usize) -> bool,
    mut visit: impl FnMut(&Move),
) -> bool {
    let mut any_legal = false;
    for pit in legal_pits(pos, legal) {
        visit(&sow_and_capture(pos, pit, shape));
        any_legal = true;
    }
    any_legal
}

/// The pits of `pos` that may be sown, in pit order: the non-empty ones
/// `legal` allows.
#[inline(always)]
fn legal_pits<'a>(
    pos: &'a Position,
    legal: impl Fn(usize) -> bool + 'a,
) -> impl Iterator<Item = usize> + 'a {
    (0..pos.pits()).filter(move |&pit| pos.get(pit) > 0 && legal(pit))
}

/// [`moves`] as a forward pass wants them: those that leave the level,
/// played and handed to `visit` in pit order, and the number of the
/// others; `None` if no pit is legal. A sowing whose last
/// stone cannot capture keeps the level and is only counted, unsown; the
/// others are played, and a void grand slam among them counted too.
#[inline(always)]
pub(super) fn exits(
    pos: &Position,
    shape: CaptureShape,
    legal: impl Fn(usize) -> bool,
    mut visit: impl FnMut(&Move),
) -> Option<u8> {
    let p = pos.pits();
    let mut stays = 0u8;
    let mut any_legal = false;
    for pit in legal_pits(pos, legal) {
        any_legal = true;
        let sowing = Sowing::of(pos, pit);
        if sowing.last >= p && capturable(sowing.last_count(pos)) {
            let m = sow_and_capture(pos, pit, shape);
            if m.leaves_level() {
                visit(&m);
                continue;
            }
        }
        stays += 1;
    }
    any_legal.then_some(stays)
}

/// The pits the stones of `pit` land in, one per stone.
pub(super) fn path(pos: &Position, pit: usize) -> Vec<Place> {
    let ring = 2 * pos.pits();
    let mut slot = pit;
    (0..pos.get(pit))
        .map(|_| {
            slot = (slot + 1) % ring;
            if slot == pit {
                slot = (slot + 1) % ring;
            }
            Place::Pit(slot)
        })
        .collect()
}

/// The pit sown after `last` from `origin`: the next one round the board,
/// skipping the origin. Every such sowing may keep its level.
#[inline]
pub(super) fn next_pit(pits: usize, origin: usize, last: usize) -> Option<usize> {
    let next = if last + 1 == 2 * pits { 0 } else { last + 1 };
    Some(if next == origin { next + 1 } else { next })
}

/// Whether a sowing that ended in `last` and produced `after` (mover's
/// view) captures under the chain rule: its last stone makes an opponent
/// pit hold 2 or 3.
#[inline]
pub(super) fn last_stone_captures(after: &Position, last: usize) -> bool {
    last >= after.pits() && capturable(after.get(last))
}
