//! Verification: every stored entry re-derived from the tables themselves.
//!
//! For each level, in order, the file's checksums are checked, its entries
//! decoded (a compact table's values restored), and every position's entry
//! recomputed by the one-ply formula of `docs/RULES.md` from the level
//! itself and the lower ones; the stored histogram must match too.
//!
//! For even tables that proves each value is its best move's. For forced
//! tables it shows the bounds are *a* fixpoint, not that they are the
//! *least* one (a cycle whose positions all claimed more would pass too);
//! the least fixpoint is what the generator builds by construction, and the
//! test suite checks it against naive value iteration from 0 and against a
//! search of the real game with its repetition rule.
//!
//! This crate shares no code with the generator: it reads tables through
//! `mancala-format` and moves through `mancala-core`, and recomputes
//! everything else itself.

#![warn(missing_docs)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mancala_core::{Bounds, LevelIndex, Move, Position, Rules, MAX_PITS};
use mancala_format::{
    depth_of, depth_path, dir_name, flip_gathered_bytes, forced_opponent_depth, histogram,
    level_path, levels_available, tables_dir, Depth, Even, Forced, FormatError, Levels, Plies,
    Realized, Rows, Scratch, StoredDepth, Table, TableId, TableKind, MAPPED_MIN_POSITIONS,
};
use rayon::prelude::*;

/// Why a verification ended before its last level.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A table is missing, damaged or unreadable.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// [`VerifyOptions::interrupt`] was set while level `level` was being
    /// loaded or recomputed: the levels reported before it were verified,
    /// and verifying again from `level` resumes.
    #[error("verification interrupted during level {level}; verifying again from level {level} resumes it")]
    Interrupted {
        /// The level to verify from to resume.
        level: u32,
    },
}

/// The outcome of verifying one level of a table of kind `K`.
#[derive(Clone, Debug)]
pub struct LevelCheck<K: TableKind> {
    /// Stones on the board.
    pub level: u32,
    /// Positions checked.
    pub positions: u64,
    /// Positions whose stored entry differs from the recomputed one.
    pub mismatches: u64,
    /// The first mismatch: position, stored entry, recomputed entry.
    pub first_mismatch: Option<(Position, K::Entry, K::Entry)>,
    /// The header's histogram agrees with the entries.
    pub histogram_ok: bool,
    /// Forced tables: positions whose bounds meet.
    pub exact: Option<u64>,
    /// Even tables with a depth table for the level: its check.
    pub depths: Option<DepthCheck>,
    /// The time taken to read the level's table and hold it decoded (its
    /// checksums checked); for the first level checked, the levels below
    /// it too.
    pub loading: Duration,
    /// The time taken to recompute the level's entries (and its depths).
    pub checking: Duration,
}

/// The check of a level's depth table (`docs/RULES.md`, "Depth to
/// conversion"): each stored depth against the one the definition gives
/// from the values and the stored depths of the children.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepthCheck {
    /// Positions whose stored depth differs from the definition's.
    pub mismatches: u64,
    /// The first one: position, stored depth, the definition's depth.
    pub first_mismatch: Option<(Position, Plies, Plies)>,
    /// The longest depth stored.
    pub longest: Option<u16>,
}

impl<K: TableKind> LevelCheck<K> {
    /// Whether the level passed.
    pub fn ok(&self) -> bool {
        self.mismatches == 0
            && self.histogram_ok
            && self.depths.as_ref().is_none_or(|d| d.mismatches == 0)
    }
}

/// What the one-ply formula needs of a move: the stones it stores, and
/// whether the mover moves again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Stones put into the mover's store.
    pub gain: u8,
    /// Kalah: the mover moves again, the child seen from him.
    pub extra_turn: bool,
}

impl Step {
    /// The move as [`Move`]'s formulas take it (its child is not needed).
    fn as_move(self) -> Move {
        Move {
            gain: self.gain,
            extra_turn: self.extra_turn,
            ..Move::default()
        }
    }
}

/// A kind of table as the verifier recomputes it.
pub trait Recompute: TableKind {
    /// The entry of a position with moves `steps`, whose children hold
    /// `children` (in the same order), by the one-ply formula.
    fn from_children(steps: &[Step], children: &[Self::Entry]) -> Self::Entry;

    /// The entry of a terminal position of `stones` stones worth `value`
    /// to the mover.
    fn terminal(stones: u32, value: i32) -> Self::Entry;

    /// Checks level `n`'s depth table in `dir`, if the kind has depths and
    /// the table is there, against the values in `levels`.
    fn check_depths(
        _rules: &Rules,
        _dir: &Path,
        _n: u32,
        _levels: &Levels<Self>,
    ) -> Result<Option<DepthCheck>, VerifyError> {
        Ok(None)
    }
}

impl Recompute for Even {
    /// The best move's value.
    fn from_children(steps: &[Step], children: &[i8]) -> i8 {
        steps
            .iter()
            .zip(children)
            .map(|(step, &child)| step.as_move().value_given_child(child.into()))
            .max()
            .expect("a non-terminal position has a move") as i8
    }

    fn terminal(_stones: u32, value: i32) -> i8 {
        value as i8
    }

    fn check_depths(
        rules: &Rules,
        dir: &Path,
        n: u32,
        levels: &Levels<Even>,
    ) -> Result<Option<DepthCheck>, VerifyError> {
        let Some((table, stored)) = depth_table::<Even>(rules, dir, n)? else {
            return Ok(None);
        };
        Ok(Some(depth_mismatches(rules, n, levels, &table, &stored)))
    }
}

/// Level `n`'s depth table of values of kind `V` in `dir` and its decoded
/// symbols, checksums checked, if there is one.
#[allow(clippy::type_complexity)]
fn depth_table<V: Realized>(
    rules: &Rules,
    dir: &Path,
    n: u32,
) -> Result<Option<(Table<Depth<V>>, Vec<i8>)>, VerifyError> {
    let path = depth_path(dir, n);
    if !path.exists() {
        return Ok(None);
    }
    let expected = TableId {
        rules: *rules,
        level: n,
    };
    let table = Table::<Depth<V>>::open(&path, Some(expected))?;
    table.check_file_checksum()?;
    let stored = table.decode_entries(&Levels::new())?;
    Ok(Some((table, stored)))
}

/// The depth `table` (whose symbols are `stored`) stores for the position
/// at index `at`: its symbol, or its entry in the list of long ones.
fn stored_depth<V: Realized>(
    table: &Table<Depth<V>>,
    stored: &[i8],
    at: u64,
) -> Result<u16, FormatError> {
    let n = table.header().level;
    match Depth::<V>::read(n, &stored[at as usize..=at as usize]) {
        StoredDepth::Plies(plies) => Ok(plies),
        StoredDepth::Long => table.long_depth(at),
    }
}

/// Compares, at every position of level `n`, the table's depth with the
/// definition's (`depths` gives both) and counts the mismatches.
fn check_depth_level(
    rules: &Rules,
    n: u32,
    depths: impl Fn(&Position) -> (Plies, Plies) + Sync,
) -> DepthCheck {
    let index = LevelIndex::new(rules.pits(), n);
    const CHUNK: u64 = 1 << 14;
    (0..index.count().div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let first = chunk * CHUNK;
            let mut check = DepthCheck::default();
            let count = CHUNK.min(index.count() - first);
            for pos in index.positions_from(first).take(count as usize) {
                let (stored, wanted) = depths(&pos);
                check.longest = check.longest.max(stored.0);
                if stored != wanted {
                    check.mismatches += 1;
                    check.first_mismatch.get_or_insert((pos, stored, wanted));
                }
            }
            check
        })
        .reduce(DepthCheck::default, |a, b| DepthCheck {
            mismatches: a.mismatches + b.mismatches,
            first_mismatch: a.first_mismatch.or(b.first_mismatch),
            longest: a.longest.max(b.longest),
        })
}

/// Checks every depth of level `n` that `table` (whose symbols are
/// `stored`) gives, read as `docs/FORMAT.md` says with the values in
/// `levels`, by the definition, from the values and the table's depths of
/// the children: none where the value is 0, 0 at a terminal position, else
/// over the moves that keep the value, 1 for one that leaves the level and
/// one more than the child's depth for another, the least where the mover
/// is ahead and the most where he is behind.
fn depth_mismatches(
    rules: &Rules,
    n: u32,
    levels: &Levels<Even>,
    table: &Table<Depth>,
    stored: &[i8],
) -> DepthCheck {
    let index = LevelIndex::new(rules.pits(), n);
    let value_of = |pos: &Position| i32::from(levels.entry(pos));
    let stored_of = |pos: &Position| stored_depth(table, stored, index.rank(pos));
    // The table's depth of a position; a long depth missing from the list
    // is none, which no position worth other than 0 has.
    let depth_at = |pos: &Position| -> Plies {
        let value = value_of(pos);
        let depth = depth_of(rules, pos, value, |c| Ok(value_of(c)), stored_of);
        Plies(depth.unwrap_or(None))
    };
    let expected = |pos: &Position| -> Plies {
        let value = value_of(pos);
        if value == 0 {
            return Plies(None);
        }
        let mut terms = Vec::with_capacity(MAX_PITS);
        let terminal = rules.for_each_move(pos, |m| {
            let worth = m.value_given_child(value_of(&m.child));
            if worth == value {
                let plies = if m.leaves_level() {
                    Some(1)
                } else {
                    depth_at(&m.child).0.map(|d| u32::from(d) + 1)
                };
                // A child without a depth where it must have one: no
                // depth is consistent.
                terms.push(plies.unwrap_or(u32::MAX));
            }
        });
        let plies = match terminal {
            Some(_) => Some(0),
            None if value > 0 => terms.iter().min().copied(),
            None => terms.iter().max().copied(),
        };
        Plies(plies.and_then(|p| u16::try_from(p).ok()))
    };
    check_depth_level(rules, n, |pos| {
        let stored = depth_at(pos);
        // Where the mover is behind the table's depth is the definition
        // over its children's table depths already (`depth_of`); the check
        // is where depths are stored.
        let wanted = match value_of(pos) < 0 {
            true => stored,
            false => expected(pos),
        };
        (stored, wanted)
    })
}

/// [`depth_mismatches`] of a depth table of forced bounds: where the
/// mover's bound is not 0, his stored depth against the definition's: 0
/// at a terminal position, else the least, over the moves that keep his
/// bound, of 1 for one that leaves the level and one more than the
/// child's depth for his opponent's bound there (read from the
/// grandchildren's stored depths, `forced_opponent_depth`) for another.
fn forced_depth_mismatches(
    rules: &Rules,
    n: u32,
    levels: &Levels<Forced>,
    table: &Table<Depth<Forced>>,
    stored: &[i8],
) -> DepthCheck {
    let index = LevelIndex::new(rules.pits(), n);
    let bounds_of = |pos: &Position| -> Result<Bounds, FormatError> { Ok(levels.entry(pos)) };
    let stored_of = |pos: &Position| stored_depth(table, stored, index.rank(pos));
    // A long depth missing from the list is none, which no position whose
    // bound is not 0 has.
    let opponent_depth = |pos: &Position| {
        forced_opponent_depth(rules, pos, levels.entry(pos), bounds_of, stored_of).unwrap_or(None)
    };
    check_depth_level(rules, n, |pos| {
        let bounds = levels.entry(pos);
        if bounds.mover == 0 {
            return (Plies(None), Plies(None));
        }
        let stored = Plies(stored_of(pos).ok());
        let mut least: Option<u32> = None;
        let terminal = rules.for_each_move(pos, |m| {
            if Bounds::after_move(m, levels.entry(&m.child)).mover != bounds.mover {
                return;
            }
            let plies = if m.leaves_level() {
                1
            } else {
                // A child without a depth where it must have one: no depth
                // is consistent.
                opponent_depth(&m.child).map_or(u32::MAX, |d| u32::from(d) + 1)
            };
            least = Some(least.map_or(plies, |l| l.min(plies)));
        });
        let wanted = match terminal {
            Some(_) => Some(0),
            None => least.and_then(|p| u16::try_from(p).ok()),
        };
        (stored, Plies(wanted))
    })
}

impl Recompute for Forced {
    /// The best move for the mover, the worst for the opponent.
    fn from_children(steps: &[Step], children: &[Bounds]) -> Bounds {
        steps
            .iter()
            .zip(children)
            .map(|(step, &child)| Bounds::after_move(&step.as_move(), child))
            .reduce(|a, b| Bounds {
                mover: a.mover.max(b.mover),
                opponent: a.opponent.min(b.opponent),
            })
            .expect("a non-terminal position has a move")
    }

    fn terminal(stones: u32, value: i32) -> Bounds {
        Bounds::terminal(stones, value)
    }

    fn check_depths(
        rules: &Rules,
        dir: &Path,
        n: u32,
        levels: &Levels<Forced>,
    ) -> Result<Option<DepthCheck>, VerifyError> {
        let Some((table, stored)) = depth_table::<Forced>(rules, dir, n)? else {
            return Ok(None);
        };
        Ok(Some(forced_depth_mismatches(
            rules, n, levels, &table, &stored,
        )))
    }
}

/// What a verification recomputes, and where it holds the levels it reads.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Recompute from this level up only; the levels below are loaded
    /// (their checksums are checked) but not recomputed: this resumes a
    /// long verification.
    pub from: u32,
    /// Up to this level (default: the last one available).
    pub to: Option<u32>,
    /// Where levels held as mapped files go, in a directory of their own
    /// (so the tables may be read-only), created only if needed and
    /// removed at the end. An interrupted verification leaves the levels
    /// it decoded from tables there, and the next one over the same
    /// tables maps them instead of decoding them again
    /// ([`Scratch::reusable`]); two verifications at once of the same
    /// tables take a directory each.
    pub scratch: PathBuf,
    /// Bytes of decoded levels to hold in memory rather than as mapped
    /// files: each level recomputed, if it fits (its positions look up
    /// their own level at random), the lower levels moved to scratch files
    /// to make room as needed; the levels below `from` smallest first in
    /// what the first one leaves. A machine with room spares its disk the
    /// scratch files (default: only the levels under
    /// `mapped_min_positions`). What a level's table takes while it is
    /// flipped into its scratch file comes out of them.
    pub memory: Option<u64>,
    /// Levels of at least this many positions are held as mapped files
    /// unless `memory` has room for them (default
    /// [`MAPPED_MIN_POSITIONS`]; tests lower it to take the large levels'
    /// path on small ones).
    pub mapped_min_positions: u64,
    /// Once set (by a signal handler, say), the verification stops within
    /// a moment and returns [`VerifyError::Interrupted`], leaving the
    /// levels it decoded in its scratch directory for the verification
    /// that resumes it; a level being loaded is finished first.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl VerifyOptions {
    /// Every level, with scratch files in `scratch` and the default memory.
    pub fn new(scratch: impl Into<PathBuf>) -> VerifyOptions {
        VerifyOptions {
            from: 0,
            to: None,
            scratch: scratch.into(),
            memory: None,
            mapped_min_positions: MAPPED_MIN_POSITIONS,
            interrupt: None,
        }
    }

    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.load(Relaxed))
    }
}

/// What a long verification tells as it goes: one unit a position
/// recomputed, the levels' total first.
pub use mancala_core::{Progress, Quiet};

/// Verifies levels `from..=max` of the tables of kind `K` of `rules` under
/// `root` (up to the last level available if `max` is `None`), calling
/// `report` after each one, with scratch files in `scratch`:
/// [`verify_with`] with [`VerifyOptions::new`].
pub fn verify<K: Recompute>(
    root: &Path,
    rules: &Rules,
    from: u32,
    max: Option<u32>,
    scratch: &Path,
    report: impl FnMut(&LevelCheck<K>),
) -> Result<Vec<LevelCheck<K>>, VerifyError> {
    let options = VerifyOptions {
        from,
        to: max,
        ..VerifyOptions::new(scratch)
    };
    verify_with(root, rules, &options, &Quiet, report)
}

/// Verifies the levels `options` selects of the tables of kind `K` of
/// `rules` under `root`, telling `progress` as it goes and calling
/// `report` after each level. A level missing that no level above it up to
/// the last one needs (`Rules::levels_needed`), such as the level a
/// `--top-only` build skips, is passed over. Levels held neither in memory
/// nor under the mapping threshold are held as mapped files, flipped.
/// Stops at the first file that is missing, fails its checksums or does
/// not decode, or when `options.interrupt` is set.
pub fn verify_with<K: Recompute>(
    root: &Path,
    rules: &Rules,
    options: &VerifyOptions,
    progress: &dyn Progress,
    mut report: impl FnMut(&LevelCheck<K>),
) -> Result<Vec<LevelCheck<K>>, VerifyError> {
    let dir = tables_dir(root, rules, K::CYCLES);
    let max = options.to;
    let available = levels_available(&dir, rules, max.unwrap_or(mancala_core::MAX_LEVEL));
    let last = max.unwrap_or_else(|| available.last().copied().unwrap_or(0));
    let (scratch_dir, lock) = scratch_dir(&options.scratch, &dir, rules, K::CYCLES)?;
    // Held flipped, a level is read by a band of opponent's rows in a few
    // stretches (`TILE`), so a level too large for the page cache is read
    // from disk nearly in sequence.
    let mut scratch = Scratch::new(scratch_dir, options.mapped_min_positions).flipped(rules.pits());
    if lock.is_some() {
        scratch = scratch.reusable();
    }
    // Each level checked is read the most (its own entries and most of its
    // children's): so it is held in memory, if it fits, the first one's
    // room set aside while the levels below it are loaded, and the lower
    // levels moved to scratch files as the levels checked grow.
    let bytes_of = |n: u32| LevelIndex::new(rules.pits(), n).count() * K::WIDTH as u64;
    let budget = options
        .memory
        .map(|bytes| bytes.saturating_sub(flip_gathered_bytes(rules.pits(), last, K::WIDTH)));
    let checked_in_memory = |n: u32| n >= options.from && budget.is_some_and(|b| bytes_of(n) <= b);
    let set_aside = if options.from <= last && checked_in_memory(options.from) {
        bytes_of(options.from)
    } else {
        0
    };
    if let Some(budget) = budget {
        scratch = scratch.with_memory(budget - set_aside);
    }
    let held = |n: u32| {
        let needed_above = (n + 1..=last).any(|m| rules.reaches(m, n));
        n == last || available.binary_search(&n).is_ok() || needed_above
    };
    progress.started(
        (options.from..=last)
            .filter(|&n| held(n))
            .map(|n| LevelIndex::new(rules.pits(), n).count())
            .sum(),
    );
    let mut check_levels = || -> Result<Vec<LevelCheck<K>>, VerifyError> {
        let mut levels = Levels::<K>::new();
        let mut checks = Vec::new();
        let mut loading = Instant::now();
        let interrupted = |n: u32| VerifyError::Interrupted {
            level: n.max(options.from),
        };
        for n in 0..=last {
            if options.interrupted() {
                return Err(interrupted(n));
            }
            if !held(n) {
                levels.push_unreached();
                continue;
            }
            let expected = TableId {
                rules: *rules,
                level: n,
            };
            let table = Table::<K>::open(&level_path(&dir, n), Some(expected))?;
            table.check_file_checksum()?;
            if n == options.from {
                scratch.grant(set_aside);
            }
            if checked_in_memory(n) {
                scratch.reserve(&mut levels, bytes_of(n))?;
            }
            scratch.hold_table(&mut levels, &table)?;
            if n < options.from {
                continue;
            }
            let checking = Instant::now();
            let positions = table.header().positions;
            progress.level_started(n, positions, positions);
            let histogram_ok = histogram(levels.symbols(n)) == table.header().histogram;
            let stop = options.interrupt.as_deref();
            let mut check = check_level(rules, n, &levels, histogram_ok, progress, stop);
            if options.interrupted() {
                return Err(interrupted(n));
            }
            check.exact = table.header().exact_positions();
            check.depths = K::check_depths(rules, &dir, n, &levels)?;
            (check.loading, check.checking) = (checking - loading, checking.elapsed());
            loading = Instant::now();
            report(&check);
            checks.push(check);
        }
        Ok(checks)
    };
    let checked = check_levels();
    // Kept for the verification that resumes this one; else of no more use.
    if !matches!(checked, Err(VerifyError::Interrupted { .. })) {
        scratch.clear()?;
    }
    drop(lock);
    checked
}

/// The directory in `root` for the scratch files of a verification of the
/// tables in `tables` (of `rules` and `cycles`), and the lock that makes
/// it this process's own: one named after the tables, so that a
/// verification resumed later finds the levels the interrupted one left
/// there; or, if another verification holds that one, a directory named
/// after this process, not to be reused (no lock).
fn scratch_dir(
    root: &Path,
    tables: &Path,
    rules: &Rules,
    cycles: mancala_core::Cycles,
) -> Result<(PathBuf, Option<std::fs::File>), VerifyError> {
    let full = tables
        .canonicalize()
        .unwrap_or_else(|_| tables.to_path_buf());
    let digest = crc32fast::hash(full.as_os_str().as_encoded_bytes());
    let name = format!("mancala-tb-verify-{}-{digest:08x}", dir_name(rules, cycles));
    let path = root.join(format!("{name}.lock"));
    let io = |e| VerifyError::Format(FormatError::io(&path, e));
    std::fs::create_dir_all(root).map_err(io)?;
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match lock.try_lock() {
        Ok(()) => Ok((root.join(name), Some(lock))),
        Err(std::fs::TryLockError::WouldBlock) => {
            Ok((root.join(format!("{name}-{}", std::process::id())), None))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}

/// Recomputes every entry of level `n` (already in `levels`), unless
/// `stop` is set meanwhile.
fn check_level<K: Recompute>(
    rules: &Rules,
    n: u32,
    levels: &Levels<K>,
    histogram_ok: bool,
    progress: &dyn Progress,
    stop: Option<&AtomicBool>,
) -> LevelCheck<K> {
    let index = LevelIndex::new(rules.pits(), n);
    let (mismatches, first_mismatch) = mismatches(rules, &index, levels, progress, stop);
    LevelCheck {
        level: n,
        positions: index.count(),
        mismatches,
        first_mismatch,
        histogram_ok,
        exact: None,
        depths: None,
        loading: Duration::ZERO,
        checking: Duration::ZERO,
    }
}

/// Positions whose lookups are issued together: their children's entries
/// are located and prefetched before any is read, so that the misses of a
/// batch's random reads overlap rather than add up.
const BATCH: usize = 32;

/// A position of a batch: where its own entry is, and its moves with where
/// their children's entries are, or its terminal value. Filled in place,
/// batch after batch: no move list is built or copied.
#[derive(Clone, Copy, Default)]
struct Looked {
    pos: Position,
    at: u64,
    terminal: Option<i32>,
    steps: [Step; MAX_PITS],
    children: [(u32, u64); MAX_PITS],
    moves: usize,
}

impl Looked {
    /// Looks at every move of `pos`, of level `n`, whose entry is at `at`,
    /// locating (and prefetching) its own entry and its children's in
    /// `levels`.
    #[inline]
    fn look<K: TableKind>(
        &mut self,
        rules: &Rules,
        levels: &Levels<K>,
        n: u32,
        pos: Position,
        at: u64,
    ) {
        self.moves = 0;
        self.terminal = rules.for_each_move(&pos, |m| {
            // Stones leave the board only into the mover's store.
            let stones = n - u32::from(m.gain);
            debug_assert_eq!(stones, m.child.stones());
            self.steps[self.moves] = Step {
                gain: m.gain,
                extra_turn: m.extra_turn,
            };
            self.children[self.moves] = (stones, levels.locate_prefetched(stones, &m.child));
            self.moves += 1;
        });
        debug_assert_eq!(at, levels.locate(n, &pos));
        levels.prefetch(n, at);
        (self.pos, self.at) = (pos, at);
    }

    /// The entry the one-ply formula gives, from the entries located.
    #[inline]
    fn recomputed<K: Recompute>(&self, n: u32, levels: &Levels<K>) -> K::Entry {
        if let Some(value) = self.terminal {
            return K::terminal(n, value);
        }
        let mut entries = [K::terminal(0, 0); MAX_PITS];
        for (entry, &(stones, at)) in entries.iter_mut().zip(&self.children[..self.moves]) {
            *entry = levels.entry_at(stones, at);
        }
        K::from_children(&self.steps[..self.moves], &entries[..self.moves])
    }
}

/// A position, its stored entry and its recomputed one.
type Mismatch<K> = (Position, <K as TableKind>::Entry, <K as TableKind>::Entry);

/// Rows per side of a tile of a rectangle, the positions checked together.
///
/// By one move, the children of the positions sharing a mover's row `M`
/// share their opponent's row (`M` sown), so they lie in one short stretch
/// of a level held by rank; those of the positions sharing an opponent's
/// row `R` (the move sowing as many stones into it) share their mover's
/// row, one short stretch of a level held flipped. The positions' own
/// entries are stretches of either too. So a tile reads its own entries
/// and its children's from a few stretches, whichever order each level is
/// held in, and its neighbour reads them again from the caches: the level
/// checked and the levels below are read nearly in sequence instead of at
/// random.
const TILE: usize = 64;

/// Positions of a unit of parallel work, at least.
const UNIT: usize = 1 << 15;

/// Compares the stored and recomputed entries of every position of a
/// level, tile by tile, a rectangle at a time, each in parallel: the
/// number that differ and the first one found. Once `stop` is set, the
/// units not yet begun are passed over.
fn mismatches<K: Recompute>(
    rules: &Rules,
    index: &LevelIndex,
    levels: &Levels<K>,
    progress: &dyn Progress,
    stop: Option<&AtomicBool>,
) -> (u64, Option<Mismatch<K>>) {
    let (pits, n) = (rules.pits(), index.stones());
    let mut found = (0, None);
    for a in 0..=n {
        let (movers, opponents) = (Rows::new(pits, a, n - a), Rows::new(pits, n - a, a));
        let at = |m: usize, r: usize| levels.locate_rows(n, movers.rank(m), opponents.rank(r));
        // A unit is a band of the opponent's rows against every mover's row.
        let band = UNIT.div_ceil(movers.len()).next_multiple_of(TILE);
        let bands = (0..opponents.len())
            .step_by(band)
            .map(|r| r..(r + band).min(opponents.len()));
        let bad = bands
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|band| {
                if stop.is_some_and(|s| s.load(Relaxed)) {
                    return (0, None);
                }
                let tiles = tiles(movers.len(), band.clone()).map(|(m, r)| {
                    let pos = Position::from_rows(movers.row(m), opponents.row(r));
                    (pos, at(m, r))
                });
                let bad = check_positions(rules, n, levels, tiles);
                progress.advanced((movers.len() * band.len()) as u64);
                bad
            })
            .reduce(|| (0, None), |a, b| (a.0 + b.0, a.1.or(b.1)));
        found = (found.0 + bad.0, found.1.or(bad.1));
    }
    found
}

/// The pairs `(m, r)` of movers `0..movers` by opponents `band`, tile by
/// tile.
fn tiles(movers: usize, band: Range<usize>) -> impl Iterator<Item = (usize, usize)> {
    (0..movers).step_by(TILE).flat_map(move |m0| {
        band.clone().step_by(TILE).flat_map(move |r0| {
            let rs = r0..(r0 + TILE).min(band.end);
            (m0..(m0 + TILE).min(movers)).flat_map(move |m| rs.clone().map(move |r| (m, r)))
        })
    })
}

/// Compares the stored and recomputed entries of `positions` (each with
/// where its entry is), a batch at a time.
fn check_positions<K: Recompute>(
    rules: &Rules,
    n: u32,
    levels: &Levels<K>,
    mut positions: impl Iterator<Item = (Position, u64)>,
) -> (u64, Option<Mismatch<K>>) {
    let mut bad = (0u64, None);
    let mut batch = [Looked::default(); BATCH];
    loop {
        let mut len = 0;
        for (looked, (pos, at)) in batch.iter_mut().zip(positions.by_ref()) {
            looked.look(rules, levels, n, pos, at);
            len += 1;
        }
        for looked in &batch[..len] {
            let expected = looked.recomputed(n, levels);
            let stored = levels.entry_at(n, looked.at);
            if stored != expected {
                bad.0 += 1;
                bad.1.get_or_insert((looked.pos, stored, expected));
            }
        }
        if len < BATCH {
            return bad;
        }
    }
}
