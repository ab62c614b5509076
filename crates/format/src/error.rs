//! Errors at the file boundary: what can go wrong opening, reading or
//! writing a table file.

use std::fmt;
use std::path::PathBuf;

use mancala_core::Rules;

use crate::kind::KindId;

/// A table file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The file does not exist.
    #[error("{}: table file missing", path.display())]
    Missing {
        /// The expected file.
        path: PathBuf,
    },
    /// The path is a directory, FIFO, device or socket: it is never read
    /// as a table, so that nothing blocks on it.
    #[error("{}: not a regular file", path.display())]
    NotRegularFile {
        /// The path.
        path: PathBuf,
    },
    /// The file does not start with the table magic.
    #[error("{}: not a mancala-tb table (bad magic)", path.display())]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// The file was written in a format version this build does not read.
    #[error("{}: table format version {found}, this program reads version {expected}", path.display())]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        expected: u32,
    },
    /// The file is truncated, a checksum does not match, or a field is
    /// impossible.
    #[error("{}: corrupted table ({what})", path.display())]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// Which check failed.
        what: String,
    },
    /// The file holds another rule set or level than the one asked for.
    #[error("{}: table is for {found}, expected {expected}", path.display())]
    WrongTable {
        /// The file.
        path: PathBuf,
        /// What the caller asked for.
        expected: TableId,
        /// What the header says.
        found: TableId,
    },
    /// The file holds the other kind of table than the one asked for.
    #[error("{}: table holds {found}, expected {expected}", path.display())]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind asked for.
        expected: KindId,
        /// The kind the header names.
        found: KindId,
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

impl FormatError {
    /// Wraps an I/O error with the path it concerns; a missing file is
    /// [`FormatError::Missing`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> FormatError {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::NotFound {
            FormatError::Missing { path }
        } else {
            FormatError::Io { path, source }
        }
    }

    pub(crate) fn corrupted(path: impl Into<PathBuf>, what: impl Into<String>) -> FormatError {
        FormatError::Corrupted {
            path: path.into(),
            what: what.into(),
        }
    }
}

/// Which table a file is: rule set and level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableId {
    /// The rule set.
    pub rules: Rules,
    /// Stones on the board.
    pub level: u32,
}

/// `oware-6 level 12`.
impl fmt::Display for TableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} level {}", self.rules.id(), self.level)
    }
}
