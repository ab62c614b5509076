//! The Gödel numbering: a bijection onto `0..count` that keeps the
//! lexicographic order it is defined by, the published count, and its tie
//! to our index that export and import stream along.

use mancala_core::{LevelIndex, Position};
use mancala_vu::{is_numbered, GodelIndex};
use proptest::prelude::*;

/// Every composition of `stones` into `2 · pits` pits, in no particular
/// order, built without the index under test or ours.
fn every_position(pits: usize, stones: u32) -> Vec<Position> {
    fn fill(cells: &mut Vec<u8>, left: u32, parts: usize, out: &mut Vec<Vec<u8>>) {
        if parts == 1 {
            cells.push(left as u8);
            out.push(cells.clone());
            cells.pop();
            return;
        }
        for here in 0..=left {
            cells.push(here as u8);
            fill(cells, left - here, parts - 1, out);
            cells.pop();
        }
    }
    let mut out = Vec::new();
    fill(&mut Vec::new(), stones, 2 * pits, &mut out);
    out.iter()
        .map(|cells| Position::from_rows(&cells[..pits], &cells[pits..]))
        .collect()
}

/// The counts from the opponent's last pit back to the mover's first: the
/// key whose lexicographic order the numbering follows.
fn key(pos: &Position) -> Vec<u8> {
    pos.cells().iter().rev().copied().collect()
}

#[test]
fn numbers_run_through_the_numbered_positions_in_order() {
    for (pits, max) in [(1, 12), (2, 10), (3, 8), (6, 6)] {
        for stones in 0..=max {
            let index = GodelIndex::new(pits, stones);
            let mut numbered: Vec<Position> = every_position(pits, stones)
                .into_iter()
                .filter(is_numbered)
                .collect();
            numbered.sort_by_key(key);
            assert_eq!(
                index.count(),
                numbered.len() as u64,
                "{pits} pits, {stones}"
            );
            for (number, pos) in numbered.iter().enumerate() {
                assert_eq!(index.rank(pos), Some(number as u64), "{pos}");
                assert_eq!(index.unrank(number as u64).as_ref(), Some(pos));
            }
            assert_eq!(index.unrank(index.count()), None);
        }
    }
}

#[test]
fn positions_outside_the_numbering_have_no_number() {
    let index = GodelIndex::new(6, 12);
    let start = Position::start(6, 1).unwrap();
    assert!(!is_numbered(&start));
    assert_eq!(index.rank(&start), None, "a full opponent row");
    let other_level = Position::parse(6, "1,0,0,0,0,0/0,0,0,0,0,0").unwrap();
    assert_eq!(index.rank(&other_level), None, "one stone, not twelve");
    let four_pits = Position::parse(4, "12,0,0,0/0,0,0,0").unwrap();
    assert_eq!(index.rank(&four_pits), None, "four pits, not six");
}

/// The published database: 889,063,398,405 numbered positions over levels
/// 0–46 and 48 (47 stones cannot arise from the start's 48), plus the
/// start position, which has its own entry.
#[test]
fn the_awari_levels_hold_the_published_count() {
    let numbered: u64 = (0..=48)
        .filter(|&n| n != 47)
        .map(|n| GodelIndex::new(6, n).count())
        .sum();
    assert_eq!(numbered, 889_063_398_405);
}

/// The numbers run through the level in the reverse of our index order,
/// skipping what is not numbered: a file is written and read in one pass.
#[test]
fn the_numbering_is_our_index_reversed_without_full_rows() {
    for (pits, stones) in [(6, 7), (4, 9), (2, 11)] {
        let ours = LevelIndex::new(pits, stones);
        let godel = GodelIndex::new(pits, stones);
        let mut next = 0;
        for at in (0..ours.count()).rev() {
            let pos = ours.unrank(at);
            if is_numbered(&pos) {
                assert_eq!(godel.rank(&pos), Some(next), "{pos}");
                next += 1;
            }
        }
        assert_eq!(next, godel.count());
    }
}

/// Random positions of a random Awari level (a random one of its
/// numbers, so every level is covered up to 48 stones).
fn numbered_position() -> impl Strategy<Value = (u32, u64)> {
    (0u32..=48).prop_flat_map(|stones| {
        let count = GodelIndex::new(6, stones).count();
        (Just(stones), 0..count)
    })
}

proptest! {
    #[test]
    fn rank_undoes_unrank((stones, number) in numbered_position()) {
        let index = GodelIndex::new(6, stones);
        let pos = index.unrank(number).unwrap();
        prop_assert_eq!(pos.stones(), stones);
        prop_assert!(is_numbered(&pos));
        prop_assert_eq!(index.rank(&pos), Some(number));
    }

    #[test]
    fn the_next_number_is_the_next_position_in_order((stones, number) in numbered_position()) {
        let index = GodelIndex::new(6, stones);
        if let (Some(a), Some(b)) = (index.unrank(number), index.unrank(number + 1)) {
            prop_assert!(key(&a) < key(&b), "{} then {}", a, b);
        }
    }
}
