//! `mancala-tb play`: a game in the terminal against the perfect engine.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use mancala_tb::engine::{Analysis, Engine, Limits};
use mancala_tb::game::{parse_move, GameState, Outcome, Side};
use mancala_tb::position::pit_letter;
use mancala_tb::{Position, Tablebase};

use super::board_picture;
use crate::RulesArgs;

#[derive(Args)]
pub struct PlayArgs {
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Seeds in every pit of the start position.
    #[arg(long, default_value_t = 4)]
    pub seeds: u32,
    /// Start from this position instead (South to move, mover's row first).
    #[arg(long)]
    pub position: Option<String>,
    /// Your side: south moves first.
    #[arg(long, default_value = "south")]
    pub side: String,
    /// Table directory.
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// The engine's thinking time per move when it must search above the
    /// tables, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
}

const HELP: &str = "type a pit letter to sow it, `hint` for the value of every move, `undo` to take back your last move, `quit` to stop";

pub fn run(args: PlayArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    let human = Side::from_name(&args.side)?;
    let start = match &args.position {
        Some(text) => GameState::new(Position::parse(rules.pits(), text)?, Side::South),
        None => GameState::start(&rules, args.seeds)?,
    };
    let tables = Tablebase::open(&args.dir, rules)?;
    let tables = tables.max_level().map(|_| &tables);
    let mut engine = Engine::new(rules, tables).with_limits(Limits {
        nodes: None,
        time: Some(Duration::from_secs_f64(args.seconds.max(0.01))),
    });
    let names = match human {
        Side::South => ["South (you)", "North (engine)"],
        Side::North => ["South (engine)", "North (you)"],
    };
    let mut input = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}: {HELP}.", rules)?;
    // The states before each of the human's moves, for `undo`.
    let mut undo: Vec<GameState> = Vec::new();
    let mut state = start;
    // The board is drawn again only after it changed.
    let mut changed = true;
    loop {
        if changed {
            writeln!(out, "\n{}", board_picture(&rules, &state, names))?;
        }
        changed = true;
        if let Some(end) = state.end(&rules) {
            let verdict = match end.winner() {
                Some(side) if side == human => "you win",
                Some(_) => "the engine wins",
                None => "a draw",
            };
            writeln!(
                out,
                "game over ({}): South {} – North {}: {verdict}",
                end.reason.name(),
                end.stores[Side::South.index()],
                end.stores[Side::North.index()]
            )?;
            return Ok(true);
        }
        if state.to_move != human {
            let analysis = engine.analyze(&state)?;
            let pit = *analysis
                .best
                .first()
                .expect("a game that is not over has a move");
            writeln!(
                out,
                "engine plays {} ({})",
                pit_letter(pit as usize),
                explain(&analysis)
            )?;
            state = state.play(&rules, pit as usize)?;
            continue;
        }
        write!(out, "your move> ")?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out, "\nbye")?;
            return Ok(true);
        }
        changed = false;
        match line.trim() {
            "quit" | "exit" => return Ok(true),
            "help" | "?" => writeln!(out, "{HELP}")?,
            "hint" => writeln!(out, "{}", hint(&mut engine, &state)?)?,
            "undo" => match undo.pop() {
                Some(previous) => {
                    state = previous;
                    changed = true;
                }
                None => writeln!(out, "nothing to undo")?,
            },
            text => match parse_move(&rules, text).and_then(|pit| state.play(&rules, pit)) {
                Ok(next) => {
                    undo.push(state);
                    state = next;
                    changed = true;
                }
                Err(e) => writeln!(out, "{e}")?,
            },
        }
    }
}

/// The engine's reason for a move: the value it keeps.
fn explain(analysis: &Analysis) -> String {
    let exact = if analysis.exact { "" } else { ", estimated" };
    match analysis.outcome {
        Outcome::Win => format!(
            "it wins by {} with perfect play{exact}",
            analysis.final_margin
        ),
        Outcome::Draw => format!("a draw with perfect play{exact}"),
        Outcome::Loss => format!("it loses by {} at best{exact}", -analysis.final_margin),
    }
}

/// Every move's value and the final result it leads to.
fn hint(engine: &mut Engine, state: &GameState) -> Result<String> {
    let analysis = engine.analyze(state)?;
    let moves: Vec<String> = analysis
        .moves
        .iter()
        .map(|m| {
            format!(
                "{} {:+} ({} {}){}",
                pit_letter(m.pit as usize),
                m.value,
                m.outcome.name(),
                m.final_margin.abs(),
                if analysis.best.contains(&m.pit) {
                    "*"
                } else {
                    ""
                }
            )
        })
        .collect();
    Ok(format!(
        "moves (value of the remaining stones; final result; * = best): {}",
        moves.join("  ")
    ))
}
