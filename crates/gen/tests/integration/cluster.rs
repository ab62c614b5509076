//! Builds across ranks (threads standing for a cluster's processes) write
//! the files one process writes, byte for byte, for every rank count, both
//! kinds of table and every rule set; they resume from the levels present
//! whatever the rank count was; and a failing rank fails the whole job.

use std::path::Path;

use mancala_core::{Cycles, Rules, Variant};
use mancala_gen::{build, build_across, BuildError, BuildOptions, InProcess, Quiet, Transport};

/// Every table file under `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mtb"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn options(root: &Path, rules: Rules, max: u32, cycles: Cycles) -> BuildOptions {
    let mut options = BuildOptions::new(root, rules, max);
    options.cycles = cycles;
    options.checkpoint_every = None;
    options
}

/// Builds with `ranks` ranks; panics if any rank fails.
fn build_with_ranks(ranks: usize, options: &BuildOptions) {
    let results = InProcess::run(ranks, |t| build_across(t, options, &Quiet).map(|r| r.len()));
    for (rank, result) in results.into_iter().enumerate() {
        let levels = result.unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        assert_eq!(levels, options.max_stones as usize + 1);
    }
}

fn assert_ranks_write_what_one_process_writes(rules: Rules, max: u32, cycles: Cycles) {
    assert_ranks_write_as_one_process(&|root| options(root, rules, max, cycles), max + 1);
}

/// Builds with `options` (given a root) in one process, then with 1 to 4
/// ranks: `files` table files each time, the same bytes.
fn assert_ranks_write_as_one_process(options: &dyn Fn(&Path) -> BuildOptions, files_made: u32) {
    let one = tempfile::tempdir().unwrap();
    let single = options(one.path());
    let (rules, cycles) = (single.rules, single.cycles);
    build(&single, &Quiet).unwrap();
    let expected = files(&single.dir());
    assert_eq!(expected.len(), files_made as usize);
    for ranks in 1..=4 {
        let many = tempfile::tempdir().unwrap();
        let across = options(many.path());
        build_with_ranks(ranks, &across);
        let found = files(&across.dir());
        assert_eq!(found.len(), expected.len(), "{} {ranks} ranks", rules.id());
        for ((name, ours), (_, theirs)) in found.iter().zip(&expected) {
            assert!(
                ours == theirs,
                "{} {cycles:?} {ranks} ranks: {name} differs",
                rules.id()
            );
        }
        let temporaries = std::fs::read_dir(across.dir())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(temporaries, 0, "no temporary file is left");
    }
}

#[test]
fn oware_across_ranks_is_byte_identical() {
    let rules = Rules::new(Variant::Oware, 6).unwrap();
    assert_ranks_write_what_one_process_writes(rules, 9, Cycles::Even);
    assert_ranks_write_what_one_process_writes(rules, 7, Cycles::Forced);
}

#[test]
fn every_rule_set_across_ranks_is_byte_identical() {
    let kalah = Rules::new(Variant::Kalah, 6).unwrap();
    assert_ranks_write_what_one_process_writes(kalah, 8, Cycles::Even);
    let kalah4 = Rules::new(Variant::Kalah, 4)
        .unwrap()
        .with_empty_capture(false);
    assert_ranks_write_what_one_process_writes(kalah4, 10, Cycles::Forced);
    let awari = Rules::new(Variant::Awari, 4).unwrap();
    assert_ranks_write_what_one_process_writes(awari, 10, Cycles::Even);
    let wari = Rules::new(Variant::Wari, 3).unwrap();
    assert_ranks_write_what_one_process_writes(wari, 12, Cycles::Even);
}

/// Depth tables across ranks: the files of one process, with blocks that
/// cut the ranks' ranges anywhere, in a rule set that cycles and one that
/// does not (whose levels then take the threshold rounds too), of even
/// values and of forced bounds.
#[test]
fn depth_tables_across_ranks_are_byte_identical() {
    for (rules, max, block_size, cycles) in [
        (
            Rules::new(Variant::Oware, 6).unwrap(),
            9,
            None,
            Cycles::Even,
        ),
        (
            Rules::new(Variant::Oware, 4).unwrap(),
            12,
            Some(100),
            Cycles::Even,
        ),
        (
            Rules::new(Variant::Kalah, 4).unwrap(),
            10,
            Some(37),
            Cycles::Even,
        ),
        (
            Rules::new(Variant::Oware, 6).unwrap(),
            8,
            None,
            Cycles::Forced,
        ),
        (
            Rules::new(Variant::Oware, 4).unwrap(),
            10,
            Some(100),
            Cycles::Forced,
        ),
    ] {
        let with_depths = |root: &Path| BuildOptions {
            depths: true,
            block_size,
            ..options(root, rules, max, cycles)
        };
        assert_ranks_write_as_one_process(&with_depths, 2 * (max + 1));
    }
}

/// A build of a few levels with 2 ranks, extended with 3: the files of a
/// single build of every level.
#[test]
fn a_build_across_ranks_resumes_with_another_rank_count() {
    let rules = Rules::new(Variant::Oware, 4).unwrap();
    let one = tempfile::tempdir().unwrap();
    let single = options(one.path(), rules, 12, Cycles::Even);
    build(&single, &Quiet).unwrap();
    let many = tempfile::tempdir().unwrap();
    build_with_ranks(2, &options(many.path(), rules, 7, Cycles::Even));
    let extended = options(many.path(), rules, 12, Cycles::Even);
    build_with_ranks(3, &extended);
    assert!(files(&extended.dir()) == files(&single.dir()));
    // Everything present: nothing is rebuilt, every rank reports reuse.
    let reports = InProcess::run(2, |t| build_across(t, &extended, &Quiet).unwrap());
    assert!(reports.iter().flatten().all(|r| r.level.reused));
}

/// A set built with another block size than the default grows across
/// ranks in its own block size, as it does in one process.
#[test]
fn a_build_across_ranks_keeps_the_sets_block_size() {
    let rules = Rules::new(Variant::Oware, 4).unwrap();
    let one = tempfile::tempdir().unwrap();
    let mut single = options(one.path(), rules, 10, Cycles::Even);
    single.block_size = Some(64);
    build(&single, &Quiet).unwrap();
    let many = tempfile::tempdir().unwrap();
    let mut first = options(many.path(), rules, 6, Cycles::Even);
    first.block_size = Some(64);
    build(&first, &Quiet).unwrap();
    build_with_ranks(2, &options(many.path(), rules, 10, Cycles::Even));
    assert!(files(&first.dir()) == files(&single.dir()));
}

/// The compact encoding is refused up front, by every rank alike; a rank
/// that cannot read a present level fails the job at every rank, naming
/// it.
#[test]
fn a_failing_rank_fails_the_job_at_every_rank() {
    let rules = Rules::new(Variant::Oware, 4).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut compact = options(dir.path(), rules, 6, Cycles::Even);
    compact.encoding = mancala_format::Encoding::Compact;
    let refused = InProcess::run(2, |t| build_across(t, &compact, &Quiet).map(|_| ()));
    assert!(refused
        .iter()
        .all(|r| matches!(r, Err(BuildError::NotAcrossRanks { .. }))));

    let built = options(dir.path(), rules, 6, Cycles::Even);
    build_with_ranks(2, &built);
    // Rank 1 finds level 3 unreadable (its view of the directory differs:
    // here, a file it cannot open in its place).
    let extended = options(dir.path(), rules, 8, Cycles::Even);
    let results = InProcess::run(2, |t| {
        let mut mine = extended.clone();
        if t.rank() == 1 {
            mine.root = dir.path().join("elsewhere");
        }
        build_across(t, &mine, &Quiet).map(|_| ())
    });
    for result in results {
        match result {
            Err(BuildError::Rank { rank: 1, message }) => {
                assert!(message.contains("level-000"), "{message}")
            }
            other => panic!("expected rank 1's failure, got {other:?}"),
        }
    }
}
