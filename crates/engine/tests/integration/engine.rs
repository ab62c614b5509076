//! The engine against the tables: search above the table range must give
//! the values that larger tables hold, analyses must agree with lookups,
//! and `solve` must reproduce the published Kalah results.

use std::path::Path;

use mancala_core::{EndReason, GameState, LevelIndex, Outcome, Position, Rules, Side, Variant};
use mancala_engine::{Engine, Limits, LineEnd, Source};
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_probe::Tablebase;
use tempfile::TempDir;

fn tables(root: &Path, rules: Rules, max: u32) -> Tablebase {
    build(&BuildOptions::new(root, rules, max), &Quiet).unwrap();
    Tablebase::open(root, rules).unwrap()
}

/// Every position of `levels`, or every `step`-th one.
fn positions(rules: &Rules, levels: std::ops::RangeInclusive<u32>, step: u64) -> Vec<Position> {
    levels
        .flat_map(|n| {
            let index = LevelIndex::new(rules.pits(), n);
            (0..index.count())
                .step_by(step as usize)
                .map(move |i| index.unrank(i))
        })
        .collect()
}

/// Tables of a small level range, plus search above them, equal tables that
/// reach further: Kalah has no cycles, so every searched value is exact.
#[test]
fn kalah_search_above_small_tables_equals_larger_tables() {
    for empty_capture in [true, false] {
        let rules = Rules::new(Variant::Kalah, 3)
            .unwrap()
            .with_empty_capture(empty_capture);
        let (small_dir, large_dir) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let small = tables(small_dir.path(), rules, 4);
        let large = tables(large_dir.path(), rules, 10);
        let mut engine = Engine::with_tables(&small);
        for pos in positions(&rules, 5..=10, 7) {
            let score = engine.score(&pos).unwrap();
            assert!(score.exact, "{pos}");
            assert_eq!(score.value, large.value(&pos).unwrap(), "{pos}");
        }
    }
}

/// Oware-family positions can cycle: searched values are compared where the
/// engine says they are exact, which must be a fair share of them.
#[test]
fn oware_family_search_is_right_wherever_it_claims_exactness() {
    for variant in [Variant::Oware, Variant::Awari, Variant::Wari] {
        let rules = Rules::new(variant, 3).unwrap();
        let (small_dir, large_dir) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let small = tables(small_dir.path(), rules, 5);
        let large = tables(large_dir.path(), rules, 9);
        let mut engine = Engine::with_tables(&small).with_limits(Limits {
            nodes: Some(200_000),
            time: None,
        });
        let (mut exact, mut total) = (0, 0);
        for pos in positions(&rules, 6..=9, 13) {
            let score = engine.score(&pos).unwrap();
            total += 1;
            if score.exact {
                exact += 1;
                assert_eq!(score.value, large.value(&pos).unwrap(), "{rules} {pos}");
            }
        }
        // Positions whose perfect play cycles cannot be proven by search.
        assert!(
            exact * 10 > total,
            "{rules}: only {exact} of {total} proven"
        );
    }
}

/// Within table range an analysis is lookups: every move value equals the
/// table's, the best moves are the maximal ones, and the perfect line is
/// a legal game whose result is the predicted final margin.
#[test]
fn analyses_in_range_agree_with_the_tables_and_their_lines_keep_the_value() {
    let dir = TempDir::new().unwrap();
    let rules = Rules::new(Variant::Kalah, 4).unwrap();
    let tb = tables(dir.path(), rules, 12);
    let mut engine = Engine::with_tables(&tb);
    for pos in positions(&rules, 1..=12, 997) {
        let mut state = GameState::new(pos, Side::North);
        state.stores = [3, 1];
        let analysis = engine.analyze(&state).unwrap();
        assert_eq!(analysis.source, Source::Tables);
        assert!(analysis.exact);
        let table_moves = tb.move_values(&pos).unwrap();
        assert_eq!(analysis.moves.len(), table_moves.len());
        for (m, t) in analysis.moves.iter().zip(&table_moves) {
            assert_eq!((m.pit, m.value), (t.pit, t.value));
            assert_eq!(m.final_margin, -2 + m.value);
        }
        if table_moves.is_empty() {
            continue;
        }
        assert_eq!(analysis.value, tb.value(&pos).unwrap());
        assert_eq!(analysis.final_margin, analysis.value - 2);
        // Play the line out: the game ends with the predicted margin.
        assert!(matches!(analysis.pv_end, LineEnd::GameOver(_)));
        let mut s = state.clone();
        for &(side, pit) in &analysis.pv {
            assert_eq!(s.to_move, side);
            s = s.play(&rules, pit as usize).unwrap();
        }
        let end = s.end(&rules).expect("the line ends the game");
        assert_eq!(end.margin_for(Side::North), analysis.final_margin, "{pos}");
        assert_eq!(analysis.outcome, Outcome::of_margin(analysis.final_margin));
    }
}

/// A move into a third repetition ends the game with each side taking his
/// own row; the engine scores that move so, not by the table.
#[test]
fn a_move_into_a_third_repetition_is_scored_by_the_repetition_rule() {
    let dir = TempDir::new().unwrap();
    let rules = Rules::new(Variant::Oware, 6).unwrap();
    let tb = tables(dir.path(), rules, 6);
    let mut engine = Engine::with_tables(&tb);
    let mut checked = 0;
    for pos in positions(&rules, 3..=6, 101) {
        let state = GameState::new(pos, Side::South);
        for table_move in tb.move_values(&pos).unwrap() {
            let after = state.play(&rules, table_move.pit as usize).unwrap();
            if after.position.stones() != pos.stones() {
                continue; // a capture: no earlier position can recur
            }
            // The position after the move has been seen twice already.
            let mut repeated = state.clone();
            repeated.history = vec![(after.to_move, after.position); 2];
            let split =
                after.position.mover_stones() as i32 - after.position.opponent_stones() as i32;
            let analysis = engine.analyze(&repeated).unwrap();
            let m = analysis
                .moves
                .iter()
                .find(|m| m.pit == table_move.pit)
                .unwrap();
            assert_eq!(m.ends_game, Some(EndReason::Repetition), "{pos}");
            // South moved; the split is seen from North in `after`.
            assert_eq!(m.value, -split, "{pos} {}", table_move.letter());
            checked += (m.value != table_move.value) as u32;
        }
    }
    assert!(
        checked > 10,
        "too few moves where the rule changes the value"
    );
}

/// Kalah(m, n) start positions: our values under both capture rules.
/// Irving, Donkers and Uiterwijk ("Solving Kalah", 2000) played the
/// empty-capture rule (`docs/RULES.md`'s default): their Kalah(6,4) is the win by
/// 10 Rawlings reports for that rule.
#[test]
fn kalah_start_positions_have_the_published_values() {
    let cases = [
        // (pits, seeds, empty capture, first player's margin)
        (4, 1, true, 2),
        (4, 2, true, 6),
        (4, 3, true, 8),
        (4, 4, true, 2),
        (5, 1, true, 0),
        (5, 2, true, 0),
        (5, 3, true, 8),
        (4, 3, false, 6),
        (4, 4, false, 2),
        (5, 3, false, 6),
    ];
    for (pits, seeds, empty_capture, margin) in cases {
        let rules = Rules::new(Variant::Kalah, pits)
            .unwrap()
            .with_empty_capture(empty_capture);
        let dir = TempDir::new().unwrap();
        let tb = tables(dir.path(), rules, 10);
        let mut engine = Engine::with_tables(&tb);
        let analysis = engine
            .analyze(&GameState::start(&rules, seeds).unwrap())
            .unwrap();
        assert!(analysis.exact);
        assert_eq!(
            analysis.value, margin,
            "Kalah({pits},{seeds}), empty capture {empty_capture}"
        );
        let searched = state_stones(pits, seeds) > 10;
        assert_eq!(analysis.source == Source::Search, searched);
        // The best-moves analysis (what `solve` runs) finds the same value,
        // exactly the moves of that value and the same perfect line.
        let best = Engine::with_tables(&tb)
            .analyze_best(&GameState::start(&rules, seeds).unwrap())
            .unwrap();
        let best_moves: Vec<_> = analysis
            .moves
            .iter()
            .filter(|m| m.value == margin)
            .copied()
            .collect();
        assert!(best.exact);
        assert_eq!((best.value, &best.best), (analysis.value, &analysis.best));
        assert_eq!(best.moves, best_moves);
        assert_eq!((&best.pv, best.pv_end), (&analysis.pv, analysis.pv_end));
    }
}

/// The best-moves analysis of positions above small tables, Kalah and the
/// Oware family, gives the full analysis's value, best moves and line.
#[test]
fn best_moves_analyses_equal_full_analyses() {
    for (variant, max, stones) in [(Variant::Kalah, 4, 7..=9), (Variant::Oware, 5, 6..=7)] {
        let rules = Rules::new(variant, 3).unwrap();
        let dir = TempDir::new().unwrap();
        let tb = tables(dir.path(), rules, max);
        for pos in positions(&rules, stones, 53) {
            let state = GameState::new(pos, Side::South);
            let full = Engine::with_tables(&tb).analyze(&state).unwrap();
            let best = Engine::with_tables(&tb).analyze_best(&state).unwrap();
            assert_eq!((best.value, best.exact), (full.value, full.exact), "{pos}");
            assert_eq!(best.best, full.best, "{pos}");
            let kept: Vec<_> = full
                .moves
                .iter()
                .filter(|m| full.best.contains(&m.pit))
                .copied()
                .collect();
            assert_eq!(best.moves, kept, "{pos}");
            assert_eq!((&best.pv, best.pv_end), (&full.pv, full.pv_end), "{pos}");
        }
    }
}

fn state_stones(pits: usize, seeds: u32) -> u32 {
    2 * pits as u32 * seeds
}

/// Without depth tables, within the tables, the engine searches the
/// positions the value-keeping moves reach for their depths: its best
/// moves come in the order the depth tables give, and it says the order
/// is proven, in every rule set of the Oware family.
#[test]
fn a_conversion_search_orders_the_best_moves_as_depth_tables_do() {
    use mancala_probe::Depth;
    for (variant, pits, max, step) in [
        (Variant::Oware, 6, 9, 557),
        (Variant::Awari, 4, 10, 71),
        (Variant::Wari, 3, 12, 29),
    ] {
        let rules = Rules::new(variant, pits).unwrap();
        let dir = TempDir::new().unwrap();
        let options = BuildOptions {
            depths: true,
            ..BuildOptions::new(dir.path(), rules, max)
        };
        build(&options, &Quiet).unwrap();
        let tb: Tablebase = Tablebase::open(dir.path(), rules).unwrap();
        let depths: Tablebase<Depth> = Tablebase::open(dir.path(), rules).unwrap();
        let mut by_tables = Engine::with_tables(&tb).with_depths(&depths);
        let mut by_search = Engine::with_tables(&tb);
        let mut ordered = 0;
        for pos in positions(&rules, max - 3..=max, step) {
            let state = GameState::new(pos, Side::South);
            if state.end(&rules).is_some() {
                continue;
            }
            let wanted = by_tables.analyze(&state).unwrap();
            let found = by_search.analyze(&state).unwrap();
            assert_eq!(found.best, wanted.best, "{} {pos}", rules.id());
            assert_eq!(found.pv, wanted.pv, "{} {pos}", rules.id());
            assert!(found.converts && wanted.converts, "{} {pos}", rules.id());
            ordered += usize::from(wanted.value != 0 && wanted.best.len() > 1);
        }
        assert!(
            ordered > 10,
            "{}: {ordered} positions with a choice",
            rules.id()
        );
        // Above the tables nothing is proven where the value is not 0 (a
        // short search: its value need not be exact).
        let mut above = Engine::with_tables(&tb).with_limits(Limits {
            nodes: Some(20_000),
            time: None,
        });
        let mut unproven = 0;
        for pos in positions(&rules, max + 2..=max + 2, step * 50) {
            let state = GameState::new(pos, Side::South);
            let found = above.analyze(&state).unwrap();
            if state.end(&rules).is_none() && found.value != 0 {
                assert!(!found.converts, "{} {pos}", rules.id());
                unproven += 1;
            }
        }
        assert!(unproven > 0, "{}", rules.id());
    }
}
