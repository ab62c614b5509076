//! The package's exceptions, and how the libraries' typed errors become
//! them: a missing table is a `KeyError` (as in python-chess's
//! `chess.syzygy`), bad notation a `ValueError`, with the libraries'
//! message and, where a call fixes the problem, that call (the keyword
//! arguments, where the command line names its flags).

use pyo3::exceptions::{PyException, PyKeyError, PyValueError};
use pyo3::prelude::*;

use mancala_core::Cycles;
use mancala_probe::FormatError;

pyo3::create_exception!(
    mancala_tb,
    MissingTableError,
    PyKeyError,
    "The tables needed for a position are not there: its level was never \
     built, or its file is missing. A KeyError, so that `tb.get()` and \
     `except KeyError` work as with a dictionary."
);
pyo3::create_exception!(
    mancala_tb,
    CorruptedTableError,
    PyException,
    "A table file is damaged, truncated, of another format version or of \
     another rule set than its name says. Rebuild it."
);
pyo3::create_exception!(
    mancala_tb,
    NotationError,
    PyValueError,
    "Text, counts or an array row that is not a position of the rule set."
);

/// A probe's error as the exception a Python caller expects.
pub(crate) fn probe_error(error: mancala_probe::Error) -> PyErr {
    use mancala_probe::Error;
    let message = error.to_string();
    match &error {
        Error::Notation(_) => NotationError::new_err(message),
        Error::OutOfRange {
            rules,
            cycles,
            stones,
            root,
            ..
        } => MissingTableError::new_err(format!(
            "{message}; {}",
            build_hint(rules, *cycles, *stones, &root.display().to_string())
        )),
        Error::Table {
            source: FormatError::Missing { .. },
            ..
        } => MissingTableError::new_err(message),
        Error::Table { source, .. } => CorruptedTableError::new_err(with_hint(message, source)),
    }
}

/// `message` with the keyword argument that answers `error`, if one does:
/// the tables of another kind than asked for are opened and built with
/// their own `cycles`.
pub(crate) fn with_hint(message: String, error: &FormatError) -> String {
    match error {
        FormatError::WrongKind {
            expected, found, ..
        } if expected.cycles != found.cycles => format!(
            "{message}; {} are the tables of cycles={:?}, {} those of cycles={:?}",
            found.cycles,
            found.cycles.name(),
            expected.cycles,
            expected.cycles.name()
        ),
        _ => message,
    }
}

/// A domain error (notation, rule set, move) as a `ValueError`.
pub(crate) fn core_error(error: mancala_core::Error) -> PyErr {
    match error {
        mancala_core::Error::Notation(_) => NotationError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// The `mancala_tb.build` call that builds the tables of `rules` and
/// `cycles` up to `stones` under `root`.
fn build_hint(rules: &mancala_core::Rules, cycles: Cycles, stones: u32, root: &str) -> String {
    let mut call = format!(
        "build them with mancala_tb.build({root:?}, rules={:?}, pits={}, stones={stones}",
        rules.variant().name(),
        rules.pits()
    );
    if !rules.empty_capture() {
        call.push_str(", empty_capture=False");
    }
    if cycles == Cycles::Forced {
        call.push_str(", cycles=\"forced\"");
    }
    call.push(')');
    call
}
