//! Boards as the players see them, for `solve` and `play`.

use mancala_core::{pit_letter, GameState, Rules, Side};

/// The board as the players sit at it: North's row on top (right to left,
/// the way the stones travel), South's below, each store at its owner's
/// right. Pits carry the letters their owner names them by.
pub fn board_picture(rules: &Rules, state: &GameState, names: [&str; 2]) -> String {
    let p = rules.pits();
    let south = match state.to_move {
        Side::South => state.position,
        Side::North => state.position.flipped(),
    };
    let cell = |i: usize| format!("{:>4}", south.get(i));
    let letters = |range: &mut dyn Iterator<Item = usize>| -> String {
        range.map(|i| format!("{:>4}", pit_letter(i))).collect()
    };
    let mark = |side: Side| {
        if state.to_move == side {
            "  <- to move"
        } else {
            ""
        }
    };
    let [south_name, north_name] = names;
    let width = 4 * p;
    format!(
        "      {north_name}: store {ns}{nm}\n      {nl}\n     +{rule}+\n {ns:>3} |{nr}| \n     |{gap}|  {ss:<3}\n     |{sr}|\n     +{rule}+\n      {sl}\n      {south_name}: store {ss}{sm}",
        ns = state.stores[Side::North.index()],
        ss = state.stores[Side::South.index()],
        nm = mark(Side::North),
        sm = mark(Side::South),
        nl = letters(&mut (0..p).rev()),
        nr = (p..2 * p).rev().map(cell).collect::<String>(),
        sr = (0..p).map(cell).collect::<String>(),
        sl = letters(&mut (0..p)),
        rule = "-".repeat(width),
        gap = " ".repeat(width),
    )
}

/// `Kalah(4,3)`: the rule set's name with pits and seeds per pit.
pub fn start_name(rules: &Rules, seeds: u32) -> String {
    let name = rules.variant().name();
    let mut chars = name.chars();
    let capitalised: String = chars
        .next()
        .map(|c| c.to_ascii_uppercase())
        .into_iter()
        .chain(chars)
        .collect();
    format!("{capitalised}({},{seeds})", rules.pits())
}
