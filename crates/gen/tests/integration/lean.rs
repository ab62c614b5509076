//! The lean mode writes the files the fast mode writes, byte for byte, for
//! every rule set, both encodings and both kinds of table, its larger
//! levels put together in mappings, and leaves none of its lists behind.

use std::fs;
use std::path::Path;

use mancala_core::{Cycles, Rules, Variant};
use mancala_format::{tables_dir, Encoding};
use mancala_format::{Even, Forced};
use mancala_gen::{build, BuildOptions, MemoryMode, Quiet, LEAN_DIR};
use tempfile::TempDir;

/// Positions from which levels are held as mapped files in these tests,
/// so that the lean mode puts its larger levels together in a mapping.
const MAPPED_MIN_POSITIONS: u64 = 20_000;

/// Builds levels `0..=max` of `rules`' `cycles` tables in `memory` mode
/// under `root`.
fn build_in(
    root: &Path,
    rules: Rules,
    max: u32,
    (cycles, encoding): (Cycles, Encoding),
    memory: MemoryMode,
) {
    let options = BuildOptions {
        cycles,
        encoding,
        memory,
        mapped_min_positions: MAPPED_MIN_POSITIONS,
        ..BuildOptions::new(root, rules, max)
    };
    build(&options, &Quiet).unwrap();
}

/// A lean solver keeping its lists under `root`, its levels of 1000
/// positions or more put together in mappings.
fn lean_in(root: &Path) -> mancala_gen::Lean {
    mancala_gen::Lean {
        dir: root.join(LEAN_DIR),
        mapped_min_positions: 1000,
    }
}

/// Every file of `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn assert_lean_writes_what_fast_writes(rules: Rules, max: u32, encoding: Encoding) {
    assert_same_files(rules, max, (Cycles::Even, encoding));
}

fn assert_same_files(rules: Rules, max: u32, tables: (Cycles, Encoding)) {
    assert_same_files_continued(rules, None, max, tables);
}

/// The lean build of levels `0..=max` (after one of `0..=first`, if given,
/// whose tables it then decodes into its flipped scratch files) writes
/// what the fast build writes.
fn assert_same_files_continued(
    rules: Rules,
    first: Option<u32>,
    max: u32,
    tables: (Cycles, Encoding),
) {
    let (cycles, encoding) = tables;
    let (fast, lean) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    build_in(fast.path(), rules, max, tables, MemoryMode::Fast);
    if let Some(first) = first {
        build_in(lean.path(), rules, first, tables, MemoryMode::Lean);
    }
    build_in(lean.path(), rules, max, tables, MemoryMode::Lean);
    let (fast, lean) = (
        tables_dir(fast.path(), &rules, cycles),
        tables_dir(lean.path(), &rules, cycles),
    );
    let (fast_files, lean_files) = (files(&fast), files(&lean));
    let names = |files: &[(String, Vec<u8>)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&lean_files), names(&fast_files), "{}", rules.id());
    for ((name, ours), (_, theirs)) in lean_files.iter().zip(&fast_files) {
        assert!(
            ours == theirs,
            "{} {cycles:?} {encoding:?} {name}: the lean file differs",
            rules.id()
        );
    }
    assert!(
        !lean.join(LEAN_DIR).exists(),
        "the lean lists are left behind"
    );
}

#[test]
fn lean_builds_every_rule_set_byte_for_byte() {
    for (variant, pits, max) in [
        (Variant::Oware, 6, 9),
        (Variant::Oware, 3, 14),
        (Variant::Awari, 6, 8),
        (Variant::Awari, 4, 12),
        (Variant::Wari, 6, 8),
        (Variant::Wari, 2, 16),
        (Variant::Kalah, 6, 8),
        (Variant::Kalah, 3, 12),
        // More than six pits: a byte a position instead of four bits.
        (Variant::Oware, 8, 6),
        (Variant::Kalah, 7, 6),
    ] {
        let rules = Rules::new(variant, pits).unwrap();
        assert_lean_writes_what_fast_writes(rules, max, Encoding::Full);
        if Encoding::Compact.applies_to(&rules) {
            assert_lean_writes_what_fast_writes(rules, max, Encoding::Compact);
        }
    }
    let no_empty_capture = Rules::new(Variant::Kalah, 4)
        .unwrap()
        .with_empty_capture(false);
    assert_lean_writes_what_fast_writes(no_empty_capture, 10, Encoding::Full);
}

/// A lean build over tables already on disk decodes them into flipped
/// scratch files (a compact table's values restored from flipped levels
/// below) and still writes the fast mode's files.
#[test]
fn lean_builds_over_existing_tables_byte_for_byte() {
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    for encoding in [Encoding::Full, Encoding::Compact] {
        assert_same_files_continued(oware, Some(7), 9, (Cycles::Even, encoding));
    }
    assert_same_files_continued(oware, Some(7), 9, (Cycles::Forced, Encoding::Full));
    let kalah = Rules::new(Variant::Kalah, 4).unwrap();
    assert_same_files_continued(kalah, Some(11), 12, (Cycles::Forced, Encoding::Full));
}

#[test]
fn lean_builds_forced_bounds_byte_for_byte() {
    for (variant, pits, max) in [
        (Variant::Oware, 6, 8),
        (Variant::Oware, 3, 12),
        (Variant::Awari, 4, 10),
        (Variant::Wari, 2, 14),
        (Variant::Kalah, 3, 10),
        (Variant::Awari, 8, 5),
    ] {
        let rules = Rules::new(variant, pits).unwrap();
        assert_same_files(rules, max, (Cycles::Forced, Encoding::Full));
    }
}

/// A lean level killed in the middle of its thresholds resumes from its
/// last checkpoint (skipping the forward pass, its lists still on disk)
/// and ends with the fast mode's values, leaving no list behind; a damaged
/// checkpoint is ignored and the level solved afresh.
#[test]
fn an_interrupted_lean_level_resumes_from_its_checkpoint() {
    let dir = TempDir::new().unwrap();
    let lean = lean_in(dir.path());
    let no_lists_left = || {
        assert!(
            !lean.dir.join("level-009").exists(),
            "the level's lists are left behind"
        )
    };
    for depths in [false, true] {
        crate::tables::assert_resumes_from_its_checkpoint::<Even>(
            &|job| lean.solve(job).unwrap(),
            &no_lists_left,
            depths,
        );
        crate::tables::assert_resumes_from_its_checkpoint::<Forced>(
            &|job| lean.solve(job).unwrap(),
            &no_lists_left,
            depths,
        );
    }
}

/// A lean level stopped in the middle of its forward pass saves where its
/// exit lists stand; started again, it lists only the positions after
/// them (the first units it reports are resumed ones), and ends with the
/// default strategy's values. Both kinds of table.
#[test]
fn an_interrupted_forward_pass_resumes_from_its_checkpoint() {
    assert_forward_pass_resumes::<Even>(&|lean, job| lean.solve(job));
    assert_forward_pass_resumes::<Forced>(&|lean, job| lean.solve(job));
}

/// The level a lean solver solves for a job of kind `K`.
type LeanSolve<K> = dyn Fn(
    &mancala_gen::Lean,
    &mancala_gen::LevelJob<K>,
) -> Result<mancala_gen::Solution, mancala_gen::BuildError>;

fn assert_forward_pass_resumes<K: mancala_gen::Solve>(solve: &LeanSolve<K>) {
    use mancala_core::LevelIndex;
    use mancala_gen::{solve_in_memory, Checkpoints, LevelJob, Retrograde, Strategy};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let n = 10;
    let count = LevelIndex::new(6, n).count();
    let lower = solve_in_memory::<K>(&oware, n - 1);
    let dir = TempDir::new().unwrap();
    let lean = lean_in(dir.path());
    let checkpoints = Checkpoints {
        dir: dir.path().join("checkpoints"),
        every: std::time::Duration::from_secs(3600),
    };
    let interrupt = AtomicBool::new(false);
    let (done, resumed) = (AtomicU64::new(0), AtomicU64::new(0));
    let progress = |units| {
        if done.fetch_add(units, SeqCst) + units > count / 2 {
            interrupt.store(true, SeqCst);
        }
    };
    let report_resumed = |units| {
        resumed.fetch_add(units, SeqCst);
    };
    let job = |interrupt| LevelJob {
        rules: &oware,
        level: n,
        lower: &lower,
        progress: &progress,
        resumed: Some(&report_resumed),
        checkpoints: Some(&checkpoints),
        interrupt,
        mark_exits: false,
        depths: None,
    };

    let stopped = solve(&lean, &job(Some(&interrupt)));
    assert!(
        matches!(stopped, Err(mancala_gen::BuildError::Interrupted)),
        "not interrupted"
    );
    let listed = done.load(SeqCst);
    assert!(listed > count / 2 && listed < count, "stopped at {listed}");
    assert!(checkpoints.path(n).exists(), "no checkpoint was written");

    done.store(0, SeqCst);
    let solution = solve(&lean, &job(None)).unwrap();
    assert_eq!(
        resumed.load(SeqCst),
        listed,
        "did not resume where it stopped"
    );
    assert_eq!(done.load(SeqCst), 2 * count - listed, "work miscounted");
    let expected = Retrograde::local()
        .solve(&LevelJob {
            checkpoints: None,
            resumed: None,
            ..job(None)
        })
        .unwrap();
    assert!(
        solution.held_symbols() == expected.held_symbols(),
        "resumed level differs"
    );
    assert!(
        !lean.dir.join(format!("level-{n:03}")).exists(),
        "the level's lists are left behind"
    );
}

/// With a memory budget, the lower levels that fit stay in memory (a
/// level the lean mode put together in a mapping copied out of it) and
/// the rest are mapped: the files are still the fast mode's.
#[test]
fn builds_within_a_memory_budget_byte_for_byte() {
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let reference = TempDir::new().unwrap();
    build_in(
        reference.path(),
        oware,
        9,
        (Cycles::Even, Encoding::Full),
        MemoryMode::Fast,
    );
    for memory in [MemoryMode::Fast, MemoryMode::Lean] {
        let root = TempDir::new().unwrap();
        let mut options = BuildOptions {
            memory,
            mapped_min_positions: MAPPED_MIN_POSITIONS,
            ..BuildOptions::new(root.path(), oware, 9)
        };
        // Room for levels 0–7 beside level 9's state, not for level 8.
        options.max_memory = Some(options.solving_bytes() + 120_000);
        build(&options, &Quiet).unwrap();
        let dir = |root: &Path| tables_dir(root, &oware, Cycles::Even);
        assert!(
            files(&dir(root.path())) == files(&dir(reference.path())),
            "{memory:?}: the files differ"
        );
    }
}

/// Counts a build's work in its top level, and if it `stops`, asks the
/// build to stop once a quarter of that level's thresholds are done; notes
/// whether the lower levels' scratch directory exists when the top level
/// starts, and when it goes after the forward pass (and whether it comes
/// back).
struct StopInTopLevel {
    top: u32,
    stops: bool,
    scratch: std::path::PathBuf,
    interrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
    in_top: std::sync::atomic::AtomicBool,
    positions: std::sync::atomic::AtomicU64,
    done: std::sync::atomic::AtomicU64,
    /// Units reported as done by an earlier run.
    resumed: std::sync::atomic::AtomicU64,
    scratch_at_start: std::sync::atomic::AtomicBool,
    /// Units done at the first report past the forward pass that found
    /// no scratch directory (0 if none did).
    scratch_gone_at: std::sync::atomic::AtomicU64,
    scratch_back: std::sync::atomic::AtomicBool,
    /// A file a killed run's frontier left, if one is planted, and whether
    /// it was still there as the top level advanced.
    stale_frontier: Option<std::path::PathBuf>,
    stale_frontier_seen: std::sync::atomic::AtomicBool,
}

impl StopInTopLevel {
    /// Watches level `top` of the tables in `dir`, nothing done yet.
    fn new(top: u32, stops: bool, dir: &Path) -> Self {
        use std::sync::atomic::{AtomicBool, AtomicU64};
        StopInTopLevel {
            top,
            stops,
            scratch: dir.join(mancala_gen::SCRATCH_DIR),
            interrupt: std::sync::Arc::new(AtomicBool::new(false)),
            in_top: AtomicBool::new(false),
            positions: AtomicU64::new(0),
            done: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
            scratch_at_start: AtomicBool::new(false),
            scratch_gone_at: AtomicU64::new(0),
            scratch_back: AtomicBool::new(false),
            stale_frontier: None,
            stale_frontier_seen: AtomicBool::new(false),
        }
    }
}

impl mancala_gen::Progress for StopInTopLevel {
    fn resumed(&self, units: u64) {
        self.resumed
            .fetch_add(units, std::sync::atomic::Ordering::SeqCst);
        self.advanced(units);
    }

    fn level_started(&self, level: u32, positions: u64, _work: u64) {
        use std::sync::atomic::Ordering::SeqCst;
        if level == self.top {
            self.in_top.store(true, SeqCst);
            self.positions.store(positions, SeqCst);
            self.scratch_at_start.store(self.scratch.exists(), SeqCst);
        }
    }

    fn advanced(&self, units: u64) {
        use std::sync::atomic::Ordering::SeqCst;
        if !self.in_top.load(SeqCst) {
            return;
        }
        let positions = self.positions.load(SeqCst);
        let done = self.done.fetch_add(units, SeqCst) + units;
        if self.stale_frontier.as_ref().is_some_and(|f| f.exists()) {
            self.stale_frontier_seen.store(true, SeqCst);
        }
        if done > positions {
            let gone_at = self.scratch_gone_at.load(SeqCst);
            if !self.scratch.exists() && gone_at == 0 {
                self.scratch_gone_at.store(done, SeqCst);
            }
            if self.scratch.exists() && gone_at > 0 {
                self.scratch_back.store(true, SeqCst);
            }
        }
        if self.stops && done > positions + positions / 4 {
            self.interrupt.store(true, SeqCst);
        }
    }
}

impl mancala_gen::BuildObserver for StopInTopLevel {}

/// A lean build stopped inside its last level resumes from the level's
/// checkpoint without holding any lower level (no scratch file is
/// written, though every lower level is large enough to be mapped), and
/// writes the fast mode's files.
#[test]
fn a_resumed_top_level_holds_no_lower_level() {
    use std::sync::atomic::Ordering::SeqCst;
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let top = 10;
    let reference = TempDir::new().unwrap();
    build_in(
        reference.path(),
        oware,
        top,
        (Cycles::Even, Encoding::Full),
        MemoryMode::Fast,
    );
    let root = TempDir::new().unwrap();
    let dir = tables_dir(root.path(), &oware, Cycles::Even);
    let stale = dir
        .join(LEAN_DIR)
        .join(format!("level-{top:03}/frontier-999"));
    let observer = |stops| StopInTopLevel {
        stale_frontier: Some(stale.clone()),
        ..StopInTopLevel::new(top, stops, &dir)
    };
    let options = |observer: &StopInTopLevel| BuildOptions {
        memory: MemoryMode::Lean,
        mapped_min_positions: 1,
        checkpoint_every: Some(std::time::Duration::ZERO),
        interrupt: Some(observer.interrupt.clone()),
        ..BuildOptions::new(root.path(), oware, top)
    };

    let stopped = observer(true);
    let result = build(&options(&stopped), &stopped);
    assert!(
        matches!(result, Err(mancala_gen::BuildError::Interrupted)),
        "{result:?}"
    );
    assert!(
        stopped.scratch_at_start.load(SeqCst),
        "lower levels not held"
    );

    fs::write(&stale, b"left by a killed run").unwrap();
    let resumed = observer(false);
    let reports = build(&options(&resumed), &resumed).unwrap();
    let positions = resumed.positions.load(SeqCst);
    let units = resumed.resumed.load(SeqCst);
    assert!(units > positions, "did not resume past the forward pass");
    // The top level's report tells the share of it the stopped run did;
    // the others were reused, not resumed.
    let (top_report, below) = reports.split_last().unwrap();
    assert_eq!(top_report.level, top);
    assert_eq!(top_report.resumed, units as f64 / (2 * positions) as f64);
    assert!(top_report.resumed < 1.0, "{}", top_report.resumed);
    assert!(below.iter().all(|r| r.reused && r.resumed == 0.0));
    assert!(
        !resumed.scratch_at_start.load(SeqCst),
        "lower levels held for a level resumed past its forward pass"
    );
    assert!(
        !resumed.stale_frontier_seen.load(SeqCst),
        "a killed run's frontier was kept"
    );
    assert!(
        files(&dir) == files(&tables_dir(reference.path(), &oware, Cycles::Even)),
        "the files differ"
    );
}

/// The only level left to build reads its lower levels for its forward
/// pass alone: they are let go (no scratch file left) before its
/// thresholds, its progress is counted once, and its file is the fast
/// mode's.
#[test]
fn a_last_level_lets_its_lower_levels_go_after_its_forward_pass() {
    assert_last_level_lets_lower_levels_go(1);
}

/// So does the last of several levels a build builds, though the levels
/// below it held theirs to their end.
#[test]
fn the_last_of_several_levels_lets_its_lower_levels_go() {
    assert_last_level_lets_lower_levels_go(3);
}

/// Builds levels up to `top - to_build`, then the `to_build` levels above
/// them in one build, and checks that its top level holds its lower
/// levels only through its forward pass.
fn assert_last_level_lets_lower_levels_go(to_build: u32) {
    use std::sync::atomic::Ordering::SeqCst;
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let top = 10;
    let reference = TempDir::new().unwrap();
    build_in(
        reference.path(),
        oware,
        top,
        (Cycles::Even, Encoding::Full),
        MemoryMode::Fast,
    );
    let root = TempDir::new().unwrap();
    let dir = tables_dir(root.path(), &oware, Cycles::Even);
    let options = |max, interrupt| BuildOptions {
        memory: MemoryMode::Lean,
        mapped_min_positions: 1,
        interrupt: Some(interrupt),
        ..BuildOptions::new(root.path(), oware, max)
    };
    let observer = StopInTopLevel::new(top, false, &dir);
    build(&options(top - to_build, observer.interrupt.clone()), &Quiet).unwrap();
    let reports = build(&options(top, observer.interrupt.clone()), &observer).unwrap();
    assert!(
        reports.iter().all(|r| r.resumed == 0.0),
        "a level built from its start reported as resumed"
    );
    let built = reports.iter().filter(|r| !r.reused).count();
    assert_eq!(built, to_build as usize, "levels built");
    assert!(
        observer.scratch_at_start.load(SeqCst),
        "lower levels not held"
    );
    // The first part (forward pass and first seeding) reads them; the
    // thresholds, whose units come after, do not.
    let positions = observer.positions.load(SeqCst);
    let gone_at = observer.scratch_gone_at.load(SeqCst);
    assert!(
        gone_at > positions && gone_at < 2 * positions,
        "lower levels held through the thresholds ({gone_at} of {} units)",
        2 * positions
    );
    assert!(
        !observer.scratch_back.load(SeqCst),
        "lower levels held again"
    );
    assert_eq!(
        observer.done.load(SeqCst),
        2 * positions,
        "progress miscounted"
    );
    assert!(
        files(&dir) == files(&tables_dir(reference.path(), &oware, Cycles::Even)),
        "the files differ"
    );
}

/// A compact Kalah level finds its exit marks from the lower levels as it
/// ends (its best exits may be extra turns): built last, or stopped in
/// its thresholds and resumed alone, it holds them to its end and writes
/// the fast mode's files.
#[test]
fn a_level_whose_marks_read_lower_levels_holds_them_to_its_end() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    let kalah = Rules::new(Variant::Kalah, 6).unwrap();
    let top = 8;
    let tables = (Cycles::Even, Encoding::Compact);
    let reference = TempDir::new().unwrap();
    build_in(reference.path(), kalah, top, tables, MemoryMode::Fast);
    let root = TempDir::new().unwrap();
    let dir = tables_dir(root.path(), &kalah, Cycles::Even);
    let options = |max, interrupt| BuildOptions {
        memory: MemoryMode::Lean,
        encoding: Encoding::Compact,
        mapped_min_positions: 1,
        checkpoint_every: Some(std::time::Duration::ZERO),
        interrupt: Some(interrupt),
        ..BuildOptions::new(root.path(), kalah, max)
    };
    build(&options(top - 1, Arc::new(AtomicBool::new(false))), &Quiet).unwrap();
    let observer = |stops| StopInTopLevel::new(top, stops, &dir);
    let stopped = observer(true);
    let result = build(&options(top, stopped.interrupt.clone()), &stopped);
    assert!(
        matches!(result, Err(mancala_gen::BuildError::Interrupted)),
        "{result:?}"
    );
    assert_eq!(
        stopped.scratch_gone_at.load(SeqCst),
        0,
        "lower levels let go"
    );
    let resumed = observer(false);
    build(&options(top, resumed.interrupt.clone()), &resumed).unwrap();
    assert!(
        resumed.resumed.load(SeqCst) > resumed.positions.load(SeqCst),
        "did not resume past the forward pass"
    );
    assert!(
        resumed.scratch_at_start.load(SeqCst),
        "lower levels not held"
    );
    assert!(
        files(&dir) == files(&tables_dir(reference.path(), &kalah, Cycles::Even)),
        "the files differ"
    );
}

/// A level resumed without its lower levels whose checkpoint is gone by
/// the time it is read gives an error, not a panic.
#[test]
fn a_lost_checkpoint_is_an_error() {
    use mancala_format::Levels;
    use mancala_gen::{BuildError, Checkpoints, LevelJob};
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let dir = TempDir::new().unwrap();
    let lean = lean_in(dir.path());
    let checkpoints = Checkpoints {
        dir: dir.path().join("checkpoints"),
        every: std::time::Duration::ZERO,
    };
    let mut lower = Levels::<Even>::new();
    for _ in 0..4 {
        lower.push_unreached();
    }
    let job = LevelJob {
        rules: &oware,
        level: 4,
        lower: &lower,
        progress: &|_| {},
        resumed: None,
        checkpoints: Some(&checkpoints),
        interrupt: None,
        mark_exits: false,
        depths: None,
    };
    assert!(matches!(
        lean.solve(&job),
        Err(BuildError::CheckpointLost { level: 4 })
    ));
}

/// A compact table is written from a byte a position of values, marks and
/// entries each, which a lean level's budget must hold: with room for the
/// lean state alone, a compact build is refused before it starts, with a
/// pointer to the full encoding, and a full one is not.
#[test]
fn a_compact_lean_build_counts_what_its_table_is_written_from() {
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let dir = TempDir::new().unwrap();
    let lean = |encoding| BuildOptions {
        memory: MemoryMode::Lean,
        encoding,
        ..BuildOptions::new(dir.path(), oware, 20)
    };
    let (full, compact) = (lean(Encoding::Full), lean(Encoding::Compact));
    assert_eq!(compact.stored_encoding(), Encoding::Compact);
    assert!(compact.solving_bytes() > full.solving_bytes());
    let budget = Some(full.solving_bytes());
    let within = |options: BuildOptions| BuildOptions {
        max_memory: budget,
        ..options
    };
    within(full).validate().unwrap();
    let err = within(compact).validate().unwrap_err();
    assert!(
        matches!(
            err,
            mancala_gen::BuildError::MemoryBudget {
                memory: MemoryMode::Lean,
                encoding: Encoding::Compact,
                ..
            }
        ) && err
            .to_string()
            .contains("a compact table is written from a byte a position"),
        "{err}"
    );
}
