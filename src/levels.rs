//! What a table set's headers say, level by level: the numbers `info`
//! lists, `info --plot` draws and the server's levels endpoint answers
//! (which the web board's Tables view draws), computed in one place so that
//! the three cannot disagree.
//!
//! Everything here comes from a file's header (its size and its value
//! histogram), so a level is summed up without decoding a block.

use mancala_core::{Cycles, Rules};
use mancala_format::TableFile;
use serde_json::{json, Value as Json};

/// One level's table file, as its header gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelSummary {
    /// Stones on the board.
    pub level: u32,
    /// Positions in the level.
    pub positions: u64,
    /// Size of the file.
    pub bytes: u64,
    /// The header's histogram: `(value, positions)` of an even level, the
    /// stored symbols of a forced one (`docs/FORMAT.md`).
    pub histogram: Vec<(i8, u64)>,
    /// Forced tables: positions whose bounds meet.
    pub exact: Option<u64>,
}

/// The shares of an even level's positions won, drawn and lost for the
/// mover; they add up to 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shares {
    /// Value above 0.
    pub won: f64,
    /// Value 0.
    pub drawn: f64,
    /// Value below 0.
    pub lost: f64,
}

impl LevelSummary {
    /// The summary of an open table file.
    pub fn of(table: &TableFile) -> LevelSummary {
        let header = table.header();
        LevelSummary {
            level: header.level,
            positions: header.positions,
            bytes: table.bytes(),
            histogram: header.histogram.clone(),
            exact: header.exact_positions(),
        }
    }

    /// File bits per position.
    pub fn bits_per_position(&self) -> f64 {
        8.0 * self.bytes as f64 / self.positions as f64
    }

    /// Forced tables: the share of positions whose bounds meet.
    pub fn exact_share(&self) -> Option<f64> {
        self.exact.map(|e| e as f64 / self.positions as f64)
    }

    /// Even tables: the shares won, drawn and lost for the mover. A forced
    /// table's histogram mixes the mover's bound with the gap, so it has
    /// none.
    pub fn shares(&self) -> Option<Shares> {
        self.exact.is_none().then(|| {
            let share = |keep: fn(i8) -> bool| {
                let count: u64 = self
                    .histogram
                    .iter()
                    .filter(|&&(v, _)| keep(v))
                    .map(|&(_, c)| c)
                    .sum();
                count as f64 / self.positions as f64
            };
            Shares {
                won: share(|v| v > 0),
                drawn: share(|v| v == 0),
                lost: share(|v| v < 0),
            }
        })
    }

    /// Even tables: the mean value of the level's positions for the mover,
    /// in stones.
    pub fn mean_value(&self) -> Option<f64> {
        self.exact.is_none().then(|| {
            let total: i64 = self
                .histogram
                .iter()
                .map(|&(v, c)| i64::from(v) * c as i64)
                .sum();
            total as f64 / self.positions as f64
        })
    }

    /// The histogram as a JSON object, value → positions, as `info --json`
    /// prints it.
    pub fn histogram_json(&self) -> serde_json::Map<String, Json> {
        self.histogram
            .iter()
            .map(|(v, c)| (v.to_string(), json!(c)))
            .collect()
    }

    /// The level as the server's levels endpoint answers it: sizes, the
    /// histogram and the shares the charts draw.
    pub fn json(&self) -> Json {
        let shares = self.shares();
        json!({
            "stones": self.level,
            "positions": self.positions,
            "bytes": self.bytes,
            "bits_per_position": self.bits_per_position(),
            "histogram": self.histogram_json(),
            "won": shares.map(|s| s.won),
            "drawn": shares.map(|s| s.drawn),
            "lost": shares.map(|s| s.lost),
            "mean_value": self.mean_value(),
            "exact": self.exact,
            "exact_share": self.exact_share(),
        })
    }
}

/// The levels of one rule set and kind of table, ascending.
#[derive(Clone, Debug)]
pub struct TableSet {
    /// The rule set.
    pub rules: Rules,
    /// The kind of table.
    pub cycles: Cycles,
    /// Its levels, ascending (gaps and all: `info` lists every file).
    pub levels: Vec<LevelSummary>,
}

/// `3, 5-7` for levels 3, 5, 6, 7.
pub fn level_ranges(levels: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut start = 0;
    for i in 1..=levels.len() {
        if i == levels.len() || levels[i] != levels[i - 1] + 1 {
            parts.push(match i - 1 - start {
                0 => levels[start].to_string(),
                _ => format!("{}-{}", levels[start], levels[i - 1]),
            });
            start = i;
        }
    }
    parts.join(", ")
}
