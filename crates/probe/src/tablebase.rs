//! The tables of one rule set and kind, opened lazily and probed one
//! position at a time.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mancala_core::{
    rank, Bounds, Cycles, Move, MoveValue, NotationError, Position, Rules, Successors, MAX_LEVEL,
    MAX_PITS,
};
use mancala_format::{
    depth_of, depth_path, forced_opponent_depth, levels_available, table_path, tables_dir, Access,
    Depth, EntryReader, Even, Forced, FormatError, Realized, StoredDepth, Stores, Table, TableId,
    TableKind, Window,
};

use crate::cache::BlockCache;
use crate::error::{Error, Result};

/// Memory for decoded blocks that [`Tablebase::open`] sets aside.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// The tables of kind `K` of one rule set in a directory, opened lazily.
///
/// Level files are opened (mapped and validated) on first use and then
/// shared, and recently decoded blocks are kept in a cache bounded in
/// bytes; a `Tablebase` is `Send + Sync`, so one instance serves every
/// thread. Even tables (`Tablebase<Even>`, the default) answer values,
/// forced ones (`Tablebase<Forced>`) bounds: asking the wrong kind does not
/// compile.
pub struct Tablebase<K: TableKind = Even> {
    rules: Rules,
    root: PathBuf,
    dir: PathBuf,
    /// How level files are read.
    access: Access,
    /// Indexed by level: `None` for a level the tables cannot answer for
    /// (its file, or the file of a level it needs, is missing).
    levels: Vec<Option<OnceLock<Table<K>>>>,
    /// The levels available, as [`levels_available`] found them.
    available: Vec<u32>,
    cache: BlockCache,
    /// The cache's capacity in bytes, known without taking the lock.
    cache_capacity: usize,
    kind: PhantomData<K>,
}

impl<K: TableKind> Tablebase<K> {
    /// The tables of `rules` under `root` (in the subdirectory named by
    /// `mancala_format::dir_name`, e.g. `tables/oware-6` or
    /// `tables/oware-6-forced`), with the default cache. A level is
    /// available if its file is present with those of every level it
    /// needs (`Rules::levels_needed`): every level from 0 up to the first
    /// gap, and past it those that never need the missing level (in the
    /// Oware family, the level just above a gap).
    pub fn open(root: impl AsRef<Path>, rules: Rules) -> Result<Tablebase<K>> {
        Tablebase::open_with_cache(root, rules, DEFAULT_CACHE_BYTES)
    }

    /// Like [`Tablebase::open`], with about `cache_bytes` of decoded blocks
    /// kept (0: none). The cache's memory is taken only as blocks are
    /// kept.
    pub fn open_with_cache(
        root: impl AsRef<Path>,
        rules: Rules,
        cache_bytes: usize,
    ) -> Result<Tablebase<K>> {
        Tablebase::open_with(root, rules, cache_bytes, Access::Mapped)
    }

    /// Like [`Tablebase::open_with_cache`], with level files read as
    /// `access` says: [`Access::Read`] for a process whose files may change
    /// under it (a server), which then gets errors, never a fault, and can
    /// ask [`Tablebase::changed_on_disk`] when to open the tables afresh.
    pub fn open_with(
        root: impl AsRef<Path>,
        rules: Rules,
        cache_bytes: usize,
        access: Access,
    ) -> Result<Tablebase<K>> {
        let root = root.as_ref().to_path_buf();
        let dir = tables_dir(&root, &rules, K::CYCLES);
        let available = available::<K>(&dir, &rules);
        let mut levels: Vec<_> = (0..available.last().map_or(0, |&max| max + 1))
            .map(|_| None)
            .collect();
        for &n in &available {
            levels[n as usize] = Some(OnceLock::new());
        }
        Ok(Tablebase {
            rules,
            root,
            dir,
            access,
            levels,
            available,
            cache: BlockCache::new(cache_bytes),
            cache_capacity: cache_bytes,
            kind: PhantomData,
        })
    }

    /// The rule set.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The kind of tables.
    pub fn cycles(&self) -> Cycles {
        K::CYCLES
    }

    /// The highest level available, if any.
    pub fn max_level(&self) -> Option<u32> {
        self.available.last().copied()
    }

    /// Whether level `n` is available (see [`Tablebase::open`]).
    pub fn has_level(&self, n: u32) -> bool {
        self.levels.get(n as usize).is_some_and(Option::is_some)
    }

    /// The levels available, ascending.
    pub fn levels(&self) -> &[u32] {
        &self.available
    }

    /// The directory holding this rule set's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The table directory the tables were opened from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the tables answer `pos`: the rule set's pit count and a level
    /// that is available.
    pub fn check(&self, pos: &Position) -> Result<()> {
        if pos.pits() != self.rules.pits() {
            return Err(NotationError::WrongPits {
                position: *pos,
                expected: self.rules.pits(),
                what: "tables",
            }
            .into());
        }
        if !self.has_level(pos.stones()) {
            return Err(self.out_of_range(pos.stones()));
        }
        Ok(())
    }

    /// The open table of level `n`.
    pub fn level(&self, n: u32) -> Result<&Table<K>> {
        let cell = self
            .levels
            .get(n as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| self.out_of_range(n))?;
        if let Some(table) = cell.get() {
            return Ok(table);
        }
        let expected = TableId {
            rules: self.rules,
            level: n,
        };
        let table = Table::open_with(&table_path::<K>(&self.dir, n), Some(expected), self.access)
            .map_err(|source| self.table_error(n, source))?;
        Ok(cell.get_or_init(|| table))
    }

    /// Whether the tables on disk are not the ones this tablebase holds:
    /// a level file it opened was removed, replaced, rewritten or truncated,
    /// or levels were added or removed. A process that must follow its
    /// files opens the tables afresh then.
    pub fn changed_on_disk(&self) -> bool {
        available::<K>(&self.dir, &self.rules) != self.available
            || self
                .levels
                .iter()
                .flatten()
                .filter_map(OnceLock::get)
                .any(|table| table.changed_on_disk())
    }

    /// A table file's error, with the level it concerns.
    pub(crate) fn table_error(&self, level: u32, source: FormatError) -> Error {
        Error::Table {
            rules: self.rules,
            cycles: K::CYCLES,
            level,
            source,
        }
    }

    fn out_of_range(&self, stones: u32) -> Error {
        Error::OutOfRange {
            rules: self.rules,
            cycles: K::CYCLES,
            stones,
            available: self.max_level(),
            root: self.root.clone(),
        }
    }

    /// Level, block and offset of `pos` in the tables.
    pub(crate) fn locate(&self, pos: &Position) -> Result<(u32, u64, usize)> {
        self.check(pos)?;
        let n = pos.stones();
        let (block, offset) = self
            .level(n)?
            .locate(rank(pos))
            .map_err(|e| self.table_error(n, e))?;
        Ok((n, block, offset))
    }

    /// The stored symbols of `pos`: from the cache, or decoded (see
    /// `BlockCache` for when a block is kept).
    pub(crate) fn symbols_of(&self, pos: &Position) -> Result<[i8; 2]> {
        let (n, block, offset) = self.locate(pos)?;
        self.symbols_at(n, block, offset)
    }

    /// The block cache.
    pub(crate) fn block_cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The block cache, for a level `table` small enough to be held in it
    /// whole: a larger one would only evict its own blocks.
    pub(crate) fn cache_for(&self, table: &Table<K>) -> Option<&BlockCache> {
        (table.symbols() <= self.cache_capacity).then_some(&self.cache)
    }

    fn symbols_at(&self, n: u32, block: u64, offset: usize) -> Result<[i8; 2]> {
        let width = K::WIDTH;
        let key = (n, block);
        let mut symbols = [0i8; 2];
        let table = self.level(n)?;
        let cache = self.cache_for(table);
        if let Some(cache) = cache {
            if cache.read(key, offset, &mut symbols[..width]) {
                return Ok(symbols);
            }
        }
        let keep = cache.is_some_and(|cache| cache.admits(key));
        let failed = |e| self.table_error(n, e);
        if keep {
            let values = table
                .decode_block(block)
                .map_err(failed)?
                .into_boxed_slice();
            symbols[..width].copy_from_slice(&values[offset..offset + width]);
            self.cache.keep(key, table.header().block_count, values);
        } else {
            let mut prefix = vec![0i8; offset + width];
            table.decode_prefix(block, &mut prefix).map_err(failed)?;
            symbols[..width].copy_from_slice(&prefix[offset..]);
        }
        Ok(symbols)
    }
}

impl Tablebase<Even> {
    /// The exact value of `pos` for the player to move (`docs/RULES.md`).
    pub fn value(&self, pos: &Position) -> Result<i32> {
        let entry = self.entry(pos)?;
        EntryReader::value(self, pos, entry, Window::ALL)
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
}

/// The levels of kind `K` that the files in `dir` answer for: a level of
/// values with those of every level it needs, a level of depths alone (a
/// depth probe reads its own level's table only).
fn available<K: TableKind>(dir: &Path, rules: &Rules) -> Vec<u32> {
    match K::STORES {
        Stores::Values => levels_available(dir, rules, MAX_LEVEL),
        Stores::Depths => (0..=MAX_LEVEL)
            .filter(|&n| depth_path(dir, n).is_file())
            .collect(),
    }
}

impl Tablebase<Depth> {
    /// The depth to conversion of `pos` (`docs/RULES.md`), in plies: `None`
    /// where it has none (a position worth 0). A depth table stores the
    /// depths of the positions whose mover is ahead; the others are read
    /// from the even tables `values` of the same rule set, one ply deep
    /// where the mover is behind.
    pub fn depth(&self, values: &Tablebase<Even>, pos: &Position) -> Result<Option<u16>> {
        self.check(pos)?;
        let value = values.value(pos)?;
        depth_of(
            &self.rules,
            pos,
            value,
            |child| values.value(child),
            |ahead| self.stored_depth(ahead),
        )
    }

    /// The plies to conversion through move `m` of a position these tables
    /// hold: 1 if it converts (leaves the level), else one more than its
    /// child's depth; `None` where the child has none.
    pub fn move_depth(&self, values: &Tablebase<Even>, m: &Move) -> Result<Option<u16>> {
        if m.leaves_level() {
            return Ok(Some(1));
        }
        Ok(self.depth(values, &m.child)?.map(|d| d + 1))
    }
}

impl Tablebase<Depth<Forced>> {
    /// The depth to conversion of `pos`'s mover's forced bound
    /// (`docs/RULES.md`), in plies: within how many he is sure to have
    /// realized it, whatever his opponent plays. `None` where his bound is
    /// 0. `bounds` are the forced tables of the same rule set.
    pub fn depth(&self, bounds: &Tablebase<Forced>, pos: &Position) -> Result<Option<u16>> {
        self.check(pos)?;
        Ok(match bounds.bounds(pos)?.mover {
            0 => None,
            _ => Some(self.stored_depth(pos)?),
        })
    }

    /// The plies within which move `m` of a position these tables hold
    /// realizes what it makes sure of for its mover: 1 if it leaves the
    /// level, else one more than the child's depth for its opponent's
    /// bound (read from the grandchildren, [`forced_opponent_depth`]); `None`
    /// where the move makes sure of nothing.
    pub fn move_depth(&self, bounds: &Tablebase<Forced>, m: &Move) -> Result<Option<u16>> {
        if m.leaves_level() {
            return Ok(Some(1));
        }
        self.check(&m.child)?;
        let depth = forced_opponent_depth(
            &self.rules,
            &m.child,
            bounds.bounds(&m.child)?,
            |grandchild| bounds.bounds(grandchild),
            |pos| self.stored_depth(pos),
        )?;
        Ok(depth.map(|d| d + 1))
    }
}

impl<V: Realized> Tablebase<Depth<V>> {
    /// The depth the table stores for `pos`, a position whose mover has a
    /// value to realize: its symbol, or its entry in the header's list of
    /// long ones.
    fn stored_depth(&self, pos: &Position) -> Result<u16> {
        let n = pos.stones();
        match Depth::<V>::read(n, &self.symbols_of(pos)?) {
            StoredDepth::Plies(plies) => Ok(plies),
            StoredDepth::Long => self
                .level(n)?
                .long_depth(rank(pos))
                .map_err(|e| self.table_error(n, e)),
        }
    }
}

/// Where a move that keeps the value `value` of its position, converting in
/// `plies`, stands among the moves that do, the lowest first: the side
/// ahead's nearest conversion, the side behind's farthest, so that playing
/// the first always realizes the value. A move without a depth (which only
/// a damaged table gives) comes last for the side ahead, first for the
/// side behind.
pub fn conversion_rank(value: i32, plies: Option<u16>) -> i64 {
    let plies = plies.map_or(i64::MAX, i64::from);
    if value > 0 {
        plies
    } else {
        -plies
    }
}

/// A tablebase reads its entries through the block cache, and restores a
/// value by the encoding of the level it lies in.
impl EntryReader for Tablebase<Even> {
    type Error = Error;

    fn entry(&self, pos: &Position) -> Result<i32> {
        Ok(self.symbols_of(pos)?[0] as i32)
    }

    /// Every child located first, then the cache read once for all, so the
    /// misses overlap; blocks not held are decoded one by one.
    fn child_entries(&self, moves: &[Move], out: &mut [i32]) -> Result<()> {
        let mut wanted = [((0, 0), 0); MAX_PITS];
        for (m, wanted) in moves.iter().zip(&mut wanted) {
            let (n, block, offset) = self.locate(&m.child)?;
            *wanted = ((n, block), offset);
        }
        let wanted = &wanted[..moves.len()];
        let mut found = [None; MAX_PITS];
        self.cache.read_firsts(wanted, &mut found[..moves.len()]);
        for ((&((n, block), offset), found), out) in wanted.iter().zip(found).zip(out) {
            *out = match found {
                Some(entry) => entry as i32,
                None => self.symbols_at(n, block, offset)?[0] as i32,
            };
        }
        Ok(())
    }

    #[inline]
    fn value(&self, pos: &Position, entry: i32, window: Window) -> Result<i32> {
        restore_value(self, self, pos, entry, window)
    }
}

/// The value of `pos` given its entry, by the encoding of its level in
/// `tb`, reading other entries from `reader`.
#[inline]
pub(crate) fn restore_value<R: EntryReader<Error = Error>>(
    tb: &Tablebase<Even>,
    reader: &R,
    pos: &Position,
    entry: i32,
    window: Window,
) -> Result<i32> {
    let table = tb.level(pos.stones())?;
    if table.entries_are_values() {
        return Ok(entry);
    }
    table
        .encoding()
        .value(tb.rules(), reader, pos, entry, window)
}

impl Tablebase<Forced> {
    /// The forced bounds of `pos` (`docs/RULES.md`, "Two kinds of table").
    pub fn bounds(&self, pos: &Position) -> Result<Bounds> {
        let symbols = self.symbols_of(pos)?;
        self.bounds_from(pos.stones(), &symbols, rank(pos))
    }

    /// Reads the bounds of index `at` of level `n` from its two symbols.
    pub(crate) fn bounds_from(&self, n: u32, symbols: &[i8], at: u64) -> Result<Bounds> {
        Forced::decode(n, symbols).ok_or_else(|| {
            let path = self
                .level(n)
                .map(|t| t.path().to_path_buf())
                .unwrap_or_default();
            self.table_error(
                n,
                FormatError::Corrupted {
                    path,
                    what: format!("impossible bounds stored for index {at}"),
                },
            )
        })
    }
}
