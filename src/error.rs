//! Typed errors of the library.
//!
//! Every failure a user can cause (bad notation, a position beyond the
//! tables, a missing or damaged file) is one of these variants, never a
//! panic and never a wrong value.

use std::path::PathBuf;

/// Errors of mancala-tb.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A position could not be read or is not a board of this rule set.
    #[error("bad position: {0}")]
    Notation(String),

    /// A rule set or build option is out of range.
    #[error("invalid rules: {0}")]
    InvalidRules(String),

    /// The position has more stones than the tables hold.
    #[error("{stones} stones on the board, but {}; run `mancala-tb build {flags} --stones {stones} --dir {dir}`",
        if *available < 0 { format!("there are no such tables in {dir}") } else { format!("the tables in {dir} hold at most {available}") })]
    OutOfRange {
        /// Stones on the board.
        stones: u32,
        /// The largest level present (−1 if none).
        available: i64,
        /// CLI flags selecting the rule set.
        flags: String,
        /// The table directory.
        dir: String,
    },

    /// A table file that should exist does not.
    #[error("{}: table file missing; run `{build}`", path.display())]
    Missing {
        /// The expected file.
        path: PathBuf,
        /// The command that builds it.
        build: String,
    },

    /// The file does not start with the table magic.
    #[error("{}: not a mancala-tb table (bad magic)", path.display())]
    BadMagic {
        /// The file.
        path: PathBuf,
    },

    /// The file was written by an incompatible format version.
    #[error("{}: table format version {found}, this program reads version {expected}", path.display())]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Version in the file.
        found: u32,
        /// Version this build understands.
        expected: u32,
    },

    /// The file is truncated or its checksums do not match.
    #[error("{}: corrupted table ({what})", path.display())]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// What check failed.
        what: String,
    },

    /// The file holds another rule set or level than the one asked for.
    #[error("{}: table is for {found}, expected {expected}", path.display())]
    WrongRules {
        /// The file.
        path: PathBuf,
        /// What the caller asked for.
        expected: String,
        /// What the header says.
        found: String,
    },

    /// The file holds the other kind of table (even-split values or forced
    /// bounds) than the one asked for.
    #[error("{}: table holds {found}, expected {expected}", path.display())]
    WrongCycles {
        /// The file.
        path: PathBuf,
        /// What the caller asked for.
        expected: String,
        /// What the header says.
        found: String,
    },

    /// An operating-system error on a table file or directory.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
