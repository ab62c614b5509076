//! VU files made into our tables: each level's file read once in sequence
//! into our index order, the positions it leaves out given their value by
//! a one-ply look, every value checked against its moves, and the level
//! stored by the build pipeline ([`mancala_gen::import`]).

use std::path::{Path, PathBuf};

use mancala_core::{rank, LevelIndex, Position, Successors, MAX_PITS};
use mancala_format::{prefetch, Even, Levels};
use mancala_gen::{BuildError, BuildObserver, BuildOptions, LevelJob, LevelReport, LevelSource};
use rayon::prelude::*;

use crate::error::VuError;
use crate::files::{rules, LevelFile, PITS};
use crate::godel::{is_numbered, GodelIndex};
use crate::order::{for_each_group, numbered_positions, offsets, STRETCH};

/// The level the VU database skips: no move leaves 47 stones after the
/// start's 48.
const NO_FILE: u32 = 47;

/// Writes our even awari tables for levels `0..=options.max_stones` from
/// the VU files in `source`, as `build` would with `options` (its rule set
/// and kind are awari's even tables whatever it says). Levels already
/// present and valid are kept, so a stopped import resumes; each missing
/// level is read from its `scores.N` file.
pub fn import(
    source: &Path,
    options: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<LevelReport>, VuError> {
    let options = BuildOptions {
        rules: rules(),
        ..options.clone()
    };
    let files = VuFiles {
        dir: source.to_path_buf(),
    };
    Ok(mancala_gen::import(&options, &files, observer)?)
}

/// The VU files of one directory as the source of an import.
struct VuFiles {
    dir: PathBuf,
}

impl LevelSource for VuFiles {
    fn values(&self, job: &LevelJob<Even>) -> Result<Vec<i8>, BuildError> {
        read_level(&self.dir, job).map_err(|e| match e {
            VuError::Build(build) => build,
            other => BuildError::Source(Box::new(other)),
        })
    }
}

/// Level `job.level`'s values in our index order, from its file in `dir`
/// and the levels below.
fn read_level(dir: &Path, job: &LevelJob<Even>) -> Result<Vec<i8>, VuError> {
    let n = job.level;
    if n == NO_FILE {
        return Err(VuError::Level {
            level: n,
            reason:
                "the VU database has no level 47 (no game reaches it): build it to import level 48"
                    .into(),
        });
    }
    let mut file = LevelFile::open(dir, n)?;
    let index = LevelIndex::new(PITS, n);
    let mut values = vec![0i8; index.count() as usize];
    for_each_group(&index, |group, numbered| {
        if job.interrupted() {
            return Err(VuError::Build(BuildError::Interrupted));
        }
        let bytes = file.read(numbered.iter().sum())?;
        let (start, end) = (group.ranks.start as usize, group.ranks.end as usize);
        let out_of_range = values[start..end]
            .par_chunks_mut(STRETCH as usize)
            .zip(group.stretches())
            .zip(numbered)
            .zip(offsets(numbered))
            .filter_map(|(((out, ranks), &count), offset)| {
                let first = ranks.start;
                let bytes = &bytes[offset..offset + count];
                // Numbers fall as ranks rise: the last bad byte is the
                // stretch's first in the file.
                let mut bad = None;
                for (rank, at, pos) in numbered_positions(&index, ranks, count) {
                    let value = bytes[at];
                    if value.unsigned_abs() as u32 > n {
                        bad = Some((group.first_number + (offset + at) as u64, pos, value));
                    }
                    out[(rank - first) as usize] = value;
                }
                bad
            })
            .min_by_key(|(number, _, _)| *number);
        if let Some((number, pos, value)) = out_of_range {
            return Err(VuError::OutOfRange {
                path: file.path.clone(),
                level: n,
                number,
                position: pos.to_string(),
                value,
            });
        }
        (job.progress)(group.positions());
        Ok(())
    })?;
    complete_and_check(&file.path, job, &index, &mut values)?;
    Ok(values)
}

/// Gives the positions the file leaves out the value of their best move,
/// and checks that every other position holds its best move's value.
fn complete_and_check(
    path: &Path,
    job: &LevelJob<Even>,
    index: &LevelIndex,
    values: &mut [i8],
) -> Result<(), VuError> {
    const CHUNK: u64 = 1 << 14;
    let n = job.level;
    let level = &*values;
    let chunks: Vec<Looked> = (0..index.count().div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let first = chunk * CHUNK;
            let ranks = first..(first + CHUNK).min(index.count());
            let mut looked = Looked {
                left_out: Vec::new(),
                contradiction: None,
            };
            let mut batch = Vec::with_capacity(BATCH);
            for (at, pos) in crate::order::positions(index, ranks.clone()) {
                batch.push(Located::new(job, level, at, pos));
                if batch.len() == BATCH {
                    looked.add(job, level, &batch);
                    batch.clear();
                }
            }
            looked.add(job, level, &batch);
            (job.progress)(ranks.end - ranks.start);
            looked
        })
        .collect();
    let first_contradiction = chunks
        .iter()
        .filter_map(|looked| looked.contradiction.as_ref())
        .max_by_key(|c| c.rank);
    if let Some(c) = first_contradiction {
        return Err(VuError::Contradiction {
            path: path.to_path_buf(),
            level: n,
            number: GodelIndex::new(PITS, n)
                .rank(&c.pos)
                .expect("a numbered position"),
            position: c.pos.to_string(),
            stored: c.stored,
            recomputed: c.recomputed,
        });
    }
    for looked in chunks {
        for (at, value) in looked.left_out {
            values[at as usize] = value;
        }
    }
    Ok(())
}

/// What a look at the moves of a piece of a level found.
struct Looked {
    /// The positions the file leaves out, by rank, with their values.
    left_out: Vec<(u64, i8)>,
    /// The numbered position of the highest rank (the lowest number) that
    /// holds another value than its best move's.
    contradiction: Option<Contradiction>,
}

impl Looked {
    /// Adds a batch of positions, in rank order.
    fn add(&mut self, job: &LevelJob<Even>, level: &[i8], batch: &[Located]) {
        for located in batch {
            let best = located.best_move_value(job, level);
            let at = located.rank;
            if !is_numbered(&located.pos) {
                self.left_out.push((at, best));
            } else if best != level[at as usize] {
                self.contradiction = Some(Contradiction {
                    rank: at,
                    pos: located.pos,
                    stored: level[at as usize],
                    recomputed: best,
                });
            }
        }
    }
}

/// A position whose value is not its best move's.
struct Contradiction {
    rank: u64,
    pos: Position,
    stored: i8,
    recomputed: i8,
}

/// Positions whose children are located (and their entries prefetched)
/// before any is read, so that the misses of their random lookups overlap.
const BATCH: usize = 16;

/// A position, its moves, and the rank of each move's child.
struct Located {
    rank: u64,
    pos: Position,
    successors: Successors,
    children: [u64; MAX_PITS],
}

impl Located {
    /// Looks at `pos`'s moves and prefetches their children's entries, from
    /// `level` (its own level's values) or the lower levels.
    fn new(job: &LevelJob<Even>, level: &[i8], rank_of_pos: u64, pos: Position) -> Located {
        let successors = job.rules.successors(&pos);
        let mut children = [0; MAX_PITS];
        if let Successors::Moves(moves) = &successors {
            for (child, m) in children.iter_mut().zip(moves.iter()) {
                *child = match m.child.stones() {
                    n if n == job.level => {
                        let at = rank(&m.child);
                        prefetch(level, at as usize);
                        at
                    }
                    n => job.lower.locate_prefetched(n, &m.child),
                };
            }
        }
        Located {
            rank: rank_of_pos,
            pos,
            successors,
            children,
        }
    }

    /// The value of the best move (or the terminal value). A same-level
    /// child is always numbered, its value already read: the pit its
    /// mover sowed from is empty.
    fn best_move_value(&self, job: &LevelJob<Even>, level: &[i8]) -> i8 {
        let lower: &Levels<Even> = job.lower;
        let best = match &self.successors {
            Successors::Terminal(value) => *value,
            Successors::Moves(moves) => moves
                .iter()
                .zip(self.children)
                .map(|(m, child)| {
                    let value = match m.child.stones() {
                        n if n == job.level => level[child as usize],
                        n => lower.entry_at(n, child),
                    };
                    m.value_given_child(value as i32)
                })
                .max()
                .expect("a position that is not terminal has a move"),
        };
        best as i8
    }
}
