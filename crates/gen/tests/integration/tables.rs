//! Table files end to end: `build` writes levels that probe back exactly the
//! values of the in-memory solver; damaged, truncated, misplaced or missing
//! files give typed errors, never a panic or a wrong value; `verify` catches
//! wrong values; rebuilds are deterministic and resume from valid files.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use mancala_core::{advance, rank, Cycles, LevelIndex, Position, Rules, Successors, Variant};
use mancala_format::{
    histogram, level_file_name, EncodedTable, Encoding, EntryReader, Even, FormatError, Header,
    Levels, Table, TableFile, TableId, MAGIC,
};
use mancala_gen::{build, solve_in_memory, BuildError, BuildOptions, LevelReport, Quiet};
use mancala_probe::{Error, Tablebase};
use mancala_verify::{verify, verify_with, LevelCheck, Progress, VerifyError, VerifyOptions};
use tempfile::TempDir;

/// Levels solved in memory.
type Solved = Levels<Even>;

/// The directory of `rules`' even tables under `root`.
fn tables_dir(root: &Path, rules: &Rules) -> PathBuf {
    mancala_format::tables_dir(root, rules, Cycles::Even)
}

/// Opens the even table at `path`, expected to be level `n` of `rules`.
fn open(path: &Path, rules: &Rules, n: u32) -> Result<Table<Even>, FormatError> {
    Table::open(
        path,
        Some(TableId {
            rules: *rules,
            level: n,
        }),
    )
}

/// Writes `values` as a full even table at `path`.
fn write_table(path: &Path, header: &Header, values: &[i8]) {
    EncodedTable::new(header, values).write_file(path).unwrap();
}

fn rules(variant: Variant, pits: usize) -> Rules {
    Rules::new(variant, pits).unwrap()
}

/// Options to build levels `0..=max` of `rules` under `root`, compact (the
/// encoding with more to check; [`compact_and_full_encodings_agree`]
/// covers the other).
fn compact_options(root: &Path, rules: Rules, max: u32) -> BuildOptions {
    BuildOptions {
        encoding: Encoding::Compact,
        ..BuildOptions::new(root, rules, max)
    }
}

/// Builds levels `0..=max` of `rules` under `root`, compact.
fn build_tables(root: &Path, rules: Rules, max: u32, block_size: Option<u32>) -> Vec<LevelReport> {
    let mut options = compact_options(root, rules, max);
    if let Some(b) = block_size {
        options.block_size = Some(b);
    }
    build(&options, &Quiet).unwrap()
}

fn level_path(root: &Path, rules: &Rules, n: u32) -> PathBuf {
    tables_dir(root, rules).join(level_file_name(n))
}

/// Every position of level `n`, in index order.
fn level_positions(pits: usize, n: u32) -> Vec<Position> {
    let index = LevelIndex::new(pits, n);
    let mut pos = index.unrank(0);
    let mut all = vec![pos];
    while advance(&mut pos) {
        all.push(pos);
    }
    assert_eq!(all.len() as u64, index.count());
    all
}

/// A position of level `n` (`n ≥ 1`), for probes that only need one.
fn some_position(pits: usize, n: u32) -> Position {
    let mut counts = vec![0u32; 2 * pits];
    counts[0] = n.div_ceil(2);
    counts[2 * pits - 1] = n / 2;
    Position::from_counts(pits, &counts).unwrap()
}

/// Checks every probe of `tb` against the in-memory solution.
fn assert_tablebase_matches(tb: &Tablebase, rules: &Rules, solved: &Solved, max: u32) {
    for n in 0..=max {
        // The batch answers (which derive a position's value from its
        // moves') agree with the solver too.
        let positions = level_positions(rules.pits(), n);
        let batch = tb.values_and_moves(&positions).unwrap();
        for (pos, (value, moves)) in positions.iter().zip(batch) {
            assert_eq!(
                value,
                solved.value(pos),
                "{} {pos}: batch value",
                rules.id()
            );
            assert_eq!(moves, tb.move_values(pos).unwrap(), "{pos}: batch moves");
        }
        for pos in positions {
            let expected = solved.value(&pos);
            assert_eq!(tb.value(&pos).unwrap(), expected, "{} {pos}", rules.id());
            let moves = tb.move_values(&pos).unwrap();
            match rules.successors(&pos) {
                Successors::Terminal(v) => {
                    assert_eq!(v, expected, "{pos}: terminal value");
                    assert!(moves.is_empty(), "{pos}: terminal but has move values");
                }
                Successors::Moves(list) => {
                    // One read of the cache for every child is the same
                    // as a read for each.
                    let mut entries = vec![0; list.len()];
                    EntryReader::child_entries(tb, &list, &mut entries).unwrap();
                    for (m, &entry) in list.iter().zip(&entries) {
                        assert_eq!(entry, EntryReader::entry(tb, &m.child).unwrap(), "{pos}");
                    }
                    assert_eq!(moves.len(), list.len(), "{pos}: one value per legal move");
                    for (mv, m) in moves.iter().zip(list.iter()) {
                        assert_eq!(mv.pit, m.pit, "{pos}: moves in pit order");
                        assert_eq!(mv.letter(), (b'a' + m.pit) as char);
                        let child = m.value_given_child(solved.value(&m.child));
                        assert_eq!(mv.value, child, "{pos}: move {}", mv.letter());
                    }
                    let best = moves.iter().map(|m| m.value).max().unwrap();
                    assert_eq!(best, expected, "{pos}: best move value vs position value");
                    assert!(
                        moves.windows(2).all(|w| w[0].pit < w[1].pit),
                        "{pos}: pits ascending"
                    );
                }
            }
        }
    }
}

#[test]
fn probes_agree_with_the_in_memory_solver() {
    let cases = [
        (rules(Variant::Oware, 6), 8, None),
        (rules(Variant::Kalah, 4), 10, None),
        (rules(Variant::Awari, 3), 9, Some(1000)),
        (rules(Variant::Wari, 2), 14, Some(37)),
        (
            rules(Variant::Kalah, 3).with_empty_capture(false),
            10,
            Some(100),
        ),
    ];
    for (rules, max, block_size) in cases {
        let dir = TempDir::new().unwrap();
        let reports = build_tables(dir.path(), rules, max, block_size);
        let solved = solve_in_memory::<Even>(&rules, max);
        assert_eq!(reports.len() as u32, max + 1);
        for (n, report) in reports.iter().enumerate() {
            let n = n as u32;
            let values = solved.symbols(n);
            assert_eq!(report.level, n);
            assert!(
                !report.reused,
                "{} level {n}: fresh build reused",
                rules.id()
            );
            assert_eq!(report.positions, LevelIndex::new(rules.pits(), n).count());
            assert_eq!(report.histogram, histogram(values));
            let path = level_path(dir.path(), &rules, n);
            assert_eq!(report.bytes, fs::metadata(&path).unwrap().len());
            let t = open(&path, &rules, n).unwrap();
            t.check_file_checksum().unwrap();
            // Compact tables, of every rule set, leave out values their
            // restoring moves give: their entries may be lower, and the
            // values come back.
            let entries = t.decode_all().unwrap();
            let h = t.header();
            assert_eq!(h.encoding, Encoding::Compact, "{} level {n}", rules.id());
            assert!(entries.iter().zip(values).all(|(e, v)| e <= v));
            let decoded = t.decode_entries(&solved).unwrap();
            assert_eq!(decoded, values, "{} level {n}", rules.id());
            assert_eq!((h.level, h.positions), (n, values.len() as u64));
            assert_eq!(h.rules, rules);
            assert_eq!(h.histogram, report.histogram);
            if let Some(b) = block_size {
                assert_eq!(h.block_size, b);
                assert_eq!(h.block_count, (values.len() as u64).div_ceil(b as u64));
            }
            // Random access in an order that defeats the block cache.
            for at in (0..values.len()).rev().step_by(7) {
                assert_eq!(t.first_symbol(at as u64).unwrap(), entries[at]);
            }
            assert!(
                matches!(
                    t.first_symbol(values.len() as u64),
                    Err(FormatError::Corrupted { .. })
                ),
                "index past the end"
            );
        }
        let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
        assert_eq!(tb.max_level(), Some(max));
        assert_eq!(tb.rules(), &rules);
        assert_eq!(tb.dir(), tables_dir(dir.path(), &rules));
        assert_tablebase_matches(&tb, &rules, &solved, max);
    }
}

/// The solver (thresholds in the Oware family, one pass in Kalah) marks
/// exactly the positions worth their best restoring exit, a move that
/// leaves the level without an extra turn (recomputed here from the
/// levels below), and a compact table frees exactly those and the
/// positions whose value a same-level restoring move gives: in Kalah any
/// same-level move; in the Oware family any move if no move leads to the position,
/// else a move to a position with fewer stones on the (new) mover's side,
/// or as many and a lower rank.
#[test]
fn the_solver_and_writer_free_exactly_the_entries_a_reader_restores() {
    use mancala_format::free_entries;
    use mancala_gen::{exit_best_marks, LevelJob, OnePass, Retrograde, Strategy};
    let cases = [
        (rules(Variant::Oware, 6), 8),
        (rules(Variant::Awari, 3), 9),
        (rules(Variant::Wari, 2), 12),
        (rules(Variant::Kalah, 3), 9),
        (rules(Variant::Kalah, 4).with_empty_capture(false), 9),
    ];
    for (rules, max) in cases {
        let acyclic = !rules.variant().can_cycle();
        let mut lower = Solved::new();
        for n in 0..=max {
            let job = LevelJob {
                rules: &rules,
                level: n,
                lower: &lower,
                progress: &|_| {},
                resumed: None,
                checkpoints: None,
                interrupt: None,
                mark_exits: true,
                depths: None,
            };
            let by_thresholds = Retrograde::local().solve(&job).unwrap();
            let solution = if acyclic {
                // Thresholds mark best exits, extra turns included, which
                // restore nothing: they leave Kalah levels unmarked.
                assert!(by_thresholds.exit_best.is_none());
                let one_pass = OnePass.solve(&job).unwrap();
                assert_eq!(one_pass.symbols, by_thresholds.symbols);
                one_pass
            } else {
                by_thresholds
            };
            let values = &solution.symbols;
            let positions = level_positions(rules.pits(), n);
            let mut exit_best = Vec::new();
            let mut free = Vec::new();
            for (pos, &value) in positions.iter().zip(values) {
                let (best_exit, by_stay) = match rules.successors(pos) {
                    Successors::Terminal(_) => (true, false),
                    Successors::Moves(moves) => {
                        let best_exit = moves
                            .iter()
                            .filter(|m| m.leaves_level() && !m.extra_turn)
                            .map(|m| m.value_given_child(lower.value(&m.child)))
                            .max();
                        let nobody_moves_here =
                            (rules.pits()..2 * rules.pits()).all(|pit| pos.get(pit) > 0);
                        let by_stay = moves.iter().any(|m| {
                            let child = &m.child;
                            let lower_order = (child.mover_stones(), rank(child))
                                < (pos.mover_stones(), rank(pos));
                            !m.leaves_level()
                                && (acyclic || nobody_moves_here || lower_order)
                                && m.value_given_child(values[rank(child) as usize] as i32)
                                    == value as i32
                        });
                        (best_exit == Some(value as i32), by_stay)
                    }
                };
                exit_best.push(best_exit);
                free.push(best_exit || by_stay);
            }
            let solver_exit_best = solution.exit_best.as_deref().unwrap();
            assert_eq!(solver_exit_best, exit_best, "{} level {n}", rules.id());
            let found_again = exit_best_marks(&rules, n, values, &lower);
            assert_eq!(found_again, exit_best, "{} level {n}", rules.id());
            let found = free_entries(&rules, n, values, solver_exit_best);
            assert_eq!(found, free, "{} level {n}", rules.id());
            lower.push(solution.symbols);
        }
    }
}

/// Compact tables leave out the values of positions whose opponent row has
/// no empty pit, since no move leads there (the pit sown from stays empty,
/// captures included): checked on every move of small Oware-family levels.
#[test]
fn no_move_leads_to_a_position_whose_opponent_row_is_full() {
    use mancala_format::unreachable_by_moves;
    for (variant, pits, max) in [
        (Variant::Oware, 3, 12),
        (Variant::Oware, 6, 9),
        (Variant::Awari, 4, 10),
        (Variant::Wari, 3, 12),
    ] {
        let rules = rules(variant, pits);
        let mut unreachable = 0;
        for n in 0..=max {
            for pos in level_positions(pits, n) {
                unreachable += unreachable_by_moves(&pos) as u32;
                if let Successors::Moves(moves) = rules.successors(&pos) {
                    for m in moves.iter() {
                        assert!(!unreachable_by_moves(&m.child), "{pos} -> {}", m.child);
                    }
                }
            }
        }
        assert!(unreachable > 0, "{}: the claim was tested", rules.id());
    }
}

/// Compact files of earlier versions (fewer restoring moves, another
/// model) would restore wrong values under today's rule: they are refused
/// with a hint to rebuild.
#[test]
fn compact_files_of_earlier_versions_are_refused() {
    let (dir, rules, solved) = small_oware();
    let n = 4;
    let path = level_path(dir.path(), &rules, n);
    let full = fs::read(&path).unwrap();
    for encoding in ["rans-order1-11-exits-omitted", "rans-order1-11-one-ply"] {
        write_table(
            &path,
            &Header::for_symbols::<Even>(&rules, n, solved.symbols(n), 512),
            solved.symbols(n),
        );
        rename_encoding(&path, "rans-order1-11", encoding);
        match open(&path, &rules, n) {
            Err(e @ FormatError::Corrupted { .. }) => {
                assert!(e.to_string().contains("rebuild"), "{e}")
            }
            other => panic!("an old compact file opened: {:?}", other.map(|_| ())),
        }
    }
    fs::write(&path, full).unwrap();
}

/// Rewrites the value-encoding name `from` in the header of the table at
/// `path` as `to` (a name of the same length, as earlier versions wrote),
/// with every checksum made to match again: a well-formed file of another
/// encoding.
fn rename_encoding(path: &Path, from: &str, to: &str) {
    let mut bytes = fs::read(path).unwrap();
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let header = &bytes[16..16 + header_len];
    // bincode's varint length prefix of a short string is one byte.
    let mut old = vec![from.len() as u8];
    old.extend_from_slice(from.as_bytes());
    let at = 16
        + header
            .windows(old.len())
            .position(|w| w == old.as_slice())
            .expect("the encoding name is in the header");
    let mut new = vec![to.len() as u8];
    new.extend_from_slice(to.as_bytes());
    let mut rebuilt = bytes[..at].to_vec();
    rebuilt.extend_from_slice(&new);
    rebuilt.extend_from_slice(&bytes[at + old.len()..]);
    bytes = rebuilt;
    let grown = new.len() as isize - old.len() as isize;
    let header_len = (header_len as isize + grown) as usize;
    bytes[12..16].copy_from_slice(&(header_len as u32).to_le_bytes());
    // The block offsets are relative to group bases, which moved too.
    let blocks = {
        let t = TableFile::open(path).unwrap();
        t.header().block_count as usize
    };
    let index = 16 + header_len;
    let bases = index + 8 * blocks;
    for g in 0..blocks.div_ceil(1 << 16) {
        let at = bases + 8 * g;
        let base = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let moved = (base as isize + grown) as u64;
        bytes[at..at + 8].copy_from_slice(&moved.to_le_bytes());
    }
    let index_end = bases + 8 * blocks.div_ceil(1 << 16);
    let crc = crc32fast::hash(&bytes[..index_end]);
    bytes[index_end..index_end + 4].copy_from_slice(&crc.to_le_bytes());
    let body = bytes.len() - 8;
    let crc = crc32fast::hash(&bytes[..body]);
    bytes[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    fs::write(path, bytes).unwrap();
}

/// Compact tables answer exactly what full ones do, from smaller files;
/// full tables store every value as it is.
#[test]
fn compact_and_full_encodings_agree() {
    for (variant, pits, max) in [
        (Variant::Oware, 6, 8),
        (Variant::Awari, 4, 10),
        (Variant::Wari, 3, 12),
    ] {
        let rules = rules(variant, pits);
        let solved = solve_in_memory::<Even>(&rules, max);
        let dirs = [TempDir::new().unwrap(), TempDir::new().unwrap()];
        let mut bytes = [0u64; 2];
        for (dir, (encoding, bytes)) in dirs.iter().zip(
            [Encoding::Compact, Encoding::Full]
                .into_iter()
                .zip(&mut bytes),
        ) {
            let mut options = BuildOptions::new(dir.path(), rules, max);
            options.encoding = encoding;
            *bytes = build(&options, &Quiet)
                .unwrap()
                .iter()
                .map(|r| r.bytes)
                .sum();
        }
        assert!(
            bytes[0] < bytes[1],
            "{}: compact {} vs full {}",
            rules.id(),
            bytes[0],
            bytes[1]
        );
        let compact: Tablebase = Tablebase::open(dirs[0].path(), rules).unwrap();
        let full: Tablebase = Tablebase::open(dirs[1].path(), rules).unwrap();
        for n in 0..=max {
            let t = open(&level_path(dirs[1].path(), &rules, n), &rules, n).unwrap();
            assert_eq!(t.header().encoding, Encoding::Full);
            assert_eq!(t.decode_all().unwrap(), solved.symbols(n));
            let positions = level_positions(pits, n);
            assert_eq!(
                compact.values(&positions).unwrap(),
                full.values(&positions).unwrap()
            );
            for pos in positions.iter().step_by(5) {
                assert_eq!(
                    compact.value(pos).unwrap(),
                    full.value(pos).unwrap(),
                    "{pos}"
                );
            }
        }
    }
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn a_tablebase_is_shared_between_threads() {
    assert_send_sync::<Tablebase>();
    assert_send_sync::<Tablebase<mancala_format::Forced>>();
    assert_send_sync::<Table<Even>>();
    let dir = TempDir::new().unwrap();
    let rules = rules(Variant::Oware, 6);
    build_tables(dir.path(), rules, 7, Some(512));
    let solved = solve_in_memory::<Even>(&rules, 7);
    let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    let positions: Vec<Position> = (0..=7).flat_map(|n| level_positions(6, n)).collect();
    // Every thread starts on unopened levels and fights over the block cache.
    std::thread::scope(|s| {
        for t in 0..4 {
            let (tb, solved, positions) = (&tb, &solved, &positions);
            s.spawn(move || {
                for pos in positions.iter().skip(t).step_by(3) {
                    assert_eq!(tb.value(pos).unwrap(), solved.value(pos), "{pos}");
                }
            });
        }
    });
}

#[test]
fn positions_beyond_the_tables_are_out_of_range() {
    let dir = TempDir::new().unwrap();
    let oware = rules(Variant::Oware, 6);
    build_tables(dir.path(), oware, 6, None);
    let tb: Tablebase = Tablebase::open(dir.path(), oware).unwrap();
    let seven = some_position(6, 7);
    for result in [
        tb.value(&seven).map(|_| ()),
        tb.move_values(&seven).map(|_| ()),
    ] {
        match result {
            Err(
                ref e @ Error::OutOfRange {
                    rules,
                    cycles,
                    stones,
                    available,
                    ref root,
                },
            ) => {
                assert_eq!(
                    (rules, cycles, stones, available),
                    (oware, Cycles::Even, 7, Some(6))
                );
                assert_eq!(root, dir.path());
                let msg = e.to_string();
                assert!(msg.contains("hold at most 6"), "{msg}");
                assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
            }
            other => panic!("7 stones in 0..=6 tables: {other:?}"),
        }
    }
    // The same board with 4 pits per side is not a board of these tables.
    let small = Position::parse(4, "1,0,0,0/0,0,0,1").unwrap();
    assert!(matches!(tb.value(&small), Err(Error::Notation(_))));
    assert!(matches!(tb.move_values(&small), Err(Error::Notation(_))));
    // No table at all: still a typed error that tells how to build.
    let kalah = rules(Variant::Kalah, 6);
    let none: Tablebase = Tablebase::open(dir.path(), kalah).unwrap();
    assert_eq!(none.max_level(), None);
    match none.value(&Position::empty(6)) {
        Err(
            e @ Error::OutOfRange {
                available: None,
                rules,
                ..
            },
        ) => {
            assert_eq!(rules, kalah);
            assert!(e.to_string().contains("no such tables"), "{e}")
        }
        other => panic!("empty directory: {other:?}"),
    }
}

/// Which kind of error, for comparisons: a table file's, or a probe's
/// (whose table errors are the file's).
trait Kind {
    fn kind(&self) -> &'static str;
}

impl Kind for FormatError {
    fn kind(&self) -> &'static str {
        match self {
            FormatError::Missing { .. } => "Missing",
            FormatError::NotRegularFile { .. } => "NotRegularFile",
            FormatError::BadMagic { .. } => "BadMagic",
            FormatError::UnsupportedVersion { .. } => "UnsupportedVersion",
            FormatError::Corrupted { .. } => "Corrupted",
            FormatError::WrongTable { .. } => "WrongTable",
            FormatError::WrongKind { .. } => "WrongKind",
            FormatError::Io { .. } => "Io",
        }
    }
}

impl Kind for Error {
    fn kind(&self) -> &'static str {
        match self {
            Error::Notation(_) => "Notation",
            Error::OutOfRange { .. } => "OutOfRange",
            Error::Table { source, .. } => source.kind(),
        }
    }
}

impl Kind for VerifyError {
    fn kind(&self) -> &'static str {
        match self {
            VerifyError::Format(e) => e.kind(),
            VerifyError::Interrupted { .. } => "Interrupted",
        }
    }
}

fn kind(e: &impl Kind) -> &'static str {
    e.kind()
}

/// A directory with oware-6 levels 0..=6 in blocks of 1024 positions
/// (level 6 has 13 blocks), and its solution.
fn small_oware() -> (TempDir, Rules, Solved) {
    let dir = TempDir::new().unwrap();
    let rules = rules(Variant::Oware, 6);
    build_tables(dir.path(), rules, 6, Some(1024));
    (dir, rules, solve_in_memory(&rules, 6))
}

/// Opens `path` as level `n` and reads every value; on success the values
/// must be the right ones.
fn open_and_read(path: &Path, rules: &Rules, n: u32, solved: &Solved) -> Result<(), FormatError> {
    let t = open(path, rules, n)?;
    let values = t.decode_entries(solved)?;
    assert_eq!(
        values,
        solved.symbols(n),
        "{}: wrong values",
        path.display()
    );
    Ok(())
}

#[test]
fn truncated_files_are_detected() {
    let (dir, rules, solved) = small_oware();
    let path = level_path(dir.path(), &rules, 6);
    let good = fs::read(&path).unwrap();
    let len = good.len();
    let six = level_positions(6, 6);
    let five = some_position(6, 5);
    for cut in [len - 1, len / 2, 20, 16, 8, 7, 4, 0] {
        fs::write(&path, &good[..cut]).unwrap();
        let expected = if cut < MAGIC.len() {
            "BadMagic"
        } else {
            "Corrupted"
        };
        let err = open_and_read(&path, &rules, 6, &solved).unwrap_err();
        assert_eq!(kind(&err), expected, "cut to {cut} bytes: {err}");
        assert!(err.to_string().contains(&path.display().to_string()));
        // Through the tablebase: the file is present, so level 6 is listed,
        // but the first probe fails; lower levels still answer.
        let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
        assert_eq!(tb.max_level(), Some(6));
        let err = tb.value(&six[six.len() / 3]).unwrap_err();
        assert_eq!(kind(&err), expected, "cut to {cut} bytes, probe: {err}");
        // Sowing a from 3,0,0,0,0,0/0,0,0,0,0,3 keeps the level.
        let err = tb.move_values(&some_position(6, 6)).unwrap_err();
        assert_eq!(
            kind(&err),
            expected,
            "cut to {cut} bytes, move values: {err}"
        );
        assert_eq!(tb.value(&five).unwrap(), solved.value(&five));
    }
    // Every truncation of a small file, and trailing garbage.
    let path = level_path(dir.path(), &rules, 2);
    let good = fs::read(&path).unwrap();
    for cut in 0..good.len() {
        fs::write(&path, &good[..cut]).unwrap();
        let err = open_and_read(&path, &rules, 2, &solved)
            .expect_err(&format!("level 2 cut to {cut} bytes was accepted"));
        let expected = if cut < MAGIC.len() {
            "BadMagic"
        } else {
            "Corrupted"
        };
        assert_eq!(kind(&err), expected, "cut to {cut}: {err}");
    }
    let mut longer = good.clone();
    longer.extend_from_slice(b"\0");
    fs::write(&path, &longer).unwrap();
    let err = open_and_read(&path, &rules, 2, &solved).unwrap_err();
    assert_eq!(kind(&err), "Corrupted", "trailing byte: {err}");
}

/// Where the parts of a table file lie: `(header range, block ranges)`.
fn layout(path: &Path) -> (std::ops::Range<usize>, Vec<std::ops::Range<usize>>) {
    let bytes = fs::read(path).unwrap();
    let blocks = TableFile::open(path).unwrap().header().block_count as usize;
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let header = 16..16 + header_len;
    let bases = header.end + 8 * blocks;
    let start = |b: usize| {
        let base_at = bases + 8 * (b >> 16);
        let base = u64::from_le_bytes(bytes[base_at..base_at + 8].try_into().unwrap());
        let at = header.end + 8 * b;
        base as usize + u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
    };
    let ranges = (0..blocks)
        .map(|b| {
            let end = if b + 1 < blocks {
                start(b + 1)
            } else {
                bytes.len() - 8
            };
            start(b)..end
        })
        .collect();
    (header, ranges)
}

fn flip_bit(path: &Path, good: &[u8], byte: usize, bit: u8) {
    let mut bad = good.to_vec();
    bad[byte] ^= 1 << bit;
    fs::write(path, bad).unwrap();
}

#[test]
fn a_bit_flip_in_a_data_block_is_detected() {
    let (dir, rules, solved) = small_oware();
    let path = level_path(dir.path(), &rules, 6);
    let good = fs::read(&path).unwrap();
    let entries = open(&path, &rules, 6).unwrap().decode_all().unwrap();
    let (_, blocks) = layout(&path);
    assert_eq!(blocks.len(), 13, "level 6 in blocks of 1024");
    let victim = 5;
    let range = blocks[victim].clone();
    flip_bit(&path, &good, (range.start + range.end) / 2, 3);

    let t = open(&path, &rules, 6).expect("the header is intact");
    let values = solved.symbols(6);
    let inside = victim as u64 * 1024 + 100;
    let outside = (victim as u64 + 1) * 1024 + 100;
    let err = t.first_symbol(inside).unwrap_err();
    assert_eq!(kind(&err), "Corrupted", "{err}");
    assert!(err.to_string().contains("block 5"), "{err}");
    assert_eq!(t.first_symbol(outside).unwrap(), entries[outside as usize]);
    assert_eq!(
        kind(&t.first_symbol(inside).unwrap_err()),
        "Corrupted",
        "not cached"
    );
    assert_eq!(kind(&t.check_file_checksum().unwrap_err()), "Corrupted");
    assert_eq!(kind(&t.decode_all().unwrap_err()), "Corrupted");

    let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    let six = level_positions(6, 6);
    let err = tb.value(&six[inside as usize]).unwrap_err();
    assert_eq!(kind(&err), "Corrupted", "{err}");
    assert_eq!(
        tb.value(&six[outside as usize]).unwrap(),
        values[outside as usize] as i32
    );
    let err =
        verify::<Even>(dir.path(), &rules, 0, None, &std::env::temp_dir(), |_| {}).unwrap_err();
    assert_eq!(kind(&err), "Corrupted", "verify: {err}");

    // A flip in the whole-file checksum itself: values are still right,
    // but the file check fails.
    flip_bit(&path, &good, good.len() - 6, 0);
    let t = open(&path, &rules, 6).unwrap();
    assert_eq!(t.decode_entries(&solved).unwrap(), values);
    assert_eq!(kind(&t.check_file_checksum().unwrap_err()), "Corrupted");
}

/// Runs `body` in a child process (this test binary re-run on test `name`
/// alone), so that a flip making the library abort fails this test only
/// instead of killing every test of the binary.
fn in_child_process(name: &str, body: impl FnOnce()) {
    const CHILD: &str = "MANCALA_TB_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    // A test's name is its path without the test binary's crate.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let test = format!("{module}::{name}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            test.as_str(),
            "--exact",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} failed in its child process ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Flips every bit of `bytes` of the table at `path` (level `n`) in turn:
/// each flip must give the error kind `expected(byte)` on open or first
/// read, or, if it goes unnoticed there, be in the whole-file checksum and
/// leave every value right.
fn flip_every_bit(
    path: &Path,
    rules: &Rules,
    n: u32,
    solved: &Solved,
    bytes: std::ops::Range<usize>,
) {
    let good = fs::read(path).unwrap();
    for byte in bytes {
        for bit in 0..8 {
            flip_bit(path, &good, byte, bit);
            let what = format!("level {n}: bit {bit} of byte {byte} of {}", good.len());
            let expected = match byte {
                0..8 => "BadMagic",
                8..12 => "UnsupportedVersion",
                _ => "Corrupted",
            };
            match open_and_read(path, rules, n, solved) {
                Err(e) => assert_eq!(kind(&e), expected, "{what}: {e}"),
                // Only the whole-file checksum is outside every other check.
                Ok(()) => {
                    assert!(byte >= good.len() - 8, "{what} went unnoticed");
                    let t = open(path, rules, n).unwrap();
                    assert!(t.check_file_checksum().is_err(), "{what}");
                }
            }
        }
    }
    fs::write(path, good).unwrap();
}

#[test]
fn a_bit_flip_in_the_header_or_block_index_is_detected() {
    in_child_process(
        "a_bit_flip_in_the_header_or_block_index_is_detected",
        || {
            let (dir, rules, solved) = small_oware();
            let path = level_path(dir.path(), &rules, 6);
            let (header, blocks) = layout(&path);
            // Every bit of the header, the block index and the header checksum.
            flip_every_bit(&path, &rules, 6, &solved, header.start..blocks[0].start);
        },
    );
}

#[test]
fn every_bit_flip_outside_the_header_is_an_error_or_harmless() {
    let (dir, rules, solved) = small_oware();
    let path = level_path(dir.path(), &rules, 3);
    let (header, _) = layout(&path);
    let len = fs::metadata(&path).unwrap().len() as usize;
    assert!(len < 2000, "level 3 is small: {len} bytes");
    flip_every_bit(&path, &rules, 3, &solved, 0..header.start);
    flip_every_bit(&path, &rules, 3, &solved, header.end..len);
}

/// Every bit of a header flipped in turn. The header is decoded before its
/// checksum can be checked, so a flipped length prefix once made bincode
/// try to allocate exabytes and abort the process (bit 0 of byte 52 of
/// oware-6 level 3: the length of "i8"); the decode is now size-limited.
/// Runs in a child process so that an abort fails this test alone.
#[test]
fn every_bit_flip_in_a_small_header_is_detected() {
    in_child_process("every_bit_flip_in_a_small_header_is_detected", || {
        let dir = TempDir::new().unwrap();
        let rules = rules(Variant::Oware, 6);
        build_tables(dir.path(), rules, 3, None);
        let solved = solve_in_memory::<Even>(&rules, 3);
        let path = level_path(dir.path(), &rules, 3);
        let (header, _) = layout(&path);
        flip_every_bit(&path, &rules, 3, &solved, header);
    });
}

#[test]
fn a_file_of_another_level_or_rule_set_is_rejected() {
    let (dir, oware, solved) = small_oware();
    let six = level_path(dir.path(), &oware, 6);
    let pos6 = some_position(6, 6);
    // Level 5 renamed into level 6's place.
    fs::copy(level_path(dir.path(), &oware, 5), &six).unwrap();
    let tb: Tablebase = Tablebase::open(dir.path(), oware).unwrap();
    match tb.value(&pos6) {
        Err(
            e @ Error::Table {
                source: FormatError::WrongTable { .. },
                ..
            },
        ) => {
            let msg = e.to_string();
            assert!(msg.contains("oware-6 level 6"), "{msg}");
            assert!(msg.contains("oware-6 level 5"), "{msg}");
        }
        other => panic!("level 5 file as level 6: {other:?}"),
    }
    // A Kalah level 6 file in its place.
    let kalah = rules(Variant::Kalah, 6);
    build_tables(dir.path(), kalah, 6, None);
    fs::copy(level_path(dir.path(), &kalah, 6), &six).unwrap();
    let tb: Tablebase = Tablebase::open(dir.path(), oware).unwrap();
    match tb.value(&pos6) {
        Err(
            e @ Error::Table {
                source: FormatError::WrongTable { .. },
                ..
            },
        ) => assert!(e.to_string().contains("kalah-6"), "{e}"),
        other => panic!("kalah file as oware: {other:?}"),
    }
    assert_eq!(tb.value(&some_position(6, 5)).unwrap(), {
        solved.value(&some_position(6, 5))
    });
    // Kalah with and without empty-pit captures are different rule sets.
    let path = level_path(dir.path(), &kalah, 3);
    let noempty = kalah.with_empty_capture(false);
    assert!(matches!(
        open(&path, &noempty, 3),
        Err(FormatError::WrongTable { .. })
    ));
    assert!(open(&path, &kalah, 3).is_ok());
}

#[test]
fn missing_files_are_reported() {
    let (dir, rules, solved) = small_oware();
    let tb_before: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    let four = level_path(dir.path(), &rules, 4);
    fs::remove_file(&four).unwrap();
    // Opened before the file vanished: the first probe says which level of
    // which tables is missing.
    match tb_before.value(&some_position(6, 4)) {
        Err(Error::Table {
            rules: missing,
            cycles: Cycles::Even,
            level: 4,
            source: FormatError::Missing { path },
        }) => {
            assert_eq!(missing, rules);
            assert_eq!(path, four);
        }
        other => panic!("deleted level 4: {other:?}"),
    }
    // Opened after: a level answers only with every level it needs, so 6
    // (whose captures of 2 reach 4) is out, and 5 (which reaches 3 and
    // below, never 4) is in.
    let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    assert_eq!(tb.max_level(), Some(5));
    assert_eq!(tb.levels(), [0, 1, 2, 3, 5]);
    for (n, why) in [(4, "lack level 4"), (6, "hold at most 5")] {
        let err = tb.value(&some_position(6, n)).unwrap_err();
        assert!(
            matches!(
                err,
                Error::OutOfRange {
                    available: Some(5),
                    ..
                }
            ),
            "{n} stones: {err:?}"
        );
        assert!(err.to_string().contains(why), "{err}");
    }
    for n in [3, 5] {
        let pos = some_position(6, n);
        assert_eq!(tb.value(&pos).unwrap(), solved.value(&pos));
    }
    match open(&four, &rules, 4) {
        Err(e @ FormatError::Missing { .. }) => {
            assert!(e.to_string().contains("table file missing"), "{e}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn verify_passes_good_tables_and_finds_wrong_values() {
    let (dir, rules, solved) = small_oware();
    let mut seen = Vec::new();
    let checks = verify::<Even>(dir.path(), &rules, 0, None, &std::env::temp_dir(), |c| {
        seen.push(c.level)
    })
    .unwrap();
    assert_eq!(seen, (0..=6).collect::<Vec<_>>());
    assert_eq!(checks.len(), 7);
    for c in &checks {
        assert!(c.ok(), "level {}: {c:?}", c.level);
        assert_eq!(c.positions, LevelIndex::new(6, c.level).count());
    }
    let checks = verify::<Even>(
        dir.path(),
        &rules,
        0,
        Some(4),
        &std::env::temp_dir(),
        |_| {},
    )
    .unwrap();
    assert_eq!(checks.len(), 5);

    // One wrong value in level 5, written as a well-formed file.
    let n = 5;
    let path = level_path(dir.path(), &rules, n);
    let original = fs::read(&path).unwrap();
    let mut values = solved.symbols(n).to_vec();
    let at = values.len() / 2;
    values[at] = if values[at] < n as i8 {
        values[at] + 1
    } else {
        values[at] - 1
    };
    let header = Header::for_symbols::<Even>(&rules, n, &values, 1024);
    write_table(&path, &header, &values);
    let t = open(&path, &rules, n).unwrap();
    t.check_file_checksum().expect("a well-formed file");
    let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    let pos = LevelIndex::new(6, n).unrank(at as u64);
    assert_eq!(
        tb.value(&pos).unwrap(),
        values[at] as i32,
        "probes trust the file"
    );

    let checks =
        verify::<Even>(dir.path(), &rules, 0, None, &std::env::temp_dir(), |_| {}).unwrap();
    assert_eq!(checks.len(), 7);
    for c in &checks[..5] {
        assert!(c.ok(), "level {} below the damage: {c:?}", c.level);
    }
    let bad = &checks[5];
    assert!(!bad.ok());
    assert!(bad.histogram_ok, "the header was written for these values");
    assert!(bad.mismatches >= 1);
    let (first, stored, recomputed) = bad.first_mismatch.expect("a mismatch is shown");
    assert_eq!(first.stones(), n);
    assert_ne!(stored, recomputed);
    assert_eq!(stored, values[rank(&first) as usize]);
    if first == pos {
        assert_eq!(recomputed as i32, solved.value(&pos));
    }
    // Levels 4 and up held as flipped scratch files: the same finding.
    let scratch = TempDir::new().unwrap();
    let mapping = VerifyOptions {
        mapped_min_positions: 1000,
        ..VerifyOptions::new(scratch.path())
    };
    let mapped =
        verify_with::<Even>(dir.path(), &rules, &mapping, &mancala_verify::Quiet, |_| {}).unwrap();
    let summary = |checks: &[LevelCheck<Even>]| {
        checks
            .iter()
            .map(|c| (c.level, c.mismatches, c.first_mismatch, c.histogram_ok))
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&mapped), summary(&checks));
    // With memory for some of those levels (the smallest first), the rest
    // mapped: the same finding again, every position told to the progress.
    let count = |m: u32| LevelIndex::new(rules.pits(), m).count();
    let positions: u64 = (0..=6).map(count).sum();
    let budget = (0..n).map(count).sum();
    let progress = Counted::default();
    let held = VerifyOptions {
        memory: Some(budget),
        ..mapping
    };
    let partly = verify_with::<Even>(dir.path(), &rules, &held, &progress, |_| {}).unwrap();
    assert_eq!(summary(&partly), summary(&checks));
    assert_eq!(progress.total.load(Relaxed), positions);
    assert_eq!(progress.done.load(Relaxed), positions);
    assert_eq!(progress.levels.load(Relaxed), 7);
    // With memory for each level checked alone, each is held in memory
    // (its positions read it at random), the lower ones moved to scratch
    // files to make room for it, largest first: the same finding. With
    // room for the last level, levels 4 and 5 stay in memory until level
    // 6 needs it; with room for level 5 only, level 4 makes room for it,
    // and level 6, too large, is mapped.
    let flipping = mancala_format::flip_gathered_bytes(rules.pits(), 6, 1);
    for (room_for, expected) in [
        (6, [(4, vec![]), (5, vec![]), (6, vec![4, 5])]),
        (5, [(4, vec![]), (5, vec![4]), (6, vec![4, 6])]),
    ] {
        let scratch = TempDir::new().unwrap();
        let seen = ScratchSeen::new(scratch.path());
        let each_held = VerifyOptions {
            memory: Some(count(room_for) + flipping),
            ..VerifyOptions {
                mapped_min_positions: 1000,
                ..VerifyOptions::new(scratch.path())
            }
        };
        let held = verify_with::<Even>(dir.path(), &rules, &each_held, &seen, |_| {}).unwrap();
        assert_eq!(
            summary(&held),
            summary(&checks),
            "room for level {room_for}"
        );
        assert_eq!(seen.files_at(4..=6), expected, "room for level {room_for}");
    }
    // From level 6 only, with room for it: it is held in memory, and the
    // levels below, loaded first, take none of its room.
    let scratch = TempDir::new().unwrap();
    let seen = ScratchSeen::new(scratch.path());
    let top_only = VerifyOptions {
        from: 6,
        memory: Some(count(6) + flipping),
        mapped_min_positions: 1000,
        ..VerifyOptions::new(scratch.path())
    };
    let top = verify_with::<Even>(dir.path(), &rules, &top_only, &seen, |_| {}).unwrap();
    assert_eq!(summary(&top), summary(&checks[6..]));
    assert_eq!(seen.files_at(6..=6), [(6, vec![4, 5])]);

    // The same values under the original histogram: it is wrong too.
    let mut header = Header::for_symbols::<Even>(&rules, n, &values, 1024);
    header.histogram = histogram(solved.symbols(n));
    write_table(&path, &header, &values);
    let checks = verify::<Even>(
        dir.path(),
        &rules,
        0,
        Some(n),
        &std::env::temp_dir(),
        |_| {},
    )
    .unwrap();
    assert!(!checks[5].histogram_ok);
    assert!(!checks[5].ok());

    // Restored, everything passes again.
    fs::write(&path, original).unwrap();
    let checks =
        verify::<Even>(dir.path(), &rules, 0, None, &std::env::temp_dir(), |_| {}).unwrap();
    assert!(checks.iter().all(|c| c.ok()));
}

/// A verification asked to stop (as Ctrl-C asks the command line's) ends
/// with the level to resume from, having reported only the levels it
/// finished, and leaves the levels it decoded for the verification that
/// resumes it, which removes them when it ends.
#[test]
fn an_interrupted_verification_says_where_to_resume_and_keeps_its_levels_for_it() {
    let (dir, rules, _) = small_oware();
    let scratch = TempDir::new().unwrap();
    let stop = StopAt {
        level: 5,
        flag: Arc::new(AtomicBool::new(false)),
    };
    let options = VerifyOptions {
        from: 2,
        mapped_min_positions: 1000,
        interrupt: Some(stop.flag.clone()),
        ..VerifyOptions::new(scratch.path())
    };
    let mut reported = Vec::new();
    let err = verify_with::<Even>(dir.path(), &rules, &options, &stop, |c| {
        reported.push(c.level)
    })
    .unwrap_err();
    assert!(
        matches!(err, VerifyError::Interrupted { level: 5 }),
        "{err}"
    );
    assert_eq!(reported, [2, 3, 4]);
    // Levels 4 and 5 (1,000 positions or more) were decoded to files.
    let kept = |n: u32| {
        let files: Vec<_> = fs::read_dir(scratch.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        files
            .iter()
            .any(|d| d.join(format!("level-{n:03}.note")).exists())
    };
    assert!(kept(4) && kept(5), "the decoded levels kept");
    // Stopped before it began, it resumes at its first level, not below.
    let err = verify_with::<Even>(dir.path(), &rules, &options, &stop, |_| {}).unwrap_err();
    assert!(
        matches!(err, VerifyError::Interrupted { level: 2 }),
        "{err}"
    );
    assert!(kept(4), "still kept");
    // Resumed to its end, it leaves nothing but its lock file.
    let resumed = VerifyOptions {
        from: 5,
        interrupt: None,
        ..options
    };
    let checks =
        verify_with::<Even>(dir.path(), &rules, &resumed, &mancala_verify::Quiet, |_| {}).unwrap();
    assert!(checks.iter().all(LevelCheck::ok));
    let left: Vec<_> = fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.len() == 1 && left[0].ends_with(".lock"),
        "scratch files left behind: {left:?}"
    );
}

/// Progress that asks its verification to stop once level `level` begins.
struct StopAt {
    level: u32,
    flag: Arc<AtomicBool>,
}

impl Progress for StopAt {
    fn level_started(&self, level: u32, _positions: u64, _work: u64) {
        if level == self.level {
            self.flag.store(true, Relaxed);
        }
    }
}

fn snapshot(root: &Path, rules: &Rules, max: u32) -> Vec<Vec<u8>> {
    (0..=max)
        .map(|n| fs::read(level_path(root, rules, n)).unwrap())
        .collect()
}

#[test]
fn rebuilds_are_deterministic_and_reuse_valid_files() {
    let dir = TempDir::new().unwrap();
    let rules = rules(Variant::Oware, 6);
    build_tables(dir.path(), rules, 8, None);
    let original = snapshot(dir.path(), &rules, 8);

    // A middle level deleted: only it is rebuilt, byte for byte.
    fs::remove_file(level_path(dir.path(), &rules, 4)).unwrap();
    let reports = build_tables(dir.path(), rules, 8, None);
    for r in &reports {
        assert_eq!(
            r.reused,
            r.level != 4,
            "level {}: reused {}",
            r.level,
            r.reused
        );
        if r.reused {
            assert_eq!(r.seconds, 0.0);
        }
    }
    assert_eq!(snapshot(dir.path(), &rules, 8), original, "rebuild differs");

    // A damaged level is not reused.
    let five = level_path(dir.path(), &rules, 5);
    let (_, blocks) = layout(&five);
    flip_bit(&five, &original[5], blocks[0].start + 3, 6);
    let reports = build_tables(dir.path(), rules, 8, None);
    let rebuilt: Vec<u32> = reports
        .iter()
        .filter(|r| !r.reused)
        .map(|r| r.level)
        .collect();
    assert_eq!(rebuilt, [5]);
    assert_eq!(snapshot(dir.path(), &rules, 8), original);

    // Forced: everything rebuilt, nothing changes.
    let mut options = compact_options(dir.path(), rules, 8);
    options.force = true;
    let reports = build(&options, &Quiet).unwrap();
    assert!(reports.iter().all(|r| !r.reused));
    assert_eq!(snapshot(dir.path(), &rules, 8), original);

    // Extending: lower levels reused, new ones equal a fresh build's.
    let reports = build_tables(dir.path(), rules, 9, None);
    let rebuilt: Vec<u32> = reports
        .iter()
        .filter(|r| !r.reused)
        .map(|r| r.level)
        .collect();
    assert_eq!(rebuilt, [9]);
    let fresh = TempDir::new().unwrap();
    build_tables(fresh.path(), rules, 9, None);
    assert_eq!(
        fs::read(level_path(dir.path(), &rules, 9)).unwrap(),
        fs::read(level_path(fresh.path(), &rules, 9)).unwrap()
    );
}

#[test]
fn a_stale_temporary_file_is_not_a_table() {
    let (dir, rules, _) = small_oware();
    let tables = tables_dir(dir.path(), &rules);
    let stale = tables.join("level-007.mtb.tmp");
    // A killed build may leave a complete-looking copy behind.
    let mut bytes = fs::read(level_path(dir.path(), &rules, 6)).unwrap();
    fs::write(&stale, &bytes).unwrap();
    bytes.truncate(100);
    fs::write(tables.join("level-003.mtb.tmp"), &bytes).unwrap();
    let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    assert_eq!(tb.max_level(), Some(6));
    assert!(matches!(
        tb.value(&some_position(6, 7)),
        Err(Error::OutOfRange { stones: 7, .. })
    ));
    let reports = build_tables(dir.path(), rules, 7, Some(1024));
    let rebuilt: Vec<u32> = reports
        .iter()
        .filter(|r| !r.reused)
        .map(|r| r.level)
        .collect();
    assert_eq!(rebuilt, [7], "level 3 is reused despite its stale .tmp");
    assert!(!stale.exists(), "the temporary file became the table");
    let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    assert_eq!(tb.max_level(), Some(7));
    let solved = solve_in_memory::<Even>(&rules, 7);
    for pos in level_positions(6, 7).iter().step_by(97) {
        assert_eq!(tb.value(pos).unwrap(), solved.value(pos));
    }
}

#[test]
fn build_rejects_impossible_options() {
    let dir = TempDir::new().unwrap();
    let rules = rules(Variant::Oware, 2);
    let mut options = BuildOptions::new(dir.path(), rules, 200);
    assert!(matches!(
        build(&options, &Quiet),
        Err(BuildError::TooManyStones {
            stones: 200,
            max: 127
        })
    ));
    options.max_stones = 3;
    options.block_size = Some(0);
    assert!(matches!(
        build(&options, &Quiet),
        Err(BuildError::BlockSize { size: 0, .. })
    ));
}

/// Lower levels held as mapped scratch files (as large builds do) give the
/// same tables as lower levels held in memory, from scratch and on resume,
/// and the scratch directory is gone afterwards.
#[test]
fn mapped_lower_levels_give_identical_tables() {
    let rules = rules(Variant::Awari, 6);
    let in_memory = TempDir::new().unwrap();
    build_tables(in_memory.path(), rules, 9, None);
    let mapped = TempDir::new().unwrap();
    let mut options = compact_options(mapped.path(), rules, 9);
    options.mapped_min_positions = 0;
    build(&options, &Quiet).unwrap();
    assert_eq!(
        snapshot(mapped.path(), &rules, 9),
        snapshot(in_memory.path(), &rules, 9)
    );
    // Resuming decodes the present levels into mapped files.
    fs::remove_file(level_path(mapped.path(), &rules, 9)).unwrap();
    build(&options, &Quiet).unwrap();
    assert_eq!(
        snapshot(mapped.path(), &rules, 9),
        snapshot(in_memory.path(), &rules, 9)
    );
    let tables = tables_dir(mapped.path(), &rules);
    assert!(!tables.join(mancala_gen::SCRATCH_DIR).exists());
}

/// A level interrupted in the middle of its propagation resumes from its
/// last checkpoint (skipping the forward pass) and ends with the same
/// values; a damaged checkpoint is ignored and the level solved afresh.
#[test]
fn an_interrupted_level_resumes_from_its_checkpoint() {
    use mancala_gen::{Retrograde, Strategy};
    assert_resumes_from_its_checkpoint::<Even>(
        &|job| Retrograde::local().solve(job).unwrap(),
        &|| {},
        false,
    );
}

/// The same with depths to conversion asked for: the checkpoint holds the
/// depths of the thresholds done, and the resumed level ends with every
/// depth, of even values and of forced bounds.
#[test]
fn an_interrupted_level_resumes_with_its_depths() {
    use mancala_gen::{Retrograde, Strategy};
    assert_resumes_from_its_checkpoint::<Even>(
        &|job| Retrograde::local().solve(job).unwrap(),
        &|| {},
        true,
    );
    assert_resumes_from_its_checkpoint::<mancala_format::Forced>(
        &|job| Retrograde::local().solve(job).unwrap(),
        &|| {},
        true,
    );
}

/// Oware level 9 of kind `K` solved by `solve`, with a checkpoint before
/// every threshold (and its depths, with `depths`): killed half-way
/// through its thresholds, it resumes from its last checkpoint (its first
/// progress report covers the forward pass) with the in-memory solver's
/// symbols and depths, then `after_resume` holds; from a damaged
/// checkpoint it starts afresh, to the same symbols and depths.
pub(crate) fn assert_resumes_from_its_checkpoint<K: mancala_gen::Solve>(
    solve: &(dyn Fn(&mancala_gen::LevelJob<K>) -> mancala_gen::Solution + Sync),
    after_resume: &dyn Fn(),
    depths: bool,
) {
    use mancala_gen::{Checkpoints, Depths, LevelJob, Retrograde, Solution, Strategy};
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    use std::sync::Mutex;

    let rules = rules(Variant::Oware, 6);
    let n = 9;
    let count = LevelIndex::new(6, n).count();
    let lower = solve_in_memory::<K>(&rules, n - 1);
    let new_depths = || depths.then(|| Depths::for_kind::<K>(0, count as usize));
    let plies = |depths: Option<Depths>| depths.map(Depths::into_plies);
    let expected_depths = new_depths();
    let in_memory = LevelJob {
        rules: &rules,
        level: n,
        lower: &lower,
        progress: &|_| {},
        resumed: None,
        checkpoints: None,
        interrupt: None,
        mark_exits: false,
        depths: expected_depths.as_ref(),
    };
    let expected = Retrograde::local().solve(&in_memory).unwrap().symbols;
    let expected_depths = plies(expected_depths);
    let dir = TempDir::new().unwrap();
    let checkpoints = Checkpoints {
        dir: dir.path().join("checkpoints"),
        every: std::time::Duration::ZERO,
    };

    // Each run has depths of its own, as a process has: a killed one's
    // are lost with it.
    let resumable = |progress: &(dyn Fn(u64) + Sync)| -> (Solution, Option<Vec<u16>>) {
        let depths = new_depths();
        let solution = solve(&LevelJob {
            rules: &rules,
            level: n,
            lower: &lower,
            progress,
            resumed: None,
            checkpoints: Some(&checkpoints),
            interrupt: None,
            mark_exits: false,
            depths: depths.as_ref(),
        });
        (solution, plies(depths))
    };

    // Killed in the propagation, three quarters of the way through the
    // level's work: past the lean mode's first seeding, which comes before
    // its first checkpoint and can take about half of the second half.
    let done = AtomicU64::new(0);
    let interrupted = catch_unwind(AssertUnwindSafe(|| {
        resumable(&|units| {
            if done.fetch_add(units, SeqCst) + units > count + 3 * count / 4 {
                panic!("interrupted on purpose");
            }
        })
    }));
    assert!(interrupted.is_err());
    let saved = checkpoints.path(n);
    assert!(saved.exists(), "no checkpoint was written");

    // Resumed: the first progress report already covers the forward pass.
    let first = Mutex::new(None);
    let progress = |units| {
        first.lock().unwrap().get_or_insert(units);
    };
    let (resumed, resumed_depths) = resumable(&progress);
    assert!(
        resumed.held_symbols() == &expected[..],
        "resumed level differs"
    );
    assert!(resumed_depths == expected_depths, "resumed depths differ");
    assert!(first.lock().unwrap().unwrap() > count, "did not resume");
    after_resume();

    // A damaged checkpoint is not trusted.
    let mut bytes = fs::read(&saved).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    fs::write(&saved, bytes).unwrap();
    *first.lock().unwrap() = None;
    let (fresh, fresh_depths) = resumable(&progress);
    assert!(fresh.held_symbols() == &expected[..], "fresh level differs");
    assert!(fresh_depths == expected_depths, "fresh depths differ");
    assert!(
        first.lock().unwrap().unwrap() <= count,
        "used a damaged checkpoint"
    );
}

#[test]
fn an_interrupted_build_keeps_its_levels_and_resumes() {
    use mancala_gen::{BuildObserver, Progress};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
    use std::sync::Arc;

    /// Asks the build to stop once `after` units of level `level` are done.
    struct StopAt {
        level: u32,
        after: u64,
        current: AtomicU64,
        done: AtomicU64,
        flag: Arc<AtomicBool>,
    }
    impl Progress for StopAt {
        fn level_started(&self, level: u32, _positions: u64, _work: u64) {
            self.current.store(level as u64, SeqCst);
        }
        fn advanced(&self, units: u64) {
            let done = self.done.fetch_add(units, SeqCst) + units;
            if self.current.load(SeqCst) == self.level as u64 && done >= self.after {
                self.flag.store(true, SeqCst);
            }
        }
    }
    impl BuildObserver for StopAt {}

    for (rules, max) in [
        (rules(Variant::Oware, 6), 10),
        (rules(Variant::Kalah, 6), 10),
    ] {
        let clean = TempDir::new().unwrap();
        build(&BuildOptions::new(clean.path(), rules, max), &Quiet).unwrap();

        let dir = TempDir::new().unwrap();
        let flag = Arc::new(AtomicBool::new(false));
        let mut options = BuildOptions::new(dir.path(), rules, max);
        options.interrupt = Some(flag.clone());
        let level = 9;
        let before: u64 = (0..level).map(|n| 2 * LevelIndex::new(6, n).count()).sum();
        let count = LevelIndex::new(6, level).count();
        let observer = StopAt {
            level,
            // Past the forward pass, inside the thresholds (Oware).
            after: before + count + count / 3,
            current: AtomicU64::new(0),
            done: AtomicU64::new(0),
            flag: flag.clone(),
        };
        let stopped = build(&options, &observer);
        assert!(
            matches!(stopped, Err(BuildError::Interrupted)),
            "{:?}",
            stopped.err()
        );
        for n in 0..level {
            assert!(level_path(dir.path(), &rules, n).exists(), "level {n} lost");
        }
        assert!(!level_path(dir.path(), &rules, level).exists());
        let checkpoint = tables_dir(dir.path(), &rules)
            .join(mancala_gen::CHECKPOINT_DIR)
            .read_dir()
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(
            checkpoint,
            rules.variant().can_cycle() as usize,
            "{rules:?}"
        );

        options.interrupt = None;
        build(&options, &Quiet).unwrap();
        assert_eq!(
            snapshot(dir.path(), &rules, max),
            snapshot(clean.path(), &rules, max),
            "{rules:?}"
        );
    }
}

/// Batches repeated over one tablebase read the blocks the earlier ones
/// kept in its cache (from the second miss on, into its free room only):
/// with no cache, a cache too small for every level, and one that holds
/// them all, each round answers exactly the solver's values.
#[test]
fn repeated_batches_answer_alike_from_the_block_cache() {
    let (dir, rules, solved) = small_oware();
    let positions: Vec<Position> = (0..=6).rev().flat_map(|n| level_positions(6, n)).collect();
    let expected: Vec<i32> = positions.iter().map(|pos| solved.value(pos)).collect();
    for cache_bytes in [0, 20_000, 1 << 26] {
        let tb: Tablebase = Tablebase::open_with_cache(dir.path(), rules, cache_bytes).unwrap();
        for round in 0..4 {
            let values = tb.values(&positions).unwrap();
            assert!(values == expected, "cache {cache_bytes}, round {round}");
            // Single probes share the cache with the batches.
            for pos in positions.iter().step_by(97) {
                assert_eq!(tb.value(pos).unwrap(), solved.value(pos));
            }
        }
    }
}

/// Batched probes answer exactly what single probes answer, whatever the
/// order and repetition of the positions, and refuse a batch with a
/// position the tables do not cover.
#[test]
fn batched_probes_match_single_probes() {
    let (dir, rules, solved) = small_oware();
    let tb: Tablebase = Tablebase::open_with_cache(dir.path(), rules, 0).unwrap();
    // Every position of every level, highest level first, each twice.
    let mut positions: Vec<Position> = (0..=6).rev().flat_map(|n| level_positions(6, n)).collect();
    positions.extend(positions.clone());
    let values = tb.values(&positions).unwrap();
    let moves = tb.move_values_many(&positions).unwrap();
    for ((pos, value), moves) in positions.iter().zip(values).zip(moves) {
        assert_eq!(value, solved.value(pos), "{pos}");
        assert_eq!(moves, tb.move_values(pos).unwrap(), "{pos}");
    }
    // Small batches decode no level whole: their searches read blocks.
    for few in positions.chunks(3).step_by(101) {
        let expected: Vec<i32> = few.iter().map(|pos| solved.value(pos)).collect();
        assert_eq!(tb.values(few).unwrap(), expected);
    }
    positions.push(some_position(6, 7));
    assert!(matches!(
        tb.values(&positions),
        Err(Error::OutOfRange { stones: 7, .. })
    ));
    assert!(tb.check(&some_position(6, 7)).is_err());
    assert!(tb.check(&some_position(6, 6)).is_ok());
}

/// Notes, for each level checked, the scratch files present when it
/// starts being checked, sorted.
#[derive(Default)]
struct ScratchSeen {
    scratch: std::path::PathBuf,
    files_at: std::sync::Mutex<std::collections::BTreeMap<u32, Vec<String>>>,
}

impl ScratchSeen {
    fn new(scratch: &Path) -> ScratchSeen {
        ScratchSeen {
            scratch: scratch.to_path_buf(),
            ..ScratchSeen::default()
        }
    }

    /// The scratch files seen at the start of `levels`, named by level.
    fn files_at(&self, levels: std::ops::RangeInclusive<u32>) -> Vec<(u32, Vec<u32>)> {
        let seen = self.files_at.lock().unwrap();
        levels
            .map(|m| {
                // A level's file, not the note a kept one has beside it.
                let files = seen[&m]
                    .iter()
                    .filter(|name| !name.ends_with(".note"))
                    .map(|name| name[6..9].parse().unwrap());
                (m, files.collect())
            })
            .collect()
    }
}

impl Progress for ScratchSeen {
    fn level_started(&self, level: u32, _positions: u64, _work: u64) {
        let mut names = Vec::new();
        if let Ok(dirs) = fs::read_dir(&self.scratch) {
            // Each verification's directory (beside its lock file).
            for dir in dirs.map(|d| d.unwrap().path()).filter(|d| d.is_dir()) {
                for file in fs::read_dir(dir).unwrap() {
                    names.push(file.unwrap().file_name().to_string_lossy().into_owned());
                }
            }
        }
        names.sort();
        self.files_at.lock().unwrap().insert(level, names);
    }
}

/// Verification progress, counted.
#[derive(Default)]
struct Counted {
    total: AtomicU64,
    done: AtomicU64,
    levels: AtomicU64,
}

impl Progress for Counted {
    fn started(&self, positions: u64) {
        self.total.store(positions, Relaxed);
    }

    fn level_started(&self, _level: u32, _positions: u64, _work: u64) {
        self.levels.fetch_add(1, Relaxed);
    }

    fn advanced(&self, positions: u64) {
        self.done.fetch_add(positions, Relaxed);
    }
}

/// A build waiting for another build's lock (`wait_for_lock`) stops when
/// it is interrupted (SIGTERM to the command line), as it does at its
/// other checks, instead of waiting on for the other build to end.
#[test]
fn a_build_waiting_for_the_lock_stops_when_interrupted() {
    let root = TempDir::new().unwrap();
    let oware = rules(Variant::Oware, 6);
    let dir = tables_dir(root.path(), &oware);
    fs::create_dir_all(&dir).unwrap();
    let other_build = fs::File::create(dir.join(mancala_gen::LOCK_FILE)).unwrap();
    other_build.lock().unwrap();
    let options = BuildOptions {
        wait_for_lock: true,
        interrupt: Some(Arc::new(AtomicBool::new(true))),
        ..BuildOptions::new(root.path(), oware, 4)
    };
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(build(&options, &Quiet)));
    let result = finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("still waiting for the lock 10 s after the interrupt");
    assert!(matches!(result, Err(BuildError::Interrupted)), "{result:?}");
    assert!(!level_path(root.path(), &oware, 0).exists());
}
