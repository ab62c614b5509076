//! Typed errors of the domain: text that is not a position, a rule set
//! that does not exist, a move that cannot be played.
//!
//! Every variant carries the facts of the failure as fields, so a caller can
//! react to it without parsing a message; the messages name the problem the
//! way a user would fix it.

use std::fmt;

use crate::position::{Position, MAX_PITS};

/// Errors of the domain crate.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Text or counts that are not a position of the rule set.
    #[error("bad position: {0}")]
    Notation(#[from] NotationError),
    /// A rule set, or a name of one, that does not exist.
    #[error("invalid rules: {0}")]
    Rules(#[from] RulesError),
    /// A move or a side that cannot be played or read.
    #[error("{0}")]
    Game(#[from] GameError),
}

/// Result with the domain's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One of the two rows of a position, as notation names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// The row of the player to move (written first).
    Mover,
    /// The other row.
    Opponent,
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Row::Mover => "mover's",
            Row::Opponent => "opponent's",
        })
    }
}

/// Why a text or a list of counts is not a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    /// Not two rows separated by one slash.
    #[error("'{text}': expected two rows separated by one '/', e.g. {}", Position::start((*pits).clamp(1, MAX_PITS), 4).expect("a start position"))]
    Rows {
        /// The text given.
        text: String,
        /// Pits per side expected.
        pits: usize,
    },
    /// A row with the wrong number of pits.
    #[error("'{text}': the {row} row has {found} {}, expected {expected}", if *found == 1 { "pit" } else { "pits" })]
    PitCount {
        /// The text given.
        text: String,
        /// The row at fault.
        row: Row,
        /// Pits found in it.
        found: usize,
        /// Pits per side expected.
        expected: usize,
    },
    /// Two commas with nothing between them.
    #[error("'{text}': the {row} row has an empty count")]
    EmptyCount {
        /// The text given.
        text: String,
        /// The row at fault.
        row: Row,
    },
    /// A field that is not a non-negative number.
    #[error("'{text}': '{field}' in the {row} row is not a stone count")]
    NotACount {
        /// The text given.
        text: String,
        /// The row at fault.
        row: Row,
        /// The field that is not a count.
        field: String,
    },
    /// More stones than a board can hold.
    #[error("the board holds {stones} stones; at most {max} are supported")]
    TooManyStones {
        /// Stones given.
        stones: u64,
        /// The most a board holds.
        max: u32,
    },
    /// A pit count per side outside `1..=MAX_PITS`.
    #[error("pits per side must be 1..={MAX_PITS}, got {pits}")]
    Pits {
        /// Pits per side given.
        pits: usize,
    },
    /// A list of counts of the wrong length.
    #[error("expected {} pit counts ({pits} per side), got {found}", 2 * pits)]
    Counts {
        /// Pits per side.
        pits: usize,
        /// Counts given.
        found: usize,
    },
    /// A position of another board size than the rule set's.
    #[error("{position} has {} pits per side, the {what} have {expected}", position.pits())]
    WrongPits {
        /// The position.
        position: Position,
        /// Pits per side of the rules or tables asked.
        expected: usize,
        /// `rules` or `tables`: what the position was given to.
        what: &'static str,
    },
}

/// Why a rule set cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// A rule-set name that is not one of the four.
    #[error("unknown rule set '{0}' (expected oware, awari, wari or kalah)")]
    UnknownVariant(String),
    /// A pit count per side outside `1..=MAX_PITS`.
    #[error("pits per side must be 1..={MAX_PITS}, got {0}")]
    Pits(usize),
    /// A directory or file name that is not a rule-set id.
    #[error("'{0}' is not a rule-set name such as oware-6 or kalah-4-noempty")]
    UnknownId(String),
    /// A cycle convention that is not `even` or `forced`.
    #[error("unknown cycle convention '{0}' (expected even or forced)")]
    UnknownCycles(String),
}

/// Why a move or a side cannot be played or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The game has ended: no move can be played.
    #[error("the game is over")]
    Over,
    /// The pit is empty, off the row, or its move is not allowed.
    #[error("{} is not a legal move in {position}", crate::pit_letter((*pit).min(25)))]
    Illegal {
        /// The pit asked for (`0` = `a`).
        pit: usize,
        /// The position it was asked in.
        position: Position,
    },
    /// Text that is not a pit letter of the mover's row.
    #[error("'{text}' is not a move: expected a pit letter a..{}", crate::pit_letter(pits.saturating_sub(1)))]
    NotAMove {
        /// The text given.
        text: String,
        /// Pits per side.
        pits: usize,
    },
    /// Text that names no player.
    #[error("unknown side '{0}' (expected south or north)")]
    UnknownSide(String),
}

/// Characters of a user's input that an error shows, at most.
pub(crate) const ECHOED_CHARS: usize = 60;

/// What an error shows of a user's input: `text`, or its first
/// 60 characters and an ellipsis, so that a huge input never
/// comes back in its error (twice, in a line and an HTTP body); control
/// characters escaped (`\n`), so that an error stays one line.
pub fn echoed(text: &str) -> std::borrow::Cow<'_, str> {
    let (shown, cut) = match text.char_indices().nth(ECHOED_CHARS) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    };
    if !cut && !shown.contains(char::is_control) {
        return text.into();
    }
    let mut echo = String::with_capacity(shown.len() + 3);
    for c in shown.chars() {
        if c.is_control() {
            echo.extend(c.escape_default());
        } else {
            echo.push(c);
        }
    }
    if cut {
        echo.push('…');
    }
    echo.into()
}
