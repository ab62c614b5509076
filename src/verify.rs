//! Verification: every stored value re-derived from the tables.
//!
//! For each level, in order, the file's checksums are checked, its values
//! decoded, and every position's value recomputed as the best of its moves
//! (children looked up in the level itself and the lower ones) or, for a
//! terminal position, its terminal value per RULES.md. The stored histogram
//! must match the values too.
//!
//! Forced tables ([`verify_forced`]) are checked the same way: each stored
//! pair must equal the one-ply formula of RULES.md over the children. That
//! shows the tables are *a* fixpoint, not that they are the *least* one (a
//! cycle whose positions all claimed more would pass too); the least
//! fixpoint is what the solver builds by construction, and the test suite
//! checks it against naive value iteration from 0 and against a search of
//! the real game with its repetition rule.

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::forced::{Bounds, ForcedLevel, ForcedLevels};
use crate::index::LevelIndex;
use crate::position::Position;
use crate::rules::{Rules, Successors};
use crate::scratch::{Scratch, MAPPED_MIN_POSITIONS};
use crate::solver::SolvedLevels;
use crate::table::{self, level_file_name, Cycles, Table};

/// Subdirectory of a rule set's tables holding verification scratch files
/// (apart from the build's, so both may run at once).
const VERIFY_SCRATCH_DIR: &str = "verify-scratch";
use crate::tablebase::{tables_dir, tables_dir_for};

/// The outcome of verifying one level; `T` is what a position stores (its
/// value, or its [`Bounds`] in a forced table).
#[derive(Clone, Debug)]
pub struct LevelCheck<T = i32> {
    /// Stones on the board.
    pub level: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose stored value differs from the recomputed one.
    pub mismatches: u64,
    /// The first mismatch: position, stored value, recomputed value.
    pub first_mismatch: Option<(Position, T, T)>,
    /// The header's histogram agrees with the values.
    pub histogram_ok: bool,
    /// Forced tables: positions whose bounds meet.
    pub exact: Option<u64>,
}

impl<T> LevelCheck<T> {
    /// Whether the level passed.
    pub fn ok(&self) -> bool {
        self.mismatches == 0 && self.histogram_ok
    }
}

/// Verifies levels `from..=max` of `rules` under `root` (up to the last
/// present level if `max` is `None`), calling `report` after each one. The
/// levels below `from` are loaded (their checksums are checked) but their
/// values are not recomputed: this resumes a long verification. Stops at
/// the first file that is missing, fails its checksums or does not decode.
pub fn verify(
    root: &Path,
    rules: &Rules,
    from: u32,
    max: Option<u32>,
    mut report: impl FnMut(&LevelCheck),
) -> Result<Vec<LevelCheck>> {
    let dir = tables_dir(root, rules);
    let last = max.unwrap_or_else(|| last_level(&dir));
    let scratch = Scratch::create(dir.join(VERIFY_SCRATCH_DIR), MAPPED_MIN_POSITIONS)?;
    let mut solved = SolvedLevels::new();
    let mut checks = Vec::new();
    for n in 0..=last {
        let table = Table::open(&dir.join(level_file_name(n)), Some((rules, n)))?;
        table.check_file_checksum()?;
        scratch.hold_table(&mut solved, &table)?;
        if n < from {
            continue;
        }
        let histogram_ok = table::histogram(solved.level(n)) == table.header().histogram;
        let check = check_level(rules, n, &solved, histogram_ok);
        report(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Recomputes every value of level `n` (already in `solved`).
pub fn check_level(rules: &Rules, n: u32, solved: &SolvedLevels, histogram_ok: bool) -> LevelCheck {
    let index = LevelIndex::new(rules.pits(), n);
    let stored = solved.level(n);
    let (mismatches, first_mismatch) = mismatches(&index, |at, pos| {
        (
            stored[at as usize] as i32,
            recomputed_value(rules, pos, solved),
        )
    });
    LevelCheck {
        level: n,
        positions: index.count(),
        mismatches,
        first_mismatch,
        histogram_ok,
        exact: None,
    }
}

/// Verifies forced tables like [`verify`] does even ones: each level's
/// checksums, histogram, and every stored pair against the one-ply formula
/// (a fixpoint check: see the module's documentation).
pub fn verify_forced(
    root: &Path,
    rules: &Rules,
    from: u32,
    max: Option<u32>,
    mut report: impl FnMut(&LevelCheck<Bounds>),
) -> Result<Vec<LevelCheck<Bounds>>> {
    let dir = tables_dir_for(root, rules, Cycles::Forced);
    let last = max.unwrap_or_else(|| last_level(&dir));
    let scratch = |name: &str| Scratch::create(dir.join(name), MAPPED_MIN_POSITIONS);
    let mover_scratch = scratch(FORCED_VERIFY_SCRATCH_DIRS[0])?;
    let opponent_scratch = scratch(FORCED_VERIFY_SCRATCH_DIRS[1])?;
    let mut solved = ForcedLevels::new();
    let mut checks = Vec::new();
    for n in 0..=last {
        let path = dir.join(level_file_name(n));
        let table = Table::open_kind(&path, Some((rules, Cycles::Forced, n)))?;
        table.check_file_checksum()?;
        let symbols = table.decode_all()?;
        let histogram_ok = table::histogram(&symbols) == table.header().histogram;
        let level = ForcedLevel::from_symbols(n, &symbols).map_err(|at| Error::Corrupted {
            path: path.clone(),
            what: format!("impossible bounds stored for index {at}"),
        })?;
        drop(symbols);
        mover_scratch.hold(&mut solved.mover, n, level.mover)?;
        opponent_scratch.hold(&mut solved.opponent, n, level.opponent)?;
        if n < from {
            continue;
        }
        let mut check = check_forced_level(rules, n, &solved, histogram_ok);
        check.exact = table.header().exact_positions();
        report(&check);
        checks.push(check);
    }
    Ok(checks)
}

/// Forced verification's scratch subdirectories.
const FORCED_VERIFY_SCRATCH_DIRS: [&str; 2] = ["verify-scratch-mover", "verify-scratch-opponent"];

/// The highest level `n` such that every level `0..=n` has a file in `dir`
/// (0 if none).
fn last_level(dir: &Path) -> u32 {
    (0..)
        .take_while(|&n| dir.join(level_file_name(n)).is_file())
        .last()
        .unwrap_or(0)
}

/// Recomputes the bounds of every position of level `n` (already in
/// `solved`) from its children.
pub fn check_forced_level(
    rules: &Rules,
    n: u32,
    solved: &ForcedLevels,
    histogram_ok: bool,
) -> LevelCheck<Bounds> {
    let index = LevelIndex::new(rules.pits(), n);
    let (mismatches, first_mismatch) = mismatches(&index, |_, pos| {
        (solved.bounds(pos), recomputed_bounds(rules, pos, solved))
    });
    LevelCheck {
        level: n,
        positions: index.count(),
        mismatches,
        first_mismatch,
        histogram_ok,
        exact: None,
    }
}

/// The one-ply formula of RULES.md: the best move for the mover, the worst
/// for the opponent, or the terminal split.
fn recomputed_bounds(rules: &Rules, pos: &Position, solved: &ForcedLevels) -> Bounds {
    match rules.successors(pos) {
        Successors::Terminal(v) => Bounds::terminal(pos.stones(), v),
        Successors::Moves(moves) => moves
            .iter()
            .map(|m| Bounds::after_move(m, solved.bounds(&m.child)))
            .reduce(|a, b| Bounds {
                mover: a.mover.max(b.mover),
                opponent: a.opponent.min(b.opponent),
            })
            .expect("a non-terminal position has a move"),
    }
}

fn recomputed_value(rules: &Rules, pos: &Position, solved: &SolvedLevels) -> i32 {
    match rules.successors(pos) {
        Successors::Terminal(v) => v,
        Successors::Moves(moves) => moves
            .iter()
            .map(|m| m.value_given_child(solved.value(&m.child)))
            .max()
            .expect("a non-terminal position has a move"),
    }
}

/// Compares `(stored, recomputed) = pair(index, position)` over every
/// position of a level, in parallel: the number that differ and the first
/// one found.
fn mismatches<T: PartialEq + Send>(
    index: &LevelIndex,
    pair: impl Fn(u64, &Position) -> (T, T) + Sync,
) -> (u64, Option<(Position, T, T)>) {
    const CHUNK: u64 = 1 << 14;
    let chunks = index.count().div_ceil(CHUNK);
    (0..chunks)
        .into_par_iter()
        .map(|chunk| {
            let first = chunk * CHUNK;
            let mut bad = (0u64, None);
            let ats = first..index.count().min(first + CHUNK);
            for (at, pos) in ats.zip(index.positions_from(first)) {
                let (stored, expected) = pair(at, &pos);
                if stored != expected {
                    bad.0 += 1;
                    bad.1.get_or_insert((pos, stored, expected));
                }
            }
            bad
        })
        .reduce(|| (0, None), |a, b| (a.0 + b.0, a.1.or(b.1)))
}
