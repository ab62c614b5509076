//! What a build tells: a report per level ([`LevelReport`]) and progress
//! as it goes ([`BuildObserver`]).

use mancala_core::{Cycles, Progress, Quiet};
use mancala_format::{Header, Table};

use crate::solve::Solve;
use crate::usage::{peak_rss_bytes, Usage};

/// What happened to one level.
#[derive(Clone, Debug)]
pub struct LevelReport {
    /// Stones on the board.
    pub level: u32,
    /// Positions in the level.
    pub positions: u64,
    /// Wall time spent solving and writing (0 when reused).
    pub seconds: f64,
    /// Size of the table file.
    pub bytes: u64,
    /// The kind of table.
    pub cycles: Cycles,
    /// The header's histogram: `(value, count)` over every position of an
    /// even level, the stored symbols of a forced one.
    pub histogram: Vec<(i8, u64)>,
    /// Forced tables: positions whose bounds meet.
    pub exact: Option<u64>,
    /// The file was present and valid, so it was not rebuilt.
    pub reused: bool,
    /// What building the level cost the machine, where the OS tells it
    /// (for a reused level: nothing read or written, and the process's
    /// peak so far).
    pub usage: Usage,
    /// The share of the level's work (0 to 1) that an earlier run had
    /// done when this one went on from its checkpoint: `seconds` and
    /// `usage` then tell this run's part only, so a rate taken from them
    /// would overstate the solver's speed.
    pub resumed: f64,
}

impl LevelReport {
    /// Positions won, drawn and lost for the mover.
    pub fn won_drawn_lost(&self) -> (u64, u64, u64) {
        let sum = |keep: fn(i8) -> bool| {
            self.histogram
                .iter()
                .filter(|(v, _)| keep(*v))
                .map(|(_, c)| c)
                .sum()
        };
        (sum(|v| v > 0), sum(|v| v == 0), sum(|v| v < 0))
    }
}

/// What a build tells as it goes: its progress ([`Progress`]: two units
/// a position of each level built, see [`crate::LevelJob::progress`]) and
/// each level's report when it is done.
pub trait BuildObserver: Progress {
    /// A level is done (built or reused).
    fn level_finished(&self, _report: &LevelReport) {}
}

impl BuildObserver for Quiet {}

pub(crate) fn reused_report<K: Solve>(table: &Table<K>) -> LevelReport {
    let usage = Usage {
        peak_rss_bytes: peak_rss_bytes(),
        ..Usage::default()
    };
    level_report(table.header(), 0.0, table.bytes(), usage, true)
}

/// The report of the level `header` describes, stored in `bytes` after
/// `seconds` of work that cost `usage` (`reused`: none, the file was
/// present).
pub(crate) fn level_report(
    header: &Header,
    seconds: f64,
    bytes: u64,
    usage: Usage,
    reused: bool,
) -> LevelReport {
    LevelReport {
        level: header.level,
        positions: header.positions,
        seconds,
        bytes,
        cycles: header.cycles,
        exact: header.exact_positions(),
        histogram: header.histogram.clone(),
        reused,
        usage,
        resumed: 0.0,
    }
}
