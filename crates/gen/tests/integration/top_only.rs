//! A top-only build (`BuildOptions::top_only`) writes the files a full
//! build writes, byte for byte, less the levels its top level never needs;
//! the tables then answer every level built, and verify passes them.

use std::fs;
use std::path::Path;

use mancala_core::{Cycles, LevelIndex, Rules, Variant};
use mancala_format::{level_files, tables_dir, Encoding, Even, Forced};
use mancala_gen::{build, BuildOptions, MemoryMode, Quiet};
use mancala_probe::{Error, Tablebase};
use mancala_verify::verify;
use tempfile::TempDir;

/// Small enough that the larger levels are held as mapped scratch files
/// (flipped in the lean mode), as in a real top-only build.
const MAPPED_MIN_POSITIONS: u64 = 20_000;

#[derive(Clone, Copy, Debug)]
struct Kind {
    cycles: Cycles,
    encoding: Encoding,
    memory: MemoryMode,
}

fn build_in(root: &Path, rules: Rules, max: u32, top_only: bool, kind: &Kind) {
    let options = BuildOptions {
        cycles: kind.cycles,
        encoding: kind.encoding,
        memory: kind.memory,
        top_only,
        mapped_min_positions: MAPPED_MIN_POSITIONS,
        ..BuildOptions::new(root, rules, max)
    };
    let reports = build(&options, &Quiet).unwrap();
    let built: Vec<u32> = reports.iter().map(|r| r.level).collect();
    let expected: Vec<u32> = (0..=max)
        .filter(|&n| !top_only || rules.reaches(max, n))
        .collect();
    assert_eq!(built, expected, "{}: the levels reported", rules.id());
}

/// Builds `rules` to `max` in full (fast) and top-only (as `kind` says),
/// checks the top-only files are the full build's less the levels `max`
/// does not need, and returns both directories.
fn full_and_top_only(rules: Rules, max: u32, kind: &Kind) -> (TempDir, TempDir) {
    let (full, top) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let fast = Kind {
        memory: MemoryMode::Fast,
        ..*kind
    };
    build_in(full.path(), rules, max, false, &fast);
    build_in(top.path(), rules, max, true, kind);
    let (full_dir, top_dir) = (
        tables_dir(full.path(), &rules, kind.cycles),
        tables_dir(top.path(), &rules, kind.cycles),
    );
    let needed: Vec<u32> = rules.levels_needed(max).collect();
    assert_eq!(level_files(&top_dir).unwrap(), needed, "{}", rules.id());
    for n in needed {
        let name = mancala_format::level_file_name(n);
        assert!(
            fs::read(top_dir.join(&name)).unwrap() == fs::read(full_dir.join(&name)).unwrap(),
            "{} {kind:?} {name}: the top-only file differs",
            rules.id()
        );
    }
    (full, top)
}

#[test]
fn top_only_builds_write_the_full_builds_files_less_the_skipped_level() {
    let cases = [
        (Rules::new(Variant::Oware, 6).unwrap(), 9),
        (Rules::new(Variant::Awari, 4).unwrap(), 12),
        (Rules::new(Variant::Wari, 3).unwrap(), 12),
        (Rules::new(Variant::Kalah, 3).unwrap(), 10),
    ];
    for (rules, max) in cases {
        for memory in [MemoryMode::Fast, MemoryMode::Lean] {
            for (cycles, encoding) in [
                (Cycles::Even, Encoding::Full),
                (Cycles::Even, Encoding::Compact),
                (Cycles::Forced, Encoding::Full),
            ] {
                if !encoding.applies_to(&rules) {
                    continue;
                }
                let kind = Kind {
                    cycles,
                    encoding,
                    memory,
                };
                full_and_top_only(rules, max, &kind);
            }
        }
    }
}

/// The top-only tables answer the top level and every level it needs as
/// the full tables do, tell the skipped level apart as out of range, and
/// pass verify, which passes over the skipped level.
#[test]
fn top_only_tables_answer_their_levels_and_verify() {
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    let max = 9;
    let kind = Kind {
        cycles: Cycles::Even,
        encoding: Encoding::Compact,
        memory: MemoryMode::Lean,
    };
    let (full, top) = full_and_top_only(oware, max, &kind);
    let full_tb: Tablebase = Tablebase::open(full.path(), oware).unwrap();
    let top_tb: Tablebase = Tablebase::open(top.path(), oware).unwrap();
    let expected: Vec<u32> = (0..=max).filter(|&n| n != max - 1).collect();
    assert_eq!(top_tb.levels(), expected);
    assert_eq!(top_tb.max_level(), Some(max));
    assert!(!top_tb.has_level(max - 1) && top_tb.has_level(max));
    let index = LevelIndex::new(oware.pits(), max);
    for pos in index.positions_from(0).step_by(97) {
        assert_eq!(top_tb.value(&pos).unwrap(), full_tb.value(&pos).unwrap());
        assert_eq!(
            top_tb.move_values(&pos).unwrap(),
            full_tb.move_values(&pos).unwrap()
        );
    }
    let skipped = LevelIndex::new(oware.pits(), max - 1).unrank(5);
    match top_tb.value(&skipped) {
        Err(e @ Error::OutOfRange { .. }) => {
            assert!(e.to_string().contains("lack level 8"), "{e}")
        }
        other => panic!("the skipped level: {other:?}"),
    }
    let scratch = TempDir::new().unwrap();
    let checks = verify::<Even>(top.path(), &oware, 0, None, scratch.path(), |_| {}).unwrap();
    let checked: Vec<u32> = checks.iter().map(|c| c.level).collect();
    assert_eq!(checked, expected);
    assert!(checks.iter().all(|c| c.ok()));
}

/// Forced top-only tables verify too, from a level above the gap.
#[test]
fn forced_top_only_tables_verify() {
    let awari = Rules::new(Variant::Awari, 4).unwrap();
    let kind = Kind {
        cycles: Cycles::Forced,
        encoding: Encoding::Full,
        memory: MemoryMode::Fast,
    };
    let (_full, top) = full_and_top_only(awari, 11, &kind);
    let scratch = TempDir::new().unwrap();
    let checks = verify::<Forced>(top.path(), &awari, 9, None, scratch.path(), |_| {}).unwrap();
    let checked: Vec<u32> = checks.iter().map(|c| c.level).collect();
    assert_eq!(checked, [9, 11]);
    assert!(checks.iter().all(|c| c.ok()));
}
