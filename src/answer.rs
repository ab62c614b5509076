//! The answer path of `query` and `serve`: text → position → probe →
//! answer, one path for both, in three printed forms (board picture, one
//! line, JSON: [`crate::json`]).

use std::fmt::Write as _;
use std::path::Path;

use mancala_core::{push_decimal, Bounds, Move, MoveBounds, MoveValue, Position, Rules};
use mancala_format::FormatError;
use mancala_probe::{conversion_rank, Depth, Even, Forced, Realized, TableKind, Tablebase};
use rayon::prelude::*;

use crate::hint;

/// What the tables say about a position.
pub enum Answer {
    /// Even tables: the value and the value of each move (none: terminal),
    /// with their depths where depth tables are present.
    Value {
        value: i32,
        moves: Vec<MoveValue>,
        depths: Option<Depths>,
    },
    /// Forced tables: the bounds of the position and of each move, and the
    /// stones already captured for the verdicts, with the depths to
    /// conversion of the mover's bound where depth tables are present.
    Forced {
        bounds: Bounds,
        moves: Vec<MoveBounds>,
        captured: (u32, u32),
        depths: Option<Depths>,
    },
}

/// Depths to conversion (`docs/RULES.md`) of a position and of each of its
/// moves, in plies: a move that leaves the level converts at once (1),
/// another takes one more than its child's depth. `None` where there is
/// none (worth 0; under forced bounds, where the mover's bound, or what the
/// move makes sure of, is 0).
pub struct Depths {
    pub position: Option<u16>,
    pub moves: Vec<Option<u16>>,
}

impl Depths {
    /// The depths of `pos` and of its legal moves (in pit order) from the
    /// depth tables `tb`, read with the even tables `values`, which must
    /// hold its level.
    pub fn of(
        tb: &Tablebase<Depth>,
        values: &Tablebase<Even>,
        pos: &Position,
    ) -> mancala_probe::Result<Depths> {
        Depths::probed(values.rules(), pos, tb.depth(values, pos)?, |m| {
            tb.move_depth(values, m)
        })
    }

    /// [`Depths::of`] from the depth tables of forced bounds `tb`, read
    /// with the forced tables `bounds`: the mover's, for his bound and for
    /// what each move makes sure of.
    pub fn of_forced(
        tb: &Tablebase<Depth<Forced>>,
        bounds: &Tablebase<Forced>,
        pos: &Position,
    ) -> mancala_probe::Result<Depths> {
        Depths::probed(bounds.rules(), pos, tb.depth(bounds, pos)?, |m| {
            tb.move_depth(bounds, m)
        })
    }

    /// The depths of `pos`, whose own is `position`, with each legal
    /// move's (in pit order) from `move_depth`.
    fn probed(
        rules: &Rules,
        pos: &Position,
        position: Option<u16>,
        mut move_depth: impl FnMut(&Move) -> mancala_probe::Result<Option<u16>>,
    ) -> mancala_probe::Result<Depths> {
        let mut moves = Vec::new();
        let mut found = Ok(());
        rules.for_each_move(pos, |m| match move_depth(m) {
            Ok(depth) => moves.push(depth),
            Err(e) => found = Err(e),
        });
        found?;
        Ok(Depths { position, moves })
    }

    /// How move `k`'s depth is shown beside it: ` (n)`, or nothing.
    fn of_move(depths: Option<&Depths>, k: usize) -> String {
        depths
            .and_then(|d| d.moves[k])
            .map_or(String::new(), |plies| format!(" ({plies})"))
    }
}

/// One answered position.
pub struct Analysed {
    pub rules: Rules,
    pub position: Position,
    pub answer: Answer,
}

/// A position that got no answer: what kind of failure (the names the
/// server's error objects carry), its one-line message, and for the
/// command line what to run about it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: &'static str,
    pub message: String,
    /// The `build` command or the flag that would answer, or why no build
    /// can: advice for the command line, which the server's clients cannot
    /// take.
    pub hint: Option<String>,
}

impl Failure {
    /// A position the rules reject: bad notation, a rule set that does not
    /// exist, an illegal move.
    pub fn of_rules(e: &mancala_core::Error) -> Failure {
        let kind = match e {
            mancala_core::Error::Rules(_) => "invalid_rules",
            mancala_core::Error::Notation(_) | mancala_core::Error::Game(_) => "notation",
        };
        Failure {
            kind,
            message: e.to_string(),
            hint: None,
        }
    }

    /// A position the tables cannot answer.
    pub fn of_probe(e: &mancala_probe::Error) -> Failure {
        let kind = match e {
            mancala_probe::Error::Notation(_) => "notation",
            mancala_probe::Error::OutOfRange { .. } => "out_of_range",
            mancala_probe::Error::Table { source, .. } => Failure::of_format(source).kind,
        };
        Failure {
            kind,
            message: e.to_string(),
            hint: hint::hint(e),
        }
    }

    /// A table file or directory that cannot be read.
    pub fn of_format(e: &FormatError) -> Failure {
        let kind = match e {
            FormatError::Missing { .. } => "missing",
            FormatError::Io { .. } | FormatError::NotRegularFile { .. } => "io",
            _ => "corrupted",
        };
        Failure {
            kind,
            message: e.to_string(),
            hint: hint::flag_hint(e),
        }
    }

    /// The message and the hint, for the command line.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{}; {hint}", self.message),
            None => self.message.clone(),
        }
    }
}

/// A kind of table as the answer path reads it.
pub trait Answering: Realized {
    /// The answers for covered positions, in order.
    fn answers(
        tb: &Tablebase<Self>,
        positions: &[Position],
        captured: (u32, u32),
    ) -> mancala_probe::Result<Vec<Answer>>;

    /// The answer for one covered position, through the block cache.
    fn answer(
        tb: &Tablebase<Self>,
        position: &Position,
        captured: (u32, u32),
    ) -> mancala_probe::Result<Answer>;

    /// The depths of `pos` and of its moves from the depth tables `depths`
    /// of these tables, `tb`.
    fn depths(
        depths: &Tablebase<Depth<Self>>,
        tb: &Tablebase<Self>,
        pos: &Position,
    ) -> mancala_probe::Result<Depths>;
}

impl Answering for Even {
    fn depths(
        depths: &Tablebase<Depth>,
        tb: &Tablebase<Even>,
        pos: &Position,
    ) -> mancala_probe::Result<Depths> {
        Depths::of(depths, tb, pos)
    }

    fn answers(
        tb: &Tablebase<Even>,
        positions: &[Position],
        _: (u32, u32),
    ) -> mancala_probe::Result<Vec<Answer>> {
        Ok(tb
            .values_and_moves(positions)?
            .into_iter()
            .map(|(value, moves)| Answer::Value {
                value,
                moves,
                depths: None,
            })
            .collect())
    }

    fn answer(
        tb: &Tablebase<Even>,
        position: &Position,
        _: (u32, u32),
    ) -> mancala_probe::Result<Answer> {
        Ok(Answer::Value {
            value: tb.value(position)?,
            moves: tb.move_values(position)?,
            depths: None,
        })
    }
}

impl Answering for Forced {
    fn depths(
        depths: &Tablebase<Depth<Forced>>,
        tb: &Tablebase<Forced>,
        pos: &Position,
    ) -> mancala_probe::Result<Depths> {
        Depths::of_forced(depths, tb, pos)
    }

    fn answers(
        tb: &Tablebase<Forced>,
        positions: &[Position],
        captured: (u32, u32),
    ) -> mancala_probe::Result<Vec<Answer>> {
        Ok(tb
            .bounds_and_moves(positions)?
            .into_iter()
            .map(|(bounds, moves)| Answer::Forced {
                bounds,
                moves,
                captured,
                depths: None,
            })
            .collect())
    }

    fn answer(
        tb: &Tablebase<Forced>,
        position: &Position,
        captured: (u32, u32),
    ) -> mancala_probe::Result<Answer> {
        let mut answers = Forced::answers(tb, std::slice::from_ref(position), captured)?;
        Ok(answers.pop().expect("one answer per position"))
    }
}

/// The position `text` notes, if the tables cover it.
fn covered<K: TableKind>(tb: &Tablebase<K>, text: &str) -> Result<Position, Failure> {
    let pos = Position::parse(tb.rules().pits(), text).map_err(|e| Failure::of_rules(&e))?;
    tb.check(&pos).map_err(|e| Failure::of_probe(&e))?;
    Ok(pos)
}

/// Answers one position through the block cache (the server's single
/// lookups).
pub fn answer_one<K: Answering>(
    tb: &Tablebase<K>,
    depths: Option<&Tablebase<Depth<K>>>,
    captured: (u32, u32),
    text: &str,
) -> Result<Analysed, Failure> {
    let position = covered(tb, text)?;
    let answer = K::answer(tb, &position, captured).map_err(|e| Failure::of_probe(&e))?;
    let mut analysed = Analysed {
        rules: *tb.rules(),
        position,
        answer,
    };
    if let Some(depths) = depths {
        analysed.add_depths(depths, tb)?;
    }
    Ok(analysed)
}

/// Answers many positions with batched probes (each table block is read
/// once per batch, however many positions and children fall in it): a
/// failure in place of each position that has no answer.
pub fn answer_many<K: Answering>(
    tb: &Tablebase<K>,
    depths: Option<&Tablebase<Depth<K>>>,
    captured: (u32, u32),
    texts: &[&str],
) -> Vec<Result<Analysed, Failure>> {
    let checked: Vec<Result<Position, Failure>> =
        texts.par_iter().map(|text| covered(tb, text)).collect();
    let positions: Vec<Position> = checked
        .iter()
        .filter_map(|p| p.as_ref().ok().copied())
        .collect();
    // Every position is covered now; what can still fail is a damaged table.
    // A batch fails as a whole, so then each position is asked on its own:
    // only the positions that need a damaged block fail.
    let answers: Vec<Result<Answer, Failure>> = match K::answers(tb, &positions, captured) {
        Ok(answers) => answers.into_iter().map(Ok).collect(),
        Err(_) => positions
            .par_iter()
            .map(|pos| K::answer(tb, pos, captured).map_err(|e| Failure::of_probe(&e)))
            .collect(),
    };
    let mut answers = answers.into_iter();
    let mut analysed: Vec<Result<Analysed, Failure>> = checked
        .into_iter()
        .map(|position| {
            let position = position?;
            let answer = answers.next().expect("one answer per position")?;
            Ok(Analysed {
                rules: *tb.rules(),
                position,
                answer,
            })
        })
        .collect();
    if let Some(depths) = depths {
        analysed.par_iter_mut().for_each(|result| {
            if let Ok(a) = result {
                if let Err(failure) = a.add_depths(depths, tb) {
                    *result = Err(failure);
                }
            }
        });
    }
    analysed
}

/// The depth tables beside the tables of kind `K` of `rules` under `root`,
/// if any level has one.
pub fn open_depths<K: Realized>(
    root: &Path,
    rules: Rules,
    cache_bytes: usize,
) -> Option<Tablebase<Depth<K>>> {
    Tablebase::<Depth<K>>::open_with_cache(root, rules, cache_bytes)
        .ok()
        .filter(|tb| !tb.levels().is_empty())
}

impl Analysed {
    /// A position with no legal move is terminal.
    pub fn terminal(&self) -> bool {
        match &self.answer {
            Answer::Value { moves, .. } => moves.is_empty(),
            Answer::Forced { moves, .. } => moves.is_empty(),
        }
    }

    /// Adds the depths of the position and its moves from `tb`, read with
    /// the tables `values` it is the depth tables of, if it holds the
    /// position's level.
    pub fn add_depths<K: Answering>(
        &mut self,
        tb: &Tablebase<Depth<K>>,
        values: &Tablebase<K>,
    ) -> Result<(), Failure> {
        if !tb.has_level(self.position.stones()) {
            return Ok(());
        }
        let found = K::depths(tb, values, &self.position).map_err(|e| Failure::of_probe(&e))?;
        match &mut self.answer {
            Answer::Value { depths, .. } | Answer::Forced { depths, .. } => *depths = Some(found),
        }
        Ok(())
    }

    /// The best moves' letters, the one to play first.
    ///
    /// Even tables: the moves that keep the value; with depths, the side
    /// ahead's nearest conversion first, the other side's farthest first,
    /// so that following the first always realizes the value.
    ///
    /// Forced tables: the moves that keep the mover's bound; with depths
    /// and a bound other than 0, the nearest conversion first, so that
    /// following the first always realizes it; then (and without depths)
    /// the moves that make the opponent sure of less first.
    pub fn best(&self) -> Vec<char> {
        match &self.answer {
            Answer::Value {
                value,
                moves,
                depths,
            } => {
                let mut best: Vec<(usize, &MoveValue)> = moves
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| m.value == *value)
                    .collect();
                if let Some(depths) = depths.as_ref().filter(|_| *value != 0) {
                    // Stable: moves as near (or as far) stay in pit order.
                    best.sort_by_key(|&(k, _)| conversion_rank(*value, depths.moves[k]));
                }
                best.into_iter().map(|(_, m)| m.letter()).collect()
            }
            Answer::Forced {
                bounds,
                moves,
                depths,
                ..
            } => {
                let mut best: Vec<(usize, &MoveBounds)> = moves
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| m.bounds.mover == bounds.mover)
                    .collect();
                let depths = depths.as_ref().filter(|_| bounds.mover > 0);
                best.sort_by_key(|&(k, m)| {
                    let rank = depths.map_or(0, |d| conversion_rank(1, d.moves[k]));
                    (rank, m.bounds.opponent)
                });
                best.into_iter().map(|(_, m)| m.letter()).collect()
            }
        }
    }

    /// Appends the line for batches: position, value, then each move as
    /// `letter:value` with `*` on the best ones (`-` when the game is over);
    /// for forced tables `mover/opponent verdict`, each move as
    /// `letter:mover/opponent:verdict`.
    pub fn write_line(&self, out: &mut String) {
        self.position.write_notation(out);
        out.push(' ');
        match &self.answer {
            // By hand: `write!` would be a third of a batch's time.
            Answer::Value { value, moves, .. } => {
                push_signed(out, *value);
                for m in moves {
                    out.push(' ');
                    out.push(m.letter());
                    out.push(':');
                    push_signed(out, m.value);
                    out.push_str(best_mark(m.value == *value));
                }
            }
            Answer::Forced {
                bounds,
                moves,
                captured,
                ..
            } => {
                // Writing into a `String` cannot fail.
                let n = self.position.stones();
                let verdict = |b: &Bounds| b.verdict(n, *captured).name();
                let _ = write!(out, "{bounds} {}", verdict(bounds));
                for m in moves {
                    let b = &m.bounds;
                    let _ = write!(out, " {}:{b}:{}", m.letter(), verdict(b));
                }
            }
        }
        if self.terminal() {
            out.push_str(" -");
        }
    }

    /// The board picture, the value and every move, for a person.
    pub fn to_text(&self) -> String {
        let n = self.position.stones();
        let mut text = format!(
            "{}  ({}, {n} stones)\n{}\n",
            self.position,
            self.rules,
            self.position.picture()
        );
        let moves: Vec<String> = match &self.answer {
            Answer::Value {
                value,
                moves,
                depths,
            } => {
                text += &match value {
                    0 => "value: 0 (an even split of the remaining stones)\n".to_string(),
                    v => format!(
                        "value: {v:+} (the mover {} by {} of the remaining stones)\n",
                        if *v > 0 { "wins" } else { "loses" },
                        v.abs()
                    ),
                };
                if let Some(plies) = depths.as_ref().and_then(|d| d.position) {
                    text += &format!("converts in {} (depth to conversion)\n", in_plies(plies));
                }
                // With depths, the first best move is the one that converts.
                let first_best = depths.as_ref().and_then(|_| self.best().first().copied());
                moves
                    .iter()
                    .enumerate()
                    .map(|(k, m)| {
                        let depth = Depths::of_move(depths.as_ref(), k);
                        let mark = move_mark(Some(m.letter()) == first_best, m.value == *value);
                        format!("{} {:+}{depth}{mark}", m.letter(), m.value)
                    })
                    .collect()
            }
            Answer::Forced {
                bounds,
                moves,
                captured,
                depths,
            } => {
                text += &format!(
                    "forced: the mover can be sure of {} and the opponent of {} of the {n} remaining stones\n\
                     verdict with {},{} captured: {}\n",
                    bounds.mover,
                    bounds.opponent,
                    captured.0,
                    captured.1,
                    bounds.verdict(n, *captured).name()
                );
                if let Some(plies) = depths.as_ref().and_then(|d| d.position) {
                    text += &format!("the mover realizes his bound in {}\n", in_plies(plies));
                }
                let first_best = self.best().first().copied();
                moves
                    .iter()
                    .enumerate()
                    .map(|(k, m)| {
                        let b = m.bounds;
                        let verdict = b.verdict(n, *captured).name();
                        let depth = Depths::of_move(depths.as_ref(), k);
                        let first = Some(m.letter()) == first_best;
                        let mark = move_mark(first, b.mover == bounds.mover);
                        format!("{} {b} {verdict}{depth}{mark}", m.letter())
                    })
                    .collect()
            }
        };
        if self.terminal() {
            text += "game over: no legal move";
        } else if let Answer::Value {
            depths: Some(_), ..
        } = self.answer
        {
            text += &format!(
                "moves: {}   (* = keeps the value, ** = the one to play; (n) = plies to conversion)",
                moves.join("  ")
            );
        } else if matches!(self.answer, Answer::Value { .. }) {
            text += &format!("moves: {}   (* = best)", moves.join("  "));
        } else {
            let depths = match self.answer {
                Answer::Forced {
                    depths: Some(_), ..
                } => "; (n) = plies to realize what the move makes sure of",
                _ => "",
            };
            text += &format!(
                "moves (mover/opponent): {}   (* = keeps the mover's bound, ** = the one to play{depths})",
                moves.join("  ")
            );
        }
        text
    }
}

/// Appends a value with its sign, as `{:+}` does (`+0` for zero).
fn push_signed(out: &mut String, value: i32) {
    out.push(if value < 0 { '-' } else { '+' });
    push_decimal(out, value.unsigned_abs());
}

/// `n ply` or `n plies`.
fn in_plies(plies: u16) -> String {
    let unit = if plies == 1 { "ply" } else { "plies" };
    format!("{plies} {unit}")
}

/// A move's mark in the board picture: `**` on the one to play, `*` on
/// the others that keep the value (or the mover's bound).
fn move_mark(to_play: bool, keeps: bool) -> &'static str {
    if to_play {
        "**"
    } else {
        best_mark(keeps)
    }
}

/// The best-move mark.
fn best_mark(is_best: bool) -> &'static str {
    if is_best {
        "*"
    } else {
        ""
    }
}
