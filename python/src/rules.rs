//! The rules without tables: [`PyRules`], [`PyPosition`] and the
//! [`PyMove`] that playing a pit makes, with the same move generator the
//! tables were built by.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use mancala_core::{parse_move, pit_letter, Position, Rules, Successors, Variant};

use crate::errors::{core_error, NotationError};

/// A rule set: the variant, the pits per side and Kalah's empty-capture
/// option.
#[pyclass(name = "Rules", module = "mancala_tb", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyRules {
    pub(crate) rules: Rules,
}

#[pymethods]
impl PyRules {
    /// `Rules("oware")`, `Rules("kalah", pits=4, empty_capture=False)`.
    /// Variants: oware, awari, wari, kalah.
    #[new]
    #[pyo3(signature = (variant = "oware", pits = 6, empty_capture = true))]
    fn new(variant: &str, pits: usize, empty_capture: bool) -> PyResult<Self> {
        let variant = Variant::from_name(variant).map_err(core_error)?;
        let rules = Rules::new(variant, pits).map_err(core_error)?;
        Ok(PyRules {
            rules: rules.with_empty_capture(empty_capture),
        })
    }

    /// The rule set named by its id, as table directories are named:
    /// `oware-6`, `kalah-4-noempty`.
    #[staticmethod]
    fn from_id(id: &str) -> PyResult<Self> {
        Ok(PyRules {
            rules: Rules::from_id(id).map_err(core_error)?,
        })
    }

    /// The variant's name: oware, awari, wari or kalah.
    #[getter]
    fn variant(&self) -> &'static str {
        self.rules.variant().name()
    }

    /// Pits per side.
    #[getter]
    fn pits(&self) -> usize {
        self.rules.pits()
    }

    /// Kalah's empty-capture option (always True for other variants).
    #[getter]
    fn empty_capture(&self) -> bool {
        self.rules.empty_capture()
    }

    /// Whether play can go round in circles within a level (the Oware
    /// family; not Kalah).
    #[getter]
    fn can_cycle(&self) -> bool {
        self.rules.variant().can_cycle()
    }

    /// The id naming the rule set's table directory: `oware-6`.
    #[getter]
    fn id(&self) -> String {
        self.rules.id()
    }

    /// The start position with `seeds` in every pit.
    #[pyo3(signature = (seeds = 4))]
    fn start(&self, seeds: u32) -> PyResult<PyPosition> {
        let position = Position::start(self.rules.pits(), seeds).map_err(core_error)?;
        Ok(PyPosition::new_unchecked(position, self.rules))
    }

    pub(crate) fn __repr__(&self) -> String {
        let mut text = format!("Rules({:?}, pits={}", self.variant(), self.pits());
        if !self.rules.empty_capture() {
            text.push_str(", empty_capture=False");
        }
        text.push(')');
        text
    }
}

/// A position seen from the player to move: the mover's pits `a`, `b`, …
/// first, then the opponent's, in sowing order, under a rule set.
#[pyclass(name = "Position", module = "mancala_tb", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyPosition {
    pub(crate) position: Position,
    pub(crate) rules: Rules,
}

impl PyPosition {
    pub(crate) fn new_unchecked(position: Position, rules: Rules) -> Self {
        PyPosition { position, rules }
    }
}

#[pymethods]
impl PyPosition {
    /// `Position("4,4,4,4,4,4/4,4,4,4,4,4")`, or a sequence of the `2P`
    /// counts, under `rules`: a `Rules`, or a variant name with 6 pits
    /// (default: Oware). Raises NotationError if it is not a position of
    /// the rule set.
    #[new]
    #[pyo3(signature = (board, rules = None))]
    fn new(board: &Bound<'_, PyAny>, rules: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let rules = rules_arg(rules, 6, true)?;
        Ok(PyPosition {
            position: position_of(board, &rules)?,
            rules,
        })
    }

    /// The rule set.
    #[getter]
    fn rules(&self) -> PyRules {
        PyRules { rules: self.rules }
    }

    /// Pits per side.
    #[getter]
    fn pits(&self) -> usize {
        self.position.pits()
    }

    /// The `2P` counts, mover's row first.
    #[getter]
    fn cells(&self) -> Vec<u32> {
        self.position.cells().iter().map(|&c| c as u32).collect()
    }

    /// Stones on the board: the position's level.
    #[getter]
    fn stones(&self) -> u32 {
        self.position.stones()
    }

    /// Stones in the mover's row.
    #[getter]
    fn mover_stones(&self) -> u32 {
        self.position.mover_stones()
    }

    /// Stones in the opponent's row.
    #[getter]
    fn opponent_stones(&self) -> u32 {
        self.position.opponent_stones()
    }

    /// The notation: `4,4,4,4,4,4/4,4,4,4,4,4`.
    #[getter]
    fn notation(&self) -> String {
        self.position.to_string()
    }

    /// The legal moves, as pit numbers (`0` is pit `a`), in pit order;
    /// empty when the game is over.
    fn legal_moves(&self) -> Vec<u32> {
        legal_pits(&self.rules, &self.position)
    }

    /// Every legal move with what it does, in pit order.
    fn moves(&self) -> Vec<PyMove> {
        let mut moves = Vec::new();
        self.rules
            .for_each_move(&self.position, |m| moves.push(PyMove::of(m, self.rules)));
        moves
    }

    /// Plays `move` (a pit number, `0` = `a`, or its letter): the Move,
    /// with the child position (seen from whoever moves next), the stones
    /// stored and whether the mover moves again. Raises ValueError if the
    /// move is not legal.
    #[pyo3(name = "play")]
    fn play_move(&self, r#move: &Bound<'_, PyAny>) -> PyResult<PyMove> {
        let pit = pit_of(r#move, &self.rules)?;
        self.rules
            .play(&self.position, pit)
            .map(|m| PyMove::of(&m, self.rules))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{} is not a legal move in {}",
                    pit_letter(pit),
                    self.position
                ))
            })
    }

    /// Whether the game is over: the mover has no legal move.
    fn is_terminal(&self) -> bool {
        matches!(
            self.rules.successors(&self.position),
            Successors::Terminal(_)
        )
    }

    /// The value of a terminal position for the mover (the remaining
    /// stones split as the rule set says), or None if there are moves.
    fn terminal_value(&self) -> Option<i32> {
        match self.rules.successors(&self.position) {
            Successors::Terminal(value) => Some(value),
            Successors::Moves(_) => None,
        }
    }

    /// The same board seen from the other player.
    fn flipped(&self) -> PyPosition {
        PyPosition::new_unchecked(self.position.flipped(), self.rules)
    }

    /// A picture of the board, the opponent's row on top.
    fn picture(&self) -> String {
        self.position.picture()
    }

    fn __str__(&self) -> String {
        self.notation()
    }

    fn __repr__(&self) -> String {
        format!(
            "Position({:?}, rules={})",
            self.notation(),
            self.rules().__repr__()
        )
    }

    fn __len__(&self) -> usize {
        2 * self.position.pits()
    }
}

/// One legal move and what it does.
#[pyclass(name = "Move", module = "mancala_tb", frozen, get_all)]
#[derive(Clone)]
pub struct PyMove {
    /// The pit emptied (`0` = `a`).
    pit: u8,
    /// Stones the move put into the mover's store.
    gain: u8,
    /// Kalah: the last seed fell into the store and the mover moves again.
    extra_turn: bool,
    /// The next position, seen from whoever moves next.
    child: PyPosition,
}

impl PyMove {
    fn of(m: &mancala_core::Move, rules: Rules) -> PyMove {
        PyMove {
            pit: m.pit,
            gain: m.gain,
            extra_turn: m.extra_turn,
            child: PyPosition::new_unchecked(m.child, rules),
        }
    }
}

#[pymethods]
impl PyMove {
    /// The pit's letter: `a` for pit 0.
    #[getter]
    fn letter(&self) -> String {
        pit_letter(self.pit as usize).to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Move({:?}, gain={}, extra_turn={}, child={:?})",
            self.letter(),
            self.gain,
            crate::engine::python_bool(self.extra_turn),
            self.child.notation()
        )
    }
}

/// The position `board` stands for under `rules`: a [`PyPosition`] (of
/// those rules), notation, or a sequence of counts.
pub(crate) fn position_of(board: &Bound<'_, PyAny>, rules: &Rules) -> PyResult<Position> {
    if let Ok(given) = board.extract::<PyRef<'_, PyPosition>>() {
        if given.rules != *rules {
            return Err(PyValueError::new_err(format!(
                "the position is under the {} rules, not {}",
                given.rules.id(),
                rules.id()
            )));
        }
        return Ok(given.position);
    }
    if let Ok(text) = board.cast::<PyString>() {
        return Position::parse(rules.pits(), &text.to_cow()?).map_err(core_error);
    }
    match board.extract::<Vec<i64>>() {
        Ok(counts) => counts_to_position(rules.pits(), &counts),
        Err(_) => Err(NotationError::new_err(format!(
            "a position is notation, a sequence of {} counts or a Position, not {}",
            2 * rules.pits(),
            board.get_type().name()?
        ))),
    }
}

/// The position of `counts` (mover's row first), each checked.
pub(crate) fn counts_to_position(pits: usize, counts: &[i64]) -> PyResult<Position> {
    let counts: Vec<u32> = counts
        .iter()
        .map(|&c| {
            u32::try_from(c).map_err(|_| NotationError::new_err(format!("a pit holds {c} stones")))
        })
        .collect::<PyResult<_>>()?;
    Position::from_counts(pits, &counts).map_err(core_error)
}

/// The pit `m` names: a pit number or its letter.
pub(crate) fn pit_of(m: &Bound<'_, PyAny>, rules: &Rules) -> PyResult<usize> {
    if let Ok(text) = m.cast::<PyString>() {
        return parse_move(rules, &text.to_cow()?).map_err(core_error);
    }
    let pit: i64 = m.extract()?;
    usize::try_from(pit)
        .ok()
        .filter(|&p| p < rules.pits())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "pit {pit} is not one of the mover's pits 0..{}",
                rules.pits()
            ))
        })
}

/// A rule set given as a `Rules`, a variant name (with `pits` and
/// `empty_capture`) or None (Oware).
pub(crate) fn rules_arg(
    rules: Option<&Bound<'_, PyAny>>,
    pits: usize,
    empty_capture: bool,
) -> PyResult<Rules> {
    let Some(rules) = rules else {
        return Ok(PyRules::new("oware", pits, empty_capture)?.rules);
    };
    if let Ok(given) = rules.extract::<PyRef<'_, PyRules>>() {
        return Ok(given.rules);
    }
    let name: String = rules
        .extract()
        .map_err(|_| PyTypeError::new_err("rules is a variant name or a Rules"))?;
    Ok(PyRules::new(&name, pits, empty_capture)?.rules)
}

/// The pits of `pos`'s legal moves, in order.
pub(crate) fn legal_pits(rules: &Rules, pos: &Position) -> Vec<u32> {
    let mut pits = Vec::new();
    rules.for_each_move(pos, |m| pits.push(m.pit as u32));
    pits
}
