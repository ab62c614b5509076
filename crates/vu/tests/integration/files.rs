//! Export, import and comparison of VU files, checked with a reader of the
//! format written here from its description (docs/VU-FORMAT.md), which
//! shares nothing with the crate's numbering.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mancala_core::{rank, Cycles, Position, Rules, Successors, Variant};
use mancala_format::{level_path, tables_dir, Encoding, Even, Levels, Table};
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_vu::{compare, export, import, VuError, FIRST_MISMATCHES};
use tempfile::TempDir;

/// The levels most tests here export and read: every file shape the format
/// has (levels with all, some and none of the opponent's pits filled) shows
/// well below this.
const STONES: u32 = 12;

/// The levels the VU README's test vector needs: its position holds 16
/// stones. Checked by the large tier alone.
const PUBLISHED: u32 = 16;

fn awari() -> Rules {
    Rules::new(Variant::Awari, 6).unwrap()
}

/// Awari tables `0..=stones` and their export.
struct Fixture {
    _dir: TempDir,
    stones: u32,
    tables: PathBuf,
    vu: PathBuf,
}

impl Fixture {
    fn build(stones: u32) -> Fixture {
        let dir = TempDir::new().unwrap();
        let tables = dir.path().join("tables");
        let vu = dir.path().join("vu");
        build(&BuildOptions::new(&tables, awari(), stones), &Quiet).unwrap();
        let exported = export(&tables, None, &vu, dir.path(), &mancala_vu::Quiet).unwrap();
        assert_eq!(exported.len() as u32, stones + 1);
        Fixture {
            _dir: dir,
            stones,
            tables,
            vu,
        }
    }
}

/// Awari tables `0..=STONES` and their export, built once for every test.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| Fixture::build(STONES))
}

/// Every position of `n` stones on 12 pits that the VU files number, in
/// their order, as the format describes it: lexicographic in
/// `x11, x10, …, x0`, each ascending, leaving out those whose pits 6–11
/// all hold stones.
fn for_each_in_vu_order(n: u32, mut visit: impl FnMut(&[u8; 12])) {
    fn fill(pit: usize, left: u32, cells: &mut [u8; 12], visit: &mut dyn FnMut(&[u8; 12])) {
        if pit == 0 {
            cells[0] = left as u8;
            if cells[6..].contains(&0) {
                visit(cells);
            }
            return;
        }
        for seeds in 0..=left {
            cells[pit] = seeds as u8;
            fill(pit - 1, left - seeds, cells, visit);
        }
    }
    fill(11, n, &mut [0; 12], &mut visit);
}

fn position(cells: &[u8; 12]) -> Position {
    Position::from_rows(&cells[..6], &cells[6..])
}

/// Our table's values of level `n`, in our index order.
fn our_values(tables: &Path, n: u32) -> Vec<i8> {
    let dir = tables_dir(tables, &awari(), Cycles::Even);
    Table::<Even>::open(&level_path(&dir, n), None)
        .unwrap()
        .decode_entries(&Levels::new())
        .unwrap()
}

#[test]
fn an_export_holds_every_value_in_the_vu_order() {
    assert_export_in_vu_order(fixture());
}

/// Awari 0–16, as the VU files were first checked: every value exported in
/// their order, the published test vector, the import and the comparison.
#[test]
#[ignore = "large tier (awari 0-16): `cargo test -- --include-ignored` runs it"]
fn awari_to_16_stones_round_trips_and_holds_the_published_test_vector() {
    let f = Fixture::build(PUBLISHED);
    assert_export_in_vu_order(&f);
    assert_published_test_vector(&f);
    assert_import_is_the_tables(&f);
    assert_no_mismatch_with_the_own_export(&f);
}

fn assert_export_in_vu_order(f: &Fixture) {
    for n in 0..=f.stones {
        let file = fs::read(f.vu.join(format!("scores.{n}"))).unwrap();
        let ours = our_values(&f.tables, n);
        let mut at = 0;
        for_each_in_vu_order(n, |cells| {
            let pos = position(cells);
            assert_eq!(
                file[at] as i8,
                ours[rank(&pos) as usize],
                "level {n}, byte {at}: {pos}"
            );
            at += 1;
        });
        assert_eq!(at, file.len(), "level {n}: one byte per numbered position");
    }
}

/// The VU README's check: this position is worth 0, and its six moves −1,
/// −1, −2, −2, −2 and 0, a move being worth the stones it captures minus
/// the value its child has in the files.
fn assert_published_test_vector(f: &Fixture) {
    let cells = [1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0];
    let pos = position(&cells);
    let Successors::Moves(moves) = awari().successors(&pos) else {
        panic!("the test position has moves");
    };
    let mut wanted: Vec<Position> = moves.iter().map(|m| m.child).collect();
    wanted.push(pos);
    let value = read_values(&f.vu, &wanted);
    assert_eq!(value[&pos], 0);
    let move_values: Vec<i32> = moves
        .iter()
        .map(|m| m.gain as i32 - value[&m.child] as i32)
        .collect();
    assert_eq!(moves.len(), 6);
    assert_eq!(move_values, [-1, -1, -2, -2, -2, 0]);
}

/// The bytes of `wanted` positions, found by walking their levels' files.
fn read_values(vu: &Path, wanted: &[Position]) -> HashMap<Position, i8> {
    let mut found = HashMap::new();
    let mut levels: Vec<u32> = wanted.iter().map(|p| p.stones()).collect();
    levels.sort_unstable();
    levels.dedup();
    for n in levels {
        let file = fs::read(vu.join(format!("scores.{n}"))).unwrap();
        let mut at = 0;
        for_each_in_vu_order(n, |cells| {
            let pos = position(cells);
            if wanted.contains(&pos) {
                found.insert(pos, file[at] as i8);
            }
            at += 1;
        });
    }
    found
}

fn import_into(vu: &Path, tables: &Path, stones: u32, encoding: Encoding) -> Result<(), VuError> {
    let mut options = BuildOptions::new(tables, awari(), stones);
    options.encoding = encoding;
    import(vu, &options, &Quiet).map(drop)
}

fn assert_same_files(a: &Path, b: &Path, stones: u32) {
    let a = tables_dir(a, &awari(), Cycles::Even);
    let b = tables_dir(b, &awari(), Cycles::Even);
    for n in 0..=stones {
        assert!(
            fs::read(level_path(&a, n)).unwrap() == fs::read(level_path(&b, n)).unwrap(),
            "level {n} differs"
        );
    }
}

#[test]
fn an_import_of_the_export_is_the_tables_it_came_from() {
    assert_import_is_the_tables(fixture());
}

fn assert_import_is_the_tables(f: &Fixture) {
    let dir = TempDir::new().unwrap();
    import_into(&f.vu, dir.path(), f.stones, Encoding::Full).unwrap();
    assert_same_files(dir.path(), &f.tables, f.stones);
}

/// Compact tables need the marks of the positions whose best exit is
/// their value, which an import finds again from the values alone.
#[test]
fn a_compact_import_is_the_compact_build() {
    const COMPACT: u32 = STONES;
    let f = fixture();
    let built = TempDir::new().unwrap();
    let mut options = BuildOptions::new(built.path(), awari(), COMPACT);
    options.encoding = Encoding::Compact;
    build(&options, &Quiet).unwrap();
    let imported = TempDir::new().unwrap();
    import_into(&f.vu, imported.path(), COMPACT, Encoding::Compact).unwrap();
    assert_same_files(imported.path(), built.path(), COMPACT);
    // And a compact set exports the same files.
    let vu = imported.path().join("vu");
    export(
        imported.path(),
        None,
        &vu,
        imported.path(),
        &mancala_vu::Quiet,
    )
    .unwrap();
    for n in 0..=COMPACT {
        let name = format!("scores.{n}");
        assert!(fs::read(vu.join(&name)).unwrap() == fs::read(f.vu.join(&name)).unwrap());
    }
}

#[test]
fn a_comparison_with_the_own_export_finds_no_mismatch() {
    assert_no_mismatch_with_the_own_export(fixture());
}

fn assert_no_mismatch_with_the_own_export(f: &Fixture) {
    let levels = compare_with(f, &f.vu, None);
    assert_eq!(levels.len() as u32, f.stones + 1);
    for level in &levels {
        assert!(level.agrees(), "level {}: {level:?}", level.level);
    }
    let compared: u64 = levels.iter().map(|l| l.positions).sum();
    let files: u64 = (0..=f.stones)
        .map(|n| {
            fs::metadata(f.vu.join(format!("scores.{n}")))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(compared, files);
}

/// The fixture's tables compared with the VU files in `vu`, up to `max`.
fn compare_with_fixture(vu: &Path, max: Option<u32>) -> Vec<mancala_vu::LevelComparison> {
    compare_with(fixture(), vu, max)
}

/// `f`'s tables compared with the VU files in `vu`, up to `max`.
fn compare_with(f: &Fixture, vu: &Path, max: Option<u32>) -> Vec<mancala_vu::LevelComparison> {
    let scratch = TempDir::new().unwrap();
    compare(&f.tables, vu, max, scratch.path(), &mancala_vu::Quiet).unwrap()
}

/// A copy of the export's levels `0..=stones`, with `change` made to it.
fn damaged_copy(stones: u32, change: impl FnOnce(&Path)) -> TempDir {
    let copy = TempDir::new().unwrap();
    for n in 0..=stones {
        let name = format!("scores.{n}");
        fs::copy(fixture().vu.join(&name), copy.path().join(&name)).unwrap();
    }
    change(copy.path());
    copy
}

/// Sets byte `at` of level `n`'s file to `value`; returns the old one.
fn set_byte(dir: &Path, n: u32, at: usize, value: i8) -> i8 {
    let path = dir.join(format!("scores.{n}"));
    let mut bytes = fs::read(&path).unwrap();
    let old = bytes[at] as i8;
    bytes[at] = value as u8;
    fs::write(&path, bytes).unwrap();
    old
}

#[test]
fn a_comparison_catches_a_single_flipped_byte() {
    const LEVEL: u32 = STONES - 1;
    const AT: usize = 123_457;
    let original = fs::read(fixture().vu.join(format!("scores.{LEVEL}"))).unwrap()[AT] as i8;
    let flipped = if original == 0 { 2 } else { 0 };
    let copy = damaged_copy(STONES, |dir| {
        set_byte(dir, LEVEL, AT, flipped);
    });
    let levels = compare_with_fixture(copy.path(), None);
    for level in &levels {
        assert_eq!(
            level.agrees(),
            level.level != LEVEL,
            "level {}",
            level.level
        );
    }
    let level = &levels[LEVEL as usize];
    assert_eq!(level.mismatches, 1);
    let [m] = &level.first[..] else {
        panic!("one mismatch listed: {:?}", level.first);
    };
    assert_eq!((m.number, m.ours, m.theirs), (AT as u64, original, flipped));
}

#[test]
fn a_comparison_lists_the_first_mismatches_and_counts_them_all() {
    let copy = damaged_copy(10, |dir| {
        let path = dir.join("scores.10");
        let bytes: Vec<u8> = fs::read(&path).unwrap().iter().map(|b| b ^ 1).collect();
        fs::write(&path, bytes).unwrap();
    });
    let levels = compare_with_fixture(copy.path(), Some(10));
    let level = &levels[10];
    assert_eq!(level.mismatches, level.positions);
    let numbers: Vec<u64> = level.first.iter().map(|m| m.number).collect();
    assert_eq!(numbers, (0..FIRST_MISMATCHES as u64).collect::<Vec<_>>());
}

#[test]
fn a_level_without_a_file_is_not_compared() {
    let copy = damaged_copy(10, |dir| fs::remove_file(dir.join("scores.7")).unwrap());
    let levels = compare_with_fixture(copy.path(), None);
    assert!(!levels[7].compared);
    assert!(levels[..=10]
        .iter()
        .filter(|l| l.level != 7)
        .all(|l| l.agrees()));
    assert!(levels[11..].iter().all(|l| !l.compared));
}

/// Imports levels 0–10 of `vu` into a new directory; returns its error and
/// the levels written.
fn import_error(vu: &Path) -> (VuError, Vec<u32>) {
    let dir = TempDir::new().unwrap();
    let error = import_into(vu, dir.path(), 10, Encoding::Full).unwrap_err();
    let written = (0..=10)
        .filter(|&n| level_path(&tables_dir(dir.path(), &awari(), Cycles::Even), n).exists())
        .collect();
    (error, written)
}

#[test]
fn an_import_names_a_file_of_the_wrong_size() {
    let copy = damaged_copy(10, |dir| {
        let path = dir.join("scores.9");
        let mut bytes = fs::read(&path).unwrap();
        bytes.push(0);
        fs::write(&path, bytes).unwrap();
    });
    let (error, written) = import_error(copy.path());
    assert!(error.to_string().contains("scores.9"), "{error}");
    let VuError::WrongSize {
        level,
        expected,
        found,
        ..
    } = error
    else {
        panic!("not a size error: {error}");
    };
    assert_eq!((level, found), (9, expected + 1));
    assert_eq!(written, (0..9).collect::<Vec<_>>());
}

#[test]
fn an_import_names_the_first_value_out_of_range() {
    let copy = damaged_copy(10, |dir| {
        set_byte(dir, 8, 700, 9);
        set_byte(dir, 8, 500, -9);
    });
    let (error, written) = import_error(copy.path());
    let VuError::OutOfRange {
        level,
        number,
        value,
        ref position,
        ..
    } = error
    else {
        panic!("not a range error: {error}");
    };
    assert_eq!((level, number, value), (8, 500, -9));
    let godel = mancala_vu::GodelIndex::new(6, 8);
    assert_eq!(position, &godel.unrank(500).unwrap().to_string());
    assert_eq!(written, (0..8).collect::<Vec<_>>());
}

#[test]
fn an_import_names_the_first_value_its_moves_contradict() {
    const AT: usize = 3_000;
    let ours = fs::read(fixture().vu.join("scores.10")).unwrap()[AT] as i8;
    let copy = damaged_copy(10, |dir| {
        set_byte(dir, 10, AT, if ours > -8 { ours - 2 } else { ours + 2 });
    });
    let (error, written) = import_error(copy.path());
    let VuError::Contradiction {
        level,
        number,
        stored,
        recomputed,
        ..
    } = error
    else {
        panic!("not a contradiction: {error}");
    };
    assert_eq!(level, 10);
    assert_ne!(stored, recomputed);
    // The changed byte, or a parent of it that comes before it.
    assert!(number <= AT as u64, "byte {number}");
    assert_eq!(written, (0..10).collect::<Vec<_>>());
}

#[test]
fn an_import_names_a_missing_file() {
    let copy = damaged_copy(10, |dir| fs::remove_file(dir.join("scores.6")).unwrap());
    let (error, written) = import_error(copy.path());
    assert!(
        matches!(error, VuError::Missing { level: 6, .. }),
        "{error}"
    );
    assert_eq!(written, (0..6).collect::<Vec<_>>());
}

/// A FIFO, a directory or a device where a level's file should be is
/// named as not a regular file, at once: a FIFO's read would wait for a
/// writer for ever, and the others have no size to check.
#[test]
fn an_import_names_what_is_not_a_regular_file() {
    type Replace = fn(&Path);
    let replacements: [(&str, Replace); 3] = [
        ("a FIFO", |path| {
            let made = std::process::Command::new("mkfifo").arg(path).status();
            assert!(made.unwrap().success());
        }),
        ("a directory", |path| fs::create_dir(path).unwrap()),
        ("a device", |path| {
            std::os::unix::fs::symlink("/dev/zero", path).unwrap()
        }),
    ];
    for (what, replace) in replacements {
        let copy = damaged_copy(10, |dir| {
            let path = dir.join("scores.7");
            fs::remove_file(&path).unwrap();
            replace(&path);
        });
        let started = std::time::Instant::now();
        let (error, written) = import_error(copy.path());
        assert!(started.elapsed().as_secs() < 5, "{what}: blocked");
        assert!(
            matches!(&error, VuError::Tables(mancala_format::FormatError::NotRegularFile { path }) if path.ends_with("scores.7")),
            "{what}: {error}"
        );
        assert_eq!(written, (0..7).collect::<Vec<_>>(), "{what}");
    }
}
