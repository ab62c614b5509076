//! Integration tests of the domain crate: level indexing, move generation
//! and notation.

mod index;
mod levels;
mod moves;
mod notation;
