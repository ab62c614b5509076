//! Errors of probing: a position the tables cannot answer, or a table that
//! cannot be read.

use std::path::{Path, PathBuf};

use mancala_core::{Cycles, NotationError, Rules};
use mancala_format::FormatError;

/// Why a probe has no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The position is not a board of the tables' rule set.
    #[error("bad position: {0}")]
    Notation(#[from] NotationError),
    /// The position has more stones than the tables hold.
    #[error("{stones} stones on the board, but {}", lacking(*stones, *available, root))]
    OutOfRange {
        /// The tables' rule set.
        rules: Rules,
        /// The tables' kind.
        cycles: Cycles,
        /// Stones on the board.
        stones: u32,
        /// The highest level available, if any (a level below it may be
        /// missing too, where the rules never need it).
        available: Option<u32>,
        /// The table directory the tables were opened from.
        root: PathBuf,
    },
    /// A level's table file is missing, damaged or not the one expected.
    #[error("{source}")]
    Table {
        /// The tables' rule set.
        rules: Rules,
        /// The tables' kind.
        cycles: Cycles,
        /// The level whose file failed.
        level: u32,
        /// What is wrong with the file.
        source: FormatError,
    },
}

/// What the tables in `root`, whose highest level is `available`, lack to
/// answer a position of `stones` stones.
fn lacking(stones: u32, available: Option<u32>, root: &Path) -> String {
    let root = root.display();
    match available {
        None => format!("there are no such tables in {root}"),
        Some(max) if stones > max => format!("the tables in {root} hold at most {max}"),
        Some(_) => format!("the tables in {root} lack level {stones} or a level it needs"),
    }
}

/// Result with the probe's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
