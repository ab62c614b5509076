//! Probing: exact values from memory-mapped tables.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use lru::LruCache;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::forced::Bounds;
use crate::index;
use crate::omission;
use crate::position::{pit_letter, Position, MAX_PITS};
use crate::rules::{Move, Rules, Successors};
use crate::solver::MAX_LEVEL;
use crate::table::{level_file_name, Cycles, Table, DEFAULT_BLOCK_SIZE};

/// Memory for decoded blocks that [`Tablebase::open`] sets aside.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// One probe of a batch: where it reads (see [`Probe::key`]), the caller's
/// slot, and the stored symbols once read.
#[derive(Clone, Copy, Default)]
struct Probe {
    key: u64,
    slot: u32,
    symbols: [i8; 2],
}

impl Probe {
    /// Bits of the key for the block within its level: far more blocks than
    /// any disk holds.
    const BLOCK_BITS: u32 = 40;

    /// Level, block and offset packed into one integer in that order, so
    /// that a batch sorts by a plain integer key.
    fn key(level: u32, block: u64, offset: usize) -> u64 {
        assert!(
            block < 1 << Self::BLOCK_BITS,
            "block {block} out of key range"
        );
        (level as u64) << (Self::BLOCK_BITS + 16) | block << 16 | offset as u64
    }

    /// The level and block of the probe, as one integer.
    fn block_key(&self) -> u64 {
        self.key >> 16
    }

    fn level(&self) -> u32 {
        (self.key >> (Self::BLOCK_BITS + 16)) as u32
    }

    fn block(&self) -> u64 {
        self.block_key() & ((1 << Self::BLOCK_BITS) - 1)
    }

    fn offset(&self) -> usize {
        (self.key & 0xffff) as usize
    }
}

/// Decoded blocks, least recently used evicted first, keyed by (level,
/// block).
type BlockLru = LruCache<(u32, u64), Arc<[i8]>>;

/// The decoded-block cache, holding at most `capacity` bytes of decoded
/// symbols, with a second-chance admission: a block missed once is only
/// remembered (its probe decodes just up to the value it needs, half a
/// block on average); missed again, it is decoded whole and kept. Random
/// probes into tables far larger than the cache then cost one partial
/// decode each, while blocks that are probed again stay decoded. Levels
/// larger than the whole cache bypass it: it could hold only a part of
/// them, and a probe would pay the bookkeeping for nothing.
struct BlockCache {
    decoded: BlockLru,
    missed_once: LruCache<(u32, u64), ()>,
    /// Bytes of decoded symbols held.
    held: usize,
    capacity: usize,
}

impl BlockCache {
    fn new(capacity: usize) -> BlockCache {
        // Remember as many missed blocks as the smallest blocks would fill.
        let remembered =
            NonZeroUsize::new(capacity / DEFAULT_BLOCK_SIZE as usize).unwrap_or(NonZeroUsize::MIN);
        BlockCache {
            decoded: LruCache::unbounded(),
            missed_once: LruCache::new(remembered),
            held: 0,
            capacity,
        }
    }

    /// Keeps `values`, evicting the least recently used blocks as needed.
    fn keep(&mut self, key: (u32, u64), values: Arc<[i8]>) {
        self.held += values.len();
        if let Some(old) = self.decoded.put(key, values) {
            self.held -= old.len();
        }
        while self.held > self.capacity {
            match self.decoded.pop_lru() {
                Some((_, evicted)) => self.held -= evicted.len(),
                None => break,
            }
        }
    }
}

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

/// The tables of one rule set in a directory, opened lazily.
///
/// Level files are opened (mapped and validated) on first use and then
/// shared, and recently decoded blocks are kept in an LRU cache; a
/// `Tablebase` is `Send + Sync`, so one instance serves every thread.
pub struct Tablebase {
    rules: Rules,
    cycles: Cycles,
    root: PathBuf,
    dir: PathBuf,
    levels: Vec<OnceLock<Table>>,
    cache: Mutex<BlockCache>,
    /// The cache's capacity in bytes.
    cache_capacity: usize,
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
        Tablebase::open_kind(root, rules, Cycles::Even, cache_bytes)
    }

    /// The tables of kind `cycles` (in `root/<rules id>` for even tables,
    /// `root/<rules id>-forced` for forced ones), with about `cache_bytes`
    /// of decoded blocks kept. Even tables answer [`Tablebase::value`] and
    /// its kin, forced ones [`Tablebase::bounds`] and its kin; asking the
    /// other kind is [`Error::WrongCycles`].
    pub fn open_kind(
        root: impl AsRef<Path>,
        rules: Rules,
        cycles: Cycles,
        cache_bytes: usize,
    ) -> Result<Tablebase> {
        let root = root.as_ref().to_path_buf();
        let dir = tables_dir_for(&root, &rules, cycles);
        let present = (0..=MAX_LEVEL)
            .take_while(|&n| dir.join(level_file_name(n)).is_file())
            .count();
        Ok(Tablebase {
            rules,
            cycles,
            root,
            dir,
            levels: (0..present).map(|_| OnceLock::new()).collect(),
            cache: Mutex::new(BlockCache::new(cache_bytes)),
            cache_capacity: cache_bytes,
        })
    }

    /// The rule set.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The kind of tables.
    pub fn cycles(&self) -> Cycles {
        self.cycles
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
        self.expect_cycles(Cycles::Even)?;
        let entry = self.entry(pos)?;
        self.value_from_entry(self, pos, entry)
    }

    /// The value of `pos` from its entry: the entry itself, or where the
    /// table is compact, the larger of the entry and the best of its
    /// restoring moves ([`crate::omission`]).
    fn value_from_entry(&self, entries: &impl Entries, pos: &Position, entry: i32) -> Result<i32> {
        self.search(entries, pos, entry, Window::ALL)
    }

    /// The value of `pos`, given its entry, as far as `window` needs it
    /// (see [`Window`]): an alpha-beta search of the restoring moves, best
    /// bound first ([`bound`]). The entry is a lower bound of the value and
    /// each bound an upper bound of a move's, so a search stops as soon as
    /// no move left can matter. Without windows, a search would follow each
    /// capture into a lower level's search, and so on down, in full: some
    /// probes of oware 0–20 took seconds.
    fn search(
        &self,
        entries: &impl Entries,
        pos: &Position,
        entry: i32,
        window: Window,
    ) -> Result<i32> {
        // The entry is the value in a full table, and at most the value in
        // a compact one: enough if the window needs no more.
        if !self.compact(pos.stones())? || entry >= window.beta {
            return Ok(entry);
        }
        // Moves, and (bound, move, child's entry) per move, on the stack:
        // probes are hot paths.
        let mut moves = [Move::default(); MAX_PITS];
        let mut count = 0;
        let restored = omission::for_each_restoring_move(&self.rules, pos, |m| {
            moves[count] = *m;
            count += 1;
        });
        if let Some(terminal) = restored {
            return Ok(terminal);
        }
        let mut searched = [(0i32, 0usize, 0i32); MAX_PITS];
        for (i, m) in moves[..count].iter().enumerate() {
            let child_entry = entries.entry(&m.child)?;
            searched[i] = (bound(m, child_entry), i, child_entry);
        }
        let searched = &mut searched[..count];
        searched.sort_unstable_by_key(|&(bound, _, _)| std::cmp::Reverse(bound));
        let mut best = entry;
        for &(bound, i, child_entry) in searched.iter() {
            if best >= window.beta {
                break;
            }
            let floor = best.max(window.alpha);
            if bound <= floor {
                break;
            }
            let m = &moves[i];
            let child_window = Window::for_child(m, floor, window.beta);
            let child = self.search(entries, &m.child, child_entry, child_window)?;
            best = best.max(m.value_given_child(child));
        }
        Ok(best)
    }

    /// Whether level `n`'s table is compact ([`crate::omission`]).
    fn compact(&self, n: u32) -> Result<bool> {
        Ok(self.level(n)?.compact())
    }

    /// The forced bounds of `pos` (RULES.md, "Forced bounds"); needs forced
    /// tables.
    pub fn bounds(&self, pos: &Position) -> Result<Bounds> {
        self.expect_cycles(Cycles::Forced)?;
        let (n, block, offset) = self.locate(pos)?;
        let symbols = self.symbols_at(n, block, offset, 2)?;
        self.level(n)?.bounds_from(&symbols, index::rank(pos))
    }

    /// The bounds of `pos` and of each of its legal moves, in pit order
    /// (none when the position is terminal), from a batch of probes like
    /// [`Tablebase::values`]; needs forced tables.
    pub fn bounds_and_moves(
        &self,
        positions: &[Position],
    ) -> Result<Vec<(Bounds, Vec<MoveBounds>)>> {
        self.expect_cycles(Cycles::Forced)?;
        let bounds_of = |positions: &[Position]| {
            self.read_entries(positions)?
                .iter()
                .map(|probe| {
                    let table = self.level(probe.level())?;
                    let block_size = table.header().block_size as u64;
                    let at = probe.block() * block_size + probe.offset() as u64 / 2;
                    table.bounds_from(&probe.symbols, at)
                })
                .collect::<Result<Vec<Bounds>>>()
        };
        let (bounds, moves) =
            self.probe_with_children(positions, true, bounds_of, |m, child| MoveBounds {
                pit: m.pit,
                bounds: Bounds::after_move(m, child),
            })?;
        Ok(bounds.into_iter().zip(moves).collect())
    }

    /// An error unless the tables are of kind `cycles`.
    fn expect_cycles(&self, cycles: Cycles) -> Result<()> {
        if self.cycles != cycles {
            return Err(Error::WrongCycles {
                path: self.dir.clone(),
                expected: cycles.describe().to_string(),
                found: self.cycles.describe().to_string(),
            });
        }
        Ok(())
    }

    /// The values of many positions, in order; fails if any position is
    /// not covered ([`Tablebase::check`] them first to sort those out) or a
    /// table is damaged. Probes are grouped by table block, and each block
    /// is decoded once, up to the last probe into it, however many of the
    /// positions fall in it, on every core: this is how large batches are
    /// scored. The block cache is left alone (a large batch would only
    /// flush it). Where tables are compact, the values are then restored by
    /// the search of a single probe, run on every core against the compact
    /// levels that are small next to the batch, decoded whole first; other
    /// levels are read through the block cache.
    pub fn values(&self, positions: &[Position]) -> Result<Vec<i32>> {
        self.expect_cycles(Cycles::Even)?;
        positions.par_iter().try_for_each(|pos| self.check(pos))?;
        let entries = self.entries(positions)?;
        let searched: Vec<usize> = (0..positions.len())
            .into_par_iter()
            .filter_map(|i| match self.compact(positions[i].stones()) {
                Ok(true) => Some(Ok(i)),
                Ok(false) => None,
                Err(e) => Some(Err(e)),
            })
            .collect::<Result<_>>()?;
        if searched.is_empty() {
            return Ok(entries);
        }
        let decoded = DecodedLevels::for_batch(self, positions, searched.len())?;
        let restored: Vec<i32> = searched
            .par_iter()
            .map(|&i| self.value_from_entry(&decoded, &positions[i], entries[i]))
            .collect::<Result<_>>()?;
        let mut values = entries;
        for (&i, value) in searched.iter().zip(restored) {
            values[i] = value;
        }
        Ok(values)
    }

    /// The entries of `positions`, in order.
    fn entries(&self, positions: &[Position]) -> Result<Vec<i32>> {
        Ok(self
            .read_entries(positions)?
            .iter()
            .map(|probe| probe.symbols[0] as i32)
            .collect())
    }

    /// The probes of `positions`, read, in the positions' order.
    fn read_entries(&self, positions: &[Position]) -> Result<Vec<Probe>> {
        let mut probes: Vec<Probe> = positions
            .par_iter()
            .enumerate()
            .map(|(slot, pos)| self.probe_of(pos, slot))
            .collect::<Result<_>>()?;
        self.fill(&mut probes)?;
        probes.par_sort_unstable_by_key(|p| p.slot);
        Ok(probes)
    }

    /// The unread probe of `pos`, answering slot `slot` of a batch.
    fn probe_of(&self, pos: &Position, slot: usize) -> Result<Probe> {
        let (level, block, offset) = self.locate(pos)?;
        Ok(Probe {
            key: Probe::key(level, block, offset),
            slot: slot as u32,
            symbols: [0; 2],
        })
    }

    /// Reads the stored symbols of every probe (the first one only for even
    /// tables). Sorts the probes by where they read, and decodes each block
    /// once, up to its last probe, filling its probes in place: no
    /// allocation per block.
    fn fill(&self, probes: &mut [Probe]) -> Result<()> {
        let width = self.cycles.symbols_per_position();
        probes.par_sort_unstable_by_key(|p| p.key);
        probes
            .par_chunk_by_mut(|a, b| a.block_key() == b.block_key())
            .try_for_each_init(Vec::new, |buffer, group| {
                let last = group[group.len() - 1];
                buffer.resize(last.offset() + width, 0);
                self.level(last.level())?
                    .decode_prefix(last.block(), buffer)?;
                for probe in group.iter_mut() {
                    let at = probe.offset();
                    probe.symbols[..width].copy_from_slice(&buffer[at..at + width]);
                }
                Ok(())
            })
    }

    /// [`Tablebase::move_values`] of many positions, in order, with every
    /// child probed in one [`Tablebase::values`] batch; fails like it.
    pub fn move_values_many(&self, positions: &[Position]) -> Result<Vec<Vec<MoveValue>>> {
        self.expect_cycles(Cycles::Even)?;
        let (_, moves) = self.probe_with_children(
            positions,
            false,
            |children| self.values(children),
            |m, child| MoveValue {
                pit: m.pit,
                value: m.value_given_child(child),
            },
        )?;
        Ok(moves)
    }

    /// The value and the move values of many positions, in order, from one
    /// [`Tablebase::values`] batch of all their children. A position's own
    /// value is not read: it is the best of its moves' values (the table
    /// holds the fixpoint of RULES.md's recursion, endless play included:
    /// a position worth 0 by the even split has a move worth 0 and none
    /// worth more), or its terminal value.
    pub fn values_and_moves(&self, positions: &[Position]) -> Result<Vec<(i32, Vec<MoveValue>)>> {
        let moves = self.move_values_many(positions)?;
        // The positions' own tables are opened, and so checked, although
        // no value is read from them. Covered levels are at most
        // `MAX_LEVEL` (127).
        let levels = positions
            .par_iter()
            .map(|pos| 1u128 << pos.stones())
            .reduce(|| 0, |a, b| a | b);
        for n in (0..128).filter(|n| levels >> n & 1 == 1) {
            self.level(n)?;
        }
        Ok(positions
            .par_iter()
            .zip(moves)
            .map(|(pos, moves)| {
                let best = moves.iter().map(|m| m.value).max();
                let value = best.unwrap_or_else(|| match self.rules.successors(pos) {
                    Successors::Terminal(value) => value,
                    Successors::Moves(_) => unreachable!("a position with moves has move values"),
                });
                (value, moves)
            })
            .collect())
    }

    /// Answers every child of `positions` (and the positions themselves,
    /// first, if `own`) with one `probe` batch, and pairs each legal move
    /// with its child's answer through `per_move`: the answers of the
    /// positions, and per position its moves' results in pit order.
    fn probe_with_children<T: Copy + Send + Sync, M: Send>(
        &self,
        positions: &[Position],
        own: bool,
        probe: impl Fn(&[Position]) -> Result<Vec<T>>,
        per_move: impl Fn(&Move, T) -> M + Sync,
    ) -> Result<(Vec<T>, Vec<Vec<M>>)> {
        /// Positions per unit of parallel work; children are gathered per
        /// chunk so that no per-position move list is kept.
        const CHUNK: usize = 4096;
        positions.par_iter().try_for_each(|pos| self.check(pos))?;
        let children_of = |chunk: &[Position]| {
            let mut children = Vec::with_capacity(chunk.len() * self.rules.pits());
            for pos in chunk {
                self.rules.for_each_move(pos, |m| children.push(m.child));
            }
            children
        };
        let per_chunk: Vec<Vec<Position>> = positions.par_chunks(CHUNK).map(children_of).collect();
        let own_count = if own { positions.len() } else { 0 };
        let mut probes =
            Vec::with_capacity(own_count + per_chunk.iter().map(Vec::len).sum::<usize>());
        probes.extend_from_slice(&positions[..own_count]);
        let mut chunk_starts = Vec::with_capacity(per_chunk.len());
        for children in per_chunk {
            chunk_starts.push(probes.len() - own_count);
            probes.extend(children);
        }
        let mut answers = probe(&probes)?;
        drop(probes);
        let child_answers = answers.split_off(own_count);
        let moves = positions
            .par_chunks(CHUNK)
            .zip(chunk_starts)
            .flat_map_iter(|(chunk, start)| {
                let mut next = child_answers[start..].iter();
                let per_move = &per_move;
                chunk.iter().map(move |pos| {
                    let mut moves = Vec::new();
                    self.rules.for_each_move(pos, |m| {
                        let child = *next.next().expect("one answer per child");
                        moves.push(per_move(m, child));
                    });
                    moves
                })
            })
            .collect();
        Ok((answers, moves))
    }

    /// Level, block and offset of `pos` in the tables.
    fn locate(&self, pos: &Position) -> Result<(u32, u64, usize)> {
        self.check(pos)?;
        let n = pos.stones();
        let (block, offset) = self.level(n)?.locate(index::rank(pos))?;
        Ok((n, block, offset))
    }

    /// The `width` symbols at `offset` of block `block` of level `n`: from
    /// the cache, or decoded (see [`BlockCache`] for when a block is kept).
    fn symbols_at(&self, n: u32, block: u64, offset: usize, width: usize) -> Result<[i8; 2]> {
        let key = (n, block);
        let mut symbols = [0i8; 2];
        let table = self.level(n)?;
        let keep = table.symbols() <= self.cache_capacity && {
            let mut cache = self.cache_lock();
            if let Some(values) = cache.decoded.get(&key) {
                symbols[..width].copy_from_slice(&values[offset..offset + width]);
                return Ok(symbols);
            }
            let seen_before = cache.missed_once.pop(&key).is_some();
            if !seen_before {
                cache.missed_once.put(key, ());
            }
            seen_before
        };
        if keep {
            let values: Arc<[i8]> = table.decode_block(block)?.into();
            symbols[..width].copy_from_slice(&values[offset..offset + width]);
            self.cache_lock().keep(key, values);
        } else {
            let mut prefix = vec![0i8; offset + width];
            table.decode_prefix(block, &mut prefix)?;
            symbols[..width].copy_from_slice(&prefix[offset..]);
        }
        Ok(symbols)
    }

    /// The block cache; a panic elsewhere while it was held leaves it
    /// consistent (every operation is a single call), so poisoning is ignored.
    fn cache_lock(&self) -> std::sync::MutexGuard<'_, BlockCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value of every legal move of `pos`, in pit order. Empty when the
    /// position is terminal.
    pub fn move_values(&self, pos: &Position) -> Result<Vec<MoveValue>> {
        self.expect_cycles(Cycles::Even)?;
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
        let path = self.dir.join(level_file_name(n));
        let table = Table::open_kind(&path, Some((&self.rules, self.cycles, n)))?;
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

/// The rule sets and kinds of table that have a directory under `root`
/// (named by [`dir_name`]), sorted by name: what a directory of tables
/// offers, for `verify`, `info` and the server's table listing. Other
/// directories are ignored.
pub fn rule_sets(root: &Path) -> Result<Vec<(Rules, Cycles)>> {
    let entries = std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names
        .iter()
        .filter_map(|name| parse_dir_name(name).ok())
        .collect())
}

/// The directory of `rules`' even tables under `root`.
pub fn tables_dir(root: &Path, rules: &Rules) -> PathBuf {
    tables_dir_for(root, rules, Cycles::Even)
}

/// The directory of `rules`' tables of kind `cycles` under `root`:
/// `oware-6` for even tables, `oware-6-forced` for forced ones, so the two
/// kinds never mix.
pub fn tables_dir_for(root: &Path, rules: &Rules, cycles: Cycles) -> PathBuf {
    root.join(dir_name(rules, cycles))
}

/// The directory name of `rules`' tables of kind `cycles`.
pub fn dir_name(rules: &Rules, cycles: Cycles) -> String {
    match cycles {
        Cycles::Even => rules.id(),
        Cycles::Forced => format!("{}{FORCED_SUFFIX}", rules.id()),
    }
}

/// Reads back a directory name written by [`dir_name`].
pub fn parse_dir_name(name: &str) -> Result<(Rules, Cycles)> {
    match name.strip_suffix(FORCED_SUFFIX) {
        Some(id) => Ok((Rules::from_id(id)?, Cycles::Forced)),
        None => Ok((Rules::from_id(name)?, Cycles::Even)),
    }
}

/// What a forced tables' directory name adds to the rule-set id.
const FORCED_SUFFIX: &str = "-forced";

/// Where a probe's search reads entries ([`Tablebase::value_from_entry`]).
trait Entries: Sync {
    /// The entry stored for `pos`: its value, or if its table is compact, at
    /// most its value ([`crate::omission`]).
    fn entry(&self, pos: &Position) -> Result<i32>;
}

impl Entries for Tablebase {
    /// Through the block cache.
    fn entry(&self, pos: &Position) -> Result<i32> {
        let (n, block, offset) = self.locate(pos)?;
        Ok(self.symbols_at(n, block, offset, 1)?[0] as i32)
    }
}

/// The levels a batch of values decodes whole before it searches
/// ([`Tablebase::values`]): a search reads several entries a value, from all
/// over the tables, and a large batch reads most blocks of the smaller
/// levels many times over. Other levels are read through the block cache.
struct DecodedLevels<'a> {
    tb: &'a Tablebase,
    /// Every entry of level `n`, if decoded.
    levels: Vec<Option<Vec<i8>>>,
}

/// Levels of up to this many positions per value of a batch are decoded
/// whole: a probe decodes half a block, a search reads a few entries.
const DECODE_POSITIONS_PER_VALUE: u64 = 64;
/// The most a batch decodes whole: all of oware levels 0–21.
const BATCH_DECODE_BYTES: u64 = 512 << 20;

impl<'a> DecodedLevels<'a> {
    /// Decodes, from level 0 up, the compact levels at or below the highest
    /// of `positions` that are small next to `values` searches, within
    /// [`BATCH_DECODE_BYTES`].
    fn for_batch(tb: &'a Tablebase, positions: &[Position], values: usize) -> Result<Self> {
        let top = positions.iter().map(Position::stones).max().unwrap_or(0);
        let most = values as u64 * DECODE_POSITIONS_PER_VALUE;
        let mut levels = Vec::new();
        let mut bytes = 0;
        for n in 0..=top {
            let table = tb.level(n)?;
            let count = table.header().positions;
            let decode = table.compact() && count <= most && bytes + count <= BATCH_DECODE_BYTES;
            levels.push(if decode {
                bytes += count;
                Some(table.decode_all()?)
            } else {
                None
            });
        }
        Ok(DecodedLevels { tb, levels })
    }
}

impl Entries for DecodedLevels<'_> {
    fn entry(&self, pos: &Position) -> Result<i32> {
        match self.levels.get(pos.stones() as usize) {
            Some(Some(entries)) => Ok(entries[index::rank(pos) as usize] as i32),
            _ => self.tb.entry(pos),
        }
    }
}

/// What a search must learn of a value `v`: `v` itself if `alpha < v <
/// beta`, otherwise only on which side it lies. A search returns `r = v`
/// inside the window, some `r >= beta` if `v >= beta`, and some `r <=
/// alpha` if `v <= alpha`.
#[derive(Clone, Copy, Debug)]
struct Window {
    alpha: i32,
    beta: i32,
}

impl Window {
    /// Every value is needed exactly.
    const ALL: Window = Window {
        alpha: i32::MIN / 2,
        beta: i32::MAX / 2,
    };

    /// The window a move `m`'s child is searched with, when the move
    /// matters only if it is worth more than `floor`, and exactly only
    /// below `beta`.
    fn for_child(m: &Move, floor: i32, beta: i32) -> Window {
        let gain = m.gain as i32;
        if m.extra_turn {
            // Worth gain + child.
            Window {
                alpha: floor - gain,
                beta: beta - gain,
            }
        } else {
            // Worth gain − child.
            Window {
                alpha: gain - beta,
                beta: gain - floor,
            }
        }
    }
}

/// The most a move can be worth, given its child's entry: entries never
/// exceed values, so `gain − entry(child)` (an extra turn, Kalah, adds the
/// child's value: no bound).
fn bound(m: &Move, child_entry: i32) -> i32 {
    if m.extra_turn {
        i32::MAX
    } else {
        m.value_given_child(child_entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache holds at most its capacity in decoded bytes, whatever the
    /// block sizes, and evicts the least recently used first.
    #[test]
    fn the_block_cache_is_bounded_in_bytes() {
        let mut cache = BlockCache::new(5000);
        let block = |len: usize| -> Arc<[i8]> { vec![0i8; len].into() };
        cache.keep((1, 0), block(2048));
        cache.keep((1, 1), block(2048));
        cache.keep((0, 0), block(512));
        assert_eq!(cache.held, 4608);
        cache.decoded.get(&(1, 0));
        cache.keep((1, 2), block(2048));
        assert!(cache.held <= 5000);
        assert!(cache.decoded.contains(&(1, 0)), "recently used");
        assert!(!cache.decoded.contains(&(1, 1)), "least recently used");
        cache.keep((1, 0), block(2048));
        assert_eq!(
            cache.held,
            cache.decoded.iter().map(|(_, v)| v.len()).sum::<usize>()
        );
    }
}
