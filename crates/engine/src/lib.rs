//! The mancala-tb perfect player, on top of the tables.
//!
//! - [`Engine`]: every legal move of a game state with its exact value, the
//!   best moves and a perfect line; table lookups within the tables' range,
//!   MTD(f) search above it with lookups at its leaves.
//! - [`TournamentPlayer`]: play under the tournament repetition rule from
//!   forced tables, converting every forced win without repeating a
//!   position.
//!
//! ```no_run
//! use mancala_core::GameState;
//! use mancala_engine::Engine;
//! use mancala_probe::{Rules, Tablebase, Variant};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rules = Rules::new(Variant::Kalah, 4)?;
//! let tables: Tablebase = Tablebase::open("tables", rules)?;
//! let mut engine = Engine::with_tables(&tables);
//! let state = GameState::start(&rules, 3)?;
//! let analysis = engine.analyze(&state)?;
//! println!("{} {:?} exact={}", analysis.value, analysis.best, analysis.exact);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod convert;
mod engine;
mod error;
mod tournament;

pub use engine::{Analysis, Engine, Limits, LineEnd, MoveAnalysis, Score, SearchProgress, Source};
pub use error::{Error, Result};
pub use tournament::{TournamentChoice, TournamentMove, TournamentPlayer};
