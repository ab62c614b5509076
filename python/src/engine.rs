//! [`PyEngine`]: the perfect player above the tables: every move's value,
//! the best moves and a perfect line for a game, searched above the
//! tables' range and read from them within it.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use mancala_core::{EndReason, GameState, Side};
use mancala_engine::{Analysis, Engine, Limits, LineEnd, Source};

use crate::errors::{core_error, probe_error};
use crate::game::PyGame;
use crate::rules::position_of;
use crate::tablebase::{PyTablebase, Tables};

/// The perfect player, reading `tablebase` (even tables) where they cover
/// a position and searching above them. `nodes` and `time` (seconds)
/// bound each call: a search cut short answers with estimates, marked
/// inexact. Calls release the GIL.
#[pyclass(name = "Engine", module = "mancala_tb", frozen)]
pub struct PyEngine {
    tables: Arc<Tables>,
    rules: mancala_core::Rules,
    limits: Limits,
    tt_bytes: usize,
}

#[pymethods]
impl PyEngine {
    #[new]
    #[pyo3(signature = (tablebase, nodes = None, time = None, tt_mib = 64))]
    fn new(
        tablebase: &PyTablebase,
        nodes: Option<u64>,
        time: Option<f64>,
        tt_mib: usize,
    ) -> PyResult<Self> {
        let tables = tablebase.tables()?;
        if tables.even().is_err() {
            return Err(PyValueError::new_err(
                "the engine reads even-value tables (cycles=\"even\")",
            ));
        }
        let time = time
            .map(|t| {
                Duration::try_from_secs_f64(t)
                    .map_err(|e| PyValueError::new_err(format!("time={t}: {e}")))
            })
            .transpose()?;
        Ok(PyEngine {
            rules: tablebase.rules_of(),
            tables,
            limits: Limits { nodes, time },
            tt_bytes: tt_mib << 20,
        })
    }

    /// Every move's value, the best moves and a perfect line for `game` (a
    /// Game, or a position with South to move).
    fn analyze(&self, py: Python<'_>, game: &Bound<'_, PyAny>) -> PyResult<PyAnalysis> {
        let state = self.state_of(game)?;
        let analysis = py.detach(|| self.engine(|engine| engine.analyze(&state)))?;
        Ok(PyAnalysis::from(&analysis))
    }

    /// One best move (the lowest pit of the best), as a pit number.
    fn best_move(&self, py: Python<'_>, game: &Bound<'_, PyAny>) -> PyResult<u8> {
        let state = self.state_of(game)?;
        if state.end(&self.rules).is_some() {
            return Err(PyValueError::new_err("the game is over: there is no move"));
        }
        let analysis = py.detach(|| self.engine(|engine| engine.analyze_best(&state)))?;
        analysis
            .best
            .first()
            .copied()
            .ok_or_else(|| PyValueError::new_err("the game is over: there is no move"))
    }
}

impl PyEngine {
    /// Runs `call` on a fresh engine over the tables.
    fn engine(
        &self,
        call: impl FnOnce(&mut Engine<'_>) -> mancala_engine::Result<Analysis>,
    ) -> PyResult<Analysis> {
        let tb = self.tables.even()?;
        let mut engine = Engine::with_tables(tb)
            .with_limits(self.limits)
            .with_tt_bytes(self.tt_bytes);
        if let Some(depths) = self.tables.depth_tables() {
            engine = engine.with_depths(depths);
        }
        call(&mut engine).map_err(engine_error)
    }

    fn state_of(&self, game: &Bound<'_, PyAny>) -> PyResult<GameState> {
        if let Ok(game) = game.extract::<PyRef<'_, PyGame>>() {
            if game.rules != self.rules {
                return Err(PyValueError::new_err(format!(
                    "the game is under the {} rules, the engine's tables {}",
                    game.rules.id(),
                    self.rules.id()
                )));
            }
            return Ok(game.state.clone());
        }
        Ok(GameState::new(position_of(game, &self.rules)?, Side::South))
    }
}

fn engine_error(error: mancala_engine::Error) -> PyErr {
    match error {
        mancala_engine::Error::Rules(e) => core_error(e),
        mancala_engine::Error::Tables(e) => probe_error(e),
        e @ mancala_engine::Error::OutOfMemory { .. } => {
            pyo3::exceptions::PyMemoryError::new_err(e.to_string())
        }
    }
}

/// The engine's answer for a game.
#[pyclass(name = "Analysis", module = "mancala_tb", frozen, get_all)]
pub struct PyAnalysis {
    /// "south" or "north": who is to move.
    to_move: &'static str,
    /// The value for the player to move (the best move's value).
    value: i32,
    /// Whether every number is exact (not a search cut short).
    exact: bool,
    /// The game's final margin for the player to move under perfect play.
    final_margin: i32,
    /// "win", "draw" or "loss" for the player to move.
    outcome: &'static str,
    /// Every legal move, in pit order.
    moves: Vec<PyMoveAnalysis>,
    /// The best moves, as pit numbers.
    best: Vec<u32>,
    /// A perfect game from here: `(player, pit)` per ply.
    pv: Vec<(&'static str, u8)>,
    /// How the line stops: "game-over", "cycle" or "truncated".
    pv_end: &'static str,
    /// Why the game ends at the line's end, if it does.
    pv_end_reason: Option<&'static str>,
    /// Whether playing the first best move is proven to realize the value
    /// (ordered by depth from depth tables or a search within the tables,
    /// a value of 0, or rules that cannot cycle).
    converts: bool,
    /// "tables" (lookups only) or "search".
    source: &'static str,
    /// Nodes searched.
    nodes: u64,
    /// Seconds taken.
    elapsed: f64,
}

/// One move of an analysis.
#[pyclass(name = "MoveAnalysis", module = "mancala_tb", frozen, get_all)]
#[derive(Clone)]
pub struct PyMoveAnalysis {
    /// The pit (0 is `a`).
    pit: u8,
    /// Its value for the player to move.
    value: i32,
    /// Whether the value is exact.
    exact: bool,
    /// The game's final margin if it is played, then perfect play.
    final_margin: i32,
    /// "win", "draw" or "loss".
    outcome: &'static str,
    /// Why the move ends the game at once, if it does.
    ends_game: Option<&'static str>,
}

impl From<&Analysis> for PyAnalysis {
    fn from(a: &Analysis) -> Self {
        let moves = a.moves.iter().map(|m| PyMoveAnalysis {
            pit: m.pit,
            value: m.value,
            exact: m.exact,
            final_margin: m.final_margin,
            outcome: m.outcome.name(),
            ends_game: m.ends_game.map(EndReason::name),
        });
        PyAnalysis {
            to_move: a.to_move.name(),
            value: a.value,
            exact: a.exact,
            final_margin: a.final_margin,
            outcome: a.outcome.name(),
            moves: moves.collect(),
            best: a.best.iter().map(|&p| p as u32).collect(),
            pv: a.pv.iter().map(|&(side, pit)| (side.name(), pit)).collect(),
            pv_end: a.pv_end.name(),
            pv_end_reason: match a.pv_end {
                LineEnd::GameOver(reason) => Some(reason.name()),
                _ => None,
            },
            converts: a.converts,
            source: match a.source {
                Source::Tables => "tables",
                Source::Search => "search",
            },
            nodes: a.nodes,
            elapsed: a.elapsed.as_secs_f64(),
        }
    }
}

#[pymethods]
impl PyAnalysis {
    fn __repr__(&self) -> String {
        format!(
            "<Analysis value={:+} best={:?} exact={} {} nodes>",
            self.value,
            self.best,
            python_bool(self.exact),
            self.nodes
        )
    }
}

#[pymethods]
impl PyMoveAnalysis {
    fn __repr__(&self) -> String {
        format!(
            "<MoveAnalysis pit={} value={:+} exact={}>",
            self.pit,
            self.value,
            python_bool(self.exact)
        )
    }
}

/// `True` or `False`, as Python writes them.
pub(crate) fn python_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
