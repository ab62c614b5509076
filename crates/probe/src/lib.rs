//! Probing mancala-tb tables: the exact value of a position and of each of
//! its moves, or its forced bounds, from memory-mapped table files.
//!
//! ```
//! use mancala_gen::{build, BuildOptions, Quiet};
//! use mancala_probe::{Position, Rules, Tablebase, Variant};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let dir = dir.path();
//! let rules = Rules::new(Variant::Oware, 6)?;
//! // Levels 0..=8: every position with at most 8 stones on the board.
//! build(&BuildOptions::new(dir, rules, 8), &Quiet)?;
//!
//! let tb: Tablebase = Tablebase::open(dir, rules)?;
//! // Mover: a=1, c=3, e=2; opponent: h=2. Seen from the player to move.
//! let pos = Position::parse(6, "1,0,3,0,2,0/0,2,0,0,0,0")?;
//! let value = tb.value(&pos)?;
//! let moves = tb.move_values(&pos)?;
//! // The value is the best move's value.
//! assert_eq!(moves.iter().map(|m| m.value).max(), Some(value));
//! # Ok(())
//! # }
//! ```
//!
//! A [`Tablebase`] is typed by its kind of table: `Tablebase<Even>` (the
//! default) answers values, `Tablebase<Forced>` forced bounds, and
//! `Tablebase<Depth>` and `Tablebase<Depth<Forced>>` the depths to
//! conversion of either, read together with them. Single
//! probes go through a block cache; batches ([`Tablebase::values`],
//! [`Tablebase::values_and_moves`], [`Tablebase::bounds_and_moves`]) decode
//! each block once for all their positions. The domain types are
//! re-exported, so this crate is all a caller needs.

#![warn(missing_docs)]

mod batch;
mod cache;
mod error;
mod tablebase;

pub use error::{Error, Result};
pub use tablebase::{conversion_rank, Tablebase, DEFAULT_CACHE_BYTES};

pub use mancala_core::{
    Bounds, Cycles, Move, MoveBounds, MoveValue, Position, Rules, Successors, Variant, Verdict,
};
pub use mancala_format::{Access, Depth, Even, Forced, FormatError, Realized, TableKind};
