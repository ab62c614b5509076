//! Rule sets and move generation.
//!
//! One move generator serves all four rule sets of RULES.md; the rule set
//! only switches the few places where they differ (sowing path, capture
//! shape, legality, end of game). Children are returned already seen from the
//! player who moves next, with the stones the move put into the mover's store.
//!
//! Where RULES.md leaves room, this is how it is read:
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

use std::fmt;

use crate::error::{Error, Result};
use crate::position::{Position, MAX_PITS};

/// The rule sets of RULES.md.
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
            .ok_or_else(|| {
                Error::InvalidRules(format!(
                    "unknown rule set '{name}' (expected oware, awari, wari or kalah)"
                ))
            })
    }

    /// Whether sowing, capture and the origin-skipping lap rule are Oware's.
    #[inline]
    pub fn is_oware_family(self) -> bool {
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

    /// The move's value for the mover, given the value of its child (RULES.md:
    /// `gain − value(child)`, or `gain + value(child)` after an extra turn).
    #[inline]
    pub fn value_given_child(&self, child_value: i32) -> i32 {
        if self.extra_turn {
            self.gain as i32 + child_value
        } else {
            self.gain as i32 - child_value
        }
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
        let blank = Move {
            pit: 0,
            gain: 0,
            extra_turn: false,
            child: Position::default(),
        };
        MoveList {
            moves: [blank; MAX_PITS],
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

impl Rules {
    /// A rule set with `pits` pits per side (`1..=8`). Kalah's empty-pit
    /// capture is on, as RULES.md's default.
    pub fn new(variant: Variant, pits: usize) -> Result<Rules> {
        if !(1..=MAX_PITS).contains(&pits) {
            return Err(Error::InvalidRules(format!(
                "pits per side must be 1..={MAX_PITS}, got {pits}"
            )));
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
        let bad = || {
            Error::InvalidRules(format!(
                "'{id}' is not a rule-set name such as oware-6 or kalah-4-noempty"
            ))
        };
        let mut parts = id.split('-');
        let variant = Variant::from_name(parts.next().ok_or_else(bad)?).map_err(|_| bad())?;
        let pits: usize = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let empty_capture = match parts.next() {
            None => true,
            Some("noempty") if variant == Variant::Kalah => false,
            Some(_) => return Err(bad()),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        let rules = Rules::new(variant, pits)?.with_empty_capture(empty_capture);
        Ok(rules)
    }

    /// The command-line flags that select this rule set.
    pub fn cli_flags(&self) -> String {
        let mut flags = format!("--rules {} --pits {}", self.variant, self.pits);
        if self.variant == Variant::Kalah && !self.empty_capture {
            flags.push_str(" --empty-capture=false");
        }
        flags
    }

    /// Legal moves or the terminal value of `pos`, per RULES.md.
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
        match self.variant {
            Variant::Kalah => self.kalah_moves(pos, visit),
            Variant::Wari => self.wari_moves(pos, visit),
            Variant::Oware | Variant::Awari => self.oware_moves(pos, visit),
        }
    }

    #[inline]
    fn kalah_moves(&self, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        let (mine, theirs) = (pos.mover_stones() as i32, pos.opponent_stones() as i32);
        if mine == 0 || theirs == 0 {
            return Some(mine - theirs);
        }
        for pit in 0..self.pits() {
            if pos.get(pit) > 0 {
                visit(&self.kalah_move(pos, pit));
            }
        }
        None
    }

    #[inline]
    fn wari_moves(&self, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        if pos.mover_stones() == 0 {
            return Some(-(pos.stones() as i32));
        }
        for pit in 0..self.pits() {
            if pos.get(pit) > 0 {
                let (board, last) = self.sow_skipping_origin(pos, pit);
                visit(&self.finish_oware_move(pit, board, last, CaptureShape::BothWays));
            }
        }
        None
    }

    /// Oware and Awari share sowing and the backward capture chain; they
    /// differ in what happens when the opponent would be left without stones.
    #[inline]
    fn oware_moves(&self, pos: &Position, mut visit: impl FnMut(&Move)) -> Option<i32> {
        let p = self.pits();
        let opponent_empty = pos.opponent_stones() == 0;
        let mut any_legal = false;
        let mut any_move = false;
        for pit in 0..p {
            let stones = pos.get(pit) as usize;
            if stones == 0 {
                continue;
            }
            any_move = true;
            let feeds = pit + stones >= p;
            let (board, last) = self.sow_skipping_origin(pos, pit);
            if self.variant == Variant::Oware {
                if opponent_empty && !feeds {
                    continue;
                }
                visit(&self.finish_oware_move(pit, board, last, CaptureShape::GrandSlamVoid));
                any_legal = true;
            } else {
                let m = self.finish_oware_move(pit, board, last, CaptureShape::Backward);
                // The child is seen from the opponent: his row is the child's
                // first row. A move that leaves it empty starves him.
                if m.child.mover_stones() > 0 {
                    visit(&m);
                    any_legal = true;
                }
            }
        }
        if any_legal {
            return None;
        }
        let n = pos.stones() as i32;
        Some(match self.variant {
            // Awari: every move starves the opponent, so the mover takes all.
            Variant::Awari if any_move => n,
            // No move at all, or (Oware) no move can feed: stones go to the
            // side they lie on.
            _ => pos.mover_stones() as i32 - pos.opponent_stones() as i32,
        })
    }

    /// Sows pit `origin` Oware-style (the origin is skipped on every lap) and
    /// returns the board (still from the mover's view) and the last pit sown.
    #[inline(always)]
    fn sow_skipping_origin(&self, pos: &Position, origin: usize) -> (Position, usize) {
        let ring = 2 * self.pits();
        let mut board = *pos;
        let cells = board.cells_mut();
        let stones = cells[origin] as usize;
        cells[origin] = 0;
        let (laps, rest) = (stones / (ring - 1), stones % (ring - 1));
        if laps > 0 {
            for (i, c) in cells.iter_mut().enumerate() {
                if i != origin {
                    *c += laps as u8;
                }
            }
        }
        let mut pit = origin;
        for _ in 0..rest {
            pit += 1;
            if pit == ring {
                pit = 0;
            }
            cells[pit] += 1;
        }
        let last = if rest == 0 {
            (origin + ring - 1) % ring
        } else {
            pit
        };
        (board, last)
    }

    /// Applies the capture of the Oware family after a sowing that ended in
    /// `last`, then hands the board to the opponent.
    #[inline(always)]
    fn finish_oware_move(
        &self,
        pit: usize,
        mut board: Position,
        last: usize,
        shape: CaptureShape,
    ) -> Move {
        let p = self.pits();
        let capturable = |c: u8| c == 2 || c == 3;
        let cells = board.cells_mut();
        let mut gain = 0u32;
        if last >= p && capturable(cells[last]) {
            let mut low = last;
            while low > p && capturable(cells[low - 1]) {
                low -= 1;
            }
            let mut high = last;
            if shape == CaptureShape::BothWays {
                while high + 1 < 2 * p && capturable(cells[high + 1]) {
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

    /// Kalah sowing: the path is the mover's pits, his store, the opponent's
    /// pits (the opponent's store is skipped); the origin is not skipped.
    fn kalah_move(&self, pos: &Position, origin: usize) -> Move {
        let p = self.pits();
        let ring = 2 * p + 1; // path slots; slot p is the store
        let mut board = *pos;
        let cells = board.cells_mut();
        let seeds = cells[origin] as usize;
        cells[origin] = 0;
        let (laps, rest) = (seeds / ring, seeds % ring);
        let mut gain = laps;
        if laps > 0 {
            cells.iter_mut().for_each(|c| *c += laps as u8);
        }
        let mut slot = origin;
        for _ in 0..rest {
            slot = (slot + 1) % ring;
            match slot.cmp(&p) {
                std::cmp::Ordering::Less => cells[slot] += 1,
                std::cmp::Ordering::Equal => gain += 1,
                std::cmp::Ordering::Greater => cells[slot - 1] += 1,
            }
        }
        let last_slot = (origin + seeds) % ring;
        if last_slot == p {
            return Move {
                pit: origin as u8,
                gain: gain as u8,
                extra_turn: true,
                child: board,
            };
        }
        if last_slot < p && cells[last_slot] == 1 {
            let opposite = 2 * p - 1 - last_slot;
            if self.empty_capture || cells[opposite] > 0 {
                gain += 1 + cells[opposite] as usize;
                cells[last_slot] = 0;
                cells[opposite] = 0;
            }
        }
        Move {
            pit: origin as u8,
            gain: gain as u8,
            extra_turn: false,
            child: board.flipped(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CaptureShape {
    /// Oware: backward chain; a capture of every opponent stone is void.
    GrandSlamVoid,
    /// Awari: backward chain; starving captures are filtered as illegal.
    Backward,
    /// Wari: the whole run of 2s and 3s around the last pit.
    BothWays,
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

impl Rules {
    /// Plays the mover's pit `pit` if it is legal in `pos`. Cheaper than
    /// [`Rules::successors`] except under Awari, whose legality depends on
    /// every other move.
    pub fn play(&self, pos: &Position, pit: usize) -> Option<Move> {
        if pit >= self.pits() || pos.get(pit) == 0 {
            return None;
        }
        match self.variant {
            Variant::Kalah => (pos.opponent_stones() > 0).then(|| self.kalah_move(pos, pit)),
            Variant::Wari => {
                let (board, last) = self.sow_skipping_origin(pos, pit);
                Some(self.finish_oware_move(pit, board, last, CaptureShape::BothWays))
            }
            Variant::Oware => {
                let feeds = pit + pos.get(pit) as usize >= self.pits();
                if pos.opponent_stones() == 0 && !feeds {
                    return None;
                }
                let (board, last) = self.sow_skipping_origin(pos, pit);
                Some(self.finish_oware_move(pit, board, last, CaptureShape::GrandSlamVoid))
            }
            Variant::Awari => match self.successors(pos) {
                Successors::Moves(list) => list.iter().find(|m| m.pit as usize == pit).copied(),
                Successors::Terminal(_) => None,
            },
        }
    }

    /// Where the stones of the mover's pit `pit` land, one entry per stone,
    /// in the order they are sown: what a board shows step by step. The
    /// paths are the move generator's (Oware family: the emptied pit is
    /// skipped on every lap; Kalah: the mover's store lies between pits
    /// `P − 1` and `P`). Legality is not checked; an empty or out-of-range
    /// pit sows nothing.
    pub fn sowing_path(&self, pos: &Position, pit: usize) -> Vec<Place> {
        let p = self.pits();
        if pit >= p {
            return Vec::new();
        }
        let mut slot = pit;
        let mut next = || match self.variant {
            Variant::Kalah => {
                slot = (slot + 1) % (2 * p + 1);
                match slot.cmp(&p) {
                    std::cmp::Ordering::Less => Place::Pit(slot),
                    std::cmp::Ordering::Equal => Place::Store,
                    std::cmp::Ordering::Greater => Place::Pit(slot - 1),
                }
            }
            _ => {
                slot = (slot + 1) % (2 * p);
                if slot == pit {
                    slot = (slot + 1) % (2 * p);
                }
                Place::Pit(slot)
            }
        };
        (0..pos.get(pit)).map(|_| next()).collect()
    }

    /// Calls `emit` with every position that reaches `child` by one legal
    /// move that keeps the level (no capture, no store, turn passes).
    ///
    /// The parent's row is `child`'s opponent row. For each empty pit there
    /// (the pit just sown from) and each stone count, the stones on the
    /// sowing path are taken back; sowing them again gives `child` by
    /// construction, so what is left to decide is whether that move is legal
    /// and captures nothing (`unmove_keeps_level`). Debug builds
    /// replay every candidate with [`Rules::play`] to confirm it.
    pub fn same_level_parents(&self, child: &Position, mut emit: impl FnMut(Position)) {
        // After a legal Awari move the opponent has stones; a Kalah parent
        // whose opponent row is empty would be terminal.
        if matches!(self.variant, Variant::Awari | Variant::Kalah) && child.mover_stones() == 0 {
            return;
        }
        let p = self.pits();
        let ring = 2 * p;
        let after = child.flipped();
        let opponent_after = child.mover_stones();
        for origin in 0..p {
            if after.get(origin) != 0 {
                continue;
            }
            let mut before = after;
            let mut opponent_before = opponent_after;
            let mut last = origin;
            for taken in 1..=u8::MAX {
                last = if self.variant.is_oware_family() {
                    let next = if last + 1 == ring { 0 } else { last + 1 };
                    if next == origin {
                        next + 1
                    } else {
                        next
                    }
                } else if last + 1 < p {
                    last + 1
                } else {
                    break; // a Kalah sowing that reaches the store leaves the level
                };
                if before.get(last) == 0 {
                    break;
                }
                before.cells_mut()[last] -= 1;
                if last >= p {
                    opponent_before -= 1;
                }
                let mut parent = before;
                parent.cells_mut()[origin] = taken;
                let keeps = self.unmove_keeps_level(&after, origin, taken, last, opponent_before);
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

    /// Whether sowing `stones` from `origin`, which ended in `last` and
    /// produced `after` (from the mover's view), is a legal move that
    /// captures nothing. `opponent_before` is the opponent's row total
    /// before the move.
    #[inline]
    fn unmove_keeps_level(
        &self,
        after: &Position,
        origin: usize,
        stones: u8,
        last: usize,
        opponent_before: u32,
    ) -> bool {
        let p = self.pits();
        let capturable = |c: u32| c == 2 || c == 3;
        match self.variant {
            Variant::Kalah => {
                let opposite = 2 * p - 1 - last;
                !(after.get(last) == 1 && (self.empty_capture || after.get(opposite) > 0))
            }
            Variant::Awari | Variant::Wari => !(last >= p && capturable(after.get(last))),
            Variant::Oware => {
                if opponent_before == 0 && origin + (stones as usize) < p {
                    return false; // does not feed a starving opponent
                }
                if !(last >= p && capturable(after.get(last))) {
                    return true;
                }
                // A capture: it keeps the level only as a void grand slam.
                let mut chain = 0;
                let mut pit = last;
                while pit >= p && capturable(after.get(pit)) {
                    chain += after.get(pit);
                    pit -= 1;
                }
                chain == after.opponent_stones()
            }
        }
    }
}
