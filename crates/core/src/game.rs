//! Games: what a perfect player needs beyond the position, and the rules
//! that end a game.
//!
//! Tables know positions only (`docs/RULES.md`: the board seen from the
//! player to move). A game also has two named players, the stones each has already
//! stored, and a history. [`GameState`] carries them and applies the end
//! rules a table cannot: a player with more than half of all stones wins at
//! once (Oware family), and the third occurrence of a position with the same
//! player to move ends the game with each player taking the stones on his
//! own side (Oware family; Kalah cannot repeat a position).

use std::fmt;

use crate::error::{GameError, Result};
use crate::position::Position;
use crate::rules::{Move, Place, Rules, Successors};

/// One of the two players. South moves first from a start position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first player.
    South,
    /// The second player.
    North,
}

impl Side {
    /// The other player.
    pub fn other(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }

    /// `0` for South, `1` for North: the index into per-player arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `"south"` or `"north"`.
    pub fn name(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::North => "north",
        }
    }

    /// Reads `south`/`north` (or `s`/`n`), any case.
    pub fn from_name(name: &str) -> Result<Side> {
        match name.to_ascii_lowercase().as_str() {
            "south" | "s" => Ok(Side::South),
            "north" | "n" => Ok(Side::North),
            _ => Err(GameError::UnknownSide(crate::echoed(name).into_owned()).into()),
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the final margin of a game looks to one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Positive margin.
    Win,
    /// Zero margin.
    Draw,
    /// Negative margin.
    Loss,
}

impl Outcome {
    /// The outcome of a final margin.
    pub fn of_margin(margin: i32) -> Outcome {
        match margin.signum() {
            1 => Outcome::Win,
            0 => Outcome::Draw,
            _ => Outcome::Loss,
        }
    }

    /// `"win"`, `"draw"` or `"loss"`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The player to move has no legal move; the remaining stones are split
    /// by the rule set's end rule.
    NoMoves,
    /// A player has stored more than half of all stones (Oware family).
    Majority,
    /// The position occurred for the third time with the same player to
    /// move (Oware family); each player took the stones on his own side.
    Repetition,
}

impl EndReason {
    /// A short name: `no-moves`, `majority`, `repetition`.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::NoMoves => "no-moves",
            EndReason::Majority => "majority",
            EndReason::Repetition => "repetition",
        }
    }
}

/// The end of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameEnd {
    /// Why it ended.
    pub reason: EndReason,
    /// Final stores, indexed by [`Side::index`]. After a majority win the
    /// stones still on the board belong to nobody.
    pub stores: [u32; 2],
}

impl GameEnd {
    /// The winner, or `None` for a draw.
    pub fn winner(&self) -> Option<Side> {
        match self.stores[0].cmp(&self.stores[1]) {
            std::cmp::Ordering::Greater => Some(Side::South),
            std::cmp::Ordering::Less => Some(Side::North),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// The final margin for `side`.
    pub fn margin_for(&self, side: Side) -> i32 {
        self.stores[side.index()] as i32 - self.stores[side.other().index()] as i32
    }
}

/// A game in progress: position, player to move, stores and history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameState {
    /// The board seen from the player to move.
    pub position: Position,
    /// Who is to move.
    pub to_move: Side,
    /// Stones in each player's store (captured, or sown into a Kalah
    /// store), indexed by [`Side::index`].
    pub stores: [u32; 2],
    /// Earlier positions of the game with the player who was to move,
    /// oldest first: what the repetition rule looks at.
    pub history: Vec<(Side, Position)>,
}

impl GameState {
    /// `position` with `to_move` to move, empty stores and no history.
    pub fn new(position: Position, to_move: Side) -> GameState {
        GameState {
            position,
            to_move,
            stores: [0, 0],
            history: Vec::new(),
        }
    }

    /// The start position of `rules` with `seeds` in every pit, South to
    /// move.
    pub fn start(rules: &Rules, seeds: u32) -> Result<GameState> {
        Ok(GameState::new(
            Position::start(rules.pits(), seeds)?,
            Side::South,
        ))
    }

    /// Every stone of the game: on the board and in both stores.
    pub fn total_stones(&self) -> u32 {
        self.position.stones() + self.stores[0] + self.stores[1]
    }

    /// The stored-stone margin of the player to move.
    pub fn store_margin(&self) -> i32 {
        self.stores[self.to_move.index()] as i32 - self.stores[self.to_move.other().index()] as i32
    }

    /// How often the current position, with the same player to move, has
    /// occurred in this game, this time included.
    pub fn occurrences(&self) -> usize {
        1 + self
            .history
            .iter()
            .filter(|&&(side, pos)| side == self.to_move && pos == self.position)
            .count()
    }

    /// Whether the game is over, and how it ended.
    pub fn end(&self, rules: &Rules) -> Option<GameEnd> {
        let mover = self.to_move.index();
        let opponent = self.to_move.other().index();
        let mut stores = self.stores;
        let variant = rules.variant();
        if variant.repetition_ends_game() && self.occurrences() >= 3 {
            stores[mover] += self.position.mover_stones();
            stores[opponent] += self.position.opponent_stones();
            return Some(GameEnd {
                reason: EndReason::Repetition,
                stores,
            });
        }
        if variant.majority_ends_game() && stores.iter().any(|&s| 2 * s > self.total_stones()) {
            return Some(GameEnd {
                reason: EndReason::Majority,
                stores,
            });
        }
        if let Successors::Terminal(value) = rules.successors(&self.position) {
            let n = self.position.stones() as i32;
            stores[mover] += ((n + value) / 2) as u32;
            stores[opponent] += ((n - value) / 2) as u32;
            return Some(GameEnd {
                reason: EndReason::NoMoves,
                stores,
            });
        }
        None
    }

    /// The state after the player to move empties `pit`; an error names an
    /// illegal move or a game that is already over.
    pub fn play(&self, rules: &Rules, pit: usize) -> Result<GameState> {
        self.play_move(rules, pit).map(|(next, _)| next)
    }

    /// [`GameState::play`], also telling what the move did on the board:
    /// where each stone fell and what was captured, so that a board can
    /// show the move step by step without knowing the rules.
    pub fn play_traced(&self, rules: &Rules, pit: usize) -> Result<(GameState, Sowing)> {
        let (next, m) = self.play_move(rules, pit)?;
        let path = rules.sowing_path(&self.position, pit);
        let mut sown: Vec<u32> = self.position.cells().iter().map(|&c| c as u32).collect();
        sown[pit] = 0;
        for place in &path {
            if let Place::Pit(i) = *place {
                sown[i] += 1;
            }
        }
        // The board after the move, from the mover's view again.
        let after = if m.extra_turn {
            m.child
        } else {
            m.child.flipped()
        };
        let captured: Vec<(usize, u32)> = sown
            .iter()
            .enumerate()
            .filter(|&(i, &stones)| after.get(i) < stones)
            .map(|(i, &stones)| (i, stones))
            .collect();
        let sowing = Sowing {
            pit,
            path,
            captured,
            gain: m.gain as u32,
            extra_turn: m.extra_turn,
        };
        debug_assert_eq!(sowing.stored() + sowing.captured_stones(), sowing.gain);
        Ok((next, sowing))
    }

    /// Plays a legal move, returning the new state and the move.
    fn play_move(&self, rules: &Rules, pit: usize) -> Result<(GameState, Move)> {
        if self.end(rules).is_some() {
            return Err(GameError::Over.into());
        }
        let m = rules.play(&self.position, pit).ok_or(GameError::Illegal {
            pit,
            position: self.position,
        })?;
        let mut next = self.clone();
        next.history.push((self.to_move, self.position));
        next.stores[self.to_move.index()] += m.gain as u32;
        next.position = m.child;
        if !m.extra_turn {
            next.to_move = self.to_move.other();
        }
        Ok((next, m))
    }
}

/// What one move did on the board, seen from the player who made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sowing {
    /// The pit emptied (`0..P`).
    pub pit: usize,
    /// Where each stone fell, in sowing order.
    pub path: Vec<Place>,
    /// Pits emptied by the capture (mover's view, `0..2P`) with the stones
    /// each held when taken.
    pub captured: Vec<(usize, u32)>,
    /// Stones the move put into the mover's store.
    pub gain: u32,
    /// Kalah: the mover moves again.
    pub extra_turn: bool,
}

impl Sowing {
    /// Stones sown straight into the store (Kalah).
    pub fn stored(&self) -> u32 {
        self.path.iter().filter(|&&p| p == Place::Store).count() as u32
    }

    /// Stones taken by the capture.
    pub fn captured_stones(&self) -> u32 {
        self.captured.iter().map(|&(_, stones)| stones).sum()
    }
}

/// Reads a move: a pit letter (`a`, `b`, …) of the mover's row.
pub fn parse_move(rules: &Rules, text: &str) -> Result<usize> {
    let text = text.trim();
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None)
            if c.is_ascii_lowercase() && ((c as usize - 'a' as usize) < rules.pits()) =>
        {
            Ok(c as usize - 'a' as usize)
        }
        _ => Err(GameError::NotAMove {
            text: crate::echoed(text).into_owned(),
            pits: rules.pits(),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;

    #[test]
    fn a_kalah_extra_turn_keeps_the_mover() {
        let rules = Rules::new(Variant::Kalah, 6).unwrap();
        let state = GameState::start(&rules, 4).unwrap();
        // c (4 seeds) ends in the store.
        let next = state.play(&rules, 2).unwrap();
        assert_eq!(next.to_move, Side::South);
        assert_eq!(next.stores, [1, 0]);
        let next = next.play(&rules, 3).unwrap();
        assert_eq!(next.to_move, Side::North);
        assert_eq!(next.total_stones(), 48);
    }

    #[test]
    fn the_third_occurrence_ends_an_oware_game() {
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let pos = Position::parse(6, "1,0,0,0,0,2/0,0,3,0,0,1").unwrap();
        let mut state = GameState::new(pos, Side::North);
        state.stores = [20, 21];
        let elsewhere = (Side::South, pos.flipped());
        state.history = vec![(Side::North, pos), elsewhere, (Side::North, pos)];
        let end = state.end(&rules).expect("third occurrence");
        assert_eq!(end.reason, EndReason::Repetition);
        // Each player takes his own row: North (to move) 3, South 4.
        assert_eq!(end.stores, [24, 24]);
        assert_eq!(end.winner(), None);
        assert!(state.play(&rules, 0).is_err(), "no move after the end");

        // Twice is not enough.
        state.history.pop();
        assert_eq!(state.end(&rules), None);
        assert!(GameState::new(pos, Side::South)
            .end(&Rules::new(Variant::Kalah, 6).unwrap())
            .is_none());
    }

    #[test]
    fn more_than_half_ends_an_oware_game() {
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let pos = Position::parse(6, "1,0,0,0,0,2/0,0,3,0,0,1").unwrap();
        let mut state = GameState::new(pos, Side::South);
        state.stores = [25, 16];
        let end = state.end(&rules).expect("25 of 48");
        assert_eq!(end.reason, EndReason::Majority);
        assert_eq!(end.winner(), Some(Side::South));
        state.stores = [24, 17];
        assert_eq!(state.end(&rules), None);
    }

    #[test]
    fn a_traced_oware_move_shows_its_path_and_capture() {
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let pos = Position::parse(6, "0,0,0,0,2,3/1,1,2,0,0,4").unwrap();
        let (next, sowing) = GameState::new(pos, Side::South)
            .play_traced(&rules, 5)
            .unwrap();
        let pits = |ps: &[usize]| ps.iter().map(|&i| Place::Pit(i)).collect::<Vec<_>>();
        assert_eq!(sowing.path, pits(&[6, 7, 8]));
        // g 2, h 2, i 3: all three taken, the opponent keeps l.
        assert_eq!(sowing.captured, vec![(6, 2), (7, 2), (8, 3)]);
        assert_eq!((sowing.gain, next.stores), (7, [7, 0]));
        assert_eq!(next.to_move, Side::North);
    }

    #[test]
    fn a_traced_sowing_skips_the_emptied_pit_and_passes_the_kalah_store() {
        let oware = Rules::new(Variant::Oware, 2).unwrap();
        let pos = Position::parse(2, "5,0/0,1").unwrap();
        let (_, sowing) = GameState::new(pos, Side::South)
            .play_traced(&oware, 0)
            .unwrap();
        let [a, b, c, d] = [0, 1, 2, 3].map(Place::Pit);
        assert_eq!(sowing.path, vec![b, c, d, b, c]);
        // The last stone makes c hold 2: captured; b is the mover's own.
        assert_eq!((sowing.captured, sowing.gain), (vec![(2, 2)], 2));

        let kalah = Rules::new(Variant::Kalah, 2).unwrap();
        let pos = Position::parse(2, "0,4/1,0").unwrap();
        let (next, sowing) = GameState::new(pos, Side::South)
            .play_traced(&kalah, 1)
            .unwrap();
        assert_eq!(sowing.path, vec![Place::Store, c, d, a]);
        // The last seed lands in the empty pit a, opposite d (1 seed).
        assert_eq!(sowing.captured, vec![(0, 1), (3, 1)]);
        assert_eq!((sowing.gain, next.stores), (3, [3, 0]));
    }

    #[test]
    fn moves_are_pit_letters() {
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        assert_eq!(parse_move(&rules, " c ").unwrap(), 2);
        assert!(parse_move(&rules, "g").is_err());
        assert!(parse_move(&rules, "ab").is_err());
        assert!(parse_move(&rules, "").is_err());
        assert!(parse_move(&rules, "é").is_err());
    }
}
