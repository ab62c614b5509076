//! [`PyGame`]: a whole game by the rules the tables obey: stores, the
//! history the repetition rule reads, and the ends of the Oware family
//! (majority, third repetition) and of every rule set (no moves).

use pyo3::prelude::*;

use mancala_core::{GameEnd, GameState, Side};

use crate::errors::core_error;
use crate::rules::{legal_pits, pit_of, position_of, rules_arg, PyPosition, PyRules};

/// A game in progress: the position, who is to move ("south" moves first),
/// the stores and the history. `play` changes it in place; `copy` keeps
/// one.
#[pyclass(name = "Game", module = "mancala_tb")]
#[derive(Clone)]
pub struct PyGame {
    pub(crate) rules: mancala_core::Rules,
    pub(crate) state: GameState,
}

#[pymethods]
impl PyGame {
    /// A game under `rules` (a `Rules`, or a variant name with 6 pits;
    /// default: Oware) from the start position with `seeds` in every pit,
    /// or from `position` with `to_move` to move, empty stores and no
    /// history.
    #[new]
    #[pyo3(signature = (rules = None, seeds = 4, position = None, to_move = "south"))]
    fn new(
        rules: Option<&Bound<'_, PyAny>>,
        seeds: u32,
        position: Option<&Bound<'_, PyAny>>,
        to_move: &str,
    ) -> PyResult<Self> {
        let rules = rules_arg(rules, 6, true)?;
        let side = Side::from_name(to_move).map_err(core_error)?;
        let state = match position {
            Some(board) => GameState::new(position_of(board, &rules)?, side),
            None => GameState::start(&rules, seeds).map_err(core_error)?,
        };
        Ok(PyGame { rules, state })
    }

    /// The rule set.
    #[getter]
    fn rules(&self) -> PyRules {
        PyRules { rules: self.rules }
    }

    /// The board, seen from the player to move.
    #[getter]
    fn position(&self) -> PyPosition {
        PyPosition::new_unchecked(self.state.position, self.rules)
    }

    /// "south" or "north".
    #[getter]
    fn to_move(&self) -> &'static str {
        self.state.to_move.name()
    }

    /// Stones in the stores: `(south, north)`.
    #[getter]
    fn stores(&self) -> (u32, u32) {
        (self.state.stores[0], self.state.stores[1])
    }

    /// Every position before this one, oldest first, with who was to move.
    #[getter]
    fn history(&self) -> Vec<(&'static str, PyPosition)> {
        let rules = self.rules;
        let history = self.state.history.iter();
        history
            .map(|&(side, pos)| (side.name(), PyPosition::new_unchecked(pos, rules)))
            .collect()
    }

    /// The stored-stone margin of the player to move.
    #[getter]
    fn store_margin(&self) -> i32 {
        self.state.store_margin()
    }

    /// Stones on the board and in both stores.
    #[getter]
    fn total_stones(&self) -> u32 {
        self.state.total_stones()
    }

    /// How often the current position, with this player to move, has
    /// occurred (this time included).
    #[getter]
    fn occurrences(&self) -> usize {
        self.state.occurrences()
    }

    /// The legal moves as pit numbers; empty once the game is over.
    fn legal_moves(&self) -> Vec<u32> {
        if self.state.end(&self.rules).is_some() {
            return Vec::new();
        }
        legal_pits(&self.rules, &self.state.position)
    }

    /// Whether the game is over.
    fn is_over(&self) -> bool {
        self.state.end(&self.rules).is_some()
    }

    /// How the game ended, or None while it goes on.
    fn end(&self) -> Option<PyGameEnd> {
        self.state.end(&self.rules).map(PyGameEnd::from)
    }

    /// Plays `move` (a pit number or letter) for the player to move;
    /// ValueError if it is illegal or the game is over.
    fn play(&mut self, r#move: &Bound<'_, PyAny>) -> PyResult<()> {
        let pit = pit_of(r#move, &self.rules)?;
        self.state = self.state.play(&self.rules, pit).map_err(core_error)?;
        Ok(())
    }

    /// An independent copy of the game.
    fn copy(&self) -> PyGame {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<Game {} {} to move, stores {:?}, {} plies>",
            self.state.position,
            self.to_move(),
            self.stores(),
            self.state.history.len()
        )
    }
}

/// How a game ended.
#[pyclass(name = "GameEnd", module = "mancala_tb", frozen, get_all)]
pub struct PyGameEnd {
    /// "no-moves", "majority" or "repetition".
    reason: &'static str,
    /// The final stores: `(south, north)`.
    stores: (u32, u32),
    /// "south", "north", or None for a draw.
    winner: Option<&'static str>,
}

impl From<GameEnd> for PyGameEnd {
    fn from(end: GameEnd) -> Self {
        PyGameEnd {
            reason: end.reason.name(),
            stores: (end.stores[0], end.stores[1]),
            winner: end.winner().map(Side::name),
        }
    }
}

#[pymethods]
impl PyGameEnd {
    /// The final margin for `side` ("south" or "north").
    fn margin_for(&self, side: &str) -> PyResult<i32> {
        let side = Side::from_name(side).map_err(core_error)?;
        let (south, north) = (self.stores.0 as i32, self.stores.1 as i32);
        Ok(match side {
            Side::South => south - north,
            Side::North => north - south,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "GameEnd(reason={:?}, stores={:?}, winner={})",
            self.reason,
            self.stores,
            self.winner.map_or("None".into(), |w| format!("{w:?}"))
        )
    }
}
