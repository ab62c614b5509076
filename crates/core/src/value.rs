//! What tables store and probes answer: values, forced bounds and their
//! verdicts (`docs/RULES.md`, "The value" and "Two kinds of table").

use std::fmt;

use crate::error::{Result, RulesError};
use crate::position::pit_letter;
use crate::rules::Move;

/// The most stones a level may have: a level's values lie in `−n..=n`, and
/// tables store each as one signed byte.
pub const MAX_LEVEL: u32 = 127;

/// Which kind of table: how endless play is dealt with (`--cycles`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cycles {
    /// One value per position, endless play an even split (`--cycles even`).
    #[default]
    Even,
    /// What each side can be sure to win without relying on any repetition,
    /// two numbers per position (`--cycles forced`).
    Forced,
}

impl Cycles {
    /// The name in file headers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Cycles::Even => "even",
            Cycles::Forced => "forced",
        }
    }

    /// Parses a name written by [`Cycles::name`].
    pub fn from_name(name: &str) -> Result<Cycles> {
        match name {
            "even" => Ok(Cycles::Even),
            "forced" => Ok(Cycles::Forced),
            _ => Err(RulesError::UnknownCycles(name.to_string()).into()),
        }
    }

    /// What a table of this kind holds, for messages: `even-split values`
    /// or `forced bounds`.
    pub fn describe(self) -> &'static str {
        match self {
            Cycles::Even => "even-split values",
            Cycles::Forced => "forced bounds",
        }
    }
}

impl fmt::Display for Cycles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The value of one legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The pit the move empties (`0` = `a`).
    pub pit: u8,
    /// The move's value for the mover: `gain − value(child)`, or `gain +
    /// value(child)` after a Kalah extra turn.
    pub value: i32,
}

impl MoveValue {
    /// The move's name: the letter of its pit.
    pub fn letter(&self) -> char {
        pit_letter(self.pit as usize)
    }
}

/// What each side can be sure to win of the remaining stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// `forced_mover`: stones the player to move can be sure to win.
    pub mover: u8,
    /// `forced_opponent`: stones the opponent can be sure to win.
    pub opponent: u8,
}

/// `mover/opponent`, as queries print it.
impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.mover, self.opponent)
    }
}

/// The outcome of a game given the stones already captured and the bounds
/// of the remaining ones (see [`Bounds::verdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The mover can be sure of more than half of all stones.
    Win,
    /// The opponent can be sure of more than half of all stones.
    Loss,
    /// Each side can be sure of exactly half.
    Draw,
    /// Neither: the result depends on the history (repetitions).
    Undecided,
}

impl Verdict {
    /// `win`, `loss`, `draw` or `undecided`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Win => "win",
            Verdict::Loss => "loss",
            Verdict::Draw => "draw",
            Verdict::Undecided => "undecided",
        }
    }
}

impl Bounds {
    /// A terminal position of `n` stones with value `value`: the mover gets
    /// `(n + value) / 2`, the opponent `(n − value) / 2`.
    pub fn terminal(n: u32, value: i32) -> Bounds {
        let n = n as i32;
        debug_assert!((n + value) % 2 == 0 && value.abs() <= n);
        Bounds {
            mover: ((n + value) / 2) as u8,
            opponent: ((n - value) / 2) as u8,
        }
    }

    /// What playing `m` guarantees each side of the parent's stones, given
    /// the child's bounds: `gain + forced_opponent(child)` and
    /// `forced_mover(child)`, or after an extra turn `gain +
    /// forced_mover(child)` and `forced_opponent(child)`.
    #[inline]
    pub fn after_move(m: &Move, child: Bounds) -> Bounds {
        if m.extra_turn {
            Bounds {
                mover: m.gain + child.mover,
                opponent: child.opponent,
            }
        } else {
            Bounds {
                mover: m.gain + child.opponent,
                opponent: child.mover,
            }
        }
    }

    /// Whether the bounds meet: every one of the `n` stones is accounted
    /// for, so the outcome does not depend on history.
    pub fn exact(&self, n: u32) -> bool {
        self.mover as u32 + self.opponent as u32 == n
    }

    /// The verdict with `captured = (by the mover, by the opponent)` stones
    /// already off the board and `n` on it. With `T` the total, the mover
    /// wins if `captured_mover + forced_mover > T/2`, loses if
    /// `captured_opponent + forced_opponent > T/2`, draws if both sides can
    /// force exactly `T/2`, and otherwise the result is undecided: it
    /// depends on the history.
    pub fn verdict(&self, n: u32, captured: (u32, u32)) -> Verdict {
        let total = captured.0 as u64 + captured.1 as u64 + n as u64;
        let mover = 2 * (captured.0 as u64 + self.mover as u64);
        let opponent = 2 * (captured.1 as u64 + self.opponent as u64);
        if mover > total {
            Verdict::Win
        } else if opponent > total {
            Verdict::Loss
        } else if mover == total && opponent == total {
            Verdict::Draw
        } else {
            Verdict::Undecided
        }
    }
}

/// The forced bounds of one legal move (see [`Bounds::after_move`]): what
/// each side can be sure to win of the position's remaining stones if the
/// mover plays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveBounds {
    /// The pit the move empties (`0` = `a`).
    pub pit: u8,
    /// The bounds after the move, in the position's terms.
    pub bounds: Bounds,
}

impl MoveBounds {
    /// The move's name: the letter of its pit.
    pub fn letter(&self) -> char {
        pit_letter(self.pit as usize)
    }
}
