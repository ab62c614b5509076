//! Integration tests of the engine: search above small tables against
//! larger tables, analyses and perfect lines, the repetition rule, and the
//! tournament player on forced tables against every opponent.

mod engine;
mod tournament;
