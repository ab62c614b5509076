//! The layout of the Vrije Universiteit's Awari database: Romein and Bal's
//! complete solution, published as one file of signed bytes per stone count
//! (`scores.0` … `scores.48`). `docs/VU-FORMAT.md` describes the files; this
//! crate holds what reading and writing them needs beyond our own tables.
//!
//! - [`GodelIndex`]: the numbering that gives each position its byte in a
//!   level's file. It leaves out the positions no move leads to (the
//!   previous mover's row without an empty pit), and runs through the rest
//!   in the reverse of [`mancala_core::LevelIndex`]'s order, so a file is
//!   written or read in one sequential pass over our index.

#![warn(missing_docs)]

mod godel;

pub use godel::{is_numbered, GodelIndex};
