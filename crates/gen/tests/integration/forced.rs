//! Forced bounds (`--cycles forced`) against deliberately simple references:
//! naive value iteration of the least fixpoint, and an exhaustive search of
//! the real game with its repetition rule.

use std::time::Instant;

use mancala_core::{Bounds, Position, Rules, Variant};
use mancala_format::{Even, Forced, Levels, TableKind};
use mancala_gen::solve_in_memory;

use crate::lib_rules;
use crate::reference::{self, Game, RefRules};

/// (pits per side, max stones) compared with naive value iteration.
const SIZES: [(usize, u32); 5] = [(1, 20), (2, 12), (3, 9), (4, 7), (6, 6)];

/// (pits per side, max stones) searched with the whole game history.
const HISTORY_SIZES: [(usize, u32); 3] = [(1, 8), (2, 4), (3, 3)];

const GAMES: [Game; 5] = [
    Game::Oware,
    Game::Awari,
    Game::Wari,
    Game::Kalah {
        empty_capture: true,
    },
    Game::Kalah {
        empty_capture: false,
    },
];

/// Every board with at most `max` stones, as the reference and the library
/// see it.
fn boards(pits: usize, max: u32) -> impl Iterator<Item = (Vec<u32>, Position)> {
    (0..=max).flat_map(move |n| {
        reference::compositions(n, 2 * pits)
            .into_iter()
            .map(move |b| {
                let pos = Position::from_counts(pits, &b).unwrap();
                (b, pos)
            })
    })
}

#[test]
fn solver_equals_naive_value_iteration() {
    let mut failures = Vec::new();
    for game in GAMES {
        for (pits, max) in SIZES {
            let t = Instant::now();
            let expected = reference::forced(&RefRules::new(game, pits), max);
            let t_ref = t.elapsed();
            let t = Instant::now();
            let solved = solve_in_memory::<Forced>(&lib_rules(game, pits), max);
            let t_lib = t.elapsed();
            let mut exact = 0;
            for (board, pos) in boards(pits, max) {
                let (mover, opponent) = expected[&board];
                let got = solved.entry(&pos);
                exact += got.exact(pos.stones()) as u32;
                if (got.mover as u32, got.opponent as u32) != (mover, opponent) {
                    failures.push(format!(
                        "{game:?} P={pits} {}: naive ({mover}, {opponent}), solver ({}, {})",
                        reference::format(&board),
                        got.mover,
                        got.opponent
                    ));
                }
            }
            eprintln!(
                "{game:?} P={pits} n<={max}: {} positions ({exact} exact), naive {t_ref:.2?}, solver {t_lib:.2?}",
                expected.len()
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn the_real_game_with_repetitions_ends_inside_the_bounds() {
    let mut strict = 0;
    for game in GAMES {
        for (pits, max) in HISTORY_SIZES {
            let rules = RefRules::new(game, pits);
            let solved = solve_in_memory::<Forced>(&lib_rules(game, pits), max);
            for (board, pos) in boards(pits, max) {
                let n = pos.stones();
                let Bounds { mover, opponent } = solved.entry(&pos);
                let share = reference::share_with_repetition(&rules, &board);
                assert!(
                    mover as u32 <= share && share <= n - opponent as u32,
                    "{game:?} {}: the game gives the mover {share}, outside [{mover}, {}]",
                    reference::format(&board),
                    n - opponent as u32
                );
                strict += (!solved.entry(&pos).exact(n)) as u32;
            }
        }
    }
    // The comparison must include positions where history matters.
    assert!(strict > 0, "no position with bounds that do not meet");
}

/// Checks `check(bounds, even value, n)` on every position of every level.
fn for_every_position(
    rules: &Rules,
    max: u32,
    check: impl Fn(&Position, Bounds, i32),
) -> Levels<Forced> {
    let forced = solve_in_memory::<Forced>(rules, max);
    let even = solve_in_memory::<Even>(rules, max);
    for (_, pos) in boards(rules.pits(), max) {
        check(&pos, forced.entry(&pos), even.value(&pos));
    }
    forced
}

#[test]
fn kalah_bounds_meet_at_the_value() {
    for empty_capture in [true, false] {
        for (pits, max) in [(1, 14), (2, 12), (3, 10), (4, 8), (6, 6)] {
            let rules = Rules::new(Variant::Kalah, pits)
                .unwrap()
                .with_empty_capture(empty_capture);
            for_every_position(&rules, max, |pos, b, value| {
                let n = pos.stones() as i32;
                assert_eq!(2 * b.mover as i32 - n, value, "{pos}");
                assert_eq!(n - 2 * b.opponent as i32, value, "{pos}");
            });
        }
    }
}

#[test]
fn the_even_split_value_lies_between_the_bounds() {
    for variant in Variant::ALL {
        for (pits, max) in [(1, 14), (2, 12), (3, 10), (4, 8), (6, 7)] {
            let rules = Rules::new(variant, pits).unwrap();
            for_every_position(&rules, max, |pos, b, value| {
                let n = pos.stones() as i32;
                assert!(
                    2 * b.mover as i32 - n <= value && value <= n - 2 * b.opponent as i32,
                    "{} {pos}: value {value}, bounds {b:?}",
                    rules.id()
                );
            });
        }
    }
}

#[test]
fn symbols_round_trip_and_reject_impossible_bounds() {
    for n in 0..=20u32 {
        for mover in 0..=n as u8 {
            for opponent in 0..=(n as u8 - mover) {
                let b = Bounds { mover, opponent };
                let mut symbols = [0i8; 2];
                Forced::encode(n, b, &mut symbols);
                assert_eq!(Forced::decode(n, &symbols), Some(b));
            }
        }
    }
    assert_eq!(
        Forced::decode(4, &[3, 0]),
        Some(Bounds {
            mover: 3,
            opponent: 1
        })
    );
    assert_eq!(Forced::decode(4, &[5, 0]), None);
    assert_eq!(Forced::decode(4, &[3, -2]), None);
    assert_eq!(Forced::decode(4, &[3, 1]), None);
}

#[test]
fn verdicts_follow_the_totals() {
    use mancala_core::Verdict::*;
    let b = |mover, opponent| Bounds { mover, opponent };
    // 10 on the board, nothing captured: 6 is more than half.
    assert_eq!(b(6, 4).verdict(10, (0, 0)), Win);
    assert_eq!(b(4, 6).verdict(10, (0, 0)), Loss);
    assert_eq!(b(5, 5).verdict(10, (0, 0)), Draw);
    assert_eq!(b(5, 0).verdict(10, (0, 0)), Undecided);
    assert_eq!(b(0, 0).verdict(10, (0, 0)), Undecided);
    // Captured stones count: 20 + 10 + 10 = 40 in all.
    assert_eq!(b(1, 0).verdict(10, (20, 10)), Win);
    assert_eq!(b(0, 0).verdict(10, (20, 10)), Undecided);
    assert_eq!(b(0, 10).verdict(10, (20, 10)), Draw);
    assert_eq!(b(0, 0).verdict(0, (20, 19)), Win);
}

#[test]
fn built_tables_answer_what_the_solver_found() {
    use mancala_core::Cycles;
    use mancala_format::{level_file_name, tables_dir, FormatError};
    use mancala_gen::{build, BuildOptions, Quiet};
    use mancala_probe::Tablebase;
    use mancala_verify::verify;

    for variant in Variant::ALL {
        let (pits, max) = (3, 7);
        let rules = Rules::new(variant, pits).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut options = BuildOptions::new(dir.path(), rules, max);
        options.cycles = Cycles::Forced;
        options.block_size = Some(64);
        // Every lower level goes through a mapped scratch file.
        options.mapped_min_positions = 0;
        build(&options, &Quiet).unwrap();
        // A second run reuses every level; a forced rebuild from level 0
        // with reused lower levels gives the same answers.
        let reports = build(&options, &Quiet).unwrap();
        assert!(reports.iter().all(|r| r.reused && r.exact.is_some()));
        let forced_dir = tables_dir(dir.path(), &rules, Cycles::Forced);
        std::fs::remove_file(forced_dir.join(level_file_name(max))).unwrap();
        build(&options, &Quiet).unwrap();

        let solved = solve_in_memory::<Forced>(&rules, max);
        let tb = Tablebase::<Forced>::open_with_cache(dir.path(), rules, 1 << 16).unwrap();
        let positions: Vec<Position> = boards(pits, max).map(|(_, pos)| pos).collect();
        let answers = tb.bounds_and_moves(&positions).unwrap();
        for (pos, (bounds, moves)) in positions.iter().zip(answers) {
            assert_eq!(bounds, solved.entry(pos), "{} {pos}", rules.id());
            assert_eq!(tb.bounds(pos).unwrap(), bounds);
            if let Some(best) = moves.iter().map(|m| m.bounds.mover).max() {
                assert_eq!(best, bounds.mover, "{pos}: the best move gives the bound");
                let worst = moves.iter().map(|m| m.bounds.opponent).min();
                assert_eq!(worst, Some(bounds.opponent), "{pos}");
            }
        }
        // A forced file where even values are expected is refused at the
        // file boundary (inside the code, the wrong kind does not compile).
        let even_dir = tables_dir(dir.path(), &rules, Cycles::Even);
        std::fs::create_dir_all(&even_dir).unwrap();
        std::fs::copy(
            forced_dir.join(level_file_name(0)),
            even_dir.join(level_file_name(0)),
        )
        .unwrap();
        let even: Tablebase<Even> = Tablebase::open(dir.path(), rules).unwrap();
        let empty = Position::empty(pits);
        match even.value(&empty) {
            Err(mancala_probe::Error::Table {
                source:
                    FormatError::WrongKind {
                        expected, found, ..
                    },
                ..
            }) => assert_eq!((expected, found), (Even::id(), Forced::id())),
            other => panic!("a forced file read as even values: {other:?}"),
        }
        let checks =
            verify::<Forced>(dir.path(), &rules, 0, None, &std::env::temp_dir(), |_| {}).unwrap();
        assert_eq!(checks.len(), max as usize + 1);
        assert!(checks.iter().all(|c| c.ok()));
    }
}
