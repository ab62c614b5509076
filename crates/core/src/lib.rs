//! The domain of mancala-tb: what a position is, which moves are legal, how
//! levels are indexed, how a game ends and what a value means.
//!
//! Everything here follows `docs/RULES.md`, the contract every table obeys.
//! The other crates build on this one and on nothing else of each other's
//! layers below them: the table format, the generator, the probing library
//! and the engine all speak in [`Position`], [`Rules`], [`Move`] and the
//! value types of this crate.
//!
//! ```
//! use mancala_core::{Position, Rules, Successors, Variant};
//!
//! # fn main() -> Result<(), mancala_core::Error> {
//! let rules = Rules::new(Variant::Oware, 6)?;
//! let pos = Position::parse(6, "0,0,0,0,0,3/1,1,2,0,0,0")?;
//! let Successors::Moves(moves) = rules.successors(&pos) else { unreachable!() };
//! // Sowing f would capture every stone the opponent has: a grand slam,
//! // which captures nothing under the tournament rules.
//! assert_eq!(moves[0].gain, 0);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod error;
mod game;
mod index;
mod position;
mod progress;
mod rules;
mod value;

pub use error::{echoed, Error, GameError, NotationError, Result, Row, RulesError};
pub use game::{parse_move, EndReason, GameEnd, GameState, Outcome, Side, Sowing};
pub use index::{
    advance, advance_at, advance_cells, binomial, mover_row_rank, opponent_row_rank, rank,
    LevelIndex,
};
pub use position::{pit_letter, push_decimal, Position, MAX_PITS, MAX_STONES};
pub use progress::{Progress, Quiet};
pub use rules::{Move, MoveList, Place, RowMove, Rules, Stays, Successors, Variant};
pub use value::{Bounds, Cycles, MoveBounds, MoveValue, Verdict, MAX_LEVEL};
