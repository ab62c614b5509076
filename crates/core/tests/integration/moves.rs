//! Move generation: sowings with many laps against a sowing done one stone
//! at a time, and [`Rules::for_each_exit`] against the exits and the
//! other moves [`Rules::for_each_move`] finds, on every variant.

use mancala_core::{LevelIndex, Move, Position, Rules, Stays, Variant};
use proptest::prelude::*;

const VARIANTS: [Variant; 4] = [
    Variant::Oware,
    Variant::Awari,
    Variant::Wari,
    Variant::Kalah,
];

/// What `for_each_exit` should tell: the exits `for_each_move` plays, in
/// order, and the number of its other moves (or its terminal value).
fn exits_by_every_move(rules: &Rules, pos: &Position) -> (Vec<Move>, Stays) {
    let (mut exits, mut stays) = (Vec::new(), 0);
    let terminal = rules.for_each_move(pos, |m| {
        if m.leaves_level() {
            exits.push(*m);
        } else {
            stays += 1;
        }
    });
    (exits, terminal.map_or(Stays::Moves(stays), Stays::Terminal))
}

fn exits_alone(rules: &Rules, pos: &Position) -> (Vec<Move>, Stays) {
    let mut exits = Vec::new();
    let stays = rules.for_each_exit(pos, |m| exits.push(*m));
    (exits, stays)
}

/// The Oware family's sowing of `origin`, one stone at a time, skipping
/// the origin (`docs/RULES.md`): the board before any capture, and the
/// last pit sown.
fn sown_stone_by_stone(pos: &Position, origin: usize) -> (Vec<u32>, usize) {
    let ring = 2 * pos.pits();
    let mut board: Vec<u32> = pos.cells().iter().map(|&c| c as u32).collect();
    let mut stones = std::mem::take(&mut board[origin]);
    let mut pit = origin;
    while stones > 0 {
        pit = (pit + 1) % ring;
        if pit != origin {
            board[pit] += 1;
            stones -= 1;
        }
    }
    (board, pit)
}

#[test]
fn exits_alone_are_every_moves_exits_on_small_levels() {
    for variant in VARIANTS {
        for pits in 1..=6 {
            let rules = Rules::new(variant, pits).unwrap();
            for stones in 0..=(14 - 2 * pits as u32) {
                let level = LevelIndex::new(pits, stones);
                for pos in level.positions_from(0) {
                    assert_eq!(
                        exits_alone(&rules, &pos),
                        exits_by_every_move(&rules, &pos),
                        "{variant} {pos}"
                    );
                }
            }
        }
    }
}

/// A random board: `pits` in 1..=8, up to 120 stones, so sowings lap the
/// board several times.
fn crowded_board() -> impl Strategy<Value = Position> {
    (1usize..=8).prop_flat_map(|pits| {
        proptest::collection::vec(0u32..=120 / (2 * pits as u32), 2 * pits)
            .prop_map(move |counts| Position::from_counts(pits, &counts).unwrap())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn exits_alone_are_every_moves_exits(pos in crowded_board()) {
        for variant in VARIANTS {
            let rules = Rules::new(variant, pos.pits()).unwrap();
            prop_assert_eq!(exits_alone(&rules, &pos), exits_by_every_move(&rules, &pos));
        }
    }

    /// Wari's moves capture in both directions but never void a capture
    /// nor skip a pit, so a non-capturing child is the sowing itself.
    #[test]
    fn sowings_lap_as_stone_by_stone(pos in crowded_board()) {
        let rules = Rules::new(Variant::Wari, pos.pits()).unwrap();
        let p = pos.pits();
        for origin in (0..p).filter(|&pit| pos.get(pit) > 0) {
            let m = rules.play(&pos, origin).unwrap();
            let (board, last) = sown_stone_by_stone(&pos, origin);
            let captures = last >= p && (board[last] == 2 || board[last] == 3);
            prop_assert_eq!(m.gain > 0, captures);
            if !captures {
                let child: Vec<u32> = board[p..].iter().chain(&board[..p]).copied().collect();
                prop_assert_eq!(m.child, Position::from_counts(p, &child).unwrap());
            }
        }
    }
}
