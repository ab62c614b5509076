//! Tables byte for byte as the single-crate version wrote them: the lower
//! levels of every build in `tests/golden/README.md`, built with the
//! library and compared by sha256 with the recorded lists
//! (`scripts/check-golden` compares the whole lists with the binary).
//! Full and forced tables are built in blocks of 512 positions, the single
//! crate's default for them: the default is larger now, and only the block
//! size may differ from the recorded files.

use std::collections::BTreeMap;
use std::path::Path;

use mancala_core::{Cycles, Rules, Variant};
use mancala_format::{dir_name, level_file_name, Encoding};
use mancala_gen::{build, BuildOptions, Quiet};
use sha2::{Digest, Sha256};

const FULL: &str = include_str!("../golden/golden-full.txt");
const COMPACT: &str = include_str!("../golden/golden-compact.txt");

/// `./<rules dir>/level-NNN.mtb` → sha256, from a recorded list.
fn recorded(list: &str) -> BTreeMap<String, String> {
    list.lines()
        .map(|line| {
            let (sum, file) = line.split_once("  ").expect("sha256sum lines");
            (file.to_string(), sum.to_string())
        })
        .collect()
}

fn sha256(path: &Path) -> String {
    let digest = Sha256::digest(std::fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The block size the single crate used for full and forced tables.
const RECORDED_FULL_BLOCK_SIZE: u32 = 512;

/// Builds levels `0..=max` and checks each file against `list`.
fn assert_golden(list: &str, rules: Rules, max: u32, cycles: Cycles, encoding: Encoding) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(dir.path(), rules, max);
    options.cycles = cycles;
    options.encoding = encoding;
    if cycles == Cycles::Forced || encoding == Encoding::Full {
        options.block_size = Some(RECORDED_FULL_BLOCK_SIZE);
    }
    build(&options, &Quiet).unwrap();
    let recorded = recorded(list);
    let name = dir_name(&rules, cycles);
    for n in 0..=max {
        let file = format!("./{name}/{}", level_file_name(n));
        let expected = recorded
            .get(&file)
            .unwrap_or_else(|| panic!("{file} is not recorded"));
        let path = dir.path().join(&name).join(level_file_name(n));
        assert_eq!(
            &sha256(&path),
            expected,
            "{file} differs from the recorded table"
        );
    }
}

#[test]
fn tables_are_byte_identical_to_the_recorded_ones() {
    let rules = |variant, pits| Rules::new(variant, pits).unwrap();
    let (even, forced) = (Cycles::Even, Cycles::Forced);
    let (full, compact) = (Encoding::Full, Encoding::Compact);
    assert_golden(FULL, rules(Variant::Oware, 6), 10, even, full);
    assert_golden(FULL, rules(Variant::Awari, 6), 9, even, full);
    assert_golden(FULL, rules(Variant::Wari, 6), 9, even, full);
    assert_golden(FULL, rules(Variant::Kalah, 6), 10, even, full);
    let noempty = rules(Variant::Kalah, 4).with_empty_capture(false);
    assert_golden(FULL, noempty, 14, even, full);
    assert_golden(COMPACT, rules(Variant::Oware, 6), 10, even, compact);
    assert_golden(FULL, rules(Variant::Oware, 6), 10, forced, full);
    assert_golden(FULL, rules(Variant::Awari, 4), 12, forced, full);
}
