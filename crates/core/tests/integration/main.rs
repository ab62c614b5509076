//! Integration tests of the domain crate: level indexing and notation.

mod index;
mod levels;
mod notation;
