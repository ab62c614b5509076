//! `mancala-tb solve`: the exact value of a start position.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use mancala_core::{pit_letter, GameState, Outcome};
use mancala_engine::{Engine, Limits, LineEnd, SearchProgress, Source};
use mancala_probe::{Cycles, Tablebase};

use crate::args::{parse_mib, parse_seconds, RulesArgs};
use crate::board::start_name;
use crate::hint::build_advice;
use crate::json;

#[derive(Args)]
pub struct SolveArgs {
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Seeds in every pit of the start position.
    #[arg(long)]
    pub seeds: u32,
    /// Table directory (tables of this rule set are used for the endgame).
    #[arg(long, default_value = "tables")]
    pub dir: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Transposition-table memory, in MiB (allocated as the search needs
    /// it).
    #[arg(long = "tt-mib", value_name = "MIB", default_value = "256", value_parser = parse_mib)]
    pub tt_bytes: usize,
    /// Give up after this many seconds (the answer is then marked inexact).
    #[arg(long, value_parser = parse_seconds)]
    pub seconds: Option<Duration>,
    /// Also the exact value of every first move, not only which are best
    /// (above the tables, each bad move's exact value costs searches of
    /// its own).
    #[arg(long)]
    pub every_move: bool,
}

pub fn run(args: SolveArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    let state = GameState::start(&rules, args.seeds)?;
    let stones = state.position.stones();
    let tables: Tablebase = Tablebase::open(&args.dir, rules)?;
    let covered = tables.max_level();
    if !args.json && covered.is_none_or(|max| max < stones) {
        eprintln!(
            "tables of {} in {} go up to {}; searching above them ({})",
            rules.id(),
            args.dir.display(),
            covered.map_or("no level".to_string(), |m| format!("level {m}")),
            build_advice(&rules, Cycles::Even, stones, Some(&args.dir)),
        );
    }
    let terminal = std::io::stderr().is_terminal();
    let mut shown = Duration::ZERO;
    let mut engine = Engine::with_tables(&tables)
        .with_tt_bytes(args.tt_bytes)
        .with_limits(Limits {
            nodes: None,
            time: args.seconds,
        })
        .with_progress(|p: &SearchProgress| {
            // About once a second, on a terminal only: a long search shows
            // that it goes on.
            if terminal && p.elapsed >= shown + Duration::from_secs(1) {
                shown = p.elapsed;
                let depth = p.depth.map_or(String::new(), |d| format!(", depth {d}"));
                eprint!(
                    "\rsearching: {} nodes{depth}, {:.0} s ",
                    p.nodes,
                    p.elapsed.as_secs_f64()
                );
            }
        });
    let analysis = if args.every_move {
        engine.analyze(&state)?
    } else {
        engine.analyze_best(&state)?
    };
    drop(engine);
    if terminal && shown > Duration::ZERO {
        eprintln!();
    }
    let name = start_name(&rules, args.seeds);
    if args.json {
        let mut json = json::analysis(&analysis);
        json["start"] = name.clone().into();
        json["rules"] = rules.variant().name().into();
        json["pits"] = rules.pits().into();
        json["seeds"] = args.seeds.into();
        json["empty_capture"] = rules.empty_capture().into();
        json["tables_up_to"] = covered.into();
        out!("{json}");
        return Ok(analysis.exact);
    }
    let verdict = match analysis.outcome {
        Outcome::Win => format!("the first player wins by {}", analysis.value),
        Outcome::Draw => "a draw".to_string(),
        Outcome::Loss => format!("the first player loses by {}", -analysis.value),
    };
    out!(
        "{name}: {:+} ({verdict}){}",
        analysis.value,
        if analysis.exact {
            ""
        } else {
            " — NOT PROVEN: search budget ran out"
        }
    );
    let letters = |pits: &[u8]| -> Vec<String> {
        pits.iter()
            .map(|&p| pit_letter(p as usize).to_string())
            .collect()
    };
    out!("best first move(s): {}", letters(&analysis.best).join(" "));
    let moves: Vec<String> = analysis
        .moves
        .iter()
        .map(|m| format!("{} {:+}", pit_letter(m.pit as usize), m.value))
        .collect();
    if args.every_move {
        out!("first moves: {}", moves.join("  "));
    }
    let pv: Vec<u8> = analysis.pv.iter().map(|&(_, p)| p).collect();
    let mut line = String::new();
    let mut side = None;
    for (&(s, _), letter) in analysis.pv.iter().zip(letters(&pv)) {
        // A new group each time the player changes (Kalah extra turns
        // chain several moves of one player).
        if side != Some(s) {
            line += if side.is_some() { " | " } else { "" };
            line += &format!("{}: ", s.name());
            side = Some(s);
        } else {
            line += " ";
        }
        line += &letter;
    }
    out!(
        "perfect game ({} plies, {}): {line}",
        pv.len(),
        match analysis.pv_end {
            LineEnd::GameOver(reason) => format!("ends: {}", reason.name()),
            LineEnd::Cycle => "then repeats".to_string(),
            LineEnd::Truncated => "cut".to_string(),
        }
    );
    out!(
        "{}: {} nodes in {:.2} s",
        match analysis.source {
            Source::Tables => "table lookups",
            Source::Search => "search above the tables",
        },
        analysis.nodes,
        analysis.elapsed.as_secs_f64()
    );
    Ok(analysis.exact)
}
