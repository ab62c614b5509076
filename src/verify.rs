//! Verification: every stored value re-derived from the tables.
//!
//! For each level, in order, the file's checksums are checked, its values
//! decoded, and every position's value recomputed as the best of its moves
//! (children looked up in the level itself and the lower ones) or, for a
//! terminal position, its terminal value per RULES.md. The stored histogram
//! must match the values too.

use std::path::Path;

use rayon::prelude::*;

use crate::error::Result;
use crate::index::{self, LevelIndex};
use crate::position::Position;
use crate::rules::{Rules, Successors};
use crate::scratch::{Scratch, MAPPED_MIN_POSITIONS};
use crate::solver::SolvedLevels;
use crate::table::{self, level_file_name, Table};

/// Subdirectory of a rule set's tables holding verification scratch files
/// (apart from the build's, so both may run at once).
const VERIFY_SCRATCH_DIR: &str = "verify-scratch";
use crate::tablebase::tables_dir;

/// The outcome of verifying one level.
#[derive(Clone, Debug)]
pub struct LevelCheck {
    /// Stones on the board.
    pub level: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose stored value differs from the recomputed one.
    pub mismatches: u64,
    /// The first mismatch: position, stored value, recomputed value.
    pub first_mismatch: Option<(Position, i32, i32)>,
    /// The header's histogram agrees with the values.
    pub histogram_ok: bool,
}

impl LevelCheck {
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
    let last = match max {
        Some(m) => m,
        None => (0..)
            .take_while(|&n| dir.join(level_file_name(n)).is_file())
            .last()
            .unwrap_or(0),
    };
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
    const CHUNK: usize = 1 << 14;
    let (mismatches, first_mismatch) = stored
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(chunk, values)| {
            let mut pos = index.unrank((chunk * CHUNK) as u64);
            let mut bad = (0u64, None);
            for (i, &value) in values.iter().enumerate() {
                if i > 0 {
                    index::advance(&mut pos);
                }
                let expected = recomputed_value(rules, &pos, solved);
                if expected != value as i32 {
                    bad.0 += 1;
                    bad.1.get_or_insert((pos, value as i32, expected));
                }
            }
            bad
        })
        .reduce(|| (0, None), |a, b| (a.0 + b.0, a.1.or(b.1)));
    LevelCheck {
        level: n,
        positions: index.count(),
        mismatches,
        first_mismatch,
        histogram_ok,
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
