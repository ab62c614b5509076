//! Reading a depth table: every position's depth to conversion from the
//! table's stored depths and the level's values or bounds (`docs/FORMAT.md`,
//! "Depth tables").
//!
//! A depth table stores a depth only where the mover is ahead. The rest
//! follows from the definition (`docs/RULES.md`, "Depth to conversion")
//! one ply deep: a position worth 0 has none, and where the mover is
//! behind, the game's end has 0 and each move that keeps his value either
//! leaves the level (1 ply) or reaches a position of the same level whose
//! new mover is ahead, whose depth is stored.

use mancala_core::{Bounds, Move, Position, Rules, Successors};

/// The depth to conversion of `pos`, worth `value` to its mover, by the
/// reading above: `value_of` gives the value of a position of the level,
/// `stored_of` the depth a table stores for a position whose mover is
/// ahead. `None` where the value is 0, or where a position worth other
/// than 0 has no move keeping it (values that are not a solution, which
/// only damage gives).
pub fn depth_of<E>(
    rules: &Rules,
    pos: &Position,
    value: i32,
    mut value_of: impl FnMut(&Position) -> Result<i32, E>,
    mut stored_of: impl FnMut(&Position) -> Result<u16, E>,
) -> Result<Option<u16>, E> {
    if value == 0 {
        return Ok(None);
    }
    if stores_depth(value) {
        return stored_of(pos).map(Some);
    }
    longest_keeping(
        rules,
        pos,
        |m| Ok(m.value_given_child(value_of(&m.child)?) == value),
        stored_of,
    )
}

/// The depth of `pos` for a side that is not the mover, one ply deep: 0 at
/// the game's end, else the most, over the mover's moves that `keeps`
/// (those that keep that side's value or bound), of 1 for a move that
/// leaves the level and one more than the child's stored depth
/// (`stored_of`; the child's mover is that side) for another. `None`
/// where no move keeps it, which only damage gives.
fn longest_keeping<E>(
    rules: &Rules,
    pos: &Position,
    mut keeps: impl FnMut(&Move) -> Result<bool, E>,
    mut stored_of: impl FnMut(&Position) -> Result<u16, E>,
) -> Result<Option<u16>, E> {
    let moves = match rules.successors(pos) {
        Successors::Terminal(_) => return Ok(Some(0)),
        Successors::Moves(moves) => moves,
    };
    let mut longest = None;
    for m in moves.iter() {
        if !keeps(m)? {
            continue;
        }
        let plies = if m.leaves_level() {
            1
        } else {
            stored_of(&m.child)?.saturating_add(1)
        };
        longest = longest.max(Some(plies));
    }
    Ok(longest)
}

/// Whether a depth table stores the depth of a position worth `value` to
/// its mover: where he is ahead. Elsewhere the writer stores whatever codes
/// cheapest.
pub fn stores_depth(value: i32) -> bool {
    value > 0
}

/// The opponent's depth to conversion at `pos`, whose forced bounds are
/// `bounds` (`docs/RULES.md`, "Depths of forced bounds"): the plies within
/// which he realizes his bound, read from the mover's moves that keep it
/// (`bounds_of` gives a child's bounds) and the stored depths of their
/// children, whose mover he is. `None` where his bound is 0. (The mover's
/// own depth is the one a forced depth table stores.)
pub fn forced_opponent_depth<E>(
    rules: &Rules,
    pos: &Position,
    bounds: Bounds,
    mut bounds_of: impl FnMut(&Position) -> Result<Bounds, E>,
    stored_of: impl FnMut(&Position) -> Result<u16, E>,
) -> Result<Option<u16>, E> {
    if bounds.opponent == 0 {
        return Ok(None);
    }
    longest_keeping(
        rules,
        pos,
        |m| Ok(Bounds::after_move(m, bounds_of(&m.child)?).opponent == bounds.opponent),
        stored_of,
    )
}
