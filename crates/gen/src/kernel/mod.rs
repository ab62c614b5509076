//! The retrograde kernel, written once for every way of running it: a
//! level solved in memory in one process, across the ranks of a cluster,
//! or (its seeds and decisions in lists on disk) by the lean mode.
//!
//! One file per phase:
//!
//! - `forward.rs`: every position's exits read from the lower levels and
//!   its moves that keep the level counted;
//! - `thresholds.rs`: the threshold propagation, and `depths.rs`, the
//!   depths to conversion it finds on the way;
//! - `pacing.rs`: when the work stops for a checkpoint, or for good.
//!
//! Two seams make the ways of running it:
//!
//! - **where the level's state lives**: what the forward pass records into
//!   ([`forward::Record`]) and the thresholds grow ([`Ledger`]); a state
//!   held whole in memory is `held.rs`;
//! - **how lookups and updates reach their owner**: lower-level reads
//!   ([`LowerReads`]: [`mancala_format::Levels`] in one process) and parent
//!   deliveries with the agreements the processes need ([`Exchange`]:
//!   [`LocalExchange`] in one process). The cluster build implements both
//!   across ranks (`cluster/exchange.rs`).

mod depths;
mod exchange;
mod forward;
mod frontier;
mod held;
mod pacing;
mod thresholds;

use std::ops::Range;

use mancala_core::{LevelIndex, Rules};

pub use depths::Depths;
pub(crate) use depths::Finished;
#[cfg(feature = "testing")]
pub use depths::NO_DEPTH;
pub use exchange::{Exchange, LocalExchange, Visit};
pub(crate) use forward::{forward_pass, Looked, LowerReads, Record, Summary};
pub(crate) use frontier::Frontier;
pub(crate) use held::{Held, HeldThresholds, Seeds};
pub(crate) use pacing::Pacing;
pub(crate) use thresholds::{thresholds, Ledger};

/// How many of `len` items (positions, frontier members) one piece of
/// work takes: `release`, or in debug builds a small piece of at least
/// `least`, so that the tests cut even small levels into many pieces, but
/// no fewer than a sixty-fourth of the whole, so that a large level does
/// not pay a round of the thread pool per handful of items.
fn piece_len(release: u64, len: u64, least: u64) -> u64 {
    if cfg!(debug_assertions) {
        (len / 64).max(least).min(release)
    } else {
        release
    }
}

/// The part of a level one process solves: the rule set, the level's
/// index, and the positions whose state this process holds.
pub(crate) struct Part<'a> {
    pub rules: &'a Rules,
    pub index: LevelIndex,
    pub owned: Range<u64>,
}
