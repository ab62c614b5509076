//! The mancala-tb generator: every level of a rule set solved by retrograde
//! analysis, bottom up, and written as table files.
//!
//! - [`build`] runs the pipeline: levels `0..=N` in order, valid files
//!   reused, lower levels held decoded, long levels checkpointed, each
//!   level stored in the encoding asked for ([`BuildOptions`]).
//! - A strategy solves one level: retrograde analysis (forward pass, then
//!   threshold propagation, its parent updates going through an exchange,
//!   local in one process, across ranks in a cluster) for every rule set,
//!   one pass for those whose levels cannot cycle.
//! - Even values and forced bounds are two instances of one pipeline
//!   ([`Solve`]), each with its own state layout.
//! - The lean mode ([`MemoryMode::Lean`]) solves levels with a few bits a
//!   position in memory and its working lists on disk, writing the same
//!   tables.
//! - [`import`] runs the same pipeline with each level's values read from
//!   a [`LevelSource`] (another program's tables) instead of solved.
//! - [`build_across`] runs it across the ranks of a cluster, over a
//!   [`Transport`].
//!
//! The strategies, the exchange and the checkpoints are exported for this
//! crate's own tests and benchmarks only, behind the `testing` feature
//! (hidden from the documentation).
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

pub use cluster::{all_gather, build_across, RankReport, Transport};
pub use error::BuildError;
pub use import::{import, LevelSource};
pub use lock::LOCK_FILE;
/// Progress as every long job tells it (the generator's, the verifier's,
/// the VU tools'), and the observer that shows nothing.
pub use mancala_core::{Progress, Quiet};
pub use pipeline::{build, solve_in_memory, BuildObserver, BuildOptions, LevelReport, MemoryMode};
pub use solve::Solve;
pub use strategy::LevelJob;
pub use usage::{peak_rss_bytes, Usage};

/// The pieces of a build that this crate's integration tests and
/// benchmarks drive one by one (the `testing` feature, which its own
/// dev-dependency on itself turns on): not part of the library's surface.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub use {
    checkpoint::Checkpoints,
    cluster::InProcess,
    import::exit_best_marks,
    kernel::{Depths, Exchange, LocalExchange, Visit, NO_DEPTH},
    lean::{Lean, LeanKind},
    pipeline::{solve_level, CHECKPOINT_DIR, LEAN_DIR, SCRATCH_DIR},
    solve::Solution,
    strategy::{OnePass, Retrograde, Strategy},
};
