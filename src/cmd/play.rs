//! `mancala-tb play`: a game in the terminal against the perfect engine.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use mancala_core::{parse_move, pit_letter, Cycles, GameState, Outcome, Position, Side, Verdict};
use mancala_engine::{Analysis, Engine, Limits, TournamentChoice, TournamentPlayer};
use mancala_probe::{Depth, Even, Forced, Tablebase};

use crate::args::{parse_cycles, parse_seconds, RulesArgs};
use crate::board::board_picture;

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
    #[arg(long, default_value = "10", value_parser = parse_seconds)]
    pub seconds: Duration,
    /// The engine's tables: `even` (perfect play when endless play is an
    /// even split; searches above the tables) or `forced` (tournament
    /// rules: it converts every forced win without repeating a position;
    /// the position must be within the tables).
    #[arg(long, default_value = "even", value_parser = parse_cycles)]
    pub cycles: Cycles,
}

/// The engine of a game: the perfect player of even tables, or the
/// tournament player of forced ones.
enum Player<'a> {
    Even(Box<Engine<'a>>),
    Forced(TournamentPlayer<'a>),
}

/// The tables a game is played on: opened by kind.
enum Tables {
    Even(Tablebase<Even>),
    Forced(Tablebase<Forced>),
}

impl Player<'_> {
    /// The engine's move in `state` and why it plays it.
    fn reply(&mut self, state: &GameState) -> Result<(u8, String)> {
        Ok(match self {
            Player::Even(engine) => {
                let analysis = engine.analyze(state)?;
                let pit = *analysis
                    .best
                    .first()
                    .expect("a game that is not over has a move");
                (pit, explain(&analysis))
            }
            Player::Forced(player) => {
                let choice = player.choose(state)?;
                (choice.pit, explain_forced(&choice))
            }
        })
    }

    /// Every move of `state` as the engine judges it, for the player to
    /// move.
    fn hint(&mut self, state: &GameState) -> Result<String> {
        match self {
            Player::Even(engine) => hint(engine, state),
            Player::Forced(player) => Ok(hint_forced(&player.choose(state)?)),
        }
    }
}

const HELP: &str = "type a pit letter to sow it, `hint` for the value of every move, `undo` to take back your last move, `quit` to stop";

pub fn run(args: PlayArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    let human = Side::from_name(&args.side)?;
    let start = match &args.position {
        Some(text) => GameState::new(Position::parse(rules.pits(), text)?, Side::South),
        None => GameState::start(&rules, args.seeds)?,
    };
    let depths = Tablebase::<Depth>::open(&args.dir, rules)?;
    let tables = match args.cycles {
        Cycles::Even => Tables::Even(Tablebase::open(&args.dir, rules)?),
        Cycles::Forced => Tables::Forced(Tablebase::open(&args.dir, rules)?),
    };
    let mut player = match &tables {
        Tables::Even(tables) => Player::Even(Box::new(
            Engine::with_tables(tables)
                .with_depths(&depths)
                .with_limits(Limits {
                    nodes: None,
                    time: Some(args.seconds),
                }),
        )),
        Tables::Forced(tables) => {
            // No search above forced tables: every position of the game
            // has at most the start's stones.
            tables.check(&start.position)?;
            Player::Forced(TournamentPlayer::new(tables))
        }
    };
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
            let (pit, why) = player.reply(&state)?;
            writeln!(out, "engine plays {} ({why})", pit_letter(pit as usize))?;
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
            "hint" => writeln!(out, "{}", player.hint(&state)?)?,
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
    let unproven = if analysis.converts || analysis.value == 0 {
        ""
    } else {
        "; the move keeps the value but is not proven to convert it (no depth table, and no search could order the moves)"
    };
    let result = match analysis.outcome {
        Outcome::Win => format!(
            "it wins by {} with perfect play{exact}",
            analysis.final_margin
        ),
        Outcome::Draw => format!("a draw with perfect play{exact}"),
        Outcome::Loss => format!("it loses by {} at best{exact}", -analysis.final_margin),
    };
    result + unproven
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

/// The tournament player's reason for a move: what it is sure of.
fn explain_forced(choice: &TournamentChoice) -> String {
    let chosen = choice
        .moves
        .iter()
        .find(|m| m.pit == choice.pit)
        .expect("the chosen move is legal");
    let (sure, possible) = (chosen.guaranteed, chosen.possible);
    match choice.verdict {
        Verdict::Win => format!("it forces a win: at least {sure} stones in the end"),
        Verdict::Draw => format!("a forced draw: {sure} stones each"),
        Verdict::Loss => format!("it loses: at most {possible} stones in the end"),
        Verdict::Undecided => format!(
            "undecided: at least {sure}, at most {possible} stones; the rest depends on repetitions"
        ),
    }
}

/// Every move's forced bounds and verdict (forced tables).
fn hint_forced(choice: &TournamentChoice) -> String {
    let moves: Vec<String> = choice
        .moves
        .iter()
        .map(|m| {
            let ends = m
                .end
                .map(|e| format!(", ends: {}", e.reason.name()))
                .unwrap_or_default();
            let star = if m.pit == choice.pit { "*" } else { "" };
            format!(
                "{} {} ({}{ends}){star}",
                pit_letter(m.pit as usize),
                m.bounds,
                m.verdict.name()
            )
        })
        .collect();
    format!(
        "you: {} (forced bounds {}); moves (forced bounds you/opponent of the board's stones; result; * = the engine's choice): {}",
        choice.verdict.name(),
        choice.bounds,
        moves.join("  ")
    )
}
