//! Depths to conversion of forced bounds (`docs/RULES.md`, "Depth to
//! conversion"), as the threshold propagation finds them, against a
//! brute-force reading of the definition that shares nothing with the
//! solver but the solved bounds; the same depths from the lean mode and
//! from parents delivered as a cluster delivers them; and players that
//! follow them realize their bounds.

use std::collections::HashSet;

use mancala_core::{Bounds, LevelIndex, Move, Position, Rules, Variant};
use mancala_format::{Forced, TableKind};
use mancala_gen::{Retrograde, Strategy, NO_DEPTH};

use crate::depths::{assert_every_way_finds_the_same_depths, solved_by};

/// One level's bounds and its movers' depths, in index order.
type Level = (Vec<Bounds>, Vec<u16>);

/// Levels `0..=max` of `rules` solved to forced bounds with their depths.
fn solved(rules: &Rules, max: u32) -> Vec<Level> {
    let solved = solved_by::<Forced>(rules, max, |job| Retrograde::local().solve(job).unwrap());
    let bounds = |n: usize, symbols: &[i8]| {
        symbols
            .chunks_exact(Forced::WIDTH)
            .map(|pair| Forced::read(n as u32, pair))
            .collect()
    };
    solved
        .into_iter()
        .enumerate()
        .map(|(n, (symbols, depths))| (bounds(n, &symbols), depths))
        .collect()
}

fn bounds_of(rules: &Rules, levels: &[Level], pos: &Position) -> Bounds {
    let n = pos.stones();
    levels[n as usize].0[LevelIndex::new(rules.pits(), n).rank(pos) as usize]
}

/// A depth not found (yet): more than any.
const UNKNOWN: u32 = u32::MAX;

/// Where a move goes: a child's index in the level, or `None` where it
/// leaves the level.
type Target = Option<usize>;

/// The movers' depths of level `n` by the definition, iterated to its
/// fixpoint from "unknown", with the opponents' depths beside them: 0 at a
/// terminal position; for the mover, whose bound is not 0, the fewest
/// plies over the moves that keep his bound; for the opponent, whose bound
/// is not 0, the most over the mover's moves that keep it; a move leaving
/// the level one ply, a move within it one more than the child's depth for
/// the same player's bound (the child's opponent's if the mover was
/// moving for himself, its mover's otherwise).
fn movers_depths_by_definition(rules: &Rules, levels: &[Level], n: u32) -> Vec<u32> {
    let index = LevelIndex::new(rules.pits(), n);
    let bounds = &levels[n as usize].0;
    // Per position: moves keeping the mover's bound, and moves keeping
    // the opponent's.
    let mut keeping: Vec<(Vec<Target>, Vec<Target>)> = Vec::new();
    let mut terminal = Vec::new();
    for (at, &b) in bounds.iter().enumerate() {
        let pos = index.unrank(at as u64);
        let (mut mover, mut opponent) = (Vec::new(), Vec::new());
        let end = rules.for_each_move(&pos, |m| {
            let after = Bounds::after_move(m, bounds_of(rules, levels, &m.child));
            let target = (!m.leaves_level()).then(|| index.rank(&m.child) as usize);
            if after.mover == b.mover {
                mover.push(target);
            }
            if after.opponent == b.opponent {
                opponent.push(target);
            }
        });
        terminal.push(end.is_some());
        keeping.push((mover, opponent));
    }
    let count = bounds.len();
    let (mut mover, mut opponent) = (vec![UNKNOWN; count], vec![UNKNOWN; count]);
    fn step<'a>(kept: &'a [Target], other: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        kept.iter().map(move |t| match *t {
            None => 1,
            Some(c) => other[c].saturating_add(1),
        })
    }
    loop {
        let next_mover: Vec<u32> = (0..count)
            .map(|at| match (bounds[at].mover, terminal[at]) {
                (0, _) => UNKNOWN,
                (_, true) => 0,
                _ => step(&keeping[at].0, &opponent).min().unwrap_or(UNKNOWN),
            })
            .collect();
        let next_opponent: Vec<u32> = (0..count)
            .map(|at| match (bounds[at].opponent, terminal[at]) {
                (0, _) => UNKNOWN,
                (_, true) => 0,
                _ => step(&keeping[at].1, &mover).max().unwrap_or(UNKNOWN),
            })
            .collect();
        if next_mover == mover && next_opponent == opponent {
            return mover;
        }
        (mover, opponent) = (next_mover, next_opponent);
    }
}

/// Forced depths equal the definition on every position of small levels
/// of every rule set; returns nothing, fails at the first difference.
#[test]
fn forced_depths_are_the_definitions_in_every_rule_set() {
    for variant in [
        Variant::Oware,
        Variant::Awari,
        Variant::Wari,
        Variant::Kalah,
    ] {
        let mut longest = 0;
        for (pits, max) in [(1, 10), (2, 10), (3, 9), (4, 8), (6, 8)] {
            let rules = Rules::new(variant, pits).unwrap();
            let levels = solved(&rules, max);
            for n in 0..=max {
                let expected = movers_depths_by_definition(&rules, &levels, n);
                let (bounds, found) = &levels[n as usize];
                for (at, (&depth, b)) in found.iter().zip(bounds).enumerate() {
                    let wanted = match b.mover {
                        0 => NO_DEPTH as u32,
                        _ => expected[at],
                    };
                    let pos = LevelIndex::new(rules.pits(), n).unrank(at as u64);
                    assert!(
                        wanted != UNKNOWN,
                        "{} {pos}: bound {} never realized",
                        rules.id(),
                        b.mover
                    );
                    assert_eq!(depth as u32, wanted, "{} {pos} ({b})", rules.id());
                    if depth != NO_DEPTH {
                        longest = longest.max(depth);
                    }
                }
            }
        }
        let least = if variant == Variant::Kalah { 3 } else { 20 };
        assert!(
            longest >= least,
            "{variant}: the longest conversion is {longest} plies"
        );
    }
}

/// The lean mode, and parents delivered to three workers by index range,
/// find the forced depths the in-memory mode finds.
#[test]
fn every_way_of_solving_finds_the_same_forced_depths() {
    assert_every_way_finds_the_same_depths::<Forced>(&[
        (Variant::Oware, 6, 9),
        (Variant::Awari, 4, 10),
        (Variant::Kalah, 4, 10),
    ]);
}

/// The plies within which move `m` realizes what it makes sure of for its
/// mover (1 if it leaves the level, else one more than the child's
/// opponent's depth, read one ply deeper from the stored movers' depths).
fn move_depth(rules: &Rules, levels: &[Level], m: &Move) -> u32 {
    if m.leaves_level() {
        return 1;
    }
    let kept = bounds_of(rules, levels, &m.child).opponent;
    let mut longest = 0;
    let terminal = rules.for_each_move(&m.child, |reply| {
        let after = Bounds::after_move(reply, bounds_of(rules, levels, &reply.child));
        if after.opponent != kept {
            return;
        }
        let plies = if reply.leaves_level() {
            1
        } else {
            let n = reply.child.stones();
            let at = LevelIndex::new(rules.pits(), n).rank(&reply.child) as usize;
            levels[n as usize].1[at] as u32 + 1
        };
        longest = longest.max(plies);
    });
    1 + if terminal.is_some() { 0 } else { longest }
}

/// How a game ended: stones each side of the first mover's (captured,
/// plus its share of the board at the game's end; none of it at a
/// repetition), and whether a position where either bound is not 0 came
/// again.
struct Game {
    first: i32,
    second: i32,
    looped: bool,
}

/// Plays `start` between two players that keep their own bound: the mover
/// whose bound is not 0 by the fewest plies to realize it (`by_depth`) or
/// by the first such move; the mover whose bound is 0 by the first move
/// that keeps his opponent's bound (gives him no more).
fn play(rules: &Rules, levels: &[Level], start: Position, by_depth: bool) -> Game {
    let mut pos = start;
    let mut seen = HashSet::new();
    // Stones captured by the player to move and by the other.
    let (mut mine, mut theirs, mut first_to_move) = (0i32, 0i32, true);
    let game = |mine: i32, theirs: i32, first_to_move: bool, looped| {
        let (first, second) = if first_to_move {
            (mine, theirs)
        } else {
            (theirs, mine)
        };
        Game {
            first,
            second,
            looped,
        }
    };
    loop {
        let b = bounds_of(rules, levels, &pos);
        if !seen.insert(pos) {
            let looped = b.mover != 0 || b.opponent != 0;
            return game(mine, theirs, first_to_move, looped);
        }
        let mut best: Option<(u32, Move)> = None;
        let end = rules.for_each_move(&pos, |m| {
            let after = Bounds::after_move(m, bounds_of(rules, levels, &m.child));
            let keeps = match b.mover {
                0 => after.opponent == b.opponent,
                _ => after.mover == b.mover,
            };
            if !keeps {
                return;
            }
            let rank = match b.mover > 0 && by_depth {
                true => move_depth(rules, levels, m),
                false => 0,
            };
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, *m));
            }
        });
        if let Some(value) = end {
            let n = pos.stones() as i32;
            let share = (n + value) / 2;
            return game(mine + share, theirs + n - share, first_to_move, false);
        }
        let (_, m) = best.expect("a move keeps the bound");
        mine += m.gain as i32;
        if !m.extra_turn {
            (mine, theirs, first_to_move) = (theirs, mine, !first_to_move);
        }
        pos = m.child;
    }
}

/// Following the forced depths realizes both bounds: from random positions
/// where either bound is not 0, two players that keep their own bound by
/// depth never repeat such a position and each ends with at least his
/// bound, whatever the history would make of a repetition. Two players
/// that only keep their bounds loop in some of the same games and fall
/// short, which shows the test can fail.
#[test]
fn following_the_forced_depths_realizes_the_bounds() {
    for (variant, max) in [(Variant::Oware, 12), (Variant::Kalah, 10)] {
        let rules = Rules::new(variant, 6).unwrap();
        let levels = solved(&rules, max);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut games, mut short_by_bounds) = (0, 0);
        while games < 400 {
            let n = 6 + (next() % (u64::from(max) - 5)) as u32;
            let index = LevelIndex::new(rules.pits(), n);
            let start = index.unrank(next() % index.count());
            let b = bounds_of(&rules, &levels, &start);
            if (b.mover == 0 && b.opponent == 0) || rules.for_each_move(&start, |_| {}).is_some() {
                continue;
            }
            games += 1;
            let by_depth = play(&rules, &levels, start, true);
            assert!(!by_depth.looped, "{} {start}: looped by depth", rules.id());
            assert!(
                by_depth.first >= b.mover.into() && by_depth.second >= b.opponent.into(),
                "{} {start} ({b}): {} and {} by depth",
                rules.id(),
                by_depth.first,
                by_depth.second
            );
            let by_bounds = play(&rules, &levels, start, false);
            if by_bounds.first < b.mover.into() || by_bounds.second < b.opponent.into() {
                assert!(by_bounds.looped);
                short_by_bounds += 1;
            }
        }
        if variant != Variant::Kalah {
            assert!(
                short_by_bounds > 0,
                "no game of {games} fell short keeping the bounds alone: the test shows nothing"
            );
        }
        eprintln!(
            "{}: by bounds alone, {short_by_bounds} of {games} games fell short",
            rules.id()
        );
    }
}

/// `build --cycles forced` with depths asked writes each level's depth
/// table beside its bounds: the same bytes in memory and in the lean mode,
/// the bounds of a build without depths, and the depths a tablebase reads
/// back as the propagation found them. `verify` passes them, and fails a
/// table with one stored depth changed (every checksum right).
#[test]
fn a_forced_build_writes_depth_tables_that_probe_and_verify() {
    use mancala_core::Cycles;
    use mancala_format::{depth_path, level_path, write_level, Depth, Header, StoredDepth, Table};
    use mancala_gen::{build, BuildOptions, MemoryMode, Quiet};
    use mancala_probe::Tablebase;
    use mancala_verify::verify;

    let (rules, max) = (Rules::new(Variant::Oware, 6).unwrap(), 9);
    let built = |memory, depths| {
        let dir = tempfile::tempdir().unwrap();
        let mut options = BuildOptions::new(dir.path(), rules, max);
        options.cycles = Cycles::Forced;
        options.memory = memory;
        options.depths = depths;
        build(&options, &Quiet).unwrap();
        (dir, options)
    };
    let files = |dir: &std::path::Path, path: fn(&std::path::Path, u32) -> std::path::PathBuf| {
        (0..=max)
            .map(|n| std::fs::read(path(dir, n)).unwrap())
            .collect::<Vec<_>>()
    };
    let (root, fast) = built(MemoryMode::Fast, true);
    let (_lean, lean) = built(MemoryMode::Lean, true);
    let (_plain, plain) = built(MemoryMode::Fast, false);
    assert!(files(&fast.dir(), depth_path) == files(&lean.dir(), depth_path));
    assert!(files(&fast.dir(), level_path) == files(&plain.dir(), level_path));

    let expected = solved(&rules, max);
    let bounds: Tablebase<Forced> = Tablebase::open(root.path(), rules).unwrap();
    let tables: Tablebase<Depth<Forced>> = Tablebase::open(root.path(), rules).unwrap();
    for (n, (_, depths)) in expected.iter().enumerate() {
        let index = LevelIndex::new(rules.pits(), n as u32);
        for (pos, &wanted) in index.positions_from(0).zip(depths) {
            let read = tables.depth(&bounds, &pos).unwrap().unwrap_or(NO_DEPTH);
            assert_eq!(read, wanted, "level {n}: {pos}");
            let mut moves = Vec::new();
            rules.for_each_move(&pos, |m| moves.push(*m));
            for m in moves {
                let plies = tables.move_depth(&bounds, &m).unwrap();
                let kept = Bounds::after_move(&m, bounds.bounds(&m.child).unwrap()).mover;
                if kept > 0 {
                    assert_eq!(plies, Some(move_depth(&rules, &expected, &m) as u16));
                }
            }
        }
    }

    let scratch = tempfile::tempdir().unwrap();
    let checks = verify::<Forced>(root.path(), &rules, 0, None, scratch.path(), |_| {}).unwrap();
    assert!(checks.iter().all(|c| c.ok() && c.depths.is_some()));

    let path = depth_path(&fast.dir(), max);
    let table = Table::<Depth<Forced>>::open(&path, None).unwrap();
    let mut symbols = table.decode_all().unwrap();
    let (levels, _) = &expected[max as usize];
    let changed = (0..symbols.len())
        .find(|&at| {
            levels[at].mover > 0
                && Depth::<Forced>::read(max, &symbols[at..=at]) == StoredDepth::Plies(5)
        })
        .unwrap();
    Depth::<Forced>::encode(max, StoredDepth::Plies(6), &mut symbols[changed..=changed]);
    let long = table.header().long_depths.clone();
    let header = Header::for_depths::<Forced>(&rules, max, &symbols, long, fast.block_size());
    write_level(&header, &symbols, &path).unwrap();
    let checks = verify::<Forced>(root.path(), &rules, max, None, scratch.path(), |_| {}).unwrap();
    assert!(!checks[0].ok());
    assert_eq!(checks[0].mismatches, 0, "the bounds are intact");
    assert!(checks[0].depths.as_ref().unwrap().mismatches >= 1);
}
