//! Depths to conversion, as the threshold propagation finds them, against
//! a brute-force reading of `docs/RULES.md` ("Depth to conversion") that
//! shares nothing with the solver but the solved values: every position of
//! small levels of every rule set; and the same depths from the lean mode
//! and from parents delivered as a cluster delivers them.

use mancala_core::{LevelIndex, Position, Rules, Variant};
use mancala_format::{Even, Levels};
use mancala_gen::{Depths, Lean, LevelJob, Retrograde, Solution, Solve, Strategy, NO_DEPTH};

use crate::exchange::Sharded;

/// Levels `0..=max` of `rules` solved with their depths: each level's
/// values and depths in index order.
fn solved_with_depths(rules: &Rules, max: u32) -> Vec<(Vec<i8>, Vec<u16>)> {
    solved_by::<Even>(rules, max, |job| Retrograde::local().solve(job).unwrap())
}

/// Levels `0..=max` of `rules` solved to tables of kind `K` with their
/// depths, each level by `solve`: each level's symbols and depths in index
/// order.
pub(crate) fn solved_by<K: Solve>(
    rules: &Rules,
    max: u32,
    solve: impl Fn(&LevelJob<K>) -> Solution,
) -> Vec<(Vec<i8>, Vec<u16>)> {
    let mut lower = Levels::<K>::new();
    let mut solved = Vec::new();
    for n in 0..=max {
        let count = LevelIndex::new(rules.pits(), n).count();
        let depths = Depths::for_kind::<K>(0, count as usize);
        let job = LevelJob {
            rules,
            level: n,
            lower: &lower,
            progress: &|_| {},
            resumed: None,
            checkpoints: None,
            interrupt: None,
            mark_exits: false,
            depths: Some(&depths),
        };
        let solution = solve(&job);
        let symbols = solution.held_symbols().to_vec();
        lower.push(symbols.clone());
        solved.push((symbols, depths.into_plies()));
    }
    solved
}

/// A depth not found (yet): more than any.
const UNKNOWN: u32 = u32::MAX;

/// What a move that keeps the value leads to: a conversion, or a child of
/// the same level (its index).
enum Kept {
    Converts,
    Child(usize),
}

/// The depths of level `n` by the definition, iterated to its fixpoint
/// from "unknown": terminal positions 0; the side ahead the fewest plies
/// over the moves that keep the value, the other side the most; a
/// conversion one ply, a child one more than its depth. After `j` rounds
/// exactly the depths up to `j` are known, so the iteration ends with
/// every depth and leaves unknown only what never converts.
fn depths_by_definition(rules: &Rules, levels: &[(Vec<i8>, Vec<u16>)], n: u32) -> Vec<u32> {
    let index = LevelIndex::new(rules.pits(), n);
    let value_of = |pos: &Position| {
        let m = pos.stones();
        levels[m as usize].0[LevelIndex::new(rules.pits(), m).rank(pos) as usize] as i32
    };
    let values = &levels[n as usize].0;
    let mut kept: Vec<Vec<Kept>> = Vec::with_capacity(values.len());
    let mut depths = vec![UNKNOWN; values.len()];
    for (at, &value) in values.iter().enumerate() {
        let pos = index.unrank(at as u64);
        let mut moves = Vec::new();
        let terminal = rules.for_each_move(&pos, |m| {
            let worth = m.value_given_child(value_of(&m.child));
            if worth == value as i32 {
                moves.push(if m.leaves_level() {
                    Kept::Converts
                } else {
                    Kept::Child(index.rank(&m.child) as usize)
                });
            }
        });
        if terminal.is_some() && value != 0 {
            depths[at] = 0;
        }
        kept.push(moves);
    }
    loop {
        let next: Vec<u32> = (0..values.len())
            .map(|at| {
                if values[at] == 0 || depths[at] == 0 {
                    return depths[at];
                }
                let terms = kept[at].iter().map(|kept| match *kept {
                    Kept::Converts => 1,
                    Kept::Child(c) => depths[c].saturating_add(1),
                });
                if values[at] > 0 {
                    terms.min().unwrap_or(UNKNOWN)
                } else {
                    terms.max().unwrap_or(UNKNOWN)
                }
            })
            .collect();
        if next == depths {
            return depths;
        }
        depths = next;
    }
}

/// Checks every depth of `rules`' levels `0..=max`; returns the longest.
fn assert_depths_are_the_definitions(rules: Rules, max: u32) -> u16 {
    let levels = solved_with_depths(&rules, max);
    for n in 0..=max {
        let expected = depths_by_definition(&rules, &levels, n);
        let (values, found) = &levels[n as usize];
        for (at, (&depth, &value)) in found.iter().zip(values).enumerate() {
            let wanted = match value {
                0 => NO_DEPTH as u32,
                _ => expected[at],
            };
            assert!(
                wanted != UNKNOWN,
                "{} level {n} index {at}: worth {value} but never converts",
                rules.id()
            );
            assert_eq!(
                depth as u32,
                wanted,
                "{} level {n} index {at} ({}), worth {value}",
                rules.id(),
                LevelIndex::new(rules.pits(), n).unrank(at as u64)
            );
        }
    }
    let depths = levels.iter().flat_map(|(_, depths)| depths);
    depths
        .copied()
        .filter(|&d| d != NO_DEPTH)
        .max()
        .unwrap_or(0)
}

#[test]
fn depths_are_the_definitions_in_every_rule_set() {
    for variant in [
        Variant::Oware,
        Variant::Awari,
        Variant::Wari,
        Variant::Kalah,
    ] {
        let mut longest = 0;
        for (pits, max) in [(1, 10), (2, 10), (3, 9), (4, 8), (6, 8)] {
            let rules = Rules::new(variant, pits).unwrap();
            longest = longest.max(assert_depths_are_the_definitions(rules, max));
        }
        // Conversions of several plies: the rounds are exercised.
        let least = if variant == Variant::Kalah { 3 } else { 30 };
        assert!(
            longest >= least,
            "{variant}: the longest conversion is {longest} plies"
        );
    }
}

/// The lean mode, and parents delivered to three workers by index range
/// (as ranks own them), find the depths the in-memory mode finds.
#[test]
fn every_way_of_solving_finds_the_same_depths() {
    assert_every_way_finds_the_same_depths::<Even>(&[
        (Variant::Oware, 6, 9),
        (Variant::Awari, 4, 10),
        (Variant::Wari, 3, 10),
        (Variant::Kalah, 4, 10),
    ]);
}

/// Levels `0..=max` of `(variant, pits, max)` solved to tables of kind `K`
/// in the lean mode and by three workers have the in-memory mode's symbols
/// and depths.
pub(crate) fn assert_every_way_finds_the_same_depths<K: mancala_gen::LeanKind>(
    cases: &[(Variant, usize, u32)],
) {
    for &(variant, pits, max) in cases {
        let rules = Rules::new(variant, pits).unwrap();
        let in_memory = solved_by::<K>(&rules, max, |job| Retrograde::local().solve(job).unwrap());
        let scratch = tempfile::tempdir().unwrap();
        let lean = Lean {
            dir: scratch.path().to_path_buf(),
            mapped_min_positions: u64::MAX,
        };
        let lean = solved_by::<K>(&rules, max, |job| lean.solve(job).unwrap());
        let sharded = Retrograde {
            exchange: Sharded::new(3, 1000),
        };
        let sharded = solved_by::<K>(&rules, max, |job| sharded.solve(job).unwrap());
        for n in 0..=max as usize {
            assert!(lean[n] == in_memory[n], "{} level {n}: lean", rules.id());
            assert!(
                sharded[n] == in_memory[n],
                "{} level {n}: sharded",
                rules.id()
            );
        }
    }
}

/// How a player picks among the moves that keep the value.
#[derive(Clone, Copy, PartialEq)]
enum Player {
    /// The first one (by pit), as a table of values alone allows.
    FirstBest,
    /// By depth: the side ahead the nearest conversion, the other side
    /// the farthest.
    ByDepth,
}

/// How a game between two players of one kind ended, from its first
/// mover's view.
struct Game {
    /// Stones the first mover ended ahead by (captured, plus the board's
    /// end value or an even split).
    margin: i32,
    /// Whether a position worth other than 0 came again.
    looped: bool,
}

/// Plays `start` to its end between two `player`s over `levels`: a game
/// ends at a terminal position (its value handing out the board) or at
/// the first repeated position (play that never leaves its level: an
/// even split, so the board counts 0).
fn play(rules: &Rules, levels: &[(Vec<i8>, Vec<u16>)], start: Position, player: Player) -> Game {
    let entry = |pos: &Position| {
        let n = pos.stones();
        let at = LevelIndex::new(rules.pits(), n).rank(pos) as usize;
        let (values, depths) = &levels[n as usize];
        (values[at] as i32, depths[at])
    };
    let mut pos = start;
    let mut seen = std::collections::HashSet::new();
    // Stones the player to move has captured less the other's.
    let (mut ahead, mut sign) = (0i32, 1i32);
    loop {
        let (value, _) = entry(&pos);
        if !seen.insert(pos) {
            return Game {
                margin: sign * ahead,
                looped: value != 0,
            };
        }
        let mut best: Option<(i64, mancala_core::Move)> = None;
        let terminal = rules.for_each_move(&pos, |m| {
            let (child_value, child_depth) = entry(&m.child);
            if m.value_given_child(child_value) != value {
                return;
            }
            let plies = if m.leaves_level() {
                1
            } else {
                1 + child_depth as i64
            };
            let rank = match player {
                Player::FirstBest => 0,
                Player::ByDepth if value > 0 => plies,
                Player::ByDepth => -plies,
            };
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, *m));
            }
        });
        if let Some(end) = terminal {
            return Game {
                margin: sign * (ahead + end),
                looped: false,
            };
        }
        let (_, m) = best.expect("a move keeps the value");
        ahead += m.gain as i32;
        if !m.extra_turn {
            (ahead, sign) = (-ahead, -sign);
        }
        pos = m.child;
    }
}

/// Following the depths realizes every value: from random positions worth
/// other than 0, two players that order the moves keeping the value by
/// depth never repeat a position worth other than 0 and end exactly at the
/// value. Two players that only keep the value loop in some of the same
/// games and get less, which shows the test can fail.
#[test]
fn following_the_depths_realizes_the_value() {
    let rules = Rules::new(Variant::Oware, 6).unwrap();
    let levels = solved_with_depths(&rules, 12);
    // A fixed generator: the same positions every run.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut games, mut loops_by_value) = (0, 0);
    while games < 400 {
        let n = 6 + (next() % 7) as u32;
        let index = LevelIndex::new(rules.pits(), n);
        let start = index.unrank(next() % index.count());
        let value = levels[n as usize].0[index.rank(&start) as usize] as i32;
        if value == 0 || rules.for_each_move(&start, |_| {}).is_some() {
            continue;
        }
        games += 1;
        let by_depth = play(&rules, &levels, start, Player::ByDepth);
        assert!(!by_depth.looped, "{start}: looped by depth");
        assert_eq!(by_depth.margin, value, "{start}: by depth");
        let first_best = play(&rules, &levels, start, Player::FirstBest);
        if first_best.looped {
            loops_by_value += 1;
            assert!(first_best.margin != value);
        }
    }
    assert!(
        loops_by_value > 0,
        "no game of {games} looped keeping the value alone: the test shows nothing"
    );
    eprintln!("by value alone, {loops_by_value} of {games} games looped");
}

/// `build` with depths asked writes each level's depth table beside its
/// values: the same bytes in memory and in the lean mode, the depths the
/// propagation finds, and the values of a build without depths. A set of
/// values without depth tables gets them by a second build, its values
/// unchanged.
#[test]
fn a_build_writes_depth_tables_the_same_in_every_mode() {
    use mancala_format::{depth_path, level_path};
    use mancala_gen::{build, BuildOptions, MemoryMode, Quiet};
    use mancala_probe::{Depth, Tablebase};

    for (variant, pits, max) in [(Variant::Oware, 6, 9), (Variant::Kalah, 4, 9)] {
        let rules = Rules::new(variant, pits).unwrap();
        let built = |memory, depths| {
            let dir = tempfile::tempdir().unwrap();
            let mut options = BuildOptions::new(dir.path(), rules, max);
            options.memory = memory;
            options.depths = depths;
            build(&options, &Quiet).unwrap();
            (dir, options.dir())
        };
        let files = |dir: &std::path::Path,
                     path: fn(&std::path::Path, u32) -> std::path::PathBuf| {
            (0..=max)
                .map(|n| std::fs::read(path(dir, n)).unwrap())
                .collect::<Vec<_>>()
        };
        let (_fast, fast) = built(MemoryMode::Fast, true);
        let (_lean, lean) = built(MemoryMode::Lean, true);
        let (_plain, plain) = built(MemoryMode::Fast, false);
        assert!(
            files(&fast, depth_path) == files(&lean, depth_path),
            "{}",
            rules.id()
        );
        assert!(
            files(&fast, level_path) == files(&plain, level_path),
            "{}",
            rules.id()
        );
        assert!(!depth_path(&plain, max).exists());

        let expected = solved_with_depths(&rules, max);
        let root = fast.parent().unwrap();
        let values: Tablebase = Tablebase::open(root, rules).unwrap();
        let tables: Tablebase<Depth> = Tablebase::open(root, rules).unwrap();
        for (n, (_, depths)) in expected.iter().enumerate() {
            let index = LevelIndex::new(rules.pits(), n as u32);
            for (pos, &wanted) in index.positions_from(0).zip(depths) {
                let read = tables.depth(&values, &pos).unwrap().unwrap_or(NO_DEPTH);
                assert_eq!(read, wanted, "{} level {n}: {pos}", rules.id());
            }
        }

        let mut options = BuildOptions::new(plain.parent().unwrap(), rules, max);
        options.depths = true;
        build(&options, &Quiet).unwrap();
        assert!(
            files(&plain, depth_path) == files(&fast, depth_path),
            "{}",
            rules.id()
        );
        assert!(
            files(&plain, level_path) == files(&fast, level_path),
            "{}",
            rules.id()
        );
    }
}

/// A tablebase of depth tables answers every position's depth as the
/// build found it, and none where no depth table was written.
#[test]
fn a_tablebase_probes_depths() {
    use mancala_gen::{build, BuildOptions, Quiet};
    use mancala_probe::{Depth, Tablebase};

    let rules = Rules::new(Variant::Oware, 6).unwrap();
    let max = 8;
    let dir = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(dir.path(), rules, max);
    options.depths = true;
    build(&options, &Quiet).unwrap();
    let depths: Tablebase<Depth> = Tablebase::open(dir.path(), rules).unwrap();
    let values: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
    assert_eq!(depths.levels(), (0..=max).collect::<Vec<_>>());
    let expected = solved_with_depths(&rules, max);
    for (n, (_, plies)) in expected.iter().enumerate() {
        let index = LevelIndex::new(rules.pits(), n as u32);
        for (at, &plies) in plies.iter().enumerate().step_by(7) {
            let pos = index.unrank(at as u64);
            let wanted = (plies != NO_DEPTH).then_some(plies);
            assert_eq!(depths.depth(&values, &pos).unwrap(), wanted, "{pos}");
        }
    }
    std::fs::remove_file(mancala_format::depth_path(&options.dir(), max)).unwrap();
    let depths: Tablebase<Depth> = Tablebase::open(dir.path(), rules).unwrap();
    let top = LevelIndex::new(rules.pits(), max).unrank(0);
    assert!(
        depths.depth(&values, &top).is_err(),
        "a depth without its table"
    );
}

/// `verify` checks depth tables by the definition: the built ones pass,
/// and one with a single depth changed (every checksum right) fails, at
/// that position or at a parent that relies on it.
#[test]
fn verify_fails_a_depth_table_with_one_depth_changed() {
    use mancala_format::{
        depth_path, level_path, write_level, Depth, Header, StoredDepth, Table, TableKind,
    };
    use mancala_gen::{build, BuildOptions, Quiet};
    use mancala_verify::verify;

    let rules = Rules::new(Variant::Oware, 6).unwrap();
    let max = 9;
    let dir = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(dir.path(), rules, max);
    options.depths = true;
    build(&options, &Quiet).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let checks = verify::<Even>(dir.path(), &rules, 0, None, scratch.path(), |_| {}).unwrap();
    assert!(checks.iter().all(|c| c.ok() && c.depths.is_some()));
    assert!(checks[max as usize].depths.as_ref().unwrap().longest > Some(30));

    // A depth of 7 stored for a position whose mover is ahead becomes 8.
    let path = depth_path(&options.dir(), max);
    let table = Table::<Depth>::open(&path, None).unwrap();
    let mut symbols = table.decode_all().unwrap();
    let values = Table::<Even>::open(&level_path(&options.dir(), max), None)
        .unwrap()
        .decode_all()
        .unwrap();
    let changed = (0..symbols.len())
        .find(|&at| {
            values[at] > 0 && Depth::<Even>::read(max, &symbols[at..=at]) == StoredDepth::Plies(7)
        })
        .unwrap();
    Depth::<Even>::encode(max, StoredDepth::Plies(8), &mut symbols[changed..=changed]);
    let long = table.header().long_depths.clone();
    let header = Header::for_depths::<Even>(&rules, max, &symbols, long, options.block_size());
    write_level(&header, &symbols, &path).unwrap();
    let checks = verify::<Even>(dir.path(), &rules, max, None, scratch.path(), |_| {}).unwrap();
    let check = &checks[0];
    assert!(!check.ok());
    assert_eq!(check.mismatches, 0, "the values are intact");
    let depths = check.depths.as_ref().unwrap();
    assert!(depths.mismatches >= 1);
}
