//! Rule sets and move generation.
//!
//! Each rule set of `docs/RULES.md` lives in a file of its own behind one
//! interface ([`MoveRules`]): its legal moves and terminal values, playing
//! one pit, where a sowing goes, and whether an un-move stays in its level.
//! The Oware family shares its sowing and capture in [`sowing`]. Children
//! are returned already seen from the player who moves next, with the
//! stones the move put into the mover's store.
//!
//! What the rest of the project needs to know about a rule set beyond its
//! moves is asked by name ([`Variant::can_cycle`],
//! [`Variant::repetition_ends_game`], …), never by which rule set it is.
//!
//! Where the rules leave room, this is how they are read (`docs/RULES.md`,
//! "Readings of open points"):
//! - Oware-family sowing skips the emptied pit on every lap. Wari's "when it
//!   holds more than 11" is written for six pits; a sowing reaches its own
//!   pit only with `2P` or more stones, so "always skip" is the same rule for
//!   every `P`.
//! - Awari captures with Oware's backward chain but has no void grand slam:
//!   a capture of every opponent stone starves him, so the move is illegal
//!   (or, if every move starves him, the game ends with `+n` for the mover).
//! - A feeding move that captures everything it fed (possible with one pit
//!   a side, `3/0`) is a grand slam like any other.
//! - Kalah: a lap that ends in the pit just emptied ends in an empty pit, so
//!   it captures.

mod awari;
mod bits;
mod kalah;
mod oware;
mod sowing;
mod wari;

use std::fmt;

use crate::error::{Result, RulesError};
use crate::position::{Position, MAX_PITS};

/// The rule sets of `docs/RULES.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Tournament Oware ("abapa"): grand slam captures nothing, feeding rule.
    Oware,
    /// Computer-olympiad Awari: starving moves illegal unless forced.
    Awari,
    /// Wari: captures in both directions, no grand-slam or feeding rule.
    Wari,
    /// Kalah: stores in the sowing path, extra turns, opposite-pit captures.
    Kalah,
}

impl Variant {
    /// Every rule set, in documentation order.
    pub const ALL: [Variant; 4] = [
        Variant::Oware,
        Variant::Awari,
        Variant::Wari,
        Variant::Kalah,
    ];

    /// The name used on the command line and in file headers.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Oware => "oware",
            Variant::Awari => "awari",
            Variant::Wari => "wari",
            Variant::Kalah => "kalah",
        }
    }

    /// Parses a rule-set name as written by [`Variant::name`].
    pub fn from_name(name: &str) -> Result<Variant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == name)
            .ok_or_else(|| RulesError::UnknownVariant(name.to_string()).into())
    }

    /// Whether play can go round in circles inside a level: a move that
    /// keeps the level can lead back to a position already seen. Then
    /// endless play must be scored (an even split), searches must deepen
    /// iteratively, and values are found by fixpoints. Kalah cannot: its
    /// same-level moves only sow inside the mover's row, towards his store.
    pub fn can_cycle(self) -> bool {
        self.skips_origin()
    }

    /// Whether the third occurrence of a position with the same player to
    /// move ends the game, each player taking the stones on his own side
    /// (the tournament rule of the Oware family).
    pub fn repetition_ends_game(self) -> bool {
        self.skips_origin()
    }

    /// Whether a player who has stored more than half of all stones wins
    /// at once (the Oware family; a Kalah game is played out).
    pub fn majority_ends_game(self) -> bool {
        self.skips_origin()
    }

    /// Whether the pit a move empties is still empty after it (the sowing
    /// skips it on every lap, and no move gives another turn): then no move
    /// leads to a position whose previous mover's row has no empty pit.
    pub fn sown_pit_stays_empty(self) -> bool {
        self.skips_origin()
    }

    /// Whether every move that leaves its level is a capture: no store lies
    /// on the sowing path. Compact tables rely on it, since they restore a
    /// value from the position's captures and a few moves within its level;
    /// in Kalah most moves sow into the store.
    pub fn only_captures_leave_level(self) -> bool {
        self.skips_origin()
    }

    /// Whether a move whose last seed falls into the mover's store gives
    /// him another turn (Kalah). Such a move's value adds its child's
    /// instead of subtracting it, so a child's lower bound bounds it from
    /// below only.
    pub fn gives_extra_turns(self) -> bool {
        !self.skips_origin()
    }

    /// The fewest stones a move that leaves its level takes off the board:
    /// the Oware family captures only pits holding 2 or 3, so a move takes
    /// none or at least 2, and the level just below the board's is never
    /// reached from it; a Kalah move may store a single seed.
    fn least_gain(self) -> u32 {
        if self.skips_origin() {
            2
        } else {
            1
        }
    }

    /// The Oware family: sowing skips the emptied pit, no stores on the
    /// path. Private: callers ask for the property they rely on.
    fn skips_origin(self) -> bool {
        !matches!(self, Variant::Kalah)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A complete rule set: variant, pits per side and Kalah's capture option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    variant: Variant,
    pits: u8,
    empty_capture: bool,
}

/// What one legal move does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Move {
    /// The mover's pit that was emptied (`0..P`, letter `a`, `b`, …).
    pub pit: u8,
    /// Stones the move put into the mover's store (captures, Kalah sowing).
    pub gain: u8,
    /// Kalah: the last seed fell into the store and the mover moves again.
    pub extra_turn: bool,
    /// The next position, seen from whoever moves next (the same player
    /// after an extra turn, the opponent otherwise).
    pub child: Position,
}

impl Move {
    /// Whether the move leaves its level: it puts stones into the store
    /// (captures, or Kalah sowing), which is the only way stones leave
    /// the board. Such a move is an *exit*.
    #[inline]
    pub fn leaves_level(&self) -> bool {
        self.gain > 0
    }

    /// The move's value for the mover, given the value of its child:
    /// `gain − value(child)`, or `gain + value(child)` after an extra turn.
    #[inline]
    pub fn value_given_child(&self, child_value: i32) -> i32 {
        if self.extra_turn {
            self.gain as i32 + child_value
        } else {
            self.gain as i32 - child_value
        }
    }
}

/// A position's legal moves that keep its level, as
/// [`Rules::for_each_exit`] tells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stays {
    /// There is no legal move: the game is over, worth this to the mover
    /// (what [`Rules::for_each_move`] returns).
    Terminal(i32),
    /// This many legal moves keep the level (none was played).
    Moves(u8),
}

/// A move of the mover's row as it acts on any opponent row, in a rule set
/// whose levels cannot cycle ([`Rules::row_moves`]). Rows are *row bits*:
/// pit `i` of the row in byte `i` of a `u64`.
///
/// There the opponent's row takes part in a move only by receiving the
/// stones sown past the store and by the capture of one pit (the one
/// opposite an empty pit of the mover's where the last stone fell), so a
/// solver computes the row's moves once and plays each on every opponent
/// row ([`RowMove::onto`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowMove {
    /// The mover's pit sown (`0..P`).
    pub pit: u8,
    /// The mover's row after the sowing, before any capture.
    pub mover_row: u64,
    /// The stones the sowing puts into each of the opponent's pits.
    pub opponent_adds: u64,
    /// Stones sown into the mover's store.
    pub stored: u8,
    /// The last stone fell into the store: the mover moves again.
    pub extra_turn: bool,
    /// The mover's pit the last stone fell into, if it was empty: it
    /// captures the opposite pit (the opponent's pit `P − 1 − pit`), when
    /// that holds stones or the rule set captures empty pits too.
    pub lands_in_empty: Option<u8>,
}

impl RowMove {
    /// The move played in a position whose opponent's row is `opponent`:
    /// the stones it puts into the store, and the mover's and the
    /// opponent's rows after it (still seen from the mover; the child is
    /// them swapped, unless [`RowMove::extra_turn`]).
    #[inline]
    pub fn onto(&self, rules: &Rules, opponent: u64) -> (u8, u64, u64) {
        let mut opponent = opponent + self.opponent_adds;
        let mut mover = self.mover_row;
        let mut gain = self.stored;
        if let Some(pit) = self.lands_in_empty {
            let opposite = rules.pits() - 1 - pit as usize;
            let captured = (opponent >> (8 * opposite)) as u8;
            if rules.empty_capture() || captured > 0 {
                gain += 1 + captured;
                mover &= !(0xff << (8 * pit));
                opponent &= !(0xff << (8 * opposite));
            }
        }
        (gain, mover, opponent)
    }
}

/// Where one sown stone lands, seen from the mover: the board shows sowing
/// stone by stone, and Kalah sows through the store as well as the pits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Pit `i` in sowing order (`0..P` the mover's row, `P..2P` the
    /// opponent's).
    Pit(usize),
    /// The mover's store (Kalah).
    Store,
}

/// The legal moves of a position, in pit order, without heap allocation.
#[derive(Clone, Copy)]
pub struct MoveList {
    moves: [Move; MAX_PITS],
    len: u8,
}

impl MoveList {
    fn new() -> Self {
        MoveList {
            moves: [Move::default(); MAX_PITS],
            len: 0,
        }
    }

    fn push(&mut self, m: Move) {
        self.moves[self.len as usize] = m;
        self.len += 1;
    }

    /// Keeps only the moves `keep` accepts, in order.
    pub fn retain(&mut self, keep: impl Fn(&Move) -> bool) {
        let all = *self;
        self.len = 0;
        for m in all.iter().filter(|m| keep(m)) {
            self.push(*m);
        }
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len as usize]
    }
}

/// What a position offers: its legal moves, or the end of the game.
#[derive(Clone, Copy)]
pub enum Successors {
    /// No legal move: the game is over and the position is worth this much to
    /// the mover (remaining stones split as the rule set says).
    Terminal(i32),
    /// At least one legal move.
    Moves(MoveList),
}

/// What one rule set's file implements: the rest of the project reaches it
/// through [`Rules`], which dispatches on the variant. The provided methods
/// are the Oware family's (sowing that skips the emptied pit, a capture
/// only by the last stone), which a rule set overrides where it differs.
trait MoveRules {
    /// Whether a same-level move always leaves the next mover a stone, so
    /// that a child whose mover's row is empty has no same-level parent.
    const CHILD_OF_STAY_HAS_MOVER_STONES: bool;

    /// Calls `visit` with each legal move of `pos`, in pit order, and
    /// returns the terminal value if there is none.
    fn moves(rules: &Rules, pos: &Position, visit: impl FnMut(&Move)) -> Option<i32>;

    /// Calls `visit` with each legal move of `pos` that leaves its level,
    /// in pit order, and counts the others ([`Rules::for_each_exit`]). A
    /// rule set may tell a move that keeps the level without playing it.
    #[inline]
    fn exits(rules: &Rules, pos: &Position, mut visit: impl FnMut(&Move)) -> Stays {
        let mut stays = 0;
        let terminal = Self::moves(rules, pos, |m| {
            if m.leaves_level() {
                visit(m);
            } else {
                stays += 1;
            }
        });
        match terminal {
            Some(value) => Stays::Terminal(value),
            None => Stays::Moves(stays),
        }
    }

    /// Plays the mover's pit `pit` (non-empty, in the row) if it is legal.
    fn play(rules: &Rules, pos: &Position, pit: usize) -> Option<Move>;

    /// Where the stones of `pit` land, in the order they are sown.
    fn sowing_path(_rules: &Rules, pos: &Position, pit: usize) -> Vec<Place> {
        sowing::path(pos, pit)
    }

    /// The pit after `last` on a sowing from `origin`, if a sowing that
    /// gets there can keep its level.
    #[inline]
    fn next_pit_within_level(pits: usize, origin: usize, last: usize) -> Option<usize> {
        sowing::next_pit(pits, origin, last)
    }

    /// Whether sowing `stones` from `origin`, which ended in `last` and
    /// produced `after` (from the mover's view), is a legal move that
    /// captures nothing. `opponent_before` is the opponent's row total
    /// before the move.
    #[inline]
    fn keeps_level(
        _rules: &Rules,
        after: &Position,
        _origin: usize,
        _stones: u8,
        last: usize,
        _opponent_before: u32,
    ) -> bool {
        !sowing::last_stone_captures(after, last)
    }
}

/// Runs `$call` with `$R` bound to the rule set's implementation of
/// [`MoveRules`]: the one place that lists them.
macro_rules! with_rule_set {
    ($variant:expr, $R:ident => $call:expr) => {
        match $variant {
            Variant::Oware => {
                type $R = oware::Oware;
                $call
            }
            Variant::Awari => {
                type $R = awari::Awari;
                $call
            }
            Variant::Wari => {
                type $R = wari::Wari;
                $call
            }
            Variant::Kalah => {
                type $R = kalah::Kalah;
                $call
            }
        }
    };
}

impl Rules {
    /// A rule set with `pits` pits per side (`1..=8`). Kalah's empty-pit
    /// capture is on, as the rules' default.
    pub fn new(variant: Variant, pits: usize) -> Result<Rules> {
        if !(1..=MAX_PITS).contains(&pits) {
            return Err(RulesError::Pits(pits).into());
        }
        Ok(Rules {
            variant,
            pits: pits as u8,
            empty_capture: true,
        })
    }

    /// Kalah's `--empty-capture` option: whether a last seed in an empty own
    /// pit captures when the opposite pit is empty. Ignored by other variants
    /// (always `true` there, so equal rule sets compare equal).
    pub fn with_empty_capture(mut self, empty_capture: bool) -> Rules {
        self.empty_capture = empty_capture || self.variant != Variant::Kalah;
        self
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Pits per side.
    pub fn pits(&self) -> usize {
        self.pits as usize
    }

    /// Kalah's empty-capture option (always `true` for other variants).
    pub fn empty_capture(&self) -> bool {
        self.empty_capture
    }

    /// A short, unique, file-system friendly name: `oware-6`, `kalah-4`,
    /// `kalah-4-noempty`.
    pub fn id(&self) -> String {
        let mut id = format!("{}-{}", self.variant, self.pits);
        if !self.empty_capture {
            id.push_str("-noempty");
        }
        id
    }

    /// Reads back a name written by [`Rules::id`].
    pub fn from_id(id: &str) -> Result<Rules> {
        let bad = || RulesError::UnknownId(id.to_string());
        let mut parts = id.split('-');
        let variant = Variant::from_name(parts.next().ok_or_else(bad)?).map_err(|_| bad())?;
        let pits: usize = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let empty_capture = match parts.next() {
            None => true,
            Some("noempty") if variant == Variant::Kalah => false,
            Some(_) => return Err(bad().into()),
        };
        if parts.next().is_some() {
            return Err(bad().into());
        }
        Ok(Rules::new(variant, pits)?.with_empty_capture(empty_capture))
    }

    /// Whether a move from a position of `from` stones can lead to one of
    /// `to` stones (with `to` ≤ `from`): levels a solver or a prober of
    /// level `from` reads. The test is the rules' arithmetic, not a search,
    /// so it may say yes for a level no move happens to reach; it never
    /// says no for one a move reaches.
    pub fn reaches(&self, from: u32, to: u32) -> bool {
        to == from || to + self.variant.least_gain() <= from
    }

    /// The levels a position of `n` stones needs to be solved or probed,
    /// ascending: every level [`Rules::reaches`] from it, and the levels
    /// those reach, which are among them already (a level reached from one
    /// below `n` is reached from `n`). In the Oware family that is every
    /// level but `n − 1`.
    pub fn levels_needed(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        (0..=n).filter(move |&m| self.reaches(n, m))
    }

    /// Legal moves or the terminal value of `pos`.
    pub fn successors(&self, pos: &Position) -> Successors {
        let mut list = MoveList::new();
        match self.for_each_move(pos, |m| list.push(*m)) {
            Some(value) => Successors::Terminal(value),
            None => Successors::Moves(list),
        }
    }

    /// Calls `visit` with each legal move of `pos`, in pit order, and returns
    /// the terminal value if there is none. The allocation- and copy-free
    /// form of [`Rules::successors`], for the solver's inner loop.
    #[inline]
    pub fn for_each_move(&self, pos: &Position, visit: impl FnMut(&Move)) -> Option<i32> {
        debug_assert_eq!(pos.pits(), self.pits());
        with_rule_set!(self.variant, R => R::moves(self, pos, visit))
    }

    /// Calls `visit` with each legal move of `pos` that leaves its level
    /// (an exit), in pit order, and tells how many legal moves keep it, or
    /// the terminal value. What a level's forward pass needs: it reads
    /// every exit's child and only counts the other moves, which the
    /// Oware family tells apart without sowing them.
    #[inline]
    pub fn for_each_exit(&self, pos: &Position, visit: impl FnMut(&Move)) -> Stays {
        debug_assert_eq!(pos.pits(), self.pits());
        with_rule_set!(self.variant, R => R::exits(self, pos, visit))
    }

    /// Calls `visit` with the move of every non-empty pit of `mover_row`
    /// (`P` counts), as it acts on any opponent row ([`RowMove`]). These
    /// are the legal moves of every position with this mover's row whose
    /// opponent's row holds stones (with none, the game is over).
    ///
    /// # Panics
    /// If levels of this rule set can cycle (their moves act on the
    /// opponent's row in other ways) or the row has not `P` pits.
    pub fn row_moves(&self, mover_row: &[u8], mut visit: impl FnMut(&RowMove)) {
        assert!(
            !self.variant.can_cycle(),
            "{} has no row moves",
            self.variant.name()
        );
        assert_eq!(
            mover_row.len(),
            self.pits(),
            "a row of {} pits",
            self.pits()
        );
        let mut bits = [0u8; 8];
        bits[..mover_row.len()].copy_from_slice(mover_row);
        let row = u64::from_le_bytes(bits);
        for (pit, &stones) in mover_row.iter().enumerate() {
            if stones > 0 {
                visit(&kalah::Kalah::row_move(self, row, pit));
            }
        }
    }

    /// Plays the mover's pit `pit` if it is legal in `pos`. Cheaper than
    /// [`Rules::successors`] except under Awari, whose legality depends on
    /// every other move.
    pub fn play(&self, pos: &Position, pit: usize) -> Option<Move> {
        if pit >= self.pits() || pos.get(pit) == 0 {
            return None;
        }
        with_rule_set!(self.variant, R => R::play(self, pos, pit))
    }

    /// Where the stones of the mover's pit `pit` land, one entry per stone,
    /// in the order they are sown: what a board shows step by step. The
    /// paths are the move generator's (Oware family: the emptied pit is
    /// skipped on every lap; Kalah: the mover's store lies between pits
    /// `P − 1` and `P`). Legality is not checked; an empty or out-of-range
    /// pit sows nothing.
    pub fn sowing_path(&self, pos: &Position, pit: usize) -> Vec<Place> {
        if pit >= self.pits() {
            return Vec::new();
        }
        with_rule_set!(self.variant, R => R::sowing_path(self, pos, pit))
    }

    /// Calls `emit` with every position that reaches `child` by one legal
    /// move that keeps the level (no capture, no store, turn passes).
    ///
    /// The parent's row is `child`'s opponent row. For each empty pit there
    /// (the pit just sown from) and each stone count, the stones on the
    /// sowing path are taken back; sowing them again gives `child` by
    /// construction, so what is left to decide is whether that move is legal
    /// and captures nothing (each rule set's `keeps_level`). Debug builds
    /// replay every candidate with [`Rules::play`] to confirm it.
    pub fn same_level_parents(&self, child: &Position, emit: impl FnMut(Position)) {
        with_rule_set!(self.variant, R => self.unmoves::<R>(child, emit))
    }

    #[inline]
    fn unmoves<R: MoveRules>(&self, child: &Position, mut emit: impl FnMut(Position)) {
        if R::CHILD_OF_STAY_HAS_MOVER_STONES && child.mover_stones() == 0 {
            return;
        }
        let p = self.pits();
        let after = child.flipped();
        let opponent_after = child.mover_stones();
        for origin in 0..p {
            if after.get(origin) != 0 {
                continue;
            }
            // The board before the sowing, as board bits, one stone taken
            // back a step.
            let mut before = after.board_bits();
            let mut opponent_before = opponent_after;
            let mut last = origin;
            for taken in 1..=u8::MAX {
                let Some(next) = R::next_pit_within_level(p, origin, last) else {
                    break;
                };
                last = next;
                let stone = 1u128 << (8 * last);
                if before & (0xff * stone) == 0 {
                    break;
                }
                before -= stone;
                opponent_before -= u32::from(last >= p);
                let parent = after.with_board_bits(before | u128::from(taken) << (8 * origin));
                let keeps = R::keeps_level(self, &after, origin, taken, last, opponent_before);
                debug_assert_eq!(
                    keeps,
                    self.play(&parent, origin)
                        .is_some_and(|m| !m.leaves_level() && !m.extra_turn && m.child == *child),
                    "un-move of {origin} from {child} disagrees with play"
                );
                if keeps {
                    emit(parent);
                }
            }
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} with {} pits per side", self.variant, self.pits)?;
        if self.variant == Variant::Kalah && !self.empty_capture {
            f.write_str(" (no empty-pit capture)")?;
        }
        Ok(())
    }
}
