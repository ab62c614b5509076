//! The `mancala_tb` Python module: the tables, the rules and the perfect
//! player of mancala-tb, for Python callers (training sets, agents,
//! analysis). Built with maturin from `python/pyproject.toml`; the API is
//! documented in `python/mancala_tb/__init__.pyi` and `docs/guide/python.md`.
//!
//! - `rules.rs`: `Rules`, `Position`, `Move`: the rules without tables;
//! - `tablebase.rs`: `open_tablebase` and `Tablebase`: single probes;
//! - `batch.rs`: numpy arrays of positions, read on every core;
//! - `game.rs`: `Game`: a whole game, stores, history and its ends;
//! - `engine.rs`: `Engine`: the perfect player above the tables;
//! - `build.rs`: `build`: tables built from Python;
//! - `errors.rs`: the exceptions, from the libraries' typed errors.

mod batch;
mod build;
mod engine;
mod errors;
mod game;
mod rules;
mod tablebase;

use pyo3::prelude::*;

/// Perfect-play endgame tables for mancala games (Oware/Awari, Wari, Kalah).
///
/// Build tables with `build(directory, stones=N, rules=...)` (or the
/// `mancala-tb build` command), open them with `open_tablebase(directory,
/// rules=...)`, and ask for exact values: `tb.value("4,4,4,0,0,0/0,0,0,0,0,0")`,
/// `tb.move_values(...)`, or a numpy batch with `tb.values(array)`.
/// Positions are seen from the player to move: his pits a, b, ... (pit
/// numbers 0, 1, ...) first, then the opponent's, in sowing order. A value
/// is the stones the player to move ends with ahead of the opponent, of
/// those on the board, under best play by both. `Position`, `Rules` and
/// `Game` play by the rules without tables; `Engine(tb)` is the perfect
/// player. Errors: `MissingTableError` (a KeyError), `CorruptedTableError`,
/// `NotationError` (a ValueError).
#[pymodule]
#[pyo3(name = "mancala_tb")]
fn mancala_tb_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ILLEGAL", tablebase::ILLEGAL)?;
    m.add(
        "MissingTableError",
        py.get_type::<errors::MissingTableError>(),
    )?;
    m.add(
        "CorruptedTableError",
        py.get_type::<errors::CorruptedTableError>(),
    )?;
    m.add("NotationError", py.get_type::<errors::NotationError>())?;
    m.add_class::<rules::PyRules>()?;
    m.add_class::<rules::PyPosition>()?;
    m.add_class::<rules::PyMove>()?;
    m.add_class::<tablebase::PyTablebase>()?;
    m.add_class::<game::PyGame>()?;
    m.add_class::<game::PyGameEnd>()?;
    m.add_class::<engine::PyEngine>()?;
    m.add_class::<engine::PyAnalysis>()?;
    m.add_class::<engine::PyMoveAnalysis>()?;
    m.add_class::<build::PyLevelReport>()?;
    m.add_function(wrap_pyfunction!(tablebase::open_tablebase, m)?)?;
    m.add_function(wrap_pyfunction!(build::build, m)?)?;
    Ok(())
}
