//! Integration tests of the generator: the solver against an independent
//! reference, forced bounds against naive iteration and the real game,
//! and built tables read back, damaged, resumed and compared.

mod cluster;
mod depths;
mod exchange;
mod forced;
mod forced_depths;
mod golden;
mod lean;
mod reference;
mod reference_solver;
mod strategies;
mod tables;
mod top_only;

use mancala_core::{Rules, Variant};

/// The library's rule set for a reference game.
fn lib_rules(game: reference::Game, pits: usize) -> Rules {
    use reference::Game;
    match game {
        Game::Oware => Rules::new(Variant::Oware, pits).unwrap(),
        Game::Awari => Rules::new(Variant::Awari, pits).unwrap(),
        Game::Wari => Rules::new(Variant::Wari, pits).unwrap(),
        Game::Kalah { empty_capture } => Rules::new(Variant::Kalah, pits)
            .unwrap()
            .with_empty_capture(empty_capture),
    }
}
