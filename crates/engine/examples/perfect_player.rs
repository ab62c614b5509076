//! The library as a perfect player: a whole game of Kalah (4 pits, 3 seeds
//! each) between the engine (South) and a random mover (North).
//!
//! ```sh
//! cargo run --release -p mancala-engine --example perfect_player            # tables in a temp dir
//! cargo run --release -p mancala-engine --example perfect_player -- tables  # or under ./tables
//! ```
//!
//! The tables for every position of the game (levels 0..=24, about 10 M
//! positions) are built first, in about two seconds, or reused if the
//! directory already holds them; every engine move is then a table lookup,
//! so its play is perfect. An optional second argument seeds the random
//! player.

use std::path::PathBuf;

use mancala_core::{pit_letter, GameState, Rules, Side, Variant};
use mancala_engine::Engine;
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_probe::Tablebase;

const PITS: usize = 4;
const SEEDS: u32 = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let temp = tempfile::tempdir()?;
    let dir = args.next().map_or(temp.path().to_path_buf(), PathBuf::from);
    let mut seed: u64 = args.next().map_or(Ok(2024), |s| s.parse())? | 1;

    let rules = Rules::new(Variant::Kalah, PITS)?;
    let stones = 2 * PITS as u32 * SEEDS;
    build(&BuildOptions::new(&dir, rules, stones), &Quiet)?;
    let tables: Tablebase = Tablebase::open(&dir, rules)?;
    let mut engine = Engine::with_tables(&tables);

    let mut state = GameState::start(&rules, SEEDS)?;
    let start = engine.analyze(&state)?;
    println!(
        "{rules}, {SEEDS} seeds per pit: with perfect play South's final margin is {:+}",
        start.final_margin
    );
    while state.end(&rules).is_none() {
        let (pit, note) = match state.to_move {
            Side::South => {
                let analysis = engine.analyze(&state)?;
                (analysis.best[0], format!("value {:+}", analysis.value))
            }
            Side::North => {
                let legal = engine.move_analyses(&state)?;
                let pick = legal[random(&mut seed, legal.len())];
                (pick.pit, format!("value {:+}", pick.value))
            }
        };
        println!(
            "{:<5} plays {} ({note}) on {}",
            state.to_move.name(),
            pit_letter(pit as usize),
            state.position
        );
        state = state.play(&rules, pit as usize)?;
    }
    let end = state.end(&rules).expect("the loop ran to the end");
    println!(
        "game over ({}): South {} – North {}, South's margin {:+}",
        end.reason.name(),
        end.stores[Side::South.index()],
        end.stores[Side::North.index()],
        end.margin_for(Side::South)
    );
    // Perfect play never does worse than the start position's value.
    assert!(end.margin_for(Side::South) >= start.final_margin);
    Ok(())
}

/// An index below `n` from a xorshift generator: the random player needs
/// no more than this, and no extra dependency.
fn random(state: &mut u64, n: usize) -> usize {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % n as u64) as usize
}
