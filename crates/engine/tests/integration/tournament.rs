//! The tournament player on forced tables, against every possible
//! opponent: a side with a forced win never repeats a position and always
//! ends the game with more than half of the stones.

use mancala_core::{
    Cycles, EndReason, GameState, LevelIndex, Rules, Side, Successors, Variant, Verdict,
};
use mancala_engine::TournamentPlayer;
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_probe::{Forced, Tablebase};
use tempfile::TempDir;

/// (rule set, pits per side, max stones): every winning position of these
/// levels is played out against every opponent.
const CASES: [(Variant, usize, u32); 8] = [
    (Variant::Oware, 2, 12),
    (Variant::Awari, 2, 12),
    (Variant::Wari, 2, 12),
    (Variant::Oware, 3, 8),
    (Variant::Awari, 3, 8),
    (Variant::Wari, 3, 8),
    (Variant::Oware, 4, 6),
    (Variant::Kalah, 3, 7),
];

/// No game from these levels may be longer.
const MAX_PLIES: usize = 200;

/// Forced tables of `rules` up to `stones`, built into a fresh directory.
fn forced_tables(rules: Rules, stones: u32) -> (TempDir, Tablebase<Forced>) {
    let dir = TempDir::new().unwrap();
    let options = BuildOptions {
        cycles: Cycles::Forced,
        ..BuildOptions::new(dir.path(), rules, stones)
    };
    build(&options, &Quiet).unwrap();
    let tb = Tablebase::<Forced>::open(dir.path(), rules).unwrap();
    (dir, tb)
}

/// What the exhaustive games saw.
#[derive(Default, Debug)]
struct Tally {
    games: u64,
    /// Winner moves that kept the level (no capture, no end).
    quiet_moves: u64,
    longest: usize,
}

/// Plays `state` to every end: `winner` by the tournament player, the
/// other side every legal move. Errors describe the first broken promise.
fn play_out(
    player: &TournamentPlayer,
    rules: &Rules,
    state: GameState,
    winner: Side,
    tally: &mut Tally,
) -> Result<(), String> {
    let plies = state.history.len();
    let line = || format!("after {plies} plies from {}", state.history[0].1);
    if let Some(end) = state.end(rules) {
        tally.games += 1;
        tally.longest = tally.longest.max(plies);
        let share = end.stores[winner.index()];
        if end.reason != EndReason::Repetition && 2 * share > state.total_stones() {
            return Ok(());
        }
        return Err(format!("{} ends {end:?}, {}", line(), state.position));
    }
    if plies >= MAX_PLIES {
        return Err(format!("no end {}", line()));
    }
    if state.to_move != winner {
        let Successors::Moves(moves) = rules.successors(&state.position) else {
            unreachable!("a game that is not over has a move")
        };
        for m in moves.iter() {
            let next = state.play(rules, m.pit as usize).unwrap();
            play_out(player, rules, next, winner, tally)?;
        }
        return Ok(());
    }
    let choice = player.choose(&state).map_err(|e| e.to_string())?;
    if choice.verdict != Verdict::Win {
        return Err(format!("{} the win is lost: {choice:?}", line()));
    }
    let next = state.play(rules, choice.pit as usize).unwrap();
    if next.occurrences() > 1 {
        return Err(format!("{} the winner repeats {}", line(), next.position));
    }
    if next.end(rules).is_none() && next.position.stones() == state.position.stones() {
        tally.quiet_moves += 1;
    }
    play_out(player, rules, next, winner, tally)
}

#[test]
fn a_forced_win_is_converted_against_every_opponent() {
    for (variant, pits, stones) in CASES {
        let rules = Rules::new(variant, pits).unwrap();
        let (_dir, tb) = forced_tables(rules, stones);
        let player = TournamentPlayer::new(&tb);
        let mut tally = Tally::default();
        let mut wins = 0;
        for n in 1..=stones {
            let index = LevelIndex::new(pits, n);
            for i in 0..index.count() {
                let pos = index.unrank(i);
                if tb.bounds(&pos).unwrap().verdict(n, (0, 0)) != Verdict::Win {
                    continue;
                }
                wins += 1;
                let state = GameState::new(pos, Side::South);
                play_out(&player, &rules, state, Side::South, &mut tally)
                    .unwrap_or_else(|e| panic!("{rules}: {e}"));
            }
        }
        eprintln!("{rules}: {wins} forced wins, {tally:?}");
        assert!(wins > 0 && tally.quiet_moves > 0, "{rules}: {tally:?}");
    }
}

/// A move into a third repetition is scored by the repetition rule (each
/// side takes its own row), not by the tables.
#[test]
fn a_third_repetition_is_scored_by_the_repetition_rule() {
    let rules = Rules::new(Variant::Oware, 6).unwrap();
    let (_dir, tb) = forced_tables(rules, 4);
    let player = TournamentPlayer::new(&tb);
    // `f` is sure of 2 of the 4 stones, `e` loses all 4 (docs/guide/concepts.md).
    let pos = mancala_core::Position::parse(6, "0,0,0,0,1,1/1,0,0,0,1,0").unwrap();
    let fresh = GameState::new(pos, Side::South);
    let choice = player.choose(&fresh).unwrap();
    assert_eq!(choice.verdict, Verdict::Undecided);
    let f = choice.moves[1];
    assert_eq!((choice.pit, f.pit, f.guaranteed, f.possible), (5, 5, 2, 4));
    assert_eq!(f.end, None);

    // The position after `f` has occurred twice already: playing `f` ends
    // the game, South taking the 2 stones it captures and its row's 1.
    let after_f = fresh.play(&rules, 5).unwrap();
    let mut repeated = fresh.clone();
    repeated.history = vec![(after_f.to_move, after_f.position); 2];
    let choice = player.choose(&repeated).unwrap();
    let f = choice.moves[1];
    assert_eq!(f.end.map(|e| e.reason), Some(EndReason::Repetition));
    assert_eq!((f.guaranteed, f.possible, f.verdict), (3, 3, Verdict::Win));
    assert_eq!(f.occurrences, 2);
    // Better than anything `e` can be sure of.
    assert_eq!((choice.moves[0].guaranteed, choice.pit), (0, 5));

    // A finished game has no move to choose.
    let mut over = fresh;
    over.history = vec![(Side::South, pos); 2];
    assert!(player.choose(&over).is_err());
}
