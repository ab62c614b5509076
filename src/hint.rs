//! Errors as the command line and the server show them: one line, and
//! where a command fixes the problem, that command.
//!
//! The libraries' errors carry their facts as typed fields (rule set,
//! kind, level, directory, options) and no command-line text; the `build`
//! commands and the flags that answer an error are written here, from
//! those fields.

use std::error::Error as StdError;
use std::path::Path;

use mancala_core::{Cycles, LevelIndex, Rules, MAX_LEVEL};
use mancala_format::{tables_dir, Encoding, FormatError};
use mancala_gen::{BuildError, MemoryMode};

use crate::args::{cycles_flag, rules_flags};
use crate::machine;

/// The one-line message of `error` and its causes, with the `build` command
/// or the flag that would answer it, if there is one.
pub fn message(error: &anyhow::Error) -> String {
    let text = chain_text(error);
    match error.chain().find_map(hint) {
        Some(hint) => format!("{text}; {hint}"),
        None => text,
    }
}

/// The error and each cause it gives, joined by `: `, leaving out a cause
/// whose text the message already holds (the libraries' errors name their
/// source in their own text, so `{:#}` would say it twice).
fn chain_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// The `mancala-tb build` command that builds what `error` found missing,
/// or why this machine cannot.
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
        } => Some(build_advice(rules, *cycles, *stones, Some(root))),
        mancala_probe::Error::Table {
            rules,
            cycles,
            level,
            source: FormatError::Missing { .. },
        } => Some(build_advice(rules, *cycles, *level, None)),
        _ => None,
    }
}

/// The `build` command (as [`build_hint`]) or the flag (as [`flag_hint`])
/// that answers `error` or an error it wraps, if there is one.
pub fn hint(error: &(dyn StdError + 'static)) -> Option<String> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(hint) = build_hint(error).or_else(|| flag_hint(error)) {
            return Some(hint);
        }
        cause = error.source();
    }
    None
}

/// The flag of the command line that answers `error`, which the
/// libraries name in their own terms (an option of a build, a kind of
/// table).
pub fn flag_hint(error: &(dyn StdError + 'static)) -> Option<String> {
    if let Some(build) = error.downcast_ref::<BuildError>() {
        return match build {
            BuildError::Locked { .. } => {
                Some("wait for it to end, or pass --wait to wait for it".to_string())
            }
            BuildError::Mismatch { .. } => Some(
                "build with the options these tables were built with to extend them, or with --force to rebuild them"
                    .to_string(),
            ),
            BuildError::MemoryBudget {
                memory, encoding, ..
            } => match (memory, encoding) {
                (MemoryMode::Fast, _) => Some("--memory lean takes much less".to_string()),
                (MemoryMode::Lean, Encoding::Compact) => {
                    Some("--encoding full takes much less".to_string())
                }
                (MemoryMode::Lean, Encoding::Full) => None,
            },
            // Transparent: its `source` is the table error's own source.
            BuildError::Format(format) => flag_hint(format),
            _ => None,
        };
    }
    match error.downcast_ref::<FormatError>()? {
        FormatError::WrongKind {
            expected, found, ..
        } if expected.cycles != found.cycles => Some(format!(
            "{} are the tables of --cycles {}, {} those of --cycles {}",
            found.cycles,
            found.cycles.name(),
            expected.cycles,
            expected.cycles.name()
        )),
        _ => None,
    }
}

/// What to do to have the tables of `rules` and `cycles` up to `stones`
/// (in `root`, if given): the `build` command, or why it cannot run here.
pub fn build_advice(rules: &Rules, cycles: Cycles, stones: u32, root: Option<&Path>) -> String {
    if stones > MAX_LEVEL {
        return format!("no table holds more than {MAX_LEVEL} stones");
    }
    if let Some(dir) = root.map(|root| tables_dir(root, rules, cycles)) {
        if dir.exists() && !dir.is_dir() {
            return format!(
                "{} is not a directory: a build there needs it moved away",
                dir.display()
            );
        }
    }
    let positions = LevelIndex::new(rules.pits(), stones).count();
    let mut memory_flag = "";
    if let Some(total) = machine::total_memory() {
        match MemoryMode::within(total, cycles, Encoding::Full, rules.pits(), positions) {
            Some(MemoryMode::Fast) => {}
            Some(MemoryMode::Lean) => memory_flag = " --memory lean",
            None => {
                return format!(
                    "building level {stones} of {} needs about {} of memory even with --memory lean, more than this machine's {}",
                    rules.id(),
                    machine::gib(MemoryMode::Lean.solving_bytes(cycles, Encoding::Full, rules.pits(), positions)),
                    machine::gib(total)
                )
            }
        }
    }
    let dir = root.map_or(String::new(), |root| format!(" --dir {}", root.display()));
    format!(
        "run `{} --stones {stones}{memory_flag}{dir}`",
        build_command(rules, cycles)
    )
}

/// `mancala-tb build` with the flags of `rules` and `cycles`.
pub fn build_command(rules: &Rules, cycles: Cycles) -> String {
    format!(
        "mancala-tb build {}{}",
        rules_flags(rules),
        cycles_flag(cycles)
    )
}
