//! One module per subcommand: its arguments and what it runs.

pub mod build;
pub mod export;
pub mod import;
pub mod info;
pub mod play;
pub mod query;
pub mod serve;
pub mod solve;
pub mod verify;
