//! The strategies agree: where levels cannot cycle, one pass in order of
//! distance writes the symbols the retrograde analysis writes, for both
//! kinds of table and both Kalah capture rules, and reports the same work.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use mancala_core::{LevelIndex, Rules, Variant};
use mancala_format::{Even, Forced, Levels};
use mancala_gen::{LevelJob, OnePass, Retrograde, Solve, Strategy};

/// Levels `0..=max` of `rules` solved by `strategy` alone, with the work
/// units it reported for each.
fn solve_with<K: Solve>(strategy: &impl Strategy, rules: &Rules, max: u32) -> Vec<(Vec<i8>, u64)> {
    let mut lower = Levels::<K>::new();
    let mut solved = Vec::new();
    for n in 0..=max {
        let work = AtomicU64::new(0);
        let job = LevelJob {
            rules,
            level: n,
            lower: &lower,
            progress: &|units| {
                work.fetch_add(units, Relaxed);
            },
            resumed: None,
            checkpoints: None,
            interrupt: None,
            mark_exits: false,
            depths: None,
        };
        let solution = strategy.solve(&job).unwrap();
        lower.push(solution.symbols.clone());
        solved.push((solution.symbols, work.into_inner()));
    }
    solved
}

fn assert_one_pass_equals_retrograde<K: Solve>(rules: Rules, max: u32) {
    let one_pass = solve_with::<K>(&OnePass, &rules, max);
    let retrograde = solve_with::<K>(&Retrograde::local(), &rules, max);
    for (n, (ours, theirs)) in one_pass.iter().zip(&retrograde).enumerate() {
        let positions = LevelIndex::new(rules.pits(), n as u32).count();
        assert_eq!(ours.0.len() as u64, K::WIDTH as u64 * positions);
        assert!(
            ours.0 == theirs.0,
            "{} {:?} level {n}",
            rules.id(),
            K::CYCLES
        );
        assert_eq!(ours.1, 2 * positions, "{} level {n}: work", rules.id());
        assert_eq!(theirs.1, 2 * positions, "{} level {n}: work", rules.id());
    }
}

#[test]
fn one_pass_solves_kalah_as_the_retrograde_analysis_does() {
    for empty_capture in [true, false] {
        for (pits, max) in [(1, 12), (2, 12), (3, 11), (4, 9), (6, 6)] {
            let rules = Rules::new(Variant::Kalah, pits)
                .unwrap()
                .with_empty_capture(empty_capture);
            assert_one_pass_equals_retrograde::<Even>(rules, max);
            assert_one_pass_equals_retrograde::<Forced>(rules, max);
        }
    }
}
