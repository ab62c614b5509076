//! Tournament play on forced tables: moves under the real repetition rule.
//!
//! Even tables score endless play as an even split; a tournament game
//! instead ends at the third repetition of a position with each player
//! taking the stones on his own side (`docs/RULES.md`), which depends on the
//! history. Forced tables ([`Bounds`]) give, per position, what each side
//! can be sure to win *without* any repetition, so they are exact about
//! forced wins whatever the history. [`TournamentPlayer`] turns them into
//! moves for a game in progress ([`GameState`]: stores and history).
//!
//! # Policy
//!
//! Let `T` be every stone of the game (both stores and the board). A move's
//! *guaranteed total* is what the mover is sure to hold at the end: the
//! final store if the move ends the game (majority, no moves, or a third
//! repetition scored by the repetition rule), else its store now plus the
//! move's forced bound ([`Bounds::after_move`], which includes the gain).
//!
//! - **The mover has a forced win** (its store plus `forced_mover` of the
//!   position exceeds `T/2`): only moves whose guaranteed total still
//!   exceeds `T/2` are considered. Among them, in order: a move whose
//!   resulting position (with the same player to move) has not occurred in
//!   the game before; then the fewest plies to *progress* (a move that ends
//!   the game or captures counts 1; a move within the level, one more than
//!   the plies within which the winner then forces a capture or an end,
//!   read off the forced tables by [`progress_ranks`]); then the largest
//!   guaranteed total; then pit order. Because forced bounds are least
//!   fixpoints, a position that keeps the win always has a move that gets
//!   strictly closer to a capture, whatever the opponent replies; playing
//!   it every time, the winner never meets a position it already produced
//!   in the level, and the game ends with the winner holding more than
//!   half, by captures, a majority or the end of moves, never by
//!   repetition.
//! - **Otherwise**: the largest guaranteed total; on equal totals, a move
//!   that does not end the game by repetition (the repetition's exact split
//!   is taken only when it is strictly better than what every other move
//!   guarantees); then the largest total the move leaves possible
//!   (`T − opponent's store − forced_opponent`); then a move into a
//!   position that has not occurred before; then pit order.

use std::cmp::Reverse;
use std::collections::{HashMap, VecDeque};

use mancala_core::{
    Bounds, EndReason, GameEnd, GameError, GameState, Move, MoveBounds, Position, Side, Successors,
    Verdict,
};
use mancala_probe::{Forced, Tablebase};

use crate::error::Result;

/// Positions [`progress_ranks`] explores within one level before it gives
/// up (the choice then falls back to the other criteria).
pub(crate) const MAX_PROGRESS_NODES: usize = 1 << 20;

/// One legal move as the tournament player sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TournamentMove {
    /// The pit the move empties (`0` = `a`).
    pub pit: u8,
    /// The move's forced bounds in the position's terms.
    pub bounds: Bounds,
    /// What the mover is sure to hold at the end of the game after this
    /// move (see the module documentation).
    pub guaranteed: u32,
    /// The most the mover can still end with after this move.
    pub possible: u32,
    /// The result for the mover, if it plays this move.
    pub verdict: Verdict,
    /// How the game ends right after this move, if it does.
    pub end: Option<GameEnd>,
    /// How often the resulting position, with the same player to move, has
    /// already occurred in the game.
    pub occurrences: usize,
}

/// The tournament player's move and what it knows about the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TournamentChoice {
    /// The pit it plays.
    pub pit: u8,
    /// The position's forced bounds.
    pub bounds: Bounds,
    /// The result for the player to move (see [`Bounds::verdict`]).
    pub verdict: Verdict,
    /// Every legal move, in pit order.
    pub moves: Vec<TournamentMove>,
    /// With a forced win: the most plies, the chosen move included, until
    /// the winner has forced a capture or the end of the game (`1`: the
    /// move does so itself); `None` without a forced win or when the level
    /// was too large to tell.
    pub plies_to_progress: Option<u32>,
}

/// Plays under the tournament rules from forced tables (see the module
/// documentation for the policy).
pub struct TournamentPlayer<'a> {
    tables: &'a Tablebase<Forced>,
}

impl<'a> TournamentPlayer<'a> {
    /// A player reading `tables`: forced tables, since even values cannot
    /// tell a forced win from one that relies on a repetition.
    pub fn new(tables: &'a Tablebase<Forced>) -> TournamentPlayer<'a> {
        TournamentPlayer { tables }
    }

    /// The move to play in `state`, its verdict and every move's bounds.
    /// Fails if the game is over or the tables do not hold the position.
    pub fn choose(&self, state: &GameState) -> Result<TournamentChoice> {
        let rules = self.tables.rules();
        if state.end(rules).is_some() {
            return Err(mancala_core::Error::from(GameError::Over).into());
        }
        let (bounds, move_bounds) = self
            .tables
            .bounds_and_moves(&[state.position])?
            .pop()
            .expect("one answer per position");
        let moves = move_bounds
            .iter()
            .map(|mb| self.judge(state, mb))
            .collect::<Result<Vec<_>>>()?;
        let n = state.position.stones();
        let verdict = bounds.verdict(n, captured(state));
        let winning: Vec<&TournamentMove> = moves
            .iter()
            .filter(|m| 2 * m.guaranteed > state.total_stones())
            .collect();
        let (pit, plies_to_progress) = if verdict == Verdict::Win && !winning.is_empty() {
            self.winning_move(state, &winning)?
        } else {
            (best_effort_move(&moves), None)
        };
        Ok(TournamentChoice {
            pit,
            bounds,
            verdict,
            moves,
            plies_to_progress,
        })
    }

    /// What playing `mb` gives the mover of `state`.
    fn judge(&self, state: &GameState, mb: &MoveBounds) -> Result<TournamentMove> {
        let rules = self.tables.rules();
        let (mover, opponent) = (state.to_move.index(), state.to_move.other().index());
        let after = state.play(rules, mb.pit as usize)?;
        let end = after.end(rules);
        let total = state.total_stones();
        let (guaranteed, possible, verdict) = match end {
            Some(end) => {
                let own = end.stores[mover];
                (own, own, verdict_of_end(&end, state.to_move))
            }
            None => (
                state.stores[mover] + mb.bounds.mover as u32,
                total - state.stores[opponent] - mb.bounds.opponent as u32,
                mb.bounds.verdict(state.position.stones(), captured(state)),
            ),
        };
        Ok(TournamentMove {
            pit: mb.pit,
            bounds: mb.bounds,
            guaranteed,
            possible,
            verdict,
            end,
            occurrences: after.occurrences() - 1,
        })
    }

    /// The winner's move among the moves that keep the win, and its plies
    /// to progress.
    fn winning_move(
        &self,
        state: &GameState,
        winning: &[&TournamentMove],
    ) -> Result<(u8, Option<u32>)> {
        let rules = self.tables.rules();
        let n = state.position.stones();
        let leaves_level = |m: &TournamentMove| {
            m.end.is_some()
                || rules
                    .play(&state.position, m.pit as usize)
                    .is_some_and(|mv| mv.child.stones() < n)
        };
        let ranks = if winning
            .iter()
            .any(|m| leaves_level(m) && m.occurrences == 0)
        {
            None
        } else {
            let need =
                (state.total_stones() / 2 + 1).saturating_sub(state.stores[state.to_move.index()]);
            progress_ranks(self.tables, &state.position, need, MAX_PROGRESS_NODES)?
        };
        let plies = |m: &TournamentMove| -> Option<u32> {
            if leaves_level(m) {
                return Some(1);
            }
            let mv = rules.play(&state.position, m.pit as usize)?;
            // The winner is to move in the child only after an extra turn.
            Some(1 + ranks.as_ref()?.rank(&mv.child, mv.extra_turn)?)
        };
        let best = winning
            .iter()
            .min_by_key(|m| {
                (
                    m.occurrences > 0,
                    plies(m).unwrap_or(u32::MAX),
                    Reverse(m.guaranteed),
                    m.pit,
                )
            })
            .expect("at least one winning move");
        Ok((best.pit, plies(best)))
    }
}

/// Stones stored by the player to move and by the opponent.
fn captured(state: &GameState) -> (u32, u32) {
    (
        state.stores[state.to_move.index()],
        state.stores[state.to_move.other().index()],
    )
}

/// The result of an ended game for `side`.
fn verdict_of_end(end: &GameEnd, side: Side) -> Verdict {
    match end.winner() {
        Some(winner) if winner == side => Verdict::Win,
        Some(_) => Verdict::Loss,
        None => Verdict::Draw,
    }
}

/// Without a forced win: the largest guaranteed total, then not ending the
/// game by repetition, then the largest possible total, then a fresh
/// position, then pit order.
fn best_effort_move(moves: &[TournamentMove]) -> u8 {
    moves
        .iter()
        .min_by_key(|m| {
            (
                Reverse(m.guaranteed),
                m.end.is_some_and(|e| e.reason == EndReason::Repetition),
                Reverse(m.possible),
                m.occurrences > 0,
                m.pit,
            )
        })
        .expect("a game that is not over has a legal move")
        .pit
}

/// Plies to progress of the positions of one level reachable while a
/// winner keeps its forced win (see [`progress_ranks`]).
pub(crate) struct ProgressRanks {
    ids: HashMap<(Position, bool), usize>,
    rank: Vec<u32>,
}

impl ProgressRanks {
    /// The plies within which the winner forces a capture or the end of the
    /// game from `pos`, the winner to move if `winner_to_move`; `None` if
    /// the position was not explored or the winner cannot force it.
    pub fn rank(&self, pos: &Position, winner_to_move: bool) -> Option<u32> {
        let &id = self.ids.get(&(*pos, winner_to_move))?;
        (self.rank[id] != u32::MAX).then_some(self.rank[id])
    }
}

/// One position of the explored level.
struct Node {
    pos: Position,
    winner_to_move: bool,
    /// Same-level children the winner may go to (winner to move) or the
    /// opponent can go to (opponent to move).
    children: Vec<usize>,
    /// Winner to move: a move leaves the level keeping the win, or the
    /// position is terminal. Opponent to move: every move that leaves the
    /// level keeps the winner's win and no move within it escapes.
    settled: bool,
}

/// The forced-win attractor of `root`'s level, explored from `root` (the
/// winner to move), where the winner needs `need` of the board's stones:
/// each reachable position's number of plies within which the winner
/// forces a capture or the end of the game without any repetition. The
/// winner's moves considered are those that keep `need` by the forced
/// tables, the opponent's are all of them. `None` if more than `max_nodes`
/// positions would be explored.
///
/// These are the stages of the least fixpoint the forced tables store,
/// restricted to the part of the level the game can reach: a winner
/// position's rank is one more than its best child's, an opponent
/// position's one more than its worst child's, a move that leaves the level
/// counting 0. Choosing a child of smaller rank every time makes the ranks
/// of the winner's positions strictly decrease, so it never repeats one.
pub(crate) fn progress_ranks(
    tables: &Tablebase<Forced>,
    root: &Position,
    need: u32,
    max_nodes: usize,
) -> Result<Option<ProgressRanks>> {
    let mut graph = Graph::default();
    graph.intern(*root, true);
    let mut frontier = vec![0usize];
    while !frontier.is_empty() {
        let positions: Vec<Position> = frontier.iter().map(|&id| graph.nodes[id].pos).collect();
        let probed = tables.bounds_and_moves(&positions)?;
        let mut next = Vec::new();
        for (&id, (_, move_bounds)) in frontier.iter().zip(probed) {
            graph.expand(tables, id, &move_bounds, need, &mut next);
        }
        if graph.nodes.len() > max_nodes {
            return Ok(None);
        }
        frontier = next;
    }
    Ok(Some(graph.ranks()))
}

/// The explored part of a level.
#[derive(Default)]
struct Graph {
    nodes: Vec<Node>,
    ids: HashMap<(Position, bool), usize>,
}

impl Graph {
    /// The id of a position, added unexplored if new.
    fn intern(&mut self, pos: Position, winner_to_move: bool) -> (usize, bool) {
        if let Some(&id) = self.ids.get(&(pos, winner_to_move)) {
            return (id, false);
        }
        let id = self.nodes.len();
        self.ids.insert((pos, winner_to_move), id);
        self.nodes.push(Node {
            pos,
            winner_to_move,
            children: Vec::new(),
            settled: false,
        });
        (id, true)
    }

    /// Fills in node `id` from its moves' bounds; new children go to
    /// `next`.
    fn expand(
        &mut self,
        tables: &Tablebase<Forced>,
        id: usize,
        move_bounds: &[MoveBounds],
        need: u32,
        next: &mut Vec<usize>,
    ) {
        let (pos, winner) = (self.nodes[id].pos, self.nodes[id].winner_to_move);
        let Successors::Moves(moves) = tables.rules().successors(&pos) else {
            // Reached only through a move that keeps the win.
            self.nodes[id].settled = true;
            return;
        };
        let n = pos.stones();
        // The winner's share of the board after each move, by the tables.
        let keeps = |mb: &MoveBounds| {
            let share = if winner {
                mb.bounds.mover
            } else {
                mb.bounds.opponent
            };
            share as u32 >= need
        };
        let steps: Vec<(&Move, bool)> = moves
            .iter()
            .zip(move_bounds)
            .map(|(m, mb)| (m, keeps(mb)))
            .collect();
        let stays = |m: &Move| m.child.stones() == n;
        let settled = if winner {
            steps.iter().any(|&(m, keep)| keep && !stays(m))
        } else {
            steps.iter().all(|&(_, keep)| keep)
        };
        if !winner && !settled {
            // The opponent escapes: this position is not in the attractor.
            return;
        }
        let mut children = Vec::new();
        for &(m, keep) in &steps {
            if keep && stays(m) {
                // After an extra turn the same side moves again.
                let child_winner = if m.extra_turn { winner } else { !winner };
                let (child, new) = self.intern(m.child, child_winner);
                if new {
                    next.push(child);
                }
                children.push(child);
            }
        }
        let node = &mut self.nodes[id];
        node.children = children;
        // An opponent position is settled only once its children are.
        node.settled = if winner {
            settled
        } else {
            node.children.is_empty()
        };
    }

    /// Ranks by backward induction from the settled positions, in order of
    /// rank (breadth first).
    fn ranks(self) -> ProgressRanks {
        let count = self.nodes.len();
        let mut parents = vec![Vec::new(); count];
        let mut pending = vec![0usize; count];
        for (id, node) in self.nodes.iter().enumerate() {
            pending[id] = node.children.len();
            for &child in &node.children {
                parents[child].push(id);
            }
        }
        let mut rank = vec![u32::MAX; count];
        let mut queue = VecDeque::new();
        for (id, node) in self.nodes.iter().enumerate() {
            if node.settled {
                rank[id] = 1;
                queue.push_back(id);
            }
        }
        while let Some(child) = queue.pop_front() {
            for &parent in &parents[child] {
                if rank[parent] != u32::MAX {
                    continue;
                }
                let ready = if self.nodes[parent].winner_to_move {
                    true
                } else {
                    pending[parent] -= 1;
                    pending[parent] == 0
                };
                if ready {
                    rank[parent] = rank[child] + 1;
                    queue.push_back(parent);
                }
            }
        }
        ProgressRanks {
            ids: self.ids,
            rank,
        }
    }
}
