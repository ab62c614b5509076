//! mancala-tb: perfect-play endgame tables for mancala games.
//!
//! The crate builds, by retrograde analysis, the exact value of every
//! position with up to `n` stones for Oware, Awari, Wari and Kalah (see
//! `RULES.md` for the contract), stores each level as a compressed table
//! file, and answers queries from memory-mapped tables.

pub mod build;
pub mod checkpoint;
pub mod error;
pub mod index;
pub mod position;
pub mod rules;
pub mod scratch;
pub mod solver;
pub mod table;
pub mod tablebase;
pub mod verify;

pub use error::{Error, Result};
pub use position::Position;
pub use rules::{Move, Rules, Successors, Variant};
pub use tablebase::{MoveValue, Tablebase};
