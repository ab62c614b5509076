//! [`PyTablebase`]: the tables of one rule set and kind, probed one
//! position at a time or in numpy batches that release the GIL and run on
//! every core.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use mancala_core::{Bounds, Cycles, Position, Rules, Successors};
use mancala_probe::{conversion_rank, Depth, Even, Forced, Tablebase};

use crate::batch::with_positions;
use crate::errors::{probe_error, MissingTableError};
use crate::rules::{position_of, rules_arg, PyRules};

/// What `move_values_many` puts where a pit is not a legal move.
pub const ILLEGAL: i8 = i8::MIN;

/// The open tables of either kind, with their depth tables if any level
/// has one.
pub(crate) enum Tables {
    Even(Tablebase<Even>, Option<Box<Tablebase<Depth>>>),
    Forced(Tablebase<Forced>, Option<Box<Tablebase<Depth<Forced>>>>),
}

/// Endgame tables of one rule set: exact values (even tables) or forced
/// bounds. Open with `open_tablebase`; usable as a context manager. One
/// instance serves every thread.
#[pyclass(name = "Tablebase", module = "mancala_tb", frozen)]
pub struct PyTablebase {
    rules: Rules,
    cycles: Cycles,
    root: PathBuf,
    /// `None` once closed.
    tables: RwLock<Option<Arc<Tables>>>,
}

impl PyTablebase {
    /// The open tables, or an error once closed.
    pub(crate) fn tables(&self) -> PyResult<Arc<Tables>> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        tables
            .clone()
            .ok_or_else(|| PyValueError::new_err("the tablebase is closed"))
    }

    fn position(&self, board: &Bound<'_, PyAny>) -> PyResult<Position> {
        position_of(board, &self.rules)
    }

    pub(crate) fn rules_of(&self) -> Rules {
        self.rules
    }
}

impl Tables {
    /// The even tables, or a TypeError naming what forced tables answer.
    pub(crate) fn even(&self) -> PyResult<&Tablebase<Even>> {
        match self {
            Tables::Even(tb, _) => Ok(tb),
            Tables::Forced(..) => Err(PyTypeError::new_err(
                "these are forced-bound tables (cycles=\"forced\"): ask bounds() or verdict()",
            )),
        }
    }

    /// The depth tables, if there are any.
    pub(crate) fn depth_tables(&self) -> Option<&Tablebase<Depth>> {
        match self {
            Tables::Even(_, Some(depths)) => Some(depths),
            _ => None,
        }
    }

    /// The depth to conversion of `pos` from the depth tables: of its
    /// value (even tables) or of its mover's bound (forced tables); an
    /// error where there are none.
    fn depth(&self, pos: &Position) -> PyResult<Option<u16>> {
        match self {
            Tables::Even(values, Some(depths)) => depths.depth(values, pos),
            Tables::Forced(bounds, Some(depths)) => depths.depth(bounds, pos),
            Tables::Even(_, None) | Tables::Forced(_, None) => {
                return Err(MissingTableError::new_err(
                    "no depth tables here: build them with build(..., depth=True) or `mancala-tb build --depth`",
                ))
            }
        }
        .map_err(probe_error)
    }

    /// Whether depth tables are open beside the tables.
    fn has_depths(&self) -> bool {
        matches!(self, Tables::Even(_, Some(_)) | Tables::Forced(_, Some(_)))
    }

    /// The forced tables, or a TypeError naming what even tables answer.
    fn forced(&self) -> PyResult<&Tablebase<Forced>> {
        match self {
            Tables::Forced(tb, _) => Ok(tb),
            Tables::Even(..) => Err(PyTypeError::new_err(
                "these are even-value tables: ask value() or move_values(); bounds need cycles=\"forced\"",
            )),
        }
    }
}

#[pymethods]
impl PyTablebase {
    /// The rule set.
    #[getter]
    fn rules(&self) -> PyRules {
        PyRules { rules: self.rules }
    }

    /// "even" (exact values) or "forced" (forced bounds).
    #[getter]
    fn cycles(&self) -> &'static str {
        self.cycles.name()
    }

    /// The table directory the tables were opened from.
    #[getter]
    fn directory(&self) -> PathBuf {
        self.root.clone()
    }

    /// The highest level answered, or None if there are no tables.
    #[getter]
    fn max_level(&self) -> PyResult<Option<u32>> {
        Ok(match &*self.tables()? {
            Tables::Even(tb, _) => tb.max_level(),
            Tables::Forced(tb, _) => tb.max_level(),
        })
    }

    /// The levels answered, ascending: those present with every level
    /// they need (a set built with `--top-only` skips levels its top
    /// level never reaches).
    #[getter]
    fn levels(&self) -> PyResult<Vec<u32>> {
        Ok(match &*self.tables()? {
            Tables::Even(tb, _) => tb.levels().to_vec(),
            Tables::Forced(tb, _) => tb.levels().to_vec(),
        })
    }

    /// The exact value of `position` for the player to move: the stones
    /// he ends with ahead of the opponent, of those on the board, under
    /// best play by both. Raises MissingTableError if its level is not
    /// there.
    fn value(&self, position: &Bound<'_, PyAny>) -> PyResult<i32> {
        let pos = self.position(position)?;
        self.tables()?.even()?.value(&pos).map_err(probe_error)
    }

    /// `value(position)`, or `default` if its tables are missing.
    #[pyo3(signature = (position, default = None))]
    fn get(
        &self,
        position: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let py = position.py();
        match self.value(position) {
            Ok(value) => Ok(Some(value.into_pyobject(py)?.into_any().unbind())),
            Err(e) if e.is_instance_of::<MissingTableError>(py) => Ok(default),
            Err(e) => Err(e),
        }
    }

    /// The value of every legal move, in pit order: a list of
    /// `(pit, value)` (`0` is pit `a`); empty when the game is over.
    fn move_values(&self, position: &Bound<'_, PyAny>) -> PyResult<Vec<(u8, i32)>> {
        let pos = self.position(position)?;
        let tables = self.tables()?;
        let moves = tables.even()?.move_values(&pos).map_err(probe_error)?;
        Ok(moves.iter().map(|m| (m.pit, m.value)).collect())
    }

    /// Whether depth tables (`build(..., depth=True)`) are there.
    #[getter]
    fn has_depths(&self) -> PyResult<bool> {
        Ok(self.tables()?.has_depths())
    }

    /// The depth to conversion of `position`: the plies until the side
    /// ahead realizes the value by a capture, when it hurries and the
    /// other side stalls, both keeping the value (`docs/RULES.md`); None
    /// where the value is 0. Forced tables: the plies within which the
    /// mover realizes his bound, whatever the opponent plays; None where
    /// it is 0. Raises MissingTableError without a depth table for its
    /// level.
    fn depth(&self, position: &Bound<'_, PyAny>) -> PyResult<Option<u16>> {
        let pos = self.position(position)?;
        self.tables()?.depth(&pos)
    }

    /// The depths of many positions: `(N, 2P)` integers in, `int16` of
    /// shape `(N,)` out, -1 where a position has no depth. Runs on every
    /// core without the GIL.
    fn depths<'py>(
        &self,
        py: Python<'py>,
        positions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<i16>>> {
        let tables = self.tables()?;
        if !tables.has_depths() {
            // The error a single probe gives.
            tables.depth(&Position::empty(self.rules.pits()))?;
        }
        let depths = with_positions(positions, self.rules.pits(), |positions| {
            use rayon::prelude::*;
            positions
                .par_iter()
                .map(|pos| Ok(tables.depth(pos)?.map_or(-1, |d| d as i16)))
                .collect::<PyResult<Vec<i16>>>()
        })?;
        Ok(depths.into_pyarray(py))
    }

    /// The legal move that realizes the value: among the moves that keep
    /// it, with depth tables the side ahead's nearest conversion (the
    /// other side's farthest), else the first. Forced tables: among the
    /// moves that keep the mover's bound, with depth tables the nearest
    /// conversion of it, then the one that leaves the opponent sure of
    /// least. None when the game is over.
    fn best_move(&self, position: &Bound<'_, PyAny>) -> PyResult<Option<u8>> {
        let pos = self.position(position)?;
        let tables = self.tables()?;
        if let Tables::Forced(tb, depths) = &*tables {
            return forced_best_move(tb, depths.as_deref(), &pos).map_err(probe_error);
        }
        let tb = tables.even()?;
        let value = tb.value(&pos).map_err(probe_error)?;
        let depths = tables
            .depth_tables()
            .filter(|d| value != 0 && d.has_level(pos.stones()));
        let Successors::Moves(moves) = tb.rules().successors(&pos) else {
            return Ok(None);
        };
        let mut best: Option<(i64, u8)> = None;
        for m in moves.iter() {
            let child = tb.value(&m.child).map_err(probe_error)?;
            if m.value_given_child(child) != value {
                continue;
            }
            let rank = match depths {
                Some(depths) => {
                    conversion_rank(value, depths.move_depth(tb, m).map_err(probe_error)?)
                }
                None => 0,
            };
            if best.is_none_or(|(r, _)| rank < r) {
                best = Some((rank, m.pit));
            }
        }
        Ok(best.map(|(_, pit)| pit))
    }

    /// Forced tables: `(mover, opponent)`, the stones of the board each
    /// side can be sure to win whatever the history.
    fn bounds(&self, position: &Bound<'_, PyAny>) -> PyResult<(u8, u8)> {
        let pos = self.position(position)?;
        let tables = self.tables()?;
        let bounds = tables.forced()?.bounds(&pos).map_err(probe_error)?;
        Ok((bounds.mover, bounds.opponent))
    }

    /// Forced tables: "win", "loss", "draw" or "undecided" for the player
    /// to move, with `captured = (by the mover, by the opponent)` stones
    /// already in the stores.
    #[pyo3(signature = (position, captured = (0, 0)))]
    fn verdict(&self, position: &Bound<'_, PyAny>, captured: (u32, u32)) -> PyResult<&'static str> {
        let pos = self.position(position)?;
        let tables = self.tables()?;
        let bounds = tables.forced()?.bounds(&pos).map_err(probe_error)?;
        Ok(bounds.verdict(pos.stones(), captured).name())
    }

    /// The values of many positions: `positions` is an integer numpy array
    /// of shape `(N, 2P)`, one position a row (mover's row first); returns
    /// `int8` values of shape `(N,)`. Runs on every core without the GIL.
    fn values<'py>(
        &self,
        py: Python<'py>,
        positions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        let tables = self.tables()?;
        let tb = tables.even()?;
        let values = with_positions(positions, self.rules.pits(), |positions| {
            let values = tb.values(positions).map_err(probe_error)?;
            Ok(values.into_iter().map(|v| v as i8).collect::<Vec<_>>())
        })?;
        Ok(values.into_pyarray(py))
    }

    /// The value of every move of many positions: `(N, 2P)` integers in,
    /// `int8` of shape `(N, P)` out, column `i` the value of pit `i`, and
    /// `ILLEGAL` (-128) where that pit is not a legal move.
    fn move_values_many<'py>(
        &self,
        py: Python<'py>,
        positions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let tables = self.tables()?;
        let tb = tables.even()?;
        let pits = self.rules.pits();
        let table = with_positions(positions, pits, |positions| {
            let moves = tb.move_values_many(positions).map_err(probe_error)?;
            let mut table = Array2::from_elem((positions.len(), pits), ILLEGAL);
            for (mut row, moves) in table.rows_mut().into_iter().zip(&moves) {
                for m in moves {
                    row[m.pit as usize] = m.value as i8;
                }
            }
            Ok(table)
        })?;
        Ok(table.into_pyarray(py))
    }

    /// Lets go of the table files; the tablebase answers nothing after.
    fn close(&self) {
        *self.tables.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.close();
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase({:?}, rules={}, cycles={:?})",
            self.root.display().to_string(),
            self.rules().__repr__(),
            self.cycles()
        )
    }
}

/// Opens the tables of a rule set under `directory` (the directory given
/// to `build` or `mancala-tb build --dir`; the files are in its
/// subdirectory named by the rule set). `rules` is a variant name or a
/// `Rules`; `pits` and `empty_capture` apply to a name. `cycles` is
/// "even" (exact values) or "forced" (forced bounds). Up to `cache_mib`
/// MiB of decoded blocks are kept for single probes.
#[pyfunction]
#[pyo3(signature = (directory, rules = None, pits = 6, empty_capture = true, cycles = "even", cache_mib = 256))]
pub fn open_tablebase(
    directory: PathBuf,
    rules: Option<&Bound<'_, PyAny>>,
    pits: usize,
    empty_capture: bool,
    cycles: &str,
    cache_mib: usize,
) -> PyResult<PyTablebase> {
    let rules = rules_arg(rules, pits, empty_capture)?;
    let cycles = Cycles::from_name(cycles).map_err(crate::errors::core_error)?;
    // Shifted, a huge count would wrap round to a small cache.
    let cache = cache_mib.checked_mul(1 << 20).ok_or_else(|| {
        PyValueError::new_err(format!(
            "cache_mib={cache_mib} is more than any machine has"
        ))
    })?;
    let tables = match cycles {
        Cycles::Even => {
            let depths = Tablebase::<Depth>::open_with_cache(&directory, rules, cache)
                .ok()
                .filter(|tb| !tb.levels().is_empty())
                .map(Box::new);
            let tb = Tablebase::open_with_cache(&directory, rules, cache).map_err(probe_error)?;
            Tables::Even(tb, depths)
        }
        Cycles::Forced => {
            let depths = Tablebase::<Depth<Forced>>::open_with_cache(&directory, rules, cache)
                .ok()
                .filter(|tb| !tb.levels().is_empty())
                .map(Box::new);
            let tb = Tablebase::open_with_cache(&directory, rules, cache).map_err(probe_error)?;
            Tables::Forced(tb, depths)
        }
    };
    Ok(PyTablebase {
        rules,
        cycles,
        root: directory,
        tables: RwLock::new(Some(Arc::new(tables))),
    })
}

/// [`PyTablebase::best_move`] of forced tables `tb` with their depth
/// tables `depths`, if any.
fn forced_best_move(
    tb: &Tablebase<Forced>,
    depths: Option<&Tablebase<Depth<Forced>>>,
    pos: &Position,
) -> mancala_probe::Result<Option<u8>> {
    let bounds = tb.bounds(pos)?;
    let depths = depths.filter(|d| bounds.mover > 0 && d.has_level(pos.stones()));
    let Successors::Moves(moves) = tb.rules().successors(pos) else {
        return Ok(None);
    };
    let mut best: Option<((i64, u8), u8)> = None;
    for m in moves.iter() {
        let after = Bounds::after_move(m, tb.bounds(&m.child)?);
        if after.mover != bounds.mover {
            continue;
        }
        let rank = match depths {
            Some(depths) => conversion_rank(1, depths.move_depth(tb, m)?),
            None => 0,
        };
        let rank = (rank, after.opponent);
        if best.is_none_or(|(r, _)| rank < r) {
            best = Some((rank, m.pit));
        }
    }
    Ok(best.map(|(_, pit)| pit))
}
