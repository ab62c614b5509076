//! What a build is asked to do ([`BuildOptions`]) and the memory modes it
//! can solve a level in ([`MemoryMode`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use mancala_core::{Cycles, LevelIndex, Rules, MAX_LEVEL};
use mancala_format::{
    flip_gathered_bytes, symbols_per_position, tables_dir, Encoding, Even, Forced,
    MAPPED_MIN_POSITIONS, MAX_BLOCK_SIZE,
};

use crate::error::BuildError;
use crate::lean::state_eighths;
use crate::solve::Solve;

/// Subdirectory of a rule set's tables holding the build's scratch files.
pub const SCRATCH_DIR: &str = "scratch";
/// Subdirectory of a rule set's tables holding in-level checkpoints.
pub const CHECKPOINT_DIR: &str = "checkpoints";
/// Subdirectory of a rule set's tables holding the lean mode's lists
/// (or of `--scratch`, where one is given).
pub const LEAN_DIR: &str = "lean";
/// Default time between two checkpoints of a level being solved.
pub const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(600);

/// What to build and where.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Root table directory; files go to `root/<rules id>/` (even tables)
    /// or `root/<rules id>-forced/`.
    pub root: PathBuf,
    /// The rule set.
    pub rules: Rules,
    /// Build levels `0..=max_stones`.
    pub max_stones: u32,
    /// Build only level `max_stones` and the levels it needs
    /// (`Rules::levels_needed`), skipping the others: in the Oware family,
    /// the level just below it, which its moves never reach.
    pub top_only: bool,
    /// Which kind of table: even-split values (default) or forced bounds.
    pub cycles: Cycles,
    /// Rebuild levels whose files are already present and valid.
    pub force: bool,
    /// Positions per compressed block (`None`: the encoding's default,
    /// [`Encoding::default_block_size`]).
    pub block_size: Option<u32>,
    /// How even tables store their values (ignored where it does not
    /// apply: forced tables store every value).
    pub encoding: Encoding,
    /// Solved levels of at least this many positions are held as mapped
    /// scratch files rather than in memory while higher levels are built.
    pub mapped_min_positions: u64,
    /// Save a level's state at most this often while solving it, so a killed
    /// build resumes inside the level (`None`: only whole levels are kept).
    pub checkpoint_every: Option<Duration>,
    /// How much memory the level being solved takes.
    pub memory: MemoryMode,
    /// About how much anonymous memory the build may take (`None`: no
    /// bound). The largest level to build must fit in it in the chosen
    /// mode ([`MemoryMode::solving_bytes`]; [`BuildOptions::validate`]
    /// says so otherwise, and [`MemoryMode::within`] picks the mode); what
    /// it leaves holds lower levels in memory, smallest first, rather than
    /// as mapped scratch files, which spares the disk and its traffic.
    pub max_memory: Option<u64>,
    /// Where lower levels held as mapped files go (`None`: the tables'
    /// directory's `scratch/`); created only when a level is that large.
    pub scratch: Option<PathBuf>,
    /// If another build holds the directory, wait for it to end rather than
    /// fail ([`BuildError::Locked`]).
    pub wait_for_lock: bool,
    /// Set it (from another thread, or a signal handler) to stop the build
    /// at its next check: between levels, between two thresholds (saving a
    /// checkpoint where checkpoints are on), or within a first pass. The
    /// build then returns [`BuildError::Interrupted`] and leaves no file of
    /// the level it was solving.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Also write each level's depth table (`depth-NNN.mtb`, `docs/RULES.md`,
    /// "Depth to conversion") beside its values or bounds. A level whose
    /// depth table is missing is solved again; levels asked for depths are
    /// checkpointed between thresholds, not inside their forward pass, and
    /// are solved by the threshold propagation whatever the rule set.
    pub depths: bool,
}

impl BuildOptions {
    /// Defaults for `rules` up to `max_stones` under `root`.
    pub fn new(root: impl Into<PathBuf>, rules: Rules, max_stones: u32) -> BuildOptions {
        BuildOptions {
            root: root.into(),
            rules,
            max_stones,
            top_only: false,
            cycles: Cycles::Even,
            force: false,
            block_size: None,
            encoding: Encoding::default(),
            mapped_min_positions: MAPPED_MIN_POSITIONS,
            checkpoint_every: Some(DEFAULT_CHECKPOINT_EVERY),
            scratch: None,
            memory: MemoryMode::Fast,
            max_memory: None,
            wait_for_lock: false,
            interrupt: None,
            depths: false,
        }
    }

    /// Positions per block: as set, or the encoding's default (forced
    /// tables take the full encoding's).
    pub fn block_size(&self) -> u32 {
        let encoding = match self.cycles {
            Cycles::Even => self.encoding,
            Cycles::Forced => Encoding::Full,
        };
        self.block_size
            .unwrap_or_else(|| encoding.default_block_size())
    }

    /// The encoding the build's tables are stored in: the one asked for
    /// where it applies to the rule set, else the full encoding (which
    /// forced tables always take).
    pub fn stored_encoding(&self) -> Encoding {
        match self.cycles {
            Cycles::Even => Even::stored_encoding(&self.rules, self.encoding),
            Cycles::Forced => Encoding::Full,
        }
    }

    /// Whether level `n` (at most `max_stones`) is one to build, or to
    /// reuse: every level, or with [`BuildOptions::top_only`] those the
    /// top level needs.
    pub fn builds_level(&self, n: u32) -> bool {
        !self.top_only || self.rules.reaches(self.max_stones, n)
    }

    /// Whether the build has been asked to stop ([`BuildOptions::interrupt`]).
    pub fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.load(Relaxed))
    }

    /// The directory the tables go to.
    pub fn dir(&self) -> PathBuf {
        tables_dir(&self.root, &self.rules, self.cycles)
    }

    /// Whether the options can be built: the checks [`crate::build`] makes
    /// before it writes anything (the tables' directory, or a path above
    /// it, must not be a file).
    pub fn validate(&self) -> Result<(), BuildError> {
        if self.max_stones > MAX_LEVEL {
            return Err(BuildError::TooManyStones {
                stones: self.max_stones,
                max: MAX_LEVEL,
            });
        }
        let size = self.block_size();
        if !(1..=MAX_BLOCK_SIZE).contains(&size) {
            return Err(BuildError::BlockSize {
                size,
                max: MAX_BLOCK_SIZE,
            });
        }
        if let Some(budget) = self.max_memory {
            let needed = self.solving_bytes();
            if needed > budget {
                return Err(BuildError::MemoryBudget {
                    level: self.max_stones,
                    memory: self.memory,
                    encoding: self.stored_encoding(),
                    needed,
                    budget,
                });
            }
        }
        let dir = self.dir();
        if let Some(file) = dir.ancestors().find(|a| a.exists() && !a.is_dir()) {
            return Err(BuildError::NotADirectory {
                path: file.to_path_buf(),
            });
        }
        Ok(())
    }

    /// About the anonymous memory the largest level takes to solve in the
    /// build's mode, with its depths where they are asked for.
    pub fn solving_bytes(&self) -> u64 {
        let positions = LevelIndex::new(self.rules.pits(), self.max_stones).count();
        self.memory
            .solving_bytes(
                self.cycles,
                self.stored_encoding(),
                self.rules.pits(),
                positions,
            )
            .saturating_add(self.depth_bytes(positions))
    }

    /// The memory the depths of a level of `positions` positions take, if
    /// they are asked for: a byte a position while it is solved, and its
    /// depth table's symbols, a byte more, while that is written.
    pub fn depth_bytes(&self, positions: u64) -> u64 {
        if self.depths {
            positions.saturating_mul(2)
        } else {
            0
        }
    }

    /// What of [`BuildOptions::max_memory`] is left for lower levels held
    /// in memory beside the largest level's solving state, or beside the
    /// entries a lean build gathers to flip a lower level's table, if
    /// they take more: levels are flipped while those held are in memory
    /// and no level's state is.
    pub(crate) fn memory_for_lower_levels(&self) -> Option<u64> {
        let budget = self.max_memory?;
        Some(budget.saturating_sub(self.solving_bytes().max(self.flipping_bytes())))
    }

    /// The most memory flipping a lower level's table takes (the largest
    /// level's, gathered a group of rectangles at a time): only the lean
    /// mode holds its lower levels flipped.
    fn flipping_bytes(&self) -> u64 {
        let width = symbols_per_position(self.cycles);
        match (self.memory, self.max_stones.checked_sub(1)) {
            (MemoryMode::Lean, Some(largest)) => {
                flip_gathered_bytes(self.rules.pits(), largest, width)
            }
            _ => 0,
        }
    }
}

/// How much memory a build's level being solved takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryMode {
    /// Two bytes a position (three for forced tables), everything in
    /// memory: the fastest.
    #[default]
    Fast,
    /// Four bits a position in memory (six for forced tables; more with
    /// more than six pits a side), the rest in sequential lists on disk
    /// ([`crate::Lean`]).
    Lean,
}

/// Memory a level takes to solve beyond its per-position share: buffers,
/// bounded frontiers, lists' windows, thread stacks.
const SOLVING_FIXED_BYTES: u64 = 256 << 20;

impl MemoryMode {
    /// About the anonymous memory solving a level of `positions` positions
    /// with `pits` pits a side takes in this mode, lower levels held in
    /// memory aside: a share a position (fast: its value or bounds, and
    /// the work arrays beside them; lean: its state's cells) and a fixed
    /// part. An estimate to plan with, on the generous side of the
    /// summaries' anonymous peaks.
    ///
    /// A level stored in the compact encoding (`encoding`, as stored) is
    /// chosen from its values, its best exits' marks and its free entries,
    /// a byte a position each, when it is written: more than a lean
    /// level's state, so that is what such a level takes.
    pub fn solving_bytes(
        self,
        cycles: Cycles,
        encoding: Encoding,
        pits: usize,
        positions: u64,
    ) -> u64 {
        // Eighths of a byte a position.
        let eighths: u64 = match (self, cycles, encoding) {
            (MemoryMode::Fast, Cycles::Even, _) => 48,
            (MemoryMode::Fast, Cycles::Forced, _) => 80,
            (MemoryMode::Lean, Cycles::Even, Encoding::Compact) => 24,
            (MemoryMode::Lean, Cycles::Even, Encoding::Full) => state_eighths::<Even>(pits),
            (MemoryMode::Lean, Cycles::Forced, _) => state_eighths::<Forced>(pits),
        };
        (positions.saturating_mul(eighths) / 8).saturating_add(SOLVING_FIXED_BYTES)
    }

    /// The fastest mode whose [`MemoryMode::solving_bytes`] for a level of
    /// `positions` positions with `pits` pits a side fits in `budget`, if
    /// any.
    pub fn within(
        budget: u64,
        cycles: Cycles,
        encoding: Encoding,
        pits: usize,
        positions: u64,
    ) -> Option<MemoryMode> {
        [MemoryMode::Fast, MemoryMode::Lean]
            .into_iter()
            .find(|mode| mode.solving_bytes(cycles, encoding, pits, positions) <= budget)
    }

    /// The mode's name on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            MemoryMode::Fast => "fast",
            MemoryMode::Lean => "lean",
        }
    }
}
