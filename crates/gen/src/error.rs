//! Errors of a build.

use std::path::PathBuf;

use mancala_format::{Encoding, FormatError};

use crate::pipeline::MemoryMode;

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
    /// Another build holds the table directory (a build that should wait
    /// for it sets [`crate::BuildOptions::wait_for_lock`]).
    #[error("{} is being built by another build ({holder})", dir.display())]
    Locked {
        /// The rule set's table directory.
        dir: PathBuf,
        /// What the lock file says of its holder.
        holder: String,
    },
    /// A present level was stored other than the build asks: a build never
    /// mixes encodings or block sizes in one set. The tables present are
    /// extended by a build with the options they were built with, or
    /// rebuilt by one with [`crate::BuildOptions::force`].
    #[error("level {level} in {} is stored {found}, but {asked} was asked", dir.display())]
    Mismatch {
        /// The rule set's table directory.
        dir: PathBuf,
        /// The first level stored otherwise.
        level: u32,
        /// How it is stored: encoding and block size.
        found: String,
        /// How the build would store it.
        asked: String,
    },
    /// The build was asked to stop ([`crate::BuildOptions::interrupt`]).
    /// The levels written so far are kept, and a level cut off between two
    /// thresholds left a checkpoint: the same build resumes.
    #[error("build interrupted; the levels written so far are kept, and running the same build again resumes it")]
    Interrupted,
    /// The largest level does not fit in the memory budget
    /// ([`crate::BuildOptions::max_memory`]). The lean mode takes much
    /// less than the fast one, and a lean build of tables stored in the
    /// full encoding much less than one of compact tables.
    #[error("level {level} needs about {} to solve in the {} memory mode, more than the memory budget of {}{}", mib(*needed), memory.cli_name(), mib(*budget), why(*memory, *encoding))]
    MemoryBudget {
        /// The largest level of the build.
        level: u32,
        /// The mode asked for.
        memory: MemoryMode,
        /// The encoding its table is stored in.
        encoding: Encoding,
        /// About the bytes it needs ([`MemoryMode::solving_bytes`]).
        needed: u64,
        /// The budget ([`crate::BuildOptions::max_memory`]).
        budget: u64,
    },
    /// A level was to resume from its checkpoint, which spares reading the
    /// levels below it, but the checkpoint was gone or damaged by the time
    /// it was read: running the build again solves the level from its
    /// start.
    #[error("level {level}'s checkpoint was found valid when the build started, then gone or damaged; run the build again to solve the level from its start")]
    CheckpointLost {
        /// The level.
        level: u32,
    },
    /// A scratch file of the lean mode (a list, a spilled frontier, a
    /// level's state file) does not hold what was written to it: a disk
    /// fault, or another process. The level's checkpoint and scratch
    /// files are removed with it, so that running the build again solves
    /// the level from its start instead of reading them again.
    #[error("scratch file {} is damaged ({why}); the level's checkpoint and scratch files were removed, and running the build again solves the level from its start", path.display())]
    ScratchDamaged {
        /// The damaged file.
        path: PathBuf,
        /// What was found wrong with it.
        why: String,
    },
    /// A depth to conversion is longer than a depth table can hold.
    #[error("a depth to conversion of {plies} plies, more than depth tables hold")]
    DepthTooLong {
        /// The depth.
        plies: u32,
    },
    /// A level has more long depths than a depth table's header lists.
    #[error(
        "level {level} has {count} positions with depths to conversion of 254 plies or more, \
         more than a depth table lists"
    )]
    TooManyLongDepths {
        /// The level.
        level: u32,
        /// Its positions with long depths.
        count: usize,
    },
    /// A rank of a build across a cluster failed; every rank reports it.
    #[error("rank {rank}: {message}")]
    Rank {
        /// The rank that failed (the first, if several did).
        rank: usize,
        /// What went wrong there.
        message: String,
    },
    /// A build across ranks was asked for something only one process
    /// builds.
    #[error("{what} is not built across ranks yet; build it in one process")]
    NotAcrossRanks {
        /// What was asked.
        what: String,
    },
    /// An import's source could not give a level's values
    /// ([`crate::LevelSource`]): the source's own error, which a caller
    /// may downcast.
    #[error(transparent)]
    Source(Box<dyn std::error::Error + Send + Sync>),
    /// A table file could not be written, or a present one read.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// Where the tables' directory should be, or above it, is something
    /// else (a file).
    #[error("{}: not a directory", path.display())]
    NotADirectory {
        /// The path that is not a directory.
        path: PathBuf,
    },
    /// An operating-system error on a checkpoint or a directory.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Why a lean build of a table stored in `encoding` takes as much as it
/// does, where that is not plain.
fn why(memory: MemoryMode, encoding: Encoding) -> &'static str {
    match (memory, encoding) {
        (MemoryMode::Lean, Encoding::Compact) => {
            " (a compact table is written from a byte a position of values, marks and entries each)"
        }
        _ => "",
    }
}

/// `bytes` in whole MiB.
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}
