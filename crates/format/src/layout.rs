//! Where tables live: one directory per rule set and kind under a root,
//! one file per level in it (`docs/FORMAT.md`, "Directory layout").
//!
//! Builds write there, probes and verifications read there, and all of them
//! name paths through this module only.

use std::path::{Path, PathBuf};

use mancala_core::{Cycles, Rules};

use crate::error::FormatError;
use crate::kind::{Stores, TableKind};

/// What a forced tables' directory name adds to the rule-set id.
const FORCED_SUFFIX: &str = "-forced";

/// The file name of level `level`: `level-012.mtb`.
pub fn level_file_name(level: u32) -> String {
    format!("level-{level:03}.mtb")
}

/// The file name of level `level`'s depth table (`docs/RULES.md`, "Depth
/// to conversion"), beside its even values: `depth-012.mtb`.
pub fn depth_file_name(level: u32) -> String {
    format!("depth-{level:03}.mtb")
}

/// The path of level `level`'s depth table in a rule set's directory
/// `dir`.
pub fn depth_path(dir: &Path, level: u32) -> PathBuf {
    dir.join(depth_file_name(level))
}

/// The path of level `level`'s table of kind `K` in a rule set's directory
/// `dir`: its values ([`level_path`]) or its depths ([`depth_path`]).
pub fn table_path<K: TableKind>(dir: &Path, level: u32) -> PathBuf {
    match K::STORES {
        Stores::Values => level_path(dir, level),
        Stores::Depths => depth_path(dir, level),
    }
}

/// The directory name of `rules`' tables of kind `cycles`: `oware-6` for
/// even tables, `oware-6-forced` for forced ones, so the two kinds never
/// mix.
pub fn dir_name(rules: &Rules, cycles: Cycles) -> String {
    match cycles {
        Cycles::Even => rules.id(),
        Cycles::Forced => format!("{}{FORCED_SUFFIX}", rules.id()),
    }
}

/// Reads back a directory name written by [`dir_name`].
pub(crate) fn parse_dir_name(name: &str) -> mancala_core::Result<(Rules, Cycles)> {
    match name.strip_suffix(FORCED_SUFFIX) {
        Some(id) => Ok((Rules::from_id(id)?, Cycles::Forced)),
        None => Ok((Rules::from_id(name)?, Cycles::Even)),
    }
}

/// The directory of `rules`' tables of kind `cycles` under `root`.
pub fn tables_dir(root: &Path, rules: &Rules, cycles: Cycles) -> PathBuf {
    root.join(dir_name(rules, cycles))
}

/// The path of level `level`'s file in a rule set's directory `dir`.
pub fn level_path(dir: &Path, level: u32) -> PathBuf {
    dir.join(level_file_name(level))
}

/// The number of levels `0, 1, …` present as files in `dir`, up to the
/// first gap: a later file after a gap is not part of the tables.
pub fn levels_present(dir: &Path, max_level: u32) -> u32 {
    (0..=max_level)
        .take_while(|&n| level_path(dir, n).is_file())
        .count() as u32
}

/// The levels of `rules` up to `max_level` that the files in `dir` answer
/// for, ascending: each level whose file is present along with the file of
/// every level it needs ([`Rules::levels_needed`]). From level 0 on with no
/// gap, that is every level present; past a gap, a level counts if it
/// never needs the missing one, as the Oware family's levels never need
/// the level just below them. Anything under a level's name counts as
/// present (a directory or a FIFO too): opening it then says what is
/// wrong with it, where a missing level would only ask for a build.
pub fn levels_available(dir: &Path, rules: &Rules, max_level: u32) -> Vec<u32> {
    let present: Vec<bool> = (0..=max_level)
        .map(|n| level_path(dir, n).exists())
        .collect();
    (0..=max_level)
        .filter(|&n| rules.levels_needed(n).all(|m| present[m as usize]))
        .collect()
}

/// Every level that has a file in `dir`, ascending, gaps and all (a
/// missing directory has none).
pub fn level_files(dir: &Path) -> Result<Vec<u32>, FormatError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(FormatError::io(dir, e)),
    };
    let mut levels: Vec<u32> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|name| {
            let digits = name.strip_prefix("level-")?.strip_suffix(".mtb")?;
            let level: u32 = digits.parse().ok()?;
            (level_file_name(level) == name).then_some(level)
        })
        .collect();
    levels.sort_unstable();
    Ok(levels)
}

/// The rule sets and kinds of table that have a directory under `root`
/// (named by [`dir_name`]), sorted by name. Other directories are ignored.
pub fn rule_sets(root: &Path) -> Result<Vec<(Rules, Cycles)>, FormatError> {
    let entries = std::fs::read_dir(root).map_err(|e| FormatError::io(root, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names
        .iter()
        .filter_map(|name| parse_dir_name(name).ok())
        .collect())
}
