//! Errors of a build.

use std::path::PathBuf;

use mancala_format::FormatError;

/// Why a build could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// More stones than a level may have.
    #[error("at most {max} stones are supported, asked for {stones}")]
    TooManyStones {
        /// Stones asked for.
        stones: u32,
        /// The most a level may have.
        max: u32,
    },
    /// A block size out of range.
    #[error("block size must be 1..={max}, got {size}")]
    BlockSize {
        /// Positions per block asked for.
        size: u32,
        /// The largest block size.
        max: u32,
    },
    /// A table file could not be written, or a present one read.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// An operating-system error on a checkpoint or a directory.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
