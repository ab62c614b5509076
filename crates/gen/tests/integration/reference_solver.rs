//! Compares the library's move generation and solver with the naive,
//! independent reference in `tests/reference/mod.rs`, over every position
//! of every level of small boards, and checks hand-worked examples of
//! `docs/RULES.md` against both.

use std::time::Instant;

use mancala_core::{Position, Rules, Successors};
use mancala_format::Even;
use mancala_gen::solve_in_memory;

use crate::lib_rules;
use crate::reference::{self, Game, RefMove, RefRules, RefSucc};

/// (pits per side, max stones) compared exhaustively for every rule set.
const SIZES: [(usize, u32); 5] = [(1, 12), (2, 10), (3, 8), (4, 7), (6, 6)];

/// Deeper levels, compared in one extra test (a few seconds in all).
const LARGER_SIZES: [(usize, u32); 5] = [(1, 24), (2, 16), (3, 12), (4, 10), (6, 8)];

fn cells(pos: &Position) -> Vec<u32> {
    pos.cells()[..2 * pos.pits()]
        .iter()
        .map(|&c| c as u32)
        .collect()
}

/// The library's successors in the reference's terms.
fn lib_successors(rules: &Rules, board: &[u32]) -> RefSucc {
    let pits = board.len() / 2;
    let pos = Position::from_counts(pits, board).unwrap();
    match rules.successors(&pos) {
        Successors::Terminal(v) => RefSucc::Terminal(v),
        Successors::Moves(list) => RefSucc::Moves(
            list.iter()
                .map(|m| RefMove {
                    pit: m.pit as usize,
                    gain: m.gain as u32,
                    extra_turn: m.extra_turn,
                    child: cells(&m.child),
                })
                .collect(),
        ),
    }
}

fn show(s: &RefSucc) -> String {
    match s {
        RefSucc::Terminal(v) => format!("terminal {v}"),
        RefSucc::Moves(list) => list
            .iter()
            .map(|m| {
                format!(
                    "{}:gain {}{} -> {}",
                    (b'a' + m.pit as u8) as char,
                    m.gain,
                    if m.extra_turn { " (extra turn)" } else { "" },
                    reference::format(&m.child)
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Compares move generation and values over every position with at most
/// `max` stones on a board of `pits` pits per side.
fn compare_exhaustively(game: Game, sizes: &[(usize, u32)]) {
    let mut failures = Vec::new();
    for &(pits, max) in sizes {
        let rules = RefRules::new(game, pits);
        let lib = lib_rules(game, pits);

        let t = Instant::now();
        let expected = reference::solve(&rules, max);
        let t_ref = t.elapsed();
        let t = Instant::now();
        let solved = solve_in_memory::<Even>(&lib, max);
        let t_lib = t.elapsed();

        let mut positions = 0u64;
        let mut move_mismatches = 0u64;
        let mut value_mismatches = 0u64;
        for n in 0..=max {
            for board in reference::compositions(n, 2 * pits) {
                positions += 1;
                let want = rules.successors(&board);
                let got = lib_successors(&lib, &board);
                if want != got {
                    move_mismatches += 1;
                    if failures.len() < 30 {
                        failures.push(format!(
                            "{game:?} P={pits} {}: moves differ\n  reference: {}\n  library:   {}",
                            reference::format(&board),
                            show(&want),
                            show(&got)
                        ));
                    }
                }
                let pos = Position::from_counts(pits, &board).unwrap();
                let want = expected[&board];
                let got = solved.value(&pos);
                if want != got {
                    value_mismatches += 1;
                    if failures.len() < 30 {
                        failures.push(format!(
                            "{game:?} P={pits} {}: value reference {want}, library {got}",
                            reference::format(&board)
                        ));
                    }
                }
            }
        }
        eprintln!(
            "{game:?} P={pits} n<={max}: {positions} positions, reference {:.2?}, library {:.2?}, \
             {move_mismatches} move mismatches, {value_mismatches} value mismatches",
            t_ref, t_lib
        );
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

#[test]
fn oware_matches_reference() {
    compare_exhaustively(Game::Oware, &SIZES);
}

#[test]
fn awari_matches_reference() {
    compare_exhaustively(Game::Awari, &SIZES);
}

#[test]
fn wari_matches_reference() {
    compare_exhaustively(Game::Wari, &SIZES);
}

#[test]
fn kalah_matches_reference() {
    compare_exhaustively(KALAH, &SIZES);
}

#[test]
fn kalah_without_empty_capture_matches_reference() {
    compare_exhaustively(KALAH_NO_EMPTY, &SIZES);
}

#[test]
fn all_rule_sets_match_reference_on_larger_boards() {
    for game in [Game::Oware, Game::Awari, Game::Wari, KALAH, KALAH_NO_EMPTY] {
        compare_exhaustively(game, &LARGER_SIZES);
    }
}

// ---------------------------------------------------------------------------
// Hand-checked examples (P = 6 unless said otherwise).

fn pit_index(letter: char) -> usize {
    (letter as u8 - b'a') as usize
}

/// Asserts that, under `game`, sowing `letter` from `pos` is legal with the
/// given gain, extra-turn flag and child, for the reference and the library
/// (`successors` and `play`).
fn expect_move(game: Game, pos: &str, letter: char, gain: u32, extra_turn: bool, child: &str) {
    let board = reference::parse(pos);
    let pits = board.len() / 2;
    let pit = pit_index(letter);
    let want = RefMove {
        pit,
        gain,
        extra_turn,
        child: reference::parse(child),
    };
    let ctx = format!("{game:?} {pos} move {letter}");

    let r = RefRules::new(game, pits);
    assert_eq!(
        r.play(&board, pit).as_ref(),
        Some(&want),
        "reference: {ctx}"
    );

    let lib = lib_rules(game, pits);
    let from_list = match lib_successors(&lib, &board) {
        RefSucc::Moves(list) => list.into_iter().find(|m| m.pit == pit),
        RefSucc::Terminal(_) => None,
    };
    assert_eq!(from_list.as_ref(), Some(&want), "library successors: {ctx}");

    let p = Position::parse(pits, pos).unwrap();
    let m = lib
        .play(&p, pit)
        .unwrap_or_else(|| panic!("library play: {ctx}: illegal"));
    assert_eq!(m.pit as usize, pit, "library play: {ctx}");
    assert_eq!(m.gain as u32, gain, "library play: {ctx}");
    assert_eq!(m.extra_turn, extra_turn, "library play: {ctx}");
    assert_eq!(
        m.child.to_string().replace(' ', ""),
        child,
        "library play: {ctx}"
    );
}

/// Asserts that sowing `letter` from `pos` is illegal under `game` (for both).
fn expect_illegal(game: Game, pos: &str, letter: char) {
    let board = reference::parse(pos);
    let pits = board.len() / 2;
    let pit = pit_index(letter);
    let ctx = format!("{game:?} {pos} move {letter}");
    let r = RefRules::new(game, pits);
    assert_eq!(r.play(&board, pit), None, "reference: {ctx}");
    let lib = lib_rules(game, pits);
    if let RefSucc::Moves(list) = lib_successors(&lib, &board) {
        assert!(
            list.iter().all(|m| m.pit != pit),
            "library successors: {ctx}"
        );
    }
    let p = Position::parse(pits, pos).unwrap();
    assert!(lib.play(&p, pit).is_none(), "library play: {ctx}");
}

/// Asserts the legal pits (in order) of `pos` under `game`, for both.
fn expect_legal(game: Game, pos: &str, letters: &str) {
    let board = reference::parse(pos);
    let pits = board.len() / 2;
    let want: Vec<usize> = letters.chars().map(pit_index).collect();
    let list_of = |s: RefSucc| match s {
        RefSucc::Moves(list) => list.iter().map(|m| m.pit).collect::<Vec<_>>(),
        RefSucc::Terminal(v) => panic!("{game:?} {pos}: terminal {v}, expected moves {letters}"),
    };
    let r = RefRules::new(game, pits);
    assert_eq!(
        list_of(r.successors(&board)),
        want,
        "reference: {game:?} {pos}"
    );
    let lib = lib_rules(game, pits);
    assert_eq!(
        list_of(lib_successors(&lib, &board)),
        want,
        "library: {game:?} {pos}"
    );
}

/// Asserts that `pos` is terminal with `value` under `game`, for both.
fn expect_terminal(game: Game, pos: &str, value: i32) {
    let board = reference::parse(pos);
    let pits = board.len() / 2;
    let r = RefRules::new(game, pits);
    assert_eq!(
        r.successors(&board),
        RefSucc::Terminal(value),
        "reference: {game:?} {pos}"
    );
    let lib = lib_rules(game, pits);
    assert_eq!(
        lib_successors(&lib, &board),
        RefSucc::Terminal(value),
        "library: {game:?} {pos}"
    );
}

const KALAH: Game = Game::Kalah {
    empty_capture: true,
};
const KALAH_NO_EMPTY: Game = Game::Kalah {
    empty_capture: false,
};

#[test]
fn worked_example_grand_slam() {
    let pos = "0,0,0,0,0,3/1,1,2,0,0,0";
    // Sowing f makes g, h, i = 2, 2, 3: a capture of 7, every opponent stone.
    // Oware: grand slam, played, nothing captured.
    expect_move(Game::Oware, pos, 'f', 0, false, "2,2,3,0,0,0/0,0,0,0,0,0");
    // Wari: no grand-slam rule, 7 captured.
    expect_move(Game::Wari, pos, 'f', 7, false, "0,0,0,0,0,0/0,0,0,0,0,0");
    // Awari: f is the only move and it starves: the mover takes all 7.
    expect_illegal(Game::Awari, pos, 'f');
    expect_terminal(Game::Awari, pos, 7);
    // With another (non-starving) move available, f is simply illegal.
    let pos2 = "0,0,0,0,1,3/1,1,2,0,0,0";
    expect_legal(Game::Awari, pos2, "e");
    expect_move(Game::Awari, pos2, 'e', 0, false, "1,1,2,0,0,0/0,0,0,0,0,4");
    expect_legal(Game::Oware, pos2, "ef");
    expect_move(Game::Oware, pos2, 'f', 0, false, "2,2,3,0,0,0/0,0,0,0,1,0");
}

#[test]
fn worked_example_kalah_start() {
    let start = "4,4,4,4,4,4/4,4,4,4,4,4";
    for game in [KALAH, KALAH_NO_EMPTY] {
        // d: e, f, the store, g; the turn passes.
        expect_move(game, start, 'd', 1, false, "5,4,4,4,4,4/4,4,4,0,5,5");
        // c: d, e, f, the store: another turn, same orientation.
        expect_move(game, start, 'c', 1, true, "4,4,0,5,5,5/4,4,4,4,4,4");
        expect_legal(game, start, "abcdef");
    }
}

#[test]
fn oware_backward_capture_chain() {
    // f sows g, h, i, j -> 2, 3, 2, 2: j, i, h, g captured (9), k keeps 5.
    let pos = "0,0,0,0,0,4/1,2,1,1,5,0";
    expect_move(Game::Oware, pos, 'f', 9, false, "0,0,0,0,5,0/0,0,0,0,0,0");
    expect_move(Game::Awari, pos, 'f', 9, false, "0,0,0,0,5,0/0,0,0,0,0,0");
    // The chain stops at h, which holds 1.
    let pos = "0,0,0,0,0,4/1,0,1,1,5,0";
    expect_move(Game::Oware, pos, 'f', 4, false, "2,1,0,0,5,0/0,0,0,0,0,0");
    // Wari: the run from j goes down to i and stops at h (1); k holds 5.
    expect_move(Game::Wari, pos, 'f', 4, false, "2,1,0,0,5,0/0,0,0,0,0,0");
    // A last stone making 4 captures nothing.
    let pos = "0,0,0,0,0,2/1,3,0,0,0,0";
    expect_move(Game::Oware, pos, 'f', 0, false, "2,4,0,0,0,0/0,0,0,0,0,0");
    // The chain never crosses into the mover's row: g is taken, f is the
    // mover's own pit, so the chain ends there.
    let pos = "0,0,0,0,1,1/2,0,0,0,0,1";
    expect_move(Game::Oware, pos, 'f', 3, false, "0,0,0,0,0,1/0,0,0,0,1,0");
}

#[test]
fn wari_two_way_run_page_example() {
    // The last stone ends in the opponent's third pit (i). Pits g, h, i, j
    // (2, 3, 3, 2) are captured, 10 stones; k (5) stops the run, l (3) is safe.
    let pos = "0,0,0,0,0,3/1,2,2,2,5,3";
    expect_move(Game::Wari, pos, 'f', 10, false, "0,0,0,0,5,3/0,0,0,0,0,0");
    // Oware captures backward only: i, h, g (8); j stays.
    expect_move(Game::Oware, pos, 'f', 8, false, "0,0,0,2,5,3/0,0,0,0,0,0");
    expect_move(Game::Awari, pos, 'f', 8, false, "0,0,0,2,5,3/0,0,0,0,0,0");
}

#[test]
fn oware_laps_skip_the_origin() {
    // 11 = 2P - 1 stones from f: g..l, a..e; ends on e, just before f.
    let pos = "0,0,0,0,0,11/0,0,0,0,0,0";
    for game in [Game::Oware, Game::Awari, Game::Wari] {
        expect_move(game, pos, 'f', 0, false, "1,1,1,1,1,1/1,1,1,1,1,0");
    }
    // 11 from a: b..l, ends on l (the pit before a on the ring).
    let pos = "11,0,0,0,0,0/0,0,0,0,0,0";
    expect_move(Game::Oware, pos, 'a', 0, false, "1,1,1,1,1,1/0,1,1,1,1,1");
    // 12 from f: the 12th stone skips f and lands in g (now 2).
    let pos = "0,0,0,0,0,12/0,1,1,1,1,1";
    expect_move(Game::Oware, pos, 'f', 2, false, "0,2,2,2,2,2/1,1,1,1,1,0");
    expect_move(Game::Awari, pos, 'f', 2, false, "0,2,2,2,2,2/1,1,1,1,1,0");
    // Wari: the run from g goes right through l: all 12 captured.
    expect_move(Game::Wari, pos, 'f', 12, false, "0,0,0,0,0,0/1,1,1,1,1,0");
    // 22 = 2(2P - 1): two full laps, ends on e; 23: g gets 3 and is taken.
    let pos = "0,0,0,0,0,22/0,0,0,0,0,0";
    expect_move(Game::Oware, pos, 'f', 0, false, "2,2,2,2,2,2/2,2,2,2,2,0");
    let pos = "0,0,0,0,0,23/0,0,0,0,0,0";
    expect_move(Game::Oware, pos, 'f', 3, false, "0,2,2,2,2,2/2,2,2,2,2,0");
    // 13 from c: d..l (9), a, b, skip c, then d and e: ends in e (the
    // mover's own pit), nothing captured.
    let pos = "0,0,13,0,0,0/0,0,0,0,0,0";
    expect_move(Game::Oware, pos, 'c', 0, false, "1,1,1,1,1,1/1,1,0,2,2,1");
}

#[test]
fn oware_feeding_and_end() {
    // Opponent empty: e (into f) does not feed, f (into g) does.
    expect_legal(Game::Oware, "0,0,0,0,1,1/0,0,0,0,0,0", "f");
    expect_legal(Game::Awari, "0,0,0,0,1,1/0,0,0,0,0,0", "f");
    expect_legal(Game::Wari, "0,0,0,0,1,1/0,0,0,0,0,0", "ef");
    // Cannot feed: Oware and Awari give the mover everything.
    expect_terminal(Game::Oware, "1,0,0,0,0,0/0,0,0,0,0,0", 1);
    expect_terminal(Game::Awari, "1,0,0,0,0,0/0,0,0,0,0,0", 1);
    expect_legal(Game::Wari, "1,0,0,0,0,0/0,0,0,0,0,0", "a");
    // Mover without stones.
    for game in [Game::Oware, Game::Awari, Game::Wari] {
        expect_terminal(game, "0,0,0,0,0,0/1,2,0,0,0,3", -6);
    }
    for game in [KALAH, KALAH_NO_EMPTY] {
        expect_terminal(game, "0,0,0,0,0,0/1,2,0,0,0,3", -6);
        expect_terminal(game, "1,2,0,0,0,3/0,0,0,0,0,0", 6);
    }
}

#[test]
fn kalah_capture_and_extra_turn() {
    // c (1 seed) ends in the empty d; the opposite pit i (3) is taken: 1 + 3.
    let pos = "1,0,1,0,0,0/1,2,3,4,5,6";
    for game in [KALAH, KALAH_NO_EMPTY] {
        expect_move(game, pos, 'c', 4, false, "1,2,0,4,5,6/1,0,0,0,0,0");
    }
    // Opposite pit empty: the seed goes to the store alone only by default.
    let pos = "1,0,1,0,0,0/1,2,0,4,5,6";
    expect_move(KALAH, pos, 'c', 1, false, "1,2,0,4,5,6/1,0,0,0,0,0");
    expect_move(
        KALAH_NO_EMPTY,
        pos,
        'c',
        0,
        false,
        "1,2,0,4,5,6/1,0,0,1,0,0",
    );
    // Last seed in the store: extra turn, seen from the same mover.
    let pos = "0,0,0,0,0,1/1,0,0,0,0,0";
    expect_move(KALAH, pos, 'f', 1, true, "0,0,0,0,0,0/1,0,0,0,0,0");
    let pos = "0,0,0,2,0,1/1,0,0,0,0,0";
    expect_move(KALAH, pos, 'f', 1, true, "0,0,0,2,0,0/1,0,0,0,0,0");
    // Last seed in an own pit that was not empty: nothing happens.
    let pos = "1,1,0,0,0,0/1,1,1,1,1,1";
    expect_move(KALAH, pos, 'a', 0, false, "1,1,1,1,1,1/0,2,0,0,0,0");
    // Seeds pass the mover's store, and land in the opponent's pits.
    let pos = "0,0,0,0,3,0/1,1,1,1,1,1";
    expect_move(KALAH, pos, 'e', 1, false, "2,1,1,1,1,1/0,0,0,0,0,1");
}

#[test]
fn kalah_laps_do_not_skip_the_origin() {
    // 13 seeds from a: b..f (5), store, g..l (6), a again: a was emptied, so
    // the last seed captures itself and l (2 + 1): 1 + 1 + 3 = 5 gained.
    let pos = "13,0,0,0,0,0/0,0,0,0,0,2";
    expect_move(KALAH, pos, 'a', 5, false, "1,1,1,1,1,0/0,1,1,1,1,1");
    expect_move(
        KALAH_NO_EMPTY,
        pos,
        'a',
        5,
        false,
        "1,1,1,1,1,0/0,1,1,1,1,1",
    );
    // 14 seeds from a: a gets one back and b a second one; the turn passes.
    let pos = "14,0,0,0,0,0/0,0,0,0,0,2";
    expect_move(KALAH, pos, 'a', 1, false, "1,1,1,1,1,3/1,2,1,1,1,1");
    // 13 from f: store, g..l, a..f: f (the origin) receives the last seed
    // and captures with g (4 + 1): 1 + 1 + 5 = 7.
    let pos = "0,0,0,0,0,13/4,0,0,0,0,0";
    expect_move(KALAH, pos, 'f', 7, false, "0,1,1,1,1,1/1,1,1,1,1,0");
    // 12 from f: store, g..l, a..e: ends in e (which had 1 -> 2), no capture.
    let pos = "0,0,0,0,1,12/4,0,0,0,0,0";
    expect_move(KALAH, pos, 'f', 1, false, "5,1,1,1,1,1/1,1,1,1,2,0");
    // 14 from f: store, g..l, a..f, store again: extra turn, 2 gained.
    let pos = "0,0,0,0,0,14/1,0,0,0,0,0";
    expect_move(KALAH, pos, 'f', 2, true, "1,1,1,1,1,1/2,1,1,1,1,1");
    // 26 from f: two full laps of the 13 slots, ending in f itself, which
    // then holds 2 (it was not empty before the last seed): no capture.
    let pos = "0,0,0,0,0,26/1,0,0,0,0,0";
    expect_move(KALAH, pos, 'f', 2, false, "3,2,2,2,2,2/2,2,2,2,2,2");
}

#[test]
fn small_boards_by_hand() {
    // P = 1, Oware: [3 | 0]: the 3 stones skip the origin and all land in
    // the opponent's single pit: a capture of 3 = every opponent stone, a
    // grand slam, so nothing is captured.
    expect_move(Game::Oware, "3/0", 'a', 0, false, "3/0");
    expect_move(Game::Wari, "3/0", 'a', 3, false, "0/0");
    expect_terminal(Game::Awari, "3/0", 3);
    // [1 | 1]: the opponent's pit gets 2: every stone he has, grand slam.
    expect_move(Game::Oware, "1/1", 'a', 0, false, "2/0");
    expect_move(Game::Wari, "1/1", 'a', 2, false, "0/0");
    // Kalah P = 1: [2 | 1]: store, opponent's pit; turn passes.
    expect_move(KALAH, "2/1", 'a', 1, false, "2/0");
    // [3 | 1]: store, opponent's pit (2), back into the emptied origin:
    // it captures itself and the opposite pit: 1 + 1 + 2.
    expect_move(KALAH, "3/1", 'a', 4, false, "0/0");
}
