//! The VU database's tests, in one binary.

mod files;
mod godel;
