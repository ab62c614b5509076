//! A deliberately naive, independent reference for the rules and values of
//! `docs/RULES.md`, the even-split value of endless play included.
//!
//! Nothing here is shared with the library: the board is a plain `Vec<u32>`
//! of `2P` counts in sowing order (the mover's row first), moves are sown one
//! stone at a time, and values are computed level by level with naive
//! fixpoint sweeps over a `HashMap`. It is meant to be obviously correct, not
//! fast.

#![allow(dead_code)]

use std::collections::HashMap;

/// A rule set, as `docs/RULES.md` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Game {
    Oware,
    Awari,
    Wari,
    Kalah { empty_capture: bool },
}

/// A rule set with `pits` pits per side.
#[derive(Clone, Copy, Debug)]
pub struct RefRules {
    pub game: Game,
    pub pits: usize,
}

/// One legal move, as the reference sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefMove {
    /// The mover's pit that was emptied.
    pub pit: usize,
    /// Stones put into the mover's store by the move.
    pub gain: u32,
    /// Kalah: the last seed fell into the mover's store.
    pub extra_turn: bool,
    /// The next position, seen from whoever moves next.
    pub child: Vec<u32>,
}

/// Terminal value, or the legal moves in pit order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefSucc {
    Terminal(i32),
    Moves(Vec<RefMove>),
}

/// Parses `a,b,c/d,e,f` (mover's row / opponent's row).
pub fn parse(text: &str) -> Vec<u32> {
    let (mine, theirs) = text.split_once('/').expect("a slash between the rows");
    let mut out = Vec::new();
    for row in [mine, theirs] {
        for c in row.split(',') {
            out.push(c.trim().parse::<u32>().expect("a count"));
        }
    }
    assert_eq!(out.len() % 2, 0);
    assert_eq!(mine.split(',').count(), theirs.split(',').count());
    out
}

/// Formats a board as `a,b,c/d,e,f`.
pub fn format(board: &[u32]) -> String {
    let p = board.len() / 2;
    let row = |r: &[u32]| {
        r.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    format!("{}/{}", row(&board[..p]), row(&board[p..]))
}

/// The board as seen by the other player: his row first.
fn rotate(board: &[u32], p: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(2 * p);
    for i in 0..2 * p {
        out.push(board[(i + p) % (2 * p)]);
    }
    out
}

fn mover_row(board: &[u32], p: usize) -> u32 {
    board[..p].iter().sum()
}

fn opponent_row(board: &[u32], p: usize) -> u32 {
    board[p..].iter().sum()
}

/// What sowing a pit does in the Oware family, before any legality check.
struct OwareSowing {
    /// The board after sowing and capturing (capture as the rule set says,
    /// ignoring the grand-slam rule).
    after_capture: Vec<u32>,
    /// The board after sowing only.
    after_sowing: Vec<u32>,
    /// Stones the capture takes (grand slam not applied).
    captured: u32,
    /// Stones sown into the opponent's row.
    fed: u32,
}

/// Sows pit `origin` one stone at a time, skipping the origin on laps
/// (it can only be reached again with 2P or more stones), then captures.
/// `both_ways`: Wari's two-directional run instead of Oware's backward chain.
fn oware_sow(board: &[u32], p: usize, origin: usize, both_ways: bool) -> OwareSowing {
    let mut b = board.to_vec();
    let mut stones = b[origin];
    b[origin] = 0;
    let mut at = origin;
    let mut fed = 0;
    while stones > 0 {
        at = (at + 1) % (2 * p);
        if at == origin {
            // The emptied pit is skipped on every lap.
            continue;
        }
        b[at] += 1;
        stones -= 1;
        if at >= p {
            fed += 1;
        }
    }
    let after_sowing = b.clone();
    let last = at;
    let mut captured = 0;
    let takes = |c: u32| c == 2 || c == 3;
    if last >= p && takes(b[last]) {
        // Backward: the last pit, then one index lower, while it is an
        // opponent pit holding 2 or 3.
        let mut j = last;
        loop {
            if j < p || !takes(b[j]) {
                break;
            }
            captured += b[j];
            b[j] = 0;
            if j == 0 {
                break;
            }
            j -= 1;
        }
        if both_ways {
            // Forward from the pit after the last one, within the opponent's
            // row (which ends at 2P - 1).
            let mut j = last + 1;
            while j < 2 * p && takes(b[j]) {
                captured += b[j];
                b[j] = 0;
                j += 1;
            }
        }
    }
    OwareSowing {
        after_capture: b,
        after_sowing,
        captured,
        fed,
    }
}

/// Kalah: sows pit `origin` through the mover's pits, his store (between pit
/// P-1 and pit P) and the opponent's pits, skipping the opponent's store and
/// not skipping the origin. Returns the move (child oriented for the next
/// mover).
fn kalah_sow(board: &[u32], p: usize, origin: usize, empty_capture: bool) -> RefMove {
    // Ring of slots: Some(i) = pit i, None = the mover's store.
    let mut ring: Vec<Option<usize>> = Vec::new();
    for i in 0..p {
        ring.push(Some(i));
    }
    ring.push(None);
    for i in p..2 * p {
        ring.push(Some(i));
    }
    let mut b = board.to_vec();
    let mut store = 0u32;
    let mut seeds = b[origin];
    b[origin] = 0;
    let mut slot = ring.iter().position(|s| *s == Some(origin)).unwrap();
    while seeds > 0 {
        slot = (slot + 1) % ring.len();
        match ring[slot] {
            Some(i) => b[i] += 1,
            None => store += 1,
        }
        seeds -= 1;
    }
    let mut extra_turn = false;
    match ring[slot] {
        None => extra_turn = true,
        Some(i) if i < p && b[i] == 1 => {
            // Last seed in a pit of the mover's row that was empty.
            let opposite = 2 * p - 1 - i;
            if empty_capture || b[opposite] > 0 {
                store += b[i] + b[opposite];
                b[i] = 0;
                b[opposite] = 0;
            }
        }
        Some(_) => {}
    }
    let child = if extra_turn { b } else { rotate(&b, p) };
    RefMove {
        pit: origin,
        gain: store,
        extra_turn,
        child,
    }
}

impl RefRules {
    pub fn new(game: Game, pits: usize) -> RefRules {
        RefRules { game, pits }
    }

    /// The legal moves of `board`, or its terminal value.
    pub fn successors(&self, board: &[u32]) -> RefSucc {
        let p = self.pits;
        assert_eq!(board.len(), 2 * p);
        let n: u32 = board.iter().sum();
        let mine = mover_row(board, p);
        let theirs = opponent_row(board, p);
        let nonempty: Vec<usize> = (0..p).filter(|&i| board[i] > 0).collect();
        match self.game {
            Game::Oware => {
                let mut moves = Vec::new();
                for &i in &nonempty {
                    let s = oware_sow(board, p, i, false);
                    // Feeding rule.
                    if theirs == 0 && s.fed == 0 {
                        continue;
                    }
                    let opp_after_sowing = opponent_row(&s.after_sowing, p);
                    let grand_slam = s.captured > 0 && s.captured == opp_after_sowing;
                    let (after, gain) = if grand_slam {
                        (s.after_sowing, 0)
                    } else {
                        (s.after_capture, s.captured)
                    };
                    moves.push(RefMove {
                        pit: i,
                        gain,
                        extra_turn: false,
                        child: rotate(&after, p),
                    });
                }
                if moves.is_empty() {
                    RefSucc::Terminal(mine as i32 - theirs as i32)
                } else {
                    RefSucc::Moves(moves)
                }
            }
            Game::Awari => {
                if mine == 0 {
                    return RefSucc::Terminal(-(n as i32));
                }
                let mut moves = Vec::new();
                for &i in &nonempty {
                    let s = oware_sow(board, p, i, false);
                    // Illegal if it leaves the opponent without stones.
                    if opponent_row(&s.after_capture, p) == 0 {
                        continue;
                    }
                    moves.push(RefMove {
                        pit: i,
                        gain: s.captured,
                        extra_turn: false,
                        child: rotate(&s.after_capture, p),
                    });
                }
                if moves.is_empty() {
                    // Every move starves the opponent: the mover takes all.
                    RefSucc::Terminal(n as i32)
                } else {
                    RefSucc::Moves(moves)
                }
            }
            Game::Wari => {
                if mine == 0 {
                    return RefSucc::Terminal(-(n as i32));
                }
                let mut moves = Vec::new();
                for &i in &nonempty {
                    let s = oware_sow(board, p, i, true);
                    moves.push(RefMove {
                        pit: i,
                        gain: s.captured,
                        extra_turn: false,
                        child: rotate(&s.after_capture, p),
                    });
                }
                RefSucc::Moves(moves)
            }
            Game::Kalah { empty_capture } => {
                if mine == 0 || theirs == 0 {
                    return RefSucc::Terminal(mine as i32 - theirs as i32);
                }
                let moves = nonempty
                    .iter()
                    .map(|&i| kalah_sow(board, p, i, empty_capture))
                    .collect();
                RefSucc::Moves(moves)
            }
        }
    }

    /// The legal move from `pit`, if there is one.
    pub fn play(&self, board: &[u32], pit: usize) -> Option<RefMove> {
        match self.successors(board) {
            RefSucc::Terminal(_) => None,
            RefSucc::Moves(list) => list.into_iter().find(|m| m.pit == pit),
        }
    }
}

/// Every composition of `n` into `k` parts, in some order.
pub fn compositions(n: u32, k: usize) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(k);
    fn rec(left: u32, k: usize, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if cur.len() + 1 == k {
            cur.push(left);
            out.push(cur.clone());
            cur.pop();
            return;
        }
        for c in 0..=left {
            cur.push(c);
            rec(left - c, k, cur, out);
            cur.pop();
        }
    }
    if k == 0 {
        return out;
    }
    rec(n, k, &mut cur, &mut out);
    out
}

/// What one position of a level looks like to the fixpoint.
enum Node {
    Terminal(i32),
    Inner {
        /// Values of the moves that leave the level.
        exits: Vec<i32>,
        /// Same-level children (indices into the level), each a move worth
        /// `0 - value(child)`.
        same: Vec<usize>,
    },
}

/// Values of every position with at most `max_stones` stones.
pub fn solve(rules: &RefRules, max_stones: u32) -> HashMap<Vec<u32>, i32> {
    let p = rules.pits;
    let mut values: HashMap<Vec<u32>, i32> = HashMap::new();
    for n in 0..=max_stones {
        let level = compositions(n, 2 * p);
        let index: HashMap<Vec<u32>, usize> = level
            .iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), i))
            .collect();
        let mut nodes = Vec::with_capacity(level.len());
        for board in &level {
            let node = match rules.successors(board) {
                RefSucc::Terminal(v) => Node::Terminal(v),
                RefSucc::Moves(moves) => {
                    let mut exits = Vec::new();
                    let mut same = Vec::new();
                    for m in moves {
                        let child_n: u32 = m.child.iter().sum();
                        assert_eq!(child_n + m.gain, n, "stones are conserved");
                        if child_n < n {
                            let v = values[&m.child];
                            exits.push(if m.extra_turn {
                                m.gain as i32 + v
                            } else {
                                m.gain as i32 - v
                            });
                        } else {
                            assert!(!m.extra_turn && m.gain == 0);
                            same.push(index[&m.child]);
                        }
                    }
                    Node::Inner { exits, same }
                }
            };
            nodes.push(node);
        }

        // win[s][i]: mover can force >= s; lose[s][i]: mover cannot avoid <= -s.
        let len = level.len();
        let mut value = vec![0i32; len];
        let mut prev_win: Option<Vec<bool>> = None;
        let mut prev_lose: Option<Vec<bool>> = None;
        for s in (1..=n as i32).rev() {
            let mut win = vec![false; len];
            let mut lose = vec![false; len];
            loop {
                let mut changed = false;
                for i in 0..len {
                    let (w, l) = match &nodes[i] {
                        Node::Terminal(v) => (*v >= s, *v <= -s),
                        Node::Inner { exits, same } => {
                            let w = exits.iter().any(|&e| e >= s) || same.iter().any(|&c| lose[c]);
                            let l = exits.iter().all(|&e| e <= -s) && same.iter().all(|&c| win[c]);
                            (w, l)
                        }
                    };
                    if w && !win[i] {
                        win[i] = true;
                        changed = true;
                    }
                    if l && !lose[i] {
                        lose[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for i in 0..len {
                assert!(
                    !(win[i] && lose[i]),
                    "both W and L at s={s}: {}",
                    format(&level[i])
                );
                // Larger thresholds give smaller sets.
                if let Some(pw) = &prev_win {
                    assert!(!pw[i] || win[i]);
                }
                if let Some(pl) = &prev_lose {
                    assert!(!pl[i] || lose[i]);
                }
                if value[i] == 0 {
                    if win[i] {
                        value[i] = s;
                    } else if lose[i] {
                        value[i] = -s;
                    }
                }
            }
            prev_win = Some(win);
            prev_lose = Some(lose);
        }
        for (board, v) in level.into_iter().zip(value) {
            values.insert(board, v);
        }
    }
    values
}

/// Forced bounds `(forced_mover, forced_opponent)` of every position with at
/// most `max_stones` stones, by naive value iteration: every position of
/// every level starts at `(0, 0)`, and the formulas of `docs/RULES.md` ("Forced
/// bounds") are applied to all of them, in sweeps, until nothing changes.
/// That is the least fixpoint from 0, by definition.
pub fn forced(rules: &RefRules, max_stones: u32) -> HashMap<Vec<u32>, (u32, u32)> {
    let p = rules.pits;
    let boards: Vec<Vec<u32>> = (0..=max_stones)
        .flat_map(|n| compositions(n, 2 * p))
        .collect();
    let mut bounds: HashMap<Vec<u32>, (u32, u32)> =
        boards.iter().map(|b| (b.clone(), (0, 0))).collect();
    loop {
        let mut changed = false;
        for board in &boards {
            let n: u32 = board.iter().sum();
            let new = match rules.successors(board) {
                RefSucc::Terminal(v) => (((n as i32 + v) / 2) as u32, ((n as i32 - v) / 2) as u32),
                RefSucc::Moves(moves) => {
                    let mut mover = 0;
                    let mut opponent = u32::MAX;
                    for m in moves {
                        let (child_mover, child_opponent) = bounds[&m.child];
                        let (gets, concedes) = if m.extra_turn {
                            (m.gain + child_mover, child_opponent)
                        } else {
                            (m.gain + child_opponent, child_mover)
                        };
                        mover = mover.max(gets);
                        opponent = opponent.min(concedes);
                    }
                    (mover, opponent)
                }
            };
            if bounds[board] != new {
                bounds.insert(board.clone(), new);
                changed = true;
            }
        }
        if !changed {
            return bounds;
        }
    }
}

/// A game state of the real game: the board seen from the player to move,
/// which player that is, and how often each (board, player) of the current
/// level has occurred.
type History = std::collections::BTreeMap<(Vec<u32>, u8), u8>;

/// The share of the remaining stones that the player to move wins under
/// perfect play of the real game with the tournament repetition rule: the
/// third occurrence of a position with the same player to move ends the
/// game, each player taking the stones on his own side. Exhaustive search
/// from an empty history (the start counts as the first occurrence), each
/// player maximising his own final total.
pub fn share_with_repetition(rules: &RefRules, board: &[u32]) -> u32 {
    let mut history = History::new();
    history.insert((board.to_vec(), 0), 1);
    let mut memo = HashMap::new();
    search(rules, board, 0, &history, &mut memo)
}

fn search(
    rules: &RefRules,
    board: &[u32],
    player: u8,
    history: &History,
    memo: &mut HashMap<(Vec<u32>, u8, History), u32>,
) -> u32 {
    let key = (board.to_vec(), player, history.clone());
    if let Some(&share) = memo.get(&key) {
        return share;
    }
    let p = rules.pits;
    let n: u32 = board.iter().sum();
    let share = match rules.successors(board) {
        RefSucc::Terminal(v) => ((n as i32 + v) / 2) as u32,
        RefSucc::Moves(moves) => moves
            .into_iter()
            .map(|m| {
                let next = if m.extra_turn { player } else { 1 - player };
                // A capture (or a store) lowers the level for good: no
                // earlier position can occur again.
                let mut next_history = if m.gain > 0 {
                    History::new()
                } else {
                    history.clone()
                };
                let seen = next_history.entry((m.child.clone(), next)).or_insert(0);
                *seen += 1;
                let child_share = if *seen == 3 {
                    mover_row(&m.child, p)
                } else {
                    search(rules, &m.child, next, &next_history, memo)
                };
                let child_n = n - m.gain;
                if m.extra_turn {
                    m.gain + child_share
                } else {
                    m.gain + child_n - child_share
                }
            })
            .max()
            .expect("a non-terminal position has a move"),
    };
    memo.insert(key, share);
    share
}
