//! `Rules::reaches` against move generation: every move of every position
//! of small levels lands on a level the rules say its level reaches, and the
//! level the Oware family skips is really never reached (a build that
//! leaves it out relies on both).

use std::collections::BTreeSet;

use mancala_core::{LevelIndex, Rules, Successors, Variant};

/// The levels below `n` that some move of some position of `n` stones
/// lands on, checking each against `Rules::reaches` on the way.
fn lower_levels_landed_on(rules: &Rules, n: u32) -> BTreeSet<u32> {
    let mut landed = BTreeSet::new();
    for pos in LevelIndex::new(rules.pits(), n).positions_from(0) {
        if let Successors::Moves(moves) = rules.successors(&pos) {
            for m in moves.iter() {
                let to = m.child.stones();
                assert!(
                    rules.reaches(n, to),
                    "{}: {pos} moves to level {to}, which reaches({n}, {to}) denies",
                    rules.id()
                );
                if to < n {
                    landed.insert(to);
                }
            }
        }
    }
    landed
}

#[test]
fn every_move_lands_on_a_level_its_level_reaches() {
    for variant in Variant::ALL {
        for (pits, max) in [(3, 12), (4, 9), (6, 7)] {
            let rules = Rules::new(variant, pits).unwrap();
            for n in 0..=max {
                let landed = lower_levels_landed_on(&rules, n);
                let needed: BTreeSet<u32> = rules.levels_needed(n).filter(|&m| m < n).collect();
                assert!(landed.is_subset(&needed), "{}: level {n}", rules.id());
                let skips_below = variant != Variant::Kalah;
                if n >= 4 {
                    assert!(landed.contains(&(n - 2)), "{}: level {n}", rules.id());
                    assert_eq!(
                        landed.contains(&(n - 1)),
                        !skips_below,
                        "{}: level {n}",
                        rules.id()
                    );
                }
            }
        }
    }
}

#[test]
fn levels_needed_are_closed_under_reaching() {
    for variant in Variant::ALL {
        let rules = Rules::new(variant, 6).unwrap();
        for n in 0..=48 {
            let needed: BTreeSet<u32> = rules.levels_needed(n).collect();
            assert!(needed.contains(&n));
            for &m in &needed {
                for k in rules.levels_needed(m) {
                    assert!(needed.contains(&k), "{}: {n} → {m} → {k}", rules.id());
                }
            }
        }
    }
    let oware = Rules::new(Variant::Oware, 6).unwrap();
    assert_eq!(oware.levels_needed(36).count(), 36);
    assert!(!oware.reaches(36, 35));
}
