//! Depths to conversion found by search, where no depth table covers a
//! level: the definition of `docs/RULES.md` ("Depth to conversion") over
//! the positions a game can reach from one position while both sides keep
//! the value.
//!
//! The moves that keep a value lead, within the level, only to positions
//! worth its negation, whose own value-keeping moves stay in the same set:
//! the set reachable from a position is closed under them, so the least
//! fixpoint over it is the same as over the whole level, and the depth the
//! search finds is the depth table's. The set can be as large as the
//! level; a search stops at a bound on its size and proves nothing then.

use std::collections::HashMap;

use mancala_core::{Position, Rules, Successors};
use mancala_probe::Tablebase;

use crate::error::Result;

/// The most positions a conversion search explores before it gives up.
pub(crate) const SEARCH_POSITIONS: usize = 1 << 15;

/// One explored position: its value, and where its value-keeping moves go
/// (`None`: the move leaves the level, one ply to conversion).
struct Node {
    value: i32,
    moves: Vec<Option<usize>>,
}

/// The depth to conversion of each position reachable from a start by
/// value-keeping moves, by the position's place in `found`.
pub(crate) struct Conversions {
    found: HashMap<Position, usize>,
    depths: Vec<Option<u16>>,
}

impl Conversions {
    /// Searches the positions reachable from `start` (worth other than 0)
    /// by moves that keep the value, reading values from `tables`; `None`
    /// if there are more than [`SEARCH_POSITIONS`] of them.
    pub(crate) fn search(
        rules: &Rules,
        tables: &Tablebase,
        start: &Position,
    ) -> Result<Option<Conversions>> {
        let mut found = HashMap::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut queue = vec![*start];
        found.insert(*start, 0);
        while let Some(pos) = queue.pop() {
            let value = tables.value(&pos)?;
            let mut moves = Vec::new();
            if let Successors::Moves(list) = rules.successors(&pos) {
                for m in list.iter() {
                    if m.value_given_child(tables.value(&m.child)?) != value {
                        continue;
                    }
                    if m.leaves_level() {
                        moves.push(None);
                        continue;
                    }
                    let next = found.len();
                    let at = *found.entry(m.child).or_insert(next);
                    if at == next {
                        if next >= SEARCH_POSITIONS {
                            return Ok(None);
                        }
                        queue.push(m.child);
                    }
                    moves.push(Some(at));
                }
            }
            let at = found[&pos];
            if nodes.len() <= at {
                nodes.resize_with(at + 1, || Node {
                    value: 0,
                    moves: Vec::new(),
                });
            }
            nodes[at] = Node { value, moves };
        }
        Ok(Some(Conversions {
            depths: fixpoint(&nodes),
            found,
        }))
    }

    /// The depth of `pos`, if the search reached it.
    pub(crate) fn depth(&self, pos: &Position) -> Option<u16> {
        self.found.get(pos).and_then(|&at| self.depths[at])
    }
}

/// The least fixpoint of the definition over `nodes`: a terminal position
/// (no move) 0; the side ahead the fewest plies over its moves, the side
/// behind the most, once every one of its moves has a depth.
fn fixpoint(nodes: &[Node]) -> Vec<Option<u16>> {
    let mut depths: Vec<Option<u16>> = vec![None; nodes.len()];
    loop {
        let mut changed = false;
        for (at, node) in nodes.iter().enumerate() {
            let plies = node
                .moves
                .iter()
                .map(|m| m.map_or(Some(1), |child| depths[child].map(|d| d.saturating_add(1))));
            let depth = if node.moves.is_empty() {
                Some(0)
            } else if node.value > 0 {
                plies.flatten().min()
            } else {
                plies
                    .collect::<Option<Vec<u16>>>()
                    .and_then(|p| p.into_iter().max())
            };
            if depth != depths[at] {
                depths[at] = depth;
                changed = true;
            }
        }
        if !changed {
            return depths;
        }
    }
}
