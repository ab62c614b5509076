//! The Vrije Universiteit's Awari database, Romein and Bal's complete
//! solution, read and written: one file of signed bytes per stone count
//! (`scores.0` … `scores.48`). `docs/VU-FORMAT.md` describes the files.
//!
//! - [`GodelIndex`]: the numbering that gives each position its byte in a
//!   level's file. It leaves out the positions no move leads to (the
//!   previous mover's row without an empty pit), and runs through the rest
//!   in the reverse of [`mancala_core::LevelIndex`]'s order, so a file is
//!   written or read in one sequential pass over our index.
//! - [`export`]: our awari tables as VU files.
//! - [`import`]: VU files as our tables, through the build pipeline, so an
//!   imported level is the file a build writes; every value is checked
//!   against its moves first.
//! - [`compare`]: our tables against VU files, value by value.

#![warn(missing_docs)]

mod compare;
mod error;
mod export;
mod files;
mod godel;
mod import;
mod order;
mod ours;

pub use compare::{compare, LevelComparison, Mismatch, FIRST_MISMATCHES};
pub use error::VuError;
pub use export::{export, ExportedLevel};
pub use files::{file_name, levels_in, rules};
pub use godel::{is_numbered, GodelIndex};
pub use import::import;

/// What a long export or comparison tells as it goes (one unit a
/// position; an import tells it through the build's
/// [`mancala_gen::BuildObserver`]).
pub use mancala_core::{Progress, Quiet};
