//! Level indexing: `rank`/`unrank` are inverse bijections between a level's
//! positions and `0..C(n + 2P − 1, 2P − 1)`, `advance` walks the rank order,
//! and ranks follow the documented combinatorial number system (the on-disk
//! index scheme `compositions-colex`, so a change here breaks every table).

use std::collections::HashSet;

use mancala_core::{self as index, LevelIndex, Position};
use proptest::prelude::*;

/// `C(a, b)` computed independently of the library, exactly.
fn choose(a: u64, b: u64) -> u128 {
    if b > a {
        return 0;
    }
    let b = b.min(a - b);
    let mut r: u128 = 1;
    for i in 0..b {
        r = r * (a - i) as u128 / (i + 1) as u128;
    }
    r
}

/// The rank `docs/FORMAT.md` and `index.rs` document: bars `b_i = (x_0 + … + x_i) + i`
/// for `i < 2P − 1`, rank `Σ C(b_i, i + 1)`.
fn documented_rank(counts: &[u32]) -> u128 {
    let mut prefix = 0u64;
    let mut r = 0u128;
    for (i, &c) in counts[..counts.len() - 1].iter().enumerate() {
        prefix += c as u64;
        r += choose(prefix + i as u64, i as u64 + 1);
    }
    r
}

/// Every composition of `stones` into `cells` parts, by plain recursion.
fn compositions(cells: usize, stones: u32) -> Vec<Vec<u32>> {
    fn go(cells: usize, stones: u32, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if prefix.len() + 1 == cells {
            prefix.push(stones);
            out.push(prefix.clone());
            prefix.pop();
            return;
        }
        for c in 0..=stones {
            prefix.push(c);
            go(cells, stones - c, prefix, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    go(cells, stones, &mut Vec::with_capacity(cells), &mut out);
    out
}

/// (pits per side, max stones) checked exhaustively.
const EXHAUSTIVE: [(usize, u32); 8] = [
    (1, 12),
    (2, 10),
    (3, 8),
    (4, 8),
    (5, 5),
    (6, 5),
    (7, 3),
    (8, 3),
];

#[test]
fn counts_are_binomials() {
    for pits in 1..=8usize {
        for stones in 0..=48u32 {
            let expected = choose(stones as u64 + 2 * pits as u64 - 1, 2 * pits as u64 - 1);
            assert_eq!(
                LevelIndex::new(pits, stones).count() as u128,
                expected,
                "count of level {stones} with {pits} pits"
            );
        }
    }
    // A few values worked by hand.
    assert_eq!(LevelIndex::new(6, 0).count(), 1);
    assert_eq!(LevelIndex::new(6, 1).count(), 12);
    assert_eq!(LevelIndex::new(6, 2).count(), 78);
    assert_eq!(LevelIndex::new(1, 7).count(), 8);
    assert_eq!(LevelIndex::new(6, 48).count(), 279_871_768_995);
}

#[test]
fn exhaustive_round_trips_on_small_boards() {
    for (pits, max) in EXHAUSTIVE {
        for stones in 0..=max {
            let level = LevelIndex::new(pits, stones);
            let all = compositions(2 * pits, stones);
            assert_eq!(
                all.len() as u64,
                level.count(),
                "pits {pits} stones {stones}: enumerated compositions vs count"
            );
            let mut seen = vec![false; all.len()];
            for counts in &all {
                let pos = Position::from_counts(pits, counts).unwrap();
                let r = level.rank(&pos);
                assert_eq!(r, index::rank(&pos), "LevelIndex::rank vs rank");
                assert!(r < level.count(), "{pos:?}: rank {r} out of range");
                assert_eq!(r as u128, documented_rank(counts), "{pos:?}: rank formula");
                assert!(!seen[r as usize], "{pos:?}: rank {r} given twice");
                seen[r as usize] = true;
                assert_eq!(level.unrank(r), pos, "unrank(rank({pos:?}))");
            }
            assert!(seen.iter().all(|&s| s), "every rank is hit");
            for i in 0..level.count() {
                let pos = level.unrank(i);
                assert_eq!(pos.pits(), pits);
                assert_eq!(pos.stones(), stones, "unrank({i}) has the level's stones");
                assert_eq!(index::rank(&pos), i, "rank(unrank({i}))");
            }
        }
    }
}

#[test]
fn advance_walks_the_rank_order() {
    for (pits, max) in EXHAUSTIVE {
        for stones in 0..=max {
            let level = LevelIndex::new(pits, stones);
            let mut pos = level.unrank(0);
            let mut visited = HashSet::new();
            visited.insert(pos);
            for i in 1..level.count() {
                assert!(
                    index::advance(&mut pos),
                    "pits {pits} stones {stones}: advance stopped early at rank {i}"
                );
                assert_eq!(pos, level.unrank(i), "pits {pits} stones {stones} rank {i}");
                assert!(visited.insert(pos), "{pos:?} visited twice");
            }
            let last = pos;
            assert!(
                !index::advance(&mut pos),
                "pits {pits} stones {stones}: advance past the last position"
            );
            assert_eq!(pos, last, "a failed advance leaves the position unchanged");
        }
    }
}

#[test]
fn rank_order_pins_the_file_format() {
    // With one pit per side the rank is the mover's count; the first
    // position of every level has all stones in the last pit, the last one
    // all stones in the first.
    let level = LevelIndex::new(1, 3);
    let order: Vec<String> = (0..level.count())
        .map(|i| level.unrank(i).to_string())
        .collect();
    assert_eq!(order, ["0/3", "1/2", "2/1", "3/0"]);
    let level = LevelIndex::new(6, 4);
    assert_eq!(level.unrank(0).to_string(), "0,0,0,0,0,0/0,0,0,0,0,4");
    assert_eq!(
        level.unrank(level.count() - 1).to_string(),
        "4,0,0,0,0,0/0,0,0,0,0,0"
    );
    assert_eq!(level.unrank(1).to_string(), "0,0,0,0,0,0/0,0,0,0,1,3");
}

/// A random composition: `pits` in 6..=8, up to 48 stones.
fn large_board() -> impl Strategy<Value = (usize, Vec<u32>)> {
    (6usize..=8, 0u32..=48).prop_flat_map(|(pits, stones)| {
        proptest::collection::vec(0..=stones, 2 * pits - 1).prop_map(move |mut cuts| {
            cuts.sort_unstable();
            let mut counts = Vec::with_capacity(2 * pits);
            let mut prev = 0;
            for c in cuts {
                counts.push(c - prev);
                prev = c;
            }
            counts.push(stones - prev);
            (pits, counts)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn large_boards_round_trip((pits, counts) in large_board()) {
        let pos = Position::from_counts(pits, &counts).unwrap();
        let stones = pos.stones();
        let level = LevelIndex::new(pits, stones);
        let r = index::rank(&pos);
        prop_assert!(r < level.count(), "rank {} >= count {}", r, level.count());
        prop_assert_eq!(r as u128, documented_rank(&counts));
        prop_assert_eq!(level.unrank(r), pos);
        // The successor in rank order is the position of rank r + 1.
        let mut next = pos;
        if r + 1 < level.count() {
            prop_assert!(index::advance(&mut next));
            prop_assert_eq!(index::rank(&next), r + 1);
            prop_assert_eq!(next.stones(), stones);
        } else {
            prop_assert!(!index::advance(&mut next));
            prop_assert_eq!(next, pos);
        }
    }

    #[test]
    fn the_rank_is_the_sum_of_its_row_parts((pits, counts) in large_board()) {
        let pos = Position::from_counts(pits, &counts).unwrap();
        let (mover, opponent) = pos.cells()[..2 * pits].split_at(pits);
        prop_assert_eq!(Position::from_rows(mover, opponent), pos);
        let parts = index::mover_row_rank(mover)
            + index::opponent_row_rank(pos.mover_stones(), opponent);
        prop_assert_eq!(parts as u128, documented_rank(&counts));
    }

    #[test]
    fn large_indices_round_trip(pits in 6usize..=8, stones in 0u32..=48, frac in 0.0f64..1.0) {
        let level = LevelIndex::new(pits, stones);
        let i = ((level.count() as f64 * frac) as u64).min(level.count() - 1);
        let pos = level.unrank(i);
        prop_assert_eq!(pos.pits(), pits);
        prop_assert_eq!(pos.stones(), stones);
        prop_assert_eq!(index::rank(&pos), i);
    }
}

/// A walk from any rank yields every later position of the level, in rank
/// order, and then stops.
#[test]
fn positions_from_walks_to_the_end_of_the_level() {
    for (pits, stones) in [(1, 0), (2, 5), (3, 4), (6, 3)] {
        let level = LevelIndex::new(pits, stones);
        for first in 0..=level.count() {
            let walked: Vec<Position> = level.positions_from(first).collect();
            let expected: Vec<Position> = (first..level.count()).map(|i| level.unrank(i)).collect();
            assert_eq!(
                walked, expected,
                "{pits} pits, {stones} stones, from {first}"
            );
        }
    }
}
