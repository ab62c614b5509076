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

use mancala_core::{Bounds, Position, Rules, Successors};

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
    let moves = match rules.successors(pos) {
        Successors::Terminal(_) => return Ok(Some(0)),
        Successors::Moves(moves) => moves,
    };
    let mut longest = None;
    for m in moves.iter() {
        if m.value_given_child(value_of(&m.child)?) != value {
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

/// A position's depths to conversion under forced bounds (`docs/RULES.md`,
/// "Depth to conversion"): the plies within which each side realizes his
/// bound when he plays to, whatever the other does. `None` for a side
/// whose bound is 0, which has nothing to realize.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForcedDepths {
    /// The mover's, which a forced depth table stores.
    pub mover: Option<u16>,
    /// The opponent's, read from the children one ply deep.
    pub opponent: Option<u16>,
}

/// The depths to conversion of `pos`, whose bounds are `bounds`: the
/// mover's as the table stores it (`stored_of`, asked only where his bound
/// is not 0), and the opponent's by the reading of a forced depth table.
/// At the game's end it is 0; elsewhere the most, over the mover's moves
/// that keep the opponent's bound (`bounds_of` gives a child's bounds), of
/// 1 where the move leaves the level, else one more than the child's
/// stored depth (the child's mover is this opponent, and his bound there
/// is the one kept). `None` where a bound is 0, or where a bound other than
/// 0 has no move keeping it (bounds that are not a solution, which only
/// damage gives).
pub fn forced_depths_of<E>(
    rules: &Rules,
    pos: &Position,
    bounds: Bounds,
    mut bounds_of: impl FnMut(&Position) -> Result<Bounds, E>,
    mut stored_of: impl FnMut(&Position) -> Result<u16, E>,
) -> Result<ForcedDepths, E> {
    let mover = match bounds.mover {
        0 => None,
        _ => Some(stored_of(pos)?),
    };
    let opponent = match (bounds.opponent, rules.successors(pos)) {
        (0, _) => None,
        (_, Successors::Terminal(_)) => Some(0),
        (_, Successors::Moves(moves)) => {
            let mut longest = None;
            for m in moves.iter() {
                if Bounds::after_move(m, bounds_of(&m.child)?).opponent != bounds.opponent {
                    continue;
                }
                let plies = if m.leaves_level() {
                    1
                } else {
                    stored_of(&m.child)?.saturating_add(1)
                };
                longest = longest.max(Some(plies));
            }
            longest
        }
    };
    Ok(ForcedDepths { mover, opponent })
}
