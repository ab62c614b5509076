//! mancala-tb: perfect-play endgame tables for mancala games.
//!
//! The crate builds, by retrograde analysis, the exact value of every
//! position with up to `n` stones for Oware, Awari, Wari and Kalah (see
//! `RULES.md` for the contract), stores each level as a compressed table
//! file, and answers queries from memory-mapped tables.
//!
//! ```
//! use mancala_tb::build::{build, BuildOptions, Quiet};
//! use mancala_tb::{Position, Rules, Tablebase, Variant};
//!
//! # fn main() -> Result<(), mancala_tb::Error> {
//! # let dir = tempfile::tempdir().unwrap();
//! # let dir = dir.path();
//! let rules = Rules::new(Variant::Oware, 6)?;
//! // Levels 0..=8: every position with at most 8 stones on the board.
//! build(&BuildOptions::new(dir, rules, 8), &Quiet)?;
//!
//! let tb = Tablebase::open(dir, rules)?;
//! // Mover: a=1, c=3, e=2; opponent: h=2. Seen from the player to move.
//! let pos = Position::parse(6, "1,0,3,0,2,0/0,2,0,0,0,0")?;
//! let value = tb.value(&pos)?;
//! let moves = tb.move_values(&pos)?;
//! // The value is the best move's value.
//! assert_eq!(moves.iter().map(|m| m.value).max(), Some(value));
//! for m in &moves {
//!     println!("{} {:+}", m.letter(), m.value);
//! }
//! # Ok(())
//! # }
//! ```

pub mod build;
pub mod checkpoint;
pub mod codec;
pub mod engine;
pub mod error;
pub mod forced;
pub mod game;
pub mod index;
pub mod omission;
pub mod position;
pub mod rules;
pub mod scratch;
pub mod server;
pub mod solver;
pub mod table;
pub mod tablebase;
pub mod tournament;
pub mod verify;

pub use error::{Error, Result};
pub use position::Position;
pub use rules::{Move, Place, Rules, Successors, Variant};
pub use tablebase::{MoveBounds, MoveValue, Tablebase};
