//! The perfect-play engine: exact move values and perfect lines for a game
//! state, from the tables when they cover the position and by search above
//! them.
//!
//! Within table range an answer is table lookups only. Above it the engine
//! searches: fail-soft alpha-beta in negamax form, driven by MTD(f) with a
//! transposition table and move ordering (the table's best move first, then
//! stores and captures). A leaf is a table lookup as soon as a capture brings
//! the stone count into range, or a terminal position. Kalah levels cannot
//! cycle, so a Kalah search runs to the end of every line and its answers are
//! exact. Oware-family positions can cycle; there the search deepens
//! iteratively, scores a repetition on the current line as the tables do
//! (endless play: 0) but marks it unproven, and an answer is exact only if
//! no such repetition and no depth cut-off influenced it.
//!
//! Every search result carries a `proven` flag: true when it rests only on
//! table values and terminal positions. Fail-soft bounds computed from proven
//! bounds are themselves proven, so the flag survives the alpha-beta cuts.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use mancala_core::{
    EndReason, GameState, Move, NotationError, Outcome, Position, Rules, Side, Successors, MAX_PITS,
};
use mancala_probe::{conversion_rank, Depth, Tablebase};

use crate::convert::Conversions;
use crate::error::{Error, Result};

/// Search budget. A search that runs out answers with its best estimate,
/// marked inexact.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Stop after this many nodes.
    pub nodes: Option<u64>,
    /// Stop after this much time.
    pub time: Option<Duration>,
}

/// A value for the player to move, with whether it is proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Score {
    /// Margin of the remaining stones for the player to move (`docs/RULES.md`).
    pub value: i32,
    /// Exact (tables, terminal positions, complete search), not an estimate.
    pub exact: bool,
}

/// One legal move of a game state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveAnalysis {
    /// The pit the move empties (`0` = `a`).
    pub pit: u8,
    /// The move's value: margin of the stones now on the board, for the
    /// player to move.
    pub value: i32,
    /// Whether `value` is exact.
    pub exact: bool,
    /// The game's final margin for the player to move if this move is
    /// played and then both play perfectly: stores so far plus `value`.
    pub final_margin: i32,
    /// Win, draw or loss for the player to move.
    pub outcome: Outcome,
    /// The move ends the game at once (e.g. a third repetition).
    pub ends_game: Option<EndReason>,
}

/// How a principal variation stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// The game ended.
    GameOver(EndReason),
    /// The line reached a position it had already visited: perfect play
    /// cycles from here (worth an even split of what is left).
    Cycle,
    /// The line was cut at the length limit or the engine's deadline.
    Truncated,
}

/// Where an answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Table lookups only.
    Tables,
    /// Search above the tables (leaves in the tables or terminal).
    Search,
}

/// The engine's answer for a game state.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Who is to move.
    pub to_move: Side,
    /// The value of the position for the player to move (best move value).
    pub value: i32,
    /// Whether every number here is exact.
    pub exact: bool,
    /// Final margin for the player to move under perfect play.
    pub final_margin: i32,
    /// Win, draw or loss for the player to move.
    pub outcome: Outcome,
    /// Every legal move, in pit order.
    pub moves: Vec<MoveAnalysis>,
    /// The best moves (all moves of the best value), in pit order.
    pub best: Vec<u8>,
    /// A perfect game from here: each ply's player and pit.
    pub pv: Vec<(Side, u8)>,
    /// How the line stops.
    pub pv_end: LineEnd,
    /// Whether playing the first of `best` is proven to realize the value:
    /// the rule set's levels cannot cycle (every line ends), the value is
    /// 0, or the order of `best` is by depth to conversion, from depth
    /// tables or a search of the positions the value-keeping moves reach
    /// (within the tables, up to a bound on their number). Otherwise the
    /// side ahead still never lets its own won position come back when a
    /// move avoids it, but nothing proves that it converts.
    pub converts: bool,
    /// Tables only, or search.
    pub source: Source,
    /// Nodes searched (0 within table range).
    pub nodes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

impl LineEnd {
    /// `game-over`, `cycle` or `truncated`.
    pub fn name(self) -> &'static str {
        match self {
            LineEnd::GameOver(_) => "game-over",
            LineEnd::Cycle => "cycle",
            LineEnd::Truncated => "truncated",
        }
    }
}

/// The longest principal variation reported.
pub(crate) const MAX_LINE: usize = 1000;

/// Entries of the transposition table unless set otherwise. The table is
/// allocated zeroed, so untouched entries cost no memory.
const DEFAULT_TT_ENTRIES: usize = 1 << 20;
/// Entries a transposition table starts with ([`Engine::with_tt_bytes`]).
const FIRST_TT_ENTRIES: usize = 1 << 16;

/// Bytes of one transposition-table entry ([`Entry::pack`]).
const TT_ENTRY_BYTES: usize = std::mem::size_of::<[u64; 3]>();

/// `depth` of a result that holds at any depth.
const PROVEN: u16 = u16::MAX;
/// Search depth meaning "to the end of every line" (Kalah).
const UNLIMITED: u16 = u16::MAX - 1;
/// Larger than any value (values lie in −255..=255).
const INFINITY: i32 = 1000;

/// A transposition-table entry: bounds on a position's value found at a
/// search depth (0: empty slot).
#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    lower: i16,
    upper: i16,
    depth: u16,
    best: u8,
}

impl Entry {
    /// Three words, so that a zeroed table (fresh pages from the OS, no
    /// writes) is a table of empty slots.
    fn pack(self) -> [u64; 3] {
        [
            self.key as u64,
            (self.key >> 64) as u64,
            self.lower as u16 as u64
                | (self.upper as u16 as u64) << 16
                | (self.depth as u64) << 32
                | (self.best as u64) << 48,
        ]
    }

    fn unpack(words: [u64; 3]) -> Entry {
        Entry {
            key: words[0] as u128 | (words[1] as u128) << 64,
            lower: words[2] as u16 as i16,
            upper: (words[2] >> 16) as u16 as i16,
            depth: (words[2] >> 32) as u16,
            best: (words[2] >> 48) as u8,
        }
    }
}

/// The perfect player. Create one per thread (it owns its transposition
/// table); the [`Tablebase`] it reads is shared.
pub struct Engine<'a> {
    rules: Rules,
    tables: Option<&'a Tablebase>,
    /// Depth tables beside them ([`Engine::with_depths`]).
    depths: Option<&'a Tablebase<Depth>>,
    /// The last conversion search, reused along a game or a line while it
    /// holds the positions asked about.
    conversions: RefCell<Option<Conversions>>,
    tt: Vec<[u64; 3]>,
    /// The most entries the table may grow to.
    tt_entries: usize,
    /// Entries stored since the table last grew.
    tt_stores: usize,
    limits: Limits,
    /// No search runs past this instant, however many calls are left.
    deadline: Option<Instant>,
    /// When the current call's budget started, and the node count then.
    started: Instant,
    nodes_at_start: u64,
    nodes: u64,
    aborted: bool,
    /// The last search stopped a line at its depth limit.
    depth_cut: bool,
    error: Option<Error>,
    /// Keys of the positions on the current search line (repetitions).
    line: Vec<u128>,
    /// The depth of the search under way ([`UNLIMITED`] to the end).
    depth: u16,
    /// Told how a long search goes ([`Engine::with_progress`]).
    progress: Option<ProgressHook<'a>>,
}

/// What [`Engine::with_progress`] keeps.
type ProgressHook<'a> = Box<dyn FnMut(&SearchProgress) + 'a>;

/// Searched nodes between two progress reports.
const PROGRESS_NODES: u64 = 1 << 20;

/// How far a search has come, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct SearchProgress {
    /// Nodes searched by the engine so far.
    pub nodes: u64,
    /// The iterative deepening's depth (Oware family), or `None` for a
    /// search to the end of every line (Kalah).
    pub depth: Option<u16>,
    /// Time since the current call began.
    pub elapsed: Duration,
}

impl<'a> Engine<'a> {
    /// An engine for `rules` without tables: every answer is searched.
    pub fn new(rules: Rules) -> Engine<'a> {
        Engine::reading(rules, None)
    }

    /// Orders the best moves of positions that `depths` covers by their
    /// depth to conversion (`docs/RULES.md`): the side ahead's nearest
    /// conversion first, the other side's farthest, so that playing the
    /// first best move always realizes the value. Without depth tables the
    /// best moves are in pit order, and two players who follow them can
    /// circle away a won value.
    pub fn with_depths(mut self, depths: &'a Tablebase<Depth>) -> Self {
        self.depths = Some(depths).filter(|d| !d.levels().is_empty());
        self
    }

    /// Whether depth tables order the best moves of `pos`: the tables and
    /// a depth table hold its level.
    pub fn depths_cover(&self, pos: &Position) -> bool {
        self.in_tables(pos) && self.depths.is_some_and(|d| d.has_level(pos.stones()))
    }

    /// The pits of `moves` (of `state`) worth `value`, the best value, in
    /// the order that realizes it where levels can cycle: by depth to
    /// conversion (the side ahead's nearest first, the other side's
    /// farthest), from the depth tables or, within the tables without
    /// them, from a conversion search ([`Conversions`]). Where neither
    /// gives one, the side ahead takes the moves that convert at once
    /// first, then those into a position the game has not seen (so that
    /// its own won position does not come back while a move avoids it);
    /// else pit order, as where levels cannot cycle (every line converts
    /// there, and the line of first best moves takes pit order).
    fn best_pits(&self, state: &GameState, value: i32, moves: &[MoveAnalysis]) -> Result<Vec<u8>> {
        let pos = &state.position;
        let best: Vec<u8> = moves
            .iter()
            .filter(|m| m.value == value)
            .map(|m| m.pit)
            .collect();
        let (Some(tables), true) = (self.tables, self.rules.variant().can_cycle()) else {
            return Ok(best);
        };
        if value == 0 {
            return Ok(best);
        }
        let play = |pit: u8| {
            self.rules
                .play(pos, pit as usize)
                .expect("a best move is legal")
        };
        let mut ranked = Vec::with_capacity(best.len());
        if let Some(depths) = self.depths.filter(|_| self.depths_cover(pos)) {
            for &pit in &best {
                let plies = depths.move_depth(tables, &play(pit))?;
                ranked.push((conversion_rank(value, plies), pit));
            }
        } else if self.searched(tables, pos)? {
            let conversions = self.conversions.borrow();
            let conversions = conversions.as_ref().expect("searched");
            for &pit in &best {
                let m = play(pit);
                let plies = match m.leaves_level() {
                    true => Some(1),
                    false => conversions.depth(&m.child).map(|d| d + 1),
                };
                ranked.push((conversion_rank(value, plies), pit));
            }
        } else if value > 0 {
            let next = state.to_move.other();
            for &pit in &best {
                let m = play(pit);
                let seen = state.history.contains(&(next, m.child));
                let rank = if m.leaves_level() {
                    0
                } else {
                    1 + i64::from(seen)
                };
                ranked.push((rank, pit));
            }
        } else {
            return Ok(best);
        }
        ranked.sort();
        Ok(ranked.into_iter().map(|(_, pit)| pit).collect())
    }

    /// Whether a conversion search from `pos` (within `tables`) is held,
    /// the last one reused where it reached `pos`: it did unless it had
    /// more positions to explore than it may.
    fn searched(&self, tables: &Tablebase, pos: &Position) -> Result<bool> {
        if !self.in_tables(pos) {
            return Ok(false);
        }
        if self.search_holds(pos) {
            return Ok(true);
        }
        let found = Conversions::search(&self.rules, tables, pos)?;
        let reached = found.as_ref().is_some_and(|c| c.depth(pos).is_some());
        *self.conversions.borrow_mut() = found;
        Ok(reached)
    }

    /// Whether playing the first best move of `pos`, worth `value`, is
    /// proven to realize it: every line ends where levels cannot cycle,
    /// there is nothing to convert where the value is 0, and elsewhere a
    /// depth table or the last conversion search gave the order.
    fn proven(&self, pos: &Position, value: i32) -> bool {
        !self.rules.variant().can_cycle()
            || value == 0
            || self.depths_cover(pos)
            || self.search_holds(pos)
    }

    /// Whether the last conversion search found the depth of `pos`.
    fn search_holds(&self, pos: &Position) -> bool {
        let held = self.conversions.borrow();
        held.as_ref().is_some_and(|c| c.depth(pos).is_some())
    }

    /// An engine for the rules of `tables`, reading them wherever they
    /// cover a position (an empty tablebase is no tables at all).
    pub fn with_tables(tables: &'a Tablebase) -> Engine<'a> {
        Engine::reading(*tables.rules(), Some(tables))
    }

    fn reading(rules: Rules, tables: Option<&'a Tablebase>) -> Engine<'a> {
        Engine {
            rules,
            tables: tables.filter(|t| t.max_level().is_some()),
            depths: None,
            conversions: RefCell::new(None),
            tt: Vec::new(),
            tt_entries: DEFAULT_TT_ENTRIES,
            tt_stores: 0,
            limits: Limits::default(),
            deadline: None,
            started: Instant::now(),
            nodes_at_start: 0,
            nodes: 0,
            aborted: false,
            depth_cut: false,
            error: None,
            line: Vec::new(),
            depth: 0,
            progress: None,
        }
    }

    /// Sets the search budget of each call.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Bounds the wall time of everything this engine does from now on,
    /// across calls ([`Limits`] cover one call each): a server sets it per
    /// request. Searches past it stop at once (inexact), and a perfect line
    /// stops there ([`LineEnd::Truncated`]).
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Whether the deadline or the current call's time budget has passed.
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .limits
                .time
                .is_some_and(|t| self.started.elapsed() >= t)
    }

    /// Sets the transposition table's size to at most `bytes` (the largest
    /// power of two of entries that fits, at least one). The table starts
    /// small and grows as a search stores more, so a short search neither
    /// allocates nor touches the memory a long one may need.
    pub fn with_tt_bytes(mut self, bytes: usize) -> Self {
        let entries = (bytes / TT_ENTRY_BYTES).max(1);
        self.tt_entries = 1 << entries.ilog2();
        self.tt.clear();
        self
    }

    /// The rule set.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Whether the tables hold `pos`.
    pub fn in_tables(&self, pos: &Position) -> bool {
        self.tables.is_some_and(|t| t.has_level(pos.stones()))
    }

    /// The value of `pos` for the player to move: a lookup within table
    /// range, a search above it.
    pub fn score(&mut self, pos: &Position) -> Result<Score> {
        self.start_budget();
        self.score_within_budget(pos)
    }

    /// The budget ([`Limits`]) covers one public call, however many
    /// searches it makes.
    fn start_budget(&mut self) {
        self.started = Instant::now();
        self.nodes_at_start = self.nodes;
    }

    fn score_within_budget(&mut self, pos: &Position) -> Result<Score> {
        self.check(pos)?;
        if self.in_tables(pos) {
            return Ok(Score {
                value: self.table_value(pos)?,
                exact: true,
            });
        }
        self.search_root(pos)
    }

    /// Every legal move of `state` with its value, the best moves, and a
    /// perfect line to the end of the game (or until it cycles).
    pub fn analyze(&mut self, state: &GameState) -> Result<Analysis> {
        self.analyze_with(state, true)
    }

    /// Like [`Engine::analyze`], but [`Analysis::moves`] holds only the best
    /// moves: the others are not given exact values. Where levels cannot
    /// cycle (Kalah) this is much cheaper above the tables: once the value
    /// is known, each move and each ply of the perfect line costs one
    /// zero-window test against it, where an exact value for a bad move
    /// takes several searches. Elsewhere it analyzes every move, as
    /// [`Engine::analyze`] does, and keeps the best.
    pub fn analyze_best(&mut self, state: &GameState) -> Result<Analysis> {
        if self.rules.variant().can_cycle() {
            let mut analysis = self.analyze_with(state, true)?;
            analysis.moves.retain(|m| analysis.best.contains(&m.pit));
            return Ok(analysis);
        }
        self.analyze_with(state, false)
    }

    /// [`Engine::analyze`] with every move's value, or (in a rule set whose
    /// levels cannot cycle) with the best moves only.
    fn analyze_with(&mut self, state: &GameState, every_move: bool) -> Result<Analysis> {
        self.start_budget();
        let started = Instant::now();
        self.check(&state.position)?;
        let nodes_before = self.nodes;
        let (moves, (pv, pv_end)) = if every_move {
            let moves = self.moves_within_budget(state)?;
            (moves, self.principal_variation(state)?)
        } else {
            let score = self.score_within_budget(&state.position)?;
            let moves = self.best_moves(state, score)?;
            (moves, self.line_of_first_best_moves(state, score)?)
        };
        let value = moves.iter().map(|m| m.value).max();
        let (value, exact) = match (value, state.end(&self.rules)) {
            (Some(v), _) => (v, moves.iter().all(|m| m.exact)),
            (None, Some(end)) => (end.margin_for(state.to_move) - state.store_margin(), true),
            (None, None) => unreachable!("a game that is not over has a legal move"),
        };
        let best = self.best_pits(state, value, &moves)?;
        let final_margin = state.store_margin() + value;
        Ok(Analysis {
            to_move: state.to_move,
            value,
            exact,
            final_margin,
            outcome: Outcome::of_margin(final_margin),
            moves,
            best,
            pv,
            pv_end,
            converts: self.proven(&state.position, value),
            source: if self.in_tables(&state.position) {
                Source::Tables
            } else {
                Source::Search
            },
            nodes: self.nodes - nodes_before,
            elapsed: started.elapsed(),
        })
    }

    /// The values of the legal moves of `state` (none if the game is over).
    /// A move into a third repetition ends the game there, so its value is
    /// the split the repetition rule gives, not the table's.
    pub fn move_analyses(&mut self, state: &GameState) -> Result<Vec<MoveAnalysis>> {
        self.start_budget();
        self.moves_within_budget(state)
    }

    fn moves_within_budget(&mut self, state: &GameState) -> Result<Vec<MoveAnalysis>> {
        if state.end(&self.rules).is_some() {
            return Ok(Vec::new());
        }
        let Successors::Moves(moves) = self.rules.successors(&state.position) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(moves.len());
        for m in moves.iter() {
            let after = state.play(&self.rules, m.pit as usize)?;
            let ends_game = after
                .end(&self.rules)
                .filter(|end| end.reason == EndReason::Repetition);
            let (value, exact) = match ends_game {
                Some(end) => (end.margin_for(state.to_move) - state.store_margin(), true),
                None => {
                    let child = self.score_within_budget(&m.child)?;
                    (m.value_given_child(child.value), child.exact)
                }
            };
            let final_margin = state.store_margin() + value;
            out.push(MoveAnalysis {
                pit: m.pit,
                value,
                exact,
                final_margin,
                outcome: Outcome::of_margin(final_margin),
                ends_game: ends_game.map(|e| e.reason),
            });
        }
        Ok(out)
    }

    /// The best moves of `state` (none if the game is over), in a rule set
    /// whose levels cannot cycle: each move tested against the position's
    /// `score`.
    fn best_moves(&mut self, state: &GameState, score: Score) -> Result<Vec<MoveAnalysis>> {
        let Successors::Moves(moves) = self.rules.successors(&state.position) else {
            return Ok(Vec::new());
        };
        if !score.exact {
            // Out of budget: every move's estimate instead.
            return self.moves_within_budget(state);
        }
        let mut best = Vec::new();
        for m in moves.iter() {
            let Some(reaches) = self.move_reaches(m, score.value)? else {
                // Out of budget: every move's estimate instead.
                return self.moves_within_budget(state);
            };
            if reaches {
                let final_margin = state.store_margin() + score.value;
                best.push(MoveAnalysis {
                    pit: m.pit,
                    value: score.value,
                    exact: score.exact,
                    final_margin,
                    outcome: Outcome::of_margin(final_margin),
                    ends_game: None,
                });
            }
        }
        Ok(best)
    }

    /// Whether move `m` is worth at least `value` (`None`: the budget ran
    /// out first): one zero-window search of its child, no more if the
    /// tables hold it.
    fn move_reaches(&mut self, m: &Move, value: i32) -> Result<Option<bool>> {
        // Worth `gain + v` after an extra turn, `gain − v` otherwise.
        let gain = m.gain as i32;
        let (at_least, child_value_at_least) = if m.extra_turn {
            (true, value - gain)
        } else {
            (false, gain - value + 1)
        };
        if self.in_tables(&m.child) {
            let v = self.table_value(&m.child)?;
            return Ok(Some((v >= child_value_at_least) == at_least));
        }
        self.ensure_tt()?;
        self.aborted = false;
        self.line.clear();
        let beta = child_value_at_least;
        let (v, _) = self.alpha_beta(&m.child, beta - 1, beta, UNLIMITED);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.aborted {
            return Ok(None);
        }
        Ok(Some((v >= beta) == at_least))
    }

    /// Plays the first best move again and again from `state`.
    fn principal_variation(&mut self, state: &GameState) -> Result<(Vec<(Side, u8)>, LineEnd)> {
        let mut line = Vec::new();
        let mut state = state.clone();
        let mut seen = vec![(state.to_move, state.position)];
        loop {
            if let Some(end) = state.end(&self.rules) {
                return Ok((line, LineEnd::GameOver(end.reason)));
            }
            if line.len() >= MAX_LINE || self.past_deadline() {
                return Ok((line, LineEnd::Truncated));
            }
            let moves = self.moves_within_budget(&state)?;
            let value = moves
                .iter()
                .map(|m| m.value)
                .max()
                .expect("a game that is not over has a legal move");
            let best = self.best_pits(&state, value, &moves)?;
            line.push((state.to_move, best[0]));
            state = state.play(&self.rules, best[0] as usize)?;
            let here = (state.to_move, state.position);
            if seen.contains(&here) && state.end(&self.rules).is_none() {
                return Ok((line, LineEnd::Cycle));
            }
            seen.push(here);
        }
    }

    /// The perfect line of [`Engine::principal_variation`] where levels
    /// cannot cycle, from the position's `score`: at each ply the first
    /// move (in pit order) that reaches the value, found by zero-window
    /// tests, and the value carried to the child.
    fn line_of_first_best_moves(
        &mut self,
        state: &GameState,
        score: Score,
    ) -> Result<(Vec<(Side, u8)>, LineEnd)> {
        let mut line = Vec::new();
        let mut state = state.clone();
        if !score.exact {
            return Ok((line, LineEnd::Truncated));
        }
        let mut value = score.value;
        loop {
            if let Some(end) = state.end(&self.rules) {
                return Ok((line, LineEnd::GameOver(end.reason)));
            }
            if line.len() >= MAX_LINE || self.past_deadline() {
                return Ok((line, LineEnd::Truncated));
            }
            let Successors::Moves(moves) = self.rules.successors(&state.position) else {
                unreachable!("a game that is not over has a legal move");
            };
            let mut chosen = None;
            for m in moves.iter() {
                match self.move_reaches(m, value)? {
                    None => return Ok((line, LineEnd::Truncated)),
                    Some(true) => {
                        chosen = Some(*m);
                        break;
                    }
                    Some(false) => {}
                }
            }
            let Some(m) = chosen else {
                unreachable!("a proven value is some move's");
            };
            line.push((state.to_move, m.pit));
            value = if m.extra_turn {
                value - m.gain as i32
            } else {
                m.gain as i32 - value
            };
            state = state.play(&self.rules, m.pit as usize)?;
        }
    }

    /// Nodes searched by this engine so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    fn check(&self, pos: &Position) -> Result<()> {
        if pos.pits() != self.rules.pits() {
            return Err(Error::Rules(
                NotationError::WrongPits {
                    position: *pos,
                    expected: self.rules.pits(),
                    what: "rules",
                }
                .into(),
            ));
        }
        Ok(())
    }

    fn table_value(&self, pos: &Position) -> Result<i32> {
        Ok(self.tables.expect("in_tables implies tables").value(pos)?)
    }

    /// MTD(f) on `pos`: to the end of every line for Kalah, iteratively
    /// deepened otherwise, until proven or out of budget.
    fn search_root(&mut self, pos: &Position) -> Result<Score> {
        self.ensure_tt()?;
        self.aborted = false;
        let cycles = self.rules.variant().can_cycle();
        let mut guess = 0;
        let mut depth = if cycles { 2 } else { UNLIMITED };
        loop {
            self.depth_cut = false;
            self.depth = depth;
            let (value, exact) = self.mtdf(pos, guess, depth);
            if let Some(e) = self.error.take() {
                return Err(e);
            }
            if self.aborted {
                return Ok(Score {
                    value: guess,
                    exact: false,
                });
            }
            // Without a depth cut-off, searching deeper changes nothing:
            // only repetitions keep the answer unproven.
            if exact || depth == UNLIMITED || !self.depth_cut {
                return Ok(Score { value, exact });
            }
            guess = value;
            depth += 2;
        }
    }

    /// Zero-window searches converging on the value of `pos` at `depth`.
    fn mtdf(&mut self, pos: &Position, guess: i32, depth: u16) -> (i32, bool) {
        let (mut lower, mut upper) = (-INFINITY, INFINITY);
        let (mut lower_proven, mut upper_proven) = (false, false);
        let mut g = guess;
        while lower < upper && !self.aborted {
            let beta = if g == lower { g + 1 } else { g };
            self.line.clear();
            let (value, proven) = self.alpha_beta(pos, beta - 1, beta, depth);
            g = value;
            if g < beta {
                upper = g;
                upper_proven = proven;
            } else {
                lower = g;
                lower_proven = proven;
            }
        }
        (g, lower_proven && upper_proven)
    }

    fn out_of_budget(&mut self) -> bool {
        if self.nodes.is_multiple_of(PROGRESS_NODES) {
            self.report_progress();
        }
        self.limits
            .nodes
            .is_some_and(|n| self.nodes - self.nodes_at_start >= n)
            || (self.nodes.is_multiple_of(1024) && self.past_deadline())
    }

    /// Tells the progress hook, if any, how far the search has come.
    fn report_progress(&mut self) {
        let progress = SearchProgress {
            nodes: self.nodes,
            depth: (self.depth != UNLIMITED).then_some(self.depth),
            elapsed: self.started.elapsed(),
        };
        if let Some(report) = self.progress.as_mut() {
            report(&progress);
        }
    }

    /// Calls `report` every so many nodes of a search, so that a long
    /// search can show that it goes on.
    pub fn with_progress(mut self, report: impl FnMut(&SearchProgress) + 'a) -> Self {
        self.progress = Some(Box::new(report));
        self
    }

    /// Fail-soft negamax alpha-beta: the value of `pos` for the player to
    /// move if it lies in `(alpha, beta)`, else a bound on the side it fell
    /// out; and whether it is proven.
    fn alpha_beta(&mut self, pos: &Position, alpha: i32, beta: i32, depth: u16) -> (i32, bool) {
        match self.look(pos, alpha, beta, depth) {
            Look::Answer(value, proven) => (value, proven),
            Look::Open { key, first } => self.expand(pos, key, first, alpha, beta, depth),
        }
    }

    /// What `pos` gives without searching its moves: a table value, a
    /// bound from the stones left on the board (the remaining stones' margin
    /// lies in `−n..=n`), a depth cut-off, a repetition, or a stored bound
    /// that settles the window; else its key and stored best move, for the
    /// search.
    fn look(&mut self, pos: &Position, alpha: i32, beta: i32, depth: u16) -> Look {
        if self.aborted {
            return Look::Answer(0, false);
        }
        if self.in_tables(pos) {
            return match self.table_value(pos) {
                Ok(v) => Look::Answer(v, true),
                Err(e) => {
                    self.error = Some(e);
                    self.aborted = true;
                    Look::Answer(0, false)
                }
            };
        }
        let stones = pos.stones() as i32;
        if stones <= alpha {
            return Look::Answer(stones, true);
        }
        if -stones >= beta {
            return Look::Answer(-stones, true);
        }
        if depth == 0 {
            self.depth_cut = true;
            return Look::Answer(0, false);
        }
        let key = key(pos);
        if self.line.contains(&key) {
            // Endless play is an even split; history-dependent, so unproven.
            return Look::Answer(0, false);
        }
        let entry = Entry::unpack(self.tt[self.slot(key)]);
        let mut first = None;
        if entry.key == key && entry.depth != 0 {
            first = Some(entry.best);
            if entry.depth >= depth {
                let proven = entry.depth == PROVEN;
                let (lower, upper) = (entry.lower as i32, entry.upper as i32);
                if lower >= beta || upper <= alpha || lower == upper {
                    let value = if lower >= beta { lower } else { upper };
                    return Look::Answer(value, proven);
                }
            }
        }
        Look::Open { key, first }
    }

    /// Searches the moves of `pos` (a node: what [`Engine::nodes`]
    /// counts). Every child is looked at first ([`Engine::look`]): a child
    /// the tables, the stones or a stored bound settle costs no search, and
    /// one that refutes the window ends the node at once. The rest are
    /// searched best first: the stored best move, then extra turns, then by
    /// stones gained.
    fn expand(
        &mut self,
        pos: &Position,
        key: u128,
        first: Option<u8>,
        alpha: i32,
        beta: i32,
        depth: u16,
    ) -> (i32, bool) {
        let moves = match self.rules.successors(pos) {
            Successors::Terminal(v) => return (v, true),
            Successors::Moves(moves) => moves,
        };
        self.nodes += 1;
        if self.out_of_budget() {
            self.aborted = true;
            return (0, false);
        }
        let child_depth = if depth == UNLIMITED { depth } else { depth - 1 };
        let mut best = Best {
            value: -INFINITY,
            pit: 0,
            proven: true,
            alpha,
        };
        let mut open = [Move::default(); MAX_PITS];
        let mut opened = 0;
        self.line.push(key);
        for m in moves.iter() {
            let (child_alpha, child_beta) = child_window(m, best.alpha, beta);
            let Look::Answer(v, child_proven) =
                self.look(&m.child, child_alpha, child_beta, child_depth)
            else {
                open[opened] = *m;
                opened += 1;
                continue;
            };
            if best.take(m, m.value_given_child(v), child_proven, beta) || self.aborted {
                break;
            }
        }
        let open = &mut open[..opened];
        open.sort_by_key(|m| {
            (
                Some(m.pit) != first,
                !m.extra_turn,
                std::cmp::Reverse((m.extra_turn as u8 * m.pit, m.gain, m.pit)),
            )
        });
        for m in open.iter() {
            if best.value >= beta || self.aborted {
                break;
            }
            let (child_alpha, child_beta) = child_window(m, best.alpha, beta);
            let (v, child_proven) = self.alpha_beta(&m.child, child_alpha, child_beta, child_depth);
            if self.aborted || best.take(m, m.value_given_child(v), child_proven, beta) {
                break;
            }
        }
        self.line.pop();
        if self.aborted {
            return (0, false);
        }
        let Best {
            value: best,
            pit: best_pit,
            proven,
            ..
        } = best;
        let (lower, upper) = if best >= beta {
            (best, INFINITY)
        } else if best <= alpha {
            (-INFINITY, best)
        } else {
            (best, best)
        };
        let slot = self.slot(key);
        self.tt[slot] = Entry {
            key,
            lower: lower as i16,
            upper: upper as i16,
            depth: if proven { PROVEN } else { depth },
            best: best_pit,
        }
        .pack();
        self.grow_tt_if_full();
        (best, proven)
    }

    /// Allocates the transposition table if no search has yet.
    fn ensure_tt(&mut self) -> Result<()> {
        if self.tt.is_empty() {
            self.tt = zeroed_table(self.tt_entries.min(FIRST_TT_ENTRIES))?;
            self.tt_stores = 0;
        }
        Ok(())
    }

    /// Grows the transposition table fourfold (up to its limit) once it
    /// has taken as many stores as half its entries, keeping what it holds.
    /// If the memory cannot be had, the table stays as it is.
    fn grow_tt_if_full(&mut self) {
        self.tt_stores += 1;
        if self.tt_stores <= self.tt.len() / 2 || self.tt.len() >= self.tt_entries {
            return;
        }
        let Ok(grown) = zeroed_table((self.tt.len() * 4).min(self.tt_entries)) else {
            self.tt_entries = self.tt.len();
            return;
        };
        let old = std::mem::replace(&mut self.tt, grown);
        for words in old {
            let entry = Entry::unpack(words);
            if entry.depth != 0 {
                let slot = self.slot(entry.key);
                self.tt[slot] = words;
            }
        }
        self.tt_stores = 0;
    }

    /// The transposition table's slot for `key`.
    fn slot(&self, key: u128) -> usize {
        (mix(key) as usize) & (self.tt.len() - 1)
    }
}

/// The best move of a node so far, in a fail-soft search below `beta`.
struct Best {
    /// Its value (a bound on the node's while no move reached the window).
    value: i32,
    pit: u8,
    /// Whether every move that decided it is proven.
    proven: bool,
    /// The window's lower end, raised by the moves taken.
    alpha: i32,
}

impl Best {
    /// Takes move `m`, worth `value` (proven or not); whether it reaches
    /// `beta`, which ends the node.
    #[inline]
    fn take(&mut self, m: &Move, value: i32, proven: bool, beta: i32) -> bool {
        if value > self.value {
            (self.value, self.pit) = (value, m.pit);
        }
        if value >= beta {
            self.proven = proven;
            return true;
        }
        self.proven &= proven;
        self.alpha = self.alpha.max(value);
        false
    }
}

/// What a position gives before its moves are searched ([`Engine::look`]).
enum Look {
    /// Its value or a bound that settles the window, and whether proven.
    Answer(i32, bool),
    /// It must be searched: its key, and the best move stored for it.
    Open { key: u128, first: Option<u8> },
}

/// The window a child of move `m` is searched with, for its parent's
/// window `(alpha, beta)`: the child's value `v` makes the move worth
/// `gain + v` after an extra turn, `gain − v` otherwise.
fn child_window(m: &Move, alpha: i32, beta: i32) -> (i32, i32) {
    let gain = m.gain as i32;
    if m.extra_turn {
        (alpha - gain, beta - gain)
    } else {
        (gain - beta, gain - alpha)
    }
}

/// A transposition table of `entries` empty slots, or an error if the
/// memory cannot be had: zeroed by the allocator (fresh pages from the OS,
/// not written), where `vec!` would abort the process on failure.
fn zeroed_table(entries: usize) -> Result<Vec<[u64; 3]>> {
    let too_large = || Error::OutOfMemory {
        bytes: entries.saturating_mul(TT_ENTRY_BYTES),
    };
    let layout = std::alloc::Layout::array::<[u64; 3]>(entries).map_err(|_| too_large())?;
    // SAFETY: the layout has a non-zero size (`entries ≥ 1`); the pointer is
    // checked, then owned by a vector of exactly that layout, whose
    // all-zero elements are valid `[u64; 3]`s.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut [u64; 3];
        if ptr.is_null() {
            return Err(too_large());
        }
        Ok(Vec::from_raw_parts(ptr, entries, entries))
    }
}

/// A position's transposition-table key: its cells (pits per side are fixed
/// per engine).
fn key(pos: &Position) -> u128 {
    let mut bytes = [0u8; 16];
    bytes[..pos.cells().len()].copy_from_slice(pos.cells());
    u128::from_le_bytes(bytes)
}

/// Spreads a key over the table's slots.
fn mix(key: u128) -> u64 {
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17 ^ folded
}

#[cfg(test)]
mod tests {
    use super::*;
    use mancala_core::{LevelIndex, Variant};
    use mancala_format::Even;
    use mancala_gen::solve_in_memory;

    /// Search with no tables agrees with the retrograde solution on every
    /// Kalah position of small levels.
    #[test]
    fn kalah_search_equals_the_solver() {
        let rules = Rules::new(Variant::Kalah, 3).unwrap();
        let solved = solve_in_memory::<Even>(&rules, 7);
        let mut engine = Engine::new(rules);
        for n in 0..=7u32 {
            let index = LevelIndex::new(3, n);
            for i in 0..index.count() {
                let pos = index.unrank(i);
                let score = engine.score(&pos).unwrap();
                assert!(score.exact, "{pos}");
                assert_eq!(score.value, solved.value(&pos), "{pos}");
            }
        }
    }
    /// A transposition table larger than the machine can give is an error,
    /// not an aborted process.
    #[test]
    fn a_transposition_table_takes_only_the_memory_a_search_needs() {
        let rules = Rules::new(Variant::Kalah, 3).unwrap();
        let state = GameState::start(&rules, 2).unwrap();
        // A limit no machine has: the table starts small and grows only as
        // the search stores, so a small search runs as with any other.
        let mut engine = Engine::new(rules).with_tt_bytes(1 << 62);
        assert!(engine.analyze(&state).unwrap().exact);
        assert_eq!(engine.tt.len(), FIRST_TT_ENTRIES);
        // Asked for less than an entry: one entry, and the search works.
        let mut engine = Engine::new(rules).with_tt_bytes(1);
        assert!(engine.analyze(&state).unwrap().exact);
        assert_eq!(engine.tt.len(), 1);
        // A table that must grow keeps what it holds and stays exact.
        let state = GameState::start(&rules, 4).unwrap();
        let mut small = Engine::new(rules).with_tt_bytes(1 << 30);
        small.tt = zeroed_table(16).unwrap();
        let grown = small.analyze(&state).unwrap();
        assert!(small.tt.len() > 16, "the table grew");
        let plain = Engine::new(rules).analyze(&state).unwrap();
        assert_eq!((grown.value, &grown.moves), (plain.value, &plain.moves));
    }

    /// A deadline bounds a whole analysis, not only each search: without
    /// tables a 24-stone Oware analysis would run a search per move and per
    /// ply.
    #[test]
    fn a_deadline_bounds_an_analysis() {
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let state = GameState::start(&rules, 2).unwrap();
        let budget = Duration::from_millis(300);
        let mut engine = Engine::new(rules)
            .with_tt_bytes(TT_ENTRY_BYTES << 12)
            .with_limits(Limits {
                nodes: None,
                time: Some(Duration::from_secs(5)),
            })
            .with_deadline(Instant::now() + budget);
        let analysis = engine.analyze(&state).unwrap();
        assert!(analysis.elapsed < budget + Duration::from_millis(500));
        assert!(!analysis.exact);
        assert_eq!(analysis.pv_end, LineEnd::Truncated);
    }

    /// A best-moves analysis out of budget (Kalah, no tables: a long search)
    /// answers with estimates, marked inexact, and a cut line.
    #[test]
    fn a_best_moves_analysis_out_of_budget_says_so() {
        let rules = Rules::new(Variant::Kalah, 6).unwrap();
        let state = GameState::start(&rules, 3).unwrap();
        for nodes in [1, 1000, 20_000] {
            let mut engine = Engine::new(rules).with_limits(Limits {
                nodes: Some(nodes),
                time: None,
            });
            let analysis = engine.analyze_best(&state).unwrap();
            assert!(!analysis.exact, "{nodes} nodes");
            assert_eq!(analysis.pv_end, LineEnd::Truncated);
            assert!(!analysis.moves.is_empty());
        }
    }
}
