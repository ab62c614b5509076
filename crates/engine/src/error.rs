//! Errors of the engine.

/// Why the engine has no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A position, game state or move the rules reject.
    #[error(transparent)]
    Rules(#[from] mancala_core::Error),
    /// A table lookup failed (a damaged or vanished table file).
    #[error(transparent)]
    Tables(#[from] mancala_probe::Error),
    /// The transposition table's memory could not be had.
    #[error("cannot allocate {bytes} bytes for the transposition table")]
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
}

/// Result with the engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
