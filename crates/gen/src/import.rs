//! Tables from values another program computed: the build pipeline with
//! each missing level read from a [`LevelSource`] instead of solved.
//!
//! Everything else is the build's: present levels reused, the directory
//! locked, lower levels held, each level stored in the encoding asked for
//! and written atomically. So an imported level is the file a build of the
//! same values writes, byte for byte, and a killed import resumes at the
//! level it was reading.

use mancala_core::{LevelIndex, Position, Rules, MAX_PITS};
use mancala_format::{Even, Levels};
use rayon::prelude::*;

use crate::error::BuildError;
use crate::pipeline::{build_kind, prepare, BuildObserver, BuildOptions, LevelReport, LevelSolver};
use crate::solve::Solution;
use crate::strategy::LevelJob;

/// Where an import's levels come from.
pub trait LevelSource: Sync {
    /// The even values of `job`'s level, one per position in our index
    /// order, with the lower levels solved in `job.lower`. A source reports
    /// `job.level`'s positions as they are read through `job.progress`
    /// (two units a position in all) and stops with
    /// [`BuildError::Interrupted`] when `job.interrupt` is set.
    fn values(&self, job: &LevelJob<Even>) -> Result<Vec<i8>, BuildError>;
}

/// Writes the even tables `options` asks for (its `cycles` is ignored),
/// each level not already present read from `source`.
pub fn import(
    options: &BuildOptions,
    source: &dyn LevelSource,
    observer: &dyn BuildObserver,
) -> Result<Vec<LevelReport>, BuildError> {
    let options = &BuildOptions {
        cycles: mancala_core::Cycles::Even,
        ..options.clone()
    };
    let dir = prepare(options)?;
    build_kind::<Even>(
        options,
        &dir,
        observer,
        &LevelSolver::reading_lower(&|job| {
            let values = source.values(job)?;
            let exit_best = job
                .mark_exits
                .then(|| exit_best_marks(job.rules, job.level, &values, job.lower));
            Ok(Solution {
                symbols: values,
                mapped: None,
                exit_best,
            })
        }),
    )
}

/// Per position of level `n`, whether its value is its best restoring
/// exit's (a move that leaves the level without an extra turn) or its
/// terminal value: the marks the strategies leave in
/// [`Solution::exit_best`], found again from the values.
pub fn exit_best_marks(rules: &Rules, n: u32, values: &[i8], lower: &Levels<Even>) -> Vec<bool> {
    const CHUNK: usize = 1 << 14;
    let index = LevelIndex::new(rules.pits(), n);
    values
        .par_chunks(CHUNK)
        .enumerate()
        .flat_map_iter(|(chunk, values)| {
            let mut marks = Vec::with_capacity(values.len());
            let mut batch = Vec::with_capacity(BATCH);
            let positions = index.positions_from((chunk * CHUNK) as u64);
            for (pos, &value) in positions.zip(values) {
                batch.push((Exits::locate(rules, &pos, lower), value));
                if batch.len() == BATCH {
                    marks.extend(batch.drain(..).map(|(e, v)| e.best(lower) == v as i32));
                }
            }
            marks.extend(batch.drain(..).map(|(e, v)| e.best(lower) == v as i32));
            marks
        })
        .collect()
}

/// Positions whose exits are located (and their entries prefetched) before
/// any is read, so that the misses of their lookups overlap.
const BATCH: usize = 16;

/// A position's restoring exits: each one's gain and its child's level and
/// rank; or its terminal value.
struct Exits {
    terminal: Option<i32>,
    exits: [(u8, u32, u64); MAX_PITS],
    count: usize,
}

impl Exits {
    fn locate(rules: &Rules, pos: &Position, lower: &Levels<Even>) -> Exits {
        let mut exits = Exits {
            terminal: None,
            exits: [(0, 0, 0); MAX_PITS],
            count: 0,
        };
        exits.terminal = rules.for_each_move(pos, |m| {
            if m.leaves_level() && !m.extra_turn {
                let level = m.child.stones();
                let at = lower.locate_prefetched(level, &m.child);
                exits.exits[exits.count] = (m.gain, level, at);
                exits.count += 1;
            }
        });
        exits
    }

    /// The best exit's value (`i32::MIN` if none), or the terminal value.
    fn best(&self, lower: &Levels<Even>) -> i32 {
        self.terminal.unwrap_or_else(|| {
            self.exits[..self.count]
                .iter()
                .map(|&(gain, level, at)| gain as i32 - lower.entry_at(level, at) as i32)
                .max()
                .unwrap_or(i32::MIN)
        })
    }
}
