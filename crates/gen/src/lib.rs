//! The mancala-tb generator: every level of a rule set solved by retrograde
//! analysis, bottom up, and written as table files.
//!
//! - [`build`] runs the pipeline: levels `0..=N` in order, valid files
//!   reused, lower levels held decoded, long levels checkpointed, each
//!   level stored in the encoding asked for ([`BuildOptions`]).
//! - A [`Strategy`] solves one level: [`Retrograde`] (forward pass, then
//!   threshold propagation, its parent updates going through an
//!   [`Exchange`], [`LocalExchange`] in one process) for every rule set,
//!   [`OnePass`] for those whose levels cannot cycle.
//! - Even values and forced bounds are two instances of one pipeline
//!   ([`Solve`]), each with its own state layout ([`LevelState`]).
//! - [`Lean`] solves levels with a few bits a position in memory and its
//!   working lists on disk (`build --memory lean`), writing the same
//!   tables.
//! - [`import`] runs the same pipeline with each level's values read from
//!   a [`LevelSource`] (another program's tables) instead of solved.
//!
//! ```
//! use mancala_core::{Position, Rules, Variant};
//! use mancala_format::Even;
//! use mancala_gen::solve_in_memory;
//!
//! let rules = Rules::new(Variant::Oware, 6).unwrap();
//! let levels = solve_in_memory::<Even>(&rules, 4);
//! let pos = Position::parse(6, "0,0,0,0,1,1/1,0,0,0,1,0").unwrap();
//! assert_eq!(levels.value(&pos), 2);
//! ```

#![warn(missing_docs)]

mod checkpoint;
mod cluster;
mod depth_table;
mod error;
mod even;
mod forced;
mod import;
mod kernel;
mod lean;
mod lock;
mod pipeline;
mod solve;
mod strategy;
mod usage;

pub use checkpoint::Checkpoints;
pub use cluster::{all_gather, build_across, InProcess, RankReport, Split, Transport};
pub use error::BuildError;
pub use even::EvenState;
pub use forced::ForcedState;
pub use import::{exit_best_marks, import, LevelSource};
pub use kernel::{Depths, Exchange, LocalExchange, NO_DEPTH};
pub use lean::Lean;
pub use lock::LOCK_FILE;
/// Progress as every long job tells it (the generator's, the verifier's,
/// the VU tools'), and the observer that shows nothing.
pub use mancala_core::{Progress, Quiet};
pub use pipeline::{
    build, solve_in_memory, solve_level, BuildObserver, BuildOptions, LevelReport, MemoryMode,
    CHECKPOINT_DIR, DEFAULT_CHECKPOINT_EVERY, LEAN_DIR, SCRATCH_DIR,
};
pub use solve::{LevelState, Solution, Solve};
pub use strategy::{LevelJob, OnePass, Retrograde, Strategy};
pub use usage::{peak_rss_bytes, Usage};
