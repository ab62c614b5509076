//! Which values a compact table leaves out, and how a reader gets them
//! back.
//!
//! A compact table (Oware family, [`crate::table::Encoding::Compact`])
//! stores for each position an *entry* at most its value, and
//!
//! ```text
//! value(p) = max(entry(p), best value of p's restoring moves)
//! ```
//!
//! where a move is worth `gain − value(child)` and the *restoring moves*
//! are every legal move if `p` is [`searched`], and otherwise only the
//! moves that leave the level (captures); a position without a legal move
//! is worth its terminal value. Wherever the restoring moves alone give the
//! value, the entry is free, and the writer stores the one the codec finds
//! cheapest ([`crate::codec::lower_free_values`]).
//!
//! A position is searched when
//!
//! - its opponent's row has no empty pit: no move leads there (Oware-family
//!   sowing skips the pit sown from, which is left empty), so no reader of
//!   another position ever needs it; or
//! - every move that keeps the level *descends*: it leaves the new mover
//!   fewer stones on his side than the old mover had on his, or as many and
//!   a lower index rank.
//!
//! That this is exactly the value is RULES.md's recursion: a table holds its
//! fixpoint, endless play included. That a reader's search ends: a searched
//! position's same-level children are either not searched (their restoring
//! moves leave the level) or reached by descending, which orders them by
//! (mover's stones, rank); unreachable positions are nobody's child; levels
//! only fall.
//!
//! About two in five oware positions are searched, and a third have their
//! value from a capture; with both, oware levels 0–20 take 2.04 bits a
//! position (3.53 storing every value, 2.77 leaving out only what captures
//! give). Other cheap orders tried (ties left unbroken or broken by a hash
//! of the rank, empty pits counted as well) change the size by under 5%.

use crate::index;
use crate::position::Position;
use crate::rules::{Move, MoveList};

/// The restoring moves of `pos`, given its legal `moves`: all of them if it
/// is [`searched`], else those that leave the level.
pub fn restoring_moves(pos: &Position, mut moves: MoveList) -> MoveList {
    if !searched(pos, index::rank(pos), &moves) {
        moves.retain(Move::leaves_level);
    }
    moves
}

/// Whether a reader restores `pos` (of index rank `rank`), which has the
/// legal `moves`, by searching every move (see the module's documentation).
pub fn searched(pos: &Position, rank: u64, moves: &[Move]) -> bool {
    unreachable_by_moves(pos) || {
        let mover = pos.mover_stones();
        moves
            .iter()
            .all(|m| m.leaves_level() || descends(mover, rank, &m.child))
    }
}

/// Whether no move leads to `pos`: its opponent (who moved last) has no
/// empty pit, but the pit he sowed from would be empty.
pub fn unreachable_by_moves(pos: &Position) -> bool {
    let p = pos.pits();
    (p..2 * p).all(|pit| pos.get(pit) > 0)
}

/// Whether a same-level `child` comes before its parent, which had
/// `parent_mover` stones on the mover's side and rank `parent_rank`, in
/// the order (mover's stones, rank) that searched positions descend.
#[inline]
pub fn descends(parent_mover: u32, parent_rank: u64, child: &Position) -> bool {
    let mover = child.mover_stones();
    mover < parent_mover || (mover == parent_mover && index::rank(child) < parent_rank)
}
