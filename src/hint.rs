//! Errors as the command line and the server show them: one line, and
//! where a command fixes the problem, that command.
//!
//! The libraries' errors carry their facts as typed fields (rule set,
//! kind, level, directory) and no command-line text; the `build` hints are
//! written here, from those fields.

use std::error::Error as StdError;

use mancala_core::{Cycles, Rules};
use mancala_format::FormatError;

use crate::args::{cycles_flag, rules_flags};

/// The one-line message of `error` and its causes, with the `build` command
/// that would answer it, if there is one.
pub fn message(error: &anyhow::Error) -> String {
    let text = format!("{error:#}");
    match error.chain().find_map(build_hint) {
        Some(hint) => format!("{text}; run `{hint}`"),
        None => text,
    }
}

/// [`message`] for a probe's error.
pub fn probe_message(error: &mancala_probe::Error) -> String {
    match build_hint(error) {
        Some(hint) => format!("{error}; run `{hint}`"),
        None => error.to_string(),
    }
}

/// The `mancala-tb build` command that builds what `error` found missing.
fn build_hint(error: &(dyn StdError + 'static)) -> Option<String> {
    let probe = match error.downcast_ref::<mancala_engine::Error>() {
        Some(mancala_engine::Error::Tables(probe)) => probe,
        _ => error.downcast_ref::<mancala_probe::Error>()?,
    };
    match probe {
        mancala_probe::Error::OutOfRange {
            rules,
            cycles,
            stones,
            root,
            ..
        } => Some(format!(
            "{} --stones {stones} --dir {}",
            build_command(rules, *cycles),
            root.display()
        )),
        mancala_probe::Error::Table {
            rules,
            cycles,
            level,
            source: FormatError::Missing { .. },
        } => Some(format!(
            "{} --stones {level}",
            build_command(rules, *cycles)
        )),
        _ => None,
    }
}

/// `mancala-tb build` with the flags of `rules` and `cycles`.
pub fn build_command(rules: &Rules, cycles: Cycles) -> String {
    format!(
        "mancala-tb build {}{}",
        rules_flags(rules),
        cycles_flag(cycles)
    )
}
