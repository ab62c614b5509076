//! The JSON schema of every answer: `query --json`, `solve --json` and the
//! server's endpoints print these and nothing else, so one position reads
//! the same wherever it is asked.
//!
//! Answers that batches print by the million are typed structs (serialized
//! without building a map); the engine's analyses and game states, printed
//! one at a time, are built as values.

use mancala_core::{pit_letter, Bounds, GameEnd, GameState, Place, Rules, Side, Sowing};
use mancala_engine::{Analysis, Source};
use serde::Serialize;
use serde_json::{json, Value as Json};

use crate::answer::{Analysed, Answer, Failure};

/// An even table's answer for one position.
#[derive(Serialize)]
pub struct ValueJson {
    position: String,
    rules: &'static str,
    pits: usize,
    stones: u32,
    value: i32,
    /// Plies to conversion, `null` where there is none; left out where no
    /// depth table holds the level.
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<Option<u16>>,
    terminal: bool,
    moves: Vec<MoveJson>,
    best: Vec<char>,
}

/// One move in [`ValueJson`].
#[derive(Serialize)]
struct MoveJson {
    #[serde(rename = "move")]
    letter: char,
    value: i32,
    /// As [`ValueJson`]'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<Option<u16>>,
}

/// A forced table's answer for one position.
#[derive(Serialize)]
pub struct ForcedJson {
    position: String,
    rules: &'static str,
    pits: usize,
    stones: u32,
    cycles: &'static str,
    captured: [u32; 2],
    #[serde(flatten)]
    bounds: BoundsJson,
    exact: bool,
    /// Plies within which the mover realizes his bound, `null` where it
    /// is 0; left out where no depth table holds the level.
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<Option<u16>>,
    terminal: bool,
    moves: Vec<ForcedMoveJson>,
    /// The moves that keep the mover's bound, the one to play first.
    best: Vec<char>,
}

/// Forced bounds and their verdict.
#[derive(Serialize)]
struct BoundsJson {
    forced_mover: u8,
    forced_opponent: u8,
    verdict: &'static str,
}

/// One move in [`ForcedJson`].
#[derive(Serialize)]
struct ForcedMoveJson {
    #[serde(rename = "move")]
    letter: char,
    #[serde(flatten)]
    bounds: BoundsJson,
    /// Plies within which the move realizes what it makes sure of for its
    /// mover, `null` where that is 0; left out as [`ForcedJson`]'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<Option<u16>>,
}

/// An error in place of an answer.
#[derive(Serialize)]
pub struct ErrorJson {
    error: String,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    position: Option<String>,
}

/// One answered position, of either kind of table.
#[derive(Serialize)]
#[serde(untagged)]
pub enum PositionJson {
    /// Even tables.
    Value(ValueJson),
    /// Forced tables.
    Forced(ForcedJson),
}

/// A position's answer, or the error in its place.
#[derive(Serialize)]
#[serde(untagged)]
pub enum ResultJson {
    /// The answer.
    Answer(PositionJson),
    /// Why there is none.
    Error(ErrorJson),
}

/// The JSON object of one answered position, as one line.
pub fn analysed(a: &Analysed) -> String {
    serde_json::to_string(&position(a)).expect("plain data serializes")
}

/// The JSON object of a failure, for the position `text` if it was one, as
/// one line.
pub fn failure(failure: &Failure, text: Option<&str>) -> String {
    serde_json::to_string(&error(failure, text)).expect("plain data serializes")
}

/// The error object of a failure, with the start of the input it is about
/// ([`mancala_core::echoed`]): a huge input never comes back whole.
pub fn error(failure: &Failure, text: Option<&str>) -> ErrorJson {
    ErrorJson {
        error: failure.text(),
        kind: failure.kind,
        position: text.map(|text| mancala_core::echoed(text).into_owned()),
    }
}

/// The answer object of one position, or its error object.
pub fn result(analysed: &Result<Analysed, Failure>, text: &str) -> ResultJson {
    match analysed {
        Ok(a) => ResultJson::Answer(position(a)),
        Err(f) => ResultJson::Error(error(f, Some(text))),
    }
}

/// The answer object of one position.
pub fn position(a: &Analysed) -> PositionJson {
    let n = a.position.stones();
    match &a.answer {
        Answer::Value {
            value,
            moves,
            depths,
        } => PositionJson::Value(ValueJson {
            position: a.position.to_string(),
            rules: a.rules.variant().name(),
            pits: a.rules.pits(),
            stones: n,
            value: *value,
            depth: depths.as_ref().map(|d| d.position),
            terminal: a.terminal(),
            moves: moves
                .iter()
                .enumerate()
                .map(|(k, m)| MoveJson {
                    letter: m.letter(),
                    value: m.value,
                    depth: depths.as_ref().map(|d| d.moves[k]),
                })
                .collect(),
            best: a.best(),
        }),
        Answer::Forced {
            bounds,
            moves,
            captured,
            depths,
        } => {
            let bounds_json = |b: &Bounds| BoundsJson {
                forced_mover: b.mover,
                forced_opponent: b.opponent,
                verdict: b.verdict(n, *captured).name(),
            };
            PositionJson::Forced(ForcedJson {
                position: a.position.to_string(),
                rules: a.rules.variant().name(),
                pits: a.rules.pits(),
                stones: n,
                cycles: "forced",
                captured: [captured.0, captured.1],
                bounds: bounds_json(bounds),
                exact: bounds.exact(n),
                depth: depths.as_ref().map(|d| d.position),
                terminal: a.terminal(),
                moves: moves
                    .iter()
                    .enumerate()
                    .map(|(k, m)| ForcedMoveJson {
                        letter: m.letter(),
                        bounds: bounds_json(&m.bounds),
                        depth: depths.as_ref().map(|d| d.moves[k]),
                    })
                    .collect(),
                best: a.best(),
            })
        }
    }
}

/// The engine's analysis of a game state: `to_move`, `value`, `exact`,
/// `final_margin`, `outcome`, `moves` (each with `move`, `value`, `exact`,
/// `final_margin`, `outcome`, `ends_game`), `best`, `pv` (move letters),
/// `pv_sides`, `pv_end`, `source`, `nodes`, `seconds`.
pub fn analysis(a: &Analysis) -> Json {
    let moves: Vec<Json> = a
        .moves
        .iter()
        .map(|m| {
            json!({
                "move": pit_letter(m.pit as usize).to_string(),
                "value": m.value,
                "exact": m.exact,
                "final_margin": m.final_margin,
                "outcome": m.outcome.name(),
                "ends_game": m.ends_game.map(|r| r.name()),
            })
        })
        .collect();
    let letters = |pits: &mut dyn Iterator<Item = u8>| -> Vec<String> {
        pits.map(|p| pit_letter(p as usize).to_string()).collect()
    };
    json!({
        "to_move": a.to_move.name(),
        "value": a.value,
        "exact": a.exact,
        "final_margin": a.final_margin,
        "outcome": a.outcome.name(),
        "moves": moves,
        "best": letters(&mut a.best.iter().copied()),
        "pv": letters(&mut a.pv.iter().map(|&(_, p)| p)),
        "pv_sides": a.pv.iter().map(|(s, _)| s.name()).collect::<Vec<_>>(),
        "pv_end": a.pv_end.name(),
        "converts": a.converts,
        "source": match a.source { Source::Tables => "tables", Source::Search => "search" },
        "nodes": a.nodes,
        "seconds": a.elapsed.as_secs_f64(),
    })
}

/// A game state in the form `POST /v1/analyze` and `/v1/play` read.
pub fn state(state: &GameState) -> Json {
    let history: Vec<Json> = state
        .history
        .iter()
        .map(|(side, pos)| json!({"position": pos.to_string(), "to_move": side.name()}))
        .collect();
    json!({
        "position": state.position.to_string(),
        "to_move": state.to_move.name(),
        "stores": state.stores,
        "history": history,
    })
}

/// How a game ended, or `null` while it goes on.
pub fn end(end: Option<GameEnd>) -> Json {
    match end {
        None => Json::Null,
        Some(end) => json!({
            "reason": end.reason.name(),
            "stores": end.stores,
            "winner": end.winner().map(Side::name),
        }),
    }
}

/// A move's trace for the board: places as `{"side","pit"}` (the pit
/// counted along that side's own row, as in that side's notation) or
/// `{"side","store":true}`.
pub fn sowing(rules: &Rules, mover: Side, sowing: &Sowing) -> Json {
    let p = rules.pits();
    let pit = |i: usize| {
        let side = if i < p { mover } else { mover.other() };
        json!({"side": side.name(), "pit": i % p})
    };
    let path: Vec<Json> = sowing
        .path
        .iter()
        .map(|place| match *place {
            Place::Pit(i) => pit(i),
            Place::Store => json!({"side": mover.name(), "store": true}),
        })
        .collect();
    let captured: Vec<Json> = sowing
        .captured
        .iter()
        .map(|&(i, stones)| {
            let mut place = pit(i);
            place["stones"] = stones.into();
            place
        })
        .collect();
    json!({
        "pit": sowing.pit,
        "path": path,
        "captured": captured,
        "gain": sowing.gain,
        "extra_turn": sowing.extra_turn,
    })
}
