//! Probing: exact values from memory-mapped tables.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use lru::LruCache;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::index;
use crate::position::{pit_letter, Position};
use crate::rules::{Rules, Successors};
use crate::solver::MAX_LEVEL;
use crate::table::{level_file_name, Table, DEFAULT_BLOCK_SIZE};

/// Memory for decoded blocks that [`Tablebase::open`] sets aside.
pub const DEFAULT_CACHE_BYTES: usize = 32 << 20;

/// Decoded blocks, least recently used evicted first, keyed by (level,
/// block).
type BlockLru = LruCache<(u32, u64), Arc<[i8]>>;

/// The value of one legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The pit the move empties (`0` = `a`).
    pub pit: u8,
    /// The move's value for the mover (RULES.md: `gain − value(child)`, or
    /// `gain + value(child)` after a Kalah extra turn).
    pub value: i32,
}

impl MoveValue {
    /// The move's name: the letter of its pit.
    pub fn letter(&self) -> char {
        pit_letter(self.pit as usize)
    }
}

/// The tables of one rule set in a directory, opened lazily.
///
/// Level files are opened (mapped and validated) on first use and then
/// shared, and recently decoded blocks are kept in an LRU cache; a
/// `Tablebase` is `Send + Sync`, so one instance serves every thread.
pub struct Tablebase {
    rules: Rules,
    root: PathBuf,
    dir: PathBuf,
    levels: Vec<OnceLock<Table>>,
    cache: Mutex<BlockLru>,
}

impl Tablebase {
    /// The tables of `rules` under `root` (in the subdirectory
    /// `root/<rules id>`, e.g. `tables/oware-6`). Levels `0..=n` present as
    /// files are available; a later file after a gap is ignored.
    pub fn open(root: impl AsRef<Path>, rules: Rules) -> Result<Tablebase> {
        Tablebase::open_with_cache(root, rules, DEFAULT_CACHE_BYTES)
    }

    /// Like [`Tablebase::open`], with about `cache_bytes` of decoded blocks
    /// kept (at least one block).
    pub fn open_with_cache(
        root: impl AsRef<Path>,
        rules: Rules,
        cache_bytes: usize,
    ) -> Result<Tablebase> {
        let root = root.as_ref().to_path_buf();
        let dir = tables_dir(&root, &rules);
        let present = (0..=MAX_LEVEL)
            .take_while(|&n| dir.join(level_file_name(n)).is_file())
            .count();
        Ok(Tablebase {
            rules,
            root,
            dir,
            levels: (0..present).map(|_| OnceLock::new()).collect(),
            cache: Mutex::new(LruCache::new(
                NonZeroUsize::new(cache_bytes / DEFAULT_BLOCK_SIZE as usize)
                    .unwrap_or(NonZeroUsize::MIN),
            )),
        })
    }

    /// The rule set.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The highest level available, if any.
    pub fn max_level(&self) -> Option<u32> {
        self.levels.len().checked_sub(1).map(|n| n as u32)
    }

    /// The directory holding this rule set's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The exact value of `pos` for the player to move (RULES.md).
    pub fn value(&self, pos: &Position) -> Result<i32> {
        let (n, block, offset) = self.locate(pos)?;
        Ok(self.block(n, block)?[offset] as i32)
    }

    /// The values of many positions, in order; fails if any position is
    /// not covered ([`Tablebase::check`] them first to sort those out) or a
    /// table is damaged. Probes are grouped by table block, and each block
    /// is decoded once, up to the last probe into it, however many of the
    /// positions fall in it, on every core: this is how large batches are
    /// scored. The block cache is left alone (a large batch would only
    /// flush it).
    pub fn values(&self, positions: &[Position]) -> Result<Vec<i32>> {
        let mut probes: Vec<(u32, u64, usize, usize)> = positions
            .par_iter()
            .enumerate()
            .map(|(slot, pos)| {
                self.locate(pos)
                    .map(|(n, block, offset)| (n, block, offset, slot))
            })
            .collect::<Result<_>>()?;
        probes.par_sort_unstable();
        let found: Vec<(usize, i8)> = probes
            .par_chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
            .map_init(Vec::new, |buffer, group| {
                let (n, block) = (group[0].0, group[0].1);
                let last = group[group.len() - 1].2;
                buffer.resize(last + 1, 0);
                self.level(n)?.decode_prefix(block, buffer)?;
                Ok(group
                    .iter()
                    .map(|&(_, _, offset, slot)| (slot, buffer[offset]))
                    .collect::<Vec<_>>())
            })
            .collect::<Result<Vec<_>>>()?
            .concat();
        let mut values = vec![0i32; positions.len()];
        for (slot, value) in found {
            values[slot] = value as i32;
        }
        Ok(values)
    }

    /// [`Tablebase::move_values`] of many positions, in order, with every
    /// child probed in one [`Tablebase::values`] batch; fails like it.
    pub fn move_values_many(&self, positions: &[Position]) -> Result<Vec<Vec<MoveValue>>> {
        Ok(self.probe_many(positions, false)?.1)
    }

    /// The value and the move values of many positions, in order: one
    /// [`Tablebase::values`] batch for the positions and all their children.
    pub fn values_and_moves(&self, positions: &[Position]) -> Result<Vec<(i32, Vec<MoveValue>)>> {
        let (values, moves) = self.probe_many(positions, true)?;
        Ok(values.into_iter().zip(moves).collect())
    }

    /// Probes every child of `positions` (and the positions themselves if
    /// `own`) in one batch.
    fn probe_many(
        &self,
        positions: &[Position],
        own: bool,
    ) -> Result<(Vec<i32>, Vec<Vec<MoveValue>>)> {
        let successors: Vec<Successors> = positions
            .par_iter()
            .map(|pos| self.check(pos).map(|()| self.rules.successors(pos)))
            .collect::<Result<_>>()?;
        let mut probes: Vec<Position> = if own { positions.to_vec() } else { Vec::new() };
        for s in &successors {
            if let Successors::Moves(moves) = s {
                probes.extend(moves.iter().map(|m| m.child));
            }
        }
        let mut values = self.values(&probes)?;
        let child_values = values.split_off(if own { positions.len() } else { 0 });
        let mut child_values = child_values.into_iter();
        let moves = successors
            .iter()
            .map(|s| match s {
                Successors::Terminal(_) => Vec::new(),
                Successors::Moves(moves) => moves
                    .iter()
                    .zip(child_values.by_ref())
                    .map(|(m, child)| MoveValue {
                        pit: m.pit,
                        value: m.value_given_child(child),
                    })
                    .collect(),
            })
            .collect();
        Ok((values, moves))
    }

    /// Level, block and offset of `pos` in the tables.
    fn locate(&self, pos: &Position) -> Result<(u32, u64, usize)> {
        self.check(pos)?;
        let n = pos.stones();
        let (block, offset) = self.level(n)?.locate(index::rank(pos))?;
        Ok((n, block, offset))
    }

    /// The decoded block `block` of level `n`, from the cache or decoded
    /// (and then cached).
    fn block(&self, n: u32, block: u64) -> Result<Arc<[i8]>> {
        if let Some(values) = self.cache_lock().get(&(n, block)) {
            return Ok(values.clone());
        }
        let values: Arc<[i8]> = self.level(n)?.decode_block(block)?.into();
        self.cache_lock().put((n, block), values.clone());
        Ok(values)
    }

    /// The block cache; a panic elsewhere while it was held leaves it
    /// consistent (every operation is a single call), so poisoning is ignored.
    fn cache_lock(&self) -> std::sync::MutexGuard<'_, BlockLru> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value of every legal move of `pos`, in pit order. Empty when the
    /// position is terminal.
    pub fn move_values(&self, pos: &Position) -> Result<Vec<MoveValue>> {
        self.check(pos)?;
        match self.rules.successors(pos) {
            Successors::Terminal(_) => Ok(Vec::new()),
            Successors::Moves(moves) => moves
                .iter()
                .map(|m| {
                    Ok(MoveValue {
                        pit: m.pit,
                        value: m.value_given_child(self.value(&m.child)?),
                    })
                })
                .collect(),
        }
    }

    /// The open table of level `n`.
    pub fn level(&self, n: u32) -> Result<&Table> {
        let cell = self
            .levels
            .get(n as usize)
            .ok_or_else(|| self.out_of_range(n))?;
        if let Some(table) = cell.get() {
            return Ok(table);
        }
        let table = Table::open(&self.dir.join(level_file_name(n)), Some((&self.rules, n)))?;
        Ok(cell.get_or_init(|| table))
    }

    /// Whether the tables answer `pos`: the rule set's pit count and a level
    /// that is present (else the error says which `build` to run).
    pub fn check(&self, pos: &Position) -> Result<()> {
        if pos.pits() != self.rules.pits() {
            return Err(Error::Notation(format!(
                "{pos} has {} pits per side, the tables have {}",
                pos.pits(),
                self.rules.pits()
            )));
        }
        if pos.stones() as usize >= self.levels.len() {
            return Err(self.out_of_range(pos.stones()));
        }
        Ok(())
    }

    fn out_of_range(&self, stones: u32) -> Error {
        Error::OutOfRange {
            stones,
            available: self.max_level().map_or(-1, |n| n as i64),
            flags: self.rules.cli_flags(),
            dir: self.root.display().to_string(),
        }
    }
}

/// The rule sets that have a table directory under `root` (directories
/// named by [`Rules::id`]), sorted by name: what a directory of tables
/// offers, for `verify` and the server's table listing. Other directories
/// are ignored.
pub fn rule_sets(root: &Path) -> Result<Vec<Rules>> {
    let entries = std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names
        .iter()
        .filter_map(|name| Rules::from_id(name).ok())
        .collect())
}

/// The directory of `rules`' tables under `root`.
pub fn tables_dir(root: &Path, rules: &Rules) -> PathBuf {
    root.join(rules.id())
}
