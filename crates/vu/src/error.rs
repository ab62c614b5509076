//! Errors of reading and writing VU files.

use std::path::PathBuf;

use mancala_format::FormatError;
use mancala_gen::BuildError;

/// Why VU files could not be read, written or compared.
#[derive(Debug, thiserror::Error)]
pub enum VuError {
    /// A level's file is not in the directory.
    #[error("{}: no such file: level {level} of the VU database is not in {}", path.display(), dir.display())]
    Missing {
        /// The directory looked in.
        dir: PathBuf,
        /// The file that would hold the level.
        path: PathBuf,
        /// Stones on the board.
        level: u32,
    },
    /// A level's file does not hold one byte per numbered position.
    #[error("{}: {found} bytes, but level {level} of the VU database has {expected} positions", path.display())]
    WrongSize {
        /// The file.
        path: PathBuf,
        /// Stones on the board.
        level: u32,
        /// The level's numbered positions.
        expected: u64,
        /// The file's length.
        found: u64,
    },
    /// A byte is not a value of its level (`-n..=n`).
    #[error("{}: byte {number} (position {position}) is {value}, not a value of level {level} (-{level}..={level})", path.display())]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// Stones on the board.
        level: u32,
        /// The position's number: its byte's offset in the file.
        number: u64,
        /// The position, in our notation.
        position: String,
        /// The byte read.
        value: i8,
    },
    /// A value is not what the position's moves give, with the levels
    /// below and the rest of the level as the files hold them: the file
    /// contradicts the tables.
    #[error("{}: byte {number} (position {position}) is {stored}, but its moves give {recomputed}: level {level} contradicts the levels below it or itself", path.display())]
    Contradiction {
        /// The file.
        path: PathBuf,
        /// Stones on the board.
        level: u32,
        /// The position's number: its byte's offset in the file.
        number: u64,
        /// The position, in our notation.
        position: String,
        /// The value the file holds.
        stored: i8,
        /// The best of its moves' values.
        recomputed: i8,
    },
    /// A level above the VU database's rules' reach: our tables' limit, or
    /// a level whose lower levels the database does not hold.
    #[error("level {level}: {reason}")]
    Level {
        /// Stones on the board.
        level: u32,
        /// Why it cannot be read or written.
        reason: String,
    },
    /// Our tables lack a level asked for (or every level).
    #[error("{}: {}", dir.display(), match present { 0 => "no awari tables".to_string(), n => format!("no table of level {asked}: the awari tables go up to level {}", n - 1) })]
    NoTables {
        /// Our tables' directory.
        dir: PathBuf,
        /// The level asked for.
        asked: u32,
        /// Levels present from 0 on.
        present: u32,
    },
    /// Our tables could not be read.
    #[error(transparent)]
    Tables(#[from] FormatError),
    /// Our tables could not be written.
    #[error(transparent)]
    Build(BuildError),
    /// An operating-system error on a VU file or directory.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl VuError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> VuError {
        VuError::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<BuildError> for VuError {
    /// A source error the build passed on is this crate's own again.
    fn from(error: BuildError) -> VuError {
        match error {
            BuildError::Source(source) => match source.downcast::<VuError>() {
                Ok(vu) => *vu,
                Err(other) => VuError::Build(BuildError::Source(other)),
            },
            other => VuError::Build(other),
        }
    }
}
