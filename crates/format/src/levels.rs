//! Levels held decoded, for random access: what a build reads while it
//! solves the next level, and what a verification recomputes from.
//!
//! A decoded level is the table's symbols ([`TableKind::WIDTH`] signed
//! bytes per position, in index order), with a compact table's values
//! restored. Small levels stay in memory; a large one (by default from
//! [`MAPPED_MIN_POSITIONS`]) is written to an uncompressed file in a scratch
//! directory and memory-mapped, so the OS pages it and the process's own
//! memory stays with the level being solved ([`Scratch`]). A scratch
//! file may hold its level in [`Order::Flipped`], so that a forward pass
//! reads it nearly in sequence: callers find entries with
//! [`Levels::locate`], never by computing a rank themselves.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use mancala_core::Position;
use memmap2::{Mmap, MmapMut};

use crate::error::FormatError;
use crate::file::Table;
use crate::kind::{Even, TableKind};
use crate::order::{flip, flip_table, Order, RowRank};

/// Levels with at least this many positions are held as mapped files by
/// default (64 Mi positions: oware levels from 21 stones on).
pub const MAPPED_MIN_POSITIONS: u64 = 1 << 26;

/// The symbols of one decoded level: in memory, or mapped from an
/// uncompressed scratch file; or none, for a level the rules never reach
/// from the levels read ([`Levels::push_unreached`]).
enum LevelData {
    Owned(Vec<i8>),
    Mapped(Mmap),
    Unreached,
}

/// Decoded levels `0..len()` of one kind of table.
pub struct Levels<K: TableKind> {
    levels: Vec<(LevelData, Order)>,
    kind: PhantomData<K>,
}

impl<K: TableKind> Default for Levels<K> {
    fn default() -> Self {
        Levels {
            levels: Vec::new(),
            kind: PhantomData,
        }
    }
}

impl<K: TableKind> Levels<K> {
    /// No level held yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next level's symbols, in rank order (its stone count
    /// must equal `len()`).
    pub fn push(&mut self, symbols: Vec<i8>) {
        self.levels.push((LevelData::Owned(symbols), Order::Rank));
    }

    /// Skips the next level: one that no level read from these levels
    /// reaches (`Rules::reaches`), such as the level just below the top
    /// one in the Oware family. Reading it is a bug, and panics.
    pub fn push_unreached(&mut self) {
        self.levels.push((LevelData::Unreached, Order::Rank));
    }

    /// Whether level `n` was skipped ([`Levels::push_unreached`]).
    pub fn is_unreached(&self, n: u32) -> bool {
        matches!(self.levels[n as usize].0, LevelData::Unreached)
    }

    /// Appends the next level as a mapped file of its symbols in `order`.
    pub fn push_mapped(&mut self, map: Mmap, order: Order) {
        self.levels.push((LevelData::Mapped(map), order));
    }

    /// Number of levels held (levels `0..len()`).
    pub fn len(&self) -> usize {
        self.levels.len()
    }

    /// Whether no level is held.
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }

    /// The symbols of level `n`, [`TableKind::WIDTH`] per position, in
    /// its [`Levels::order`].
    #[inline]
    pub fn symbols(&self, n: u32) -> &[i8] {
        match &self.levels[n as usize].0 {
            LevelData::Owned(symbols) => symbols,
            LevelData::Mapped(map) => bytemuck::cast_slice(map),
            LevelData::Unreached => panic!("level {n} was skipped as unreached, yet read"),
        }
    }

    /// The order level `n` is held in.
    #[inline]
    pub fn order(&self, n: u32) -> Order {
        self.levels[n as usize].1
    }

    /// Where the entry of `pos`, of level `n`, is held: the index to give
    /// [`Levels::entry_at`] and [`Levels::prefetch`].
    #[inline]
    pub fn locate(&self, n: u32, pos: &Position) -> u64 {
        debug_assert_eq!(pos.stones(), n);
        self.order(n).index(pos)
    }

    /// [`Levels::locate`] of the position of level `n` whose rows have
    /// the ranks `mover` and `opponent`.
    #[inline]
    pub fn locate_rows(&self, n: u32, mover: RowRank, opponent: RowRank) -> u64 {
        self.order(n).index_of_rows(mover, opponent)
    }

    /// The entry of `pos`, whose level must be held.
    #[inline]
    pub fn entry(&self, pos: &Position) -> K::Entry {
        self.entry_in(pos.stones(), pos)
    }

    /// The entry of `pos`, of level `n` (which the caller knows, as a
    /// solver does from the stones a move captured).
    #[inline]
    pub fn entry_in(&self, n: u32, pos: &Position) -> K::Entry {
        self.entry_at(n, self.locate(n, pos))
    }

    /// The entry held at `index` of level `n` ([`Levels::locate`]).
    #[inline]
    pub fn entry_at(&self, n: u32, index: u64) -> K::Entry {
        let at = index as usize * K::WIDTH;
        K::read(n, &self.symbols(n)[at..at + K::WIDTH])
    }

    /// Asks the processor to bring the entry at `index` of level `n`
    /// into its caches ([`prefetch`]), ahead of an [`Levels::entry_at`].
    #[inline]
    pub fn prefetch(&self, n: u32, index: u64) {
        prefetch(self.symbols(n), index as usize * K::WIDTH);
    }

    /// [`Levels::locate`], with the entry prefetched: what a pass that
    /// reads several children of a position calls before reading any.
    #[inline]
    pub fn locate_prefetched(&self, n: u32, pos: &Position) -> u64 {
        let at = self.locate(n, pos);
        self.prefetch(n, at);
        at
    }

    /// Lets the OS take back the resident pages of mapped levels (they are
    /// read again from their files if touched later): a solver's
    /// propagation never reads lower levels, so the level being solved
    /// gets that memory.
    pub fn release_mapped_pages(&self) {
        for (level, _) in &self.levels {
            if let LevelData::Mapped(map) = level {
                // SAFETY: the mapping is shared and file-backed, and never
                // written through: dropping its pages loses nothing, they are
                // read back from the file (or page cache) on the next access.
                let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            }
        }
    }
}

impl Levels<Even> {
    /// The value of `pos`, whose level must be held.
    #[inline]
    pub fn value(&self, pos: &Position) -> i32 {
        let n = pos.stones();
        self.symbols(n)[self.locate(n, pos) as usize] as i32
    }
}

/// Asks the processor to bring `data[at]` into its caches, if `at` is in
/// range: a solver that knows its next random lookups issues them all
/// first, so their memory latencies overlap instead of adding up. Only a
/// hint: on processors without one it does nothing.
#[inline]
pub fn prefetch<T>(data: &[T], at: usize) {
    if let Some(item) = data.get(at) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch never faults and changes no memory; every
        // x86-64 processor has the instruction (SSE).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = item;
    }
}

/// A new file of `len` zero bytes at `path` (replacing any there), mapped
/// for writing: where a solver puts a level too large for its memory. The
/// file must be the process's own (in a directory of its own, or unlinked
/// at once): another writer would change the mapping under it.
///
/// Its blocks are reserved at once where the file system can: a sparse
/// file on a disk that fills up would kill the process with `SIGBUS` at
/// the first write to a page with no block left, where this fails with
/// the disk's error.
pub fn new_mapped_file(path: &Path, len: u64) -> Result<MmapMut, FormatError> {
    let io = |e| FormatError::io(path, e);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(io)?;
    reserve(&file, len).map_err(io)?;
    // SAFETY: the file is the process's own (see above).
    unsafe { MmapMut::map_mut(&file) }.map_err(io)
}

/// Makes the empty `file` `len` bytes long, its blocks allocated where the
/// file system supports it (else sparse, as `set_len` leaves it).
fn reserve(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let len = libc::off_t::try_from(len)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        if len > 0 {
            // SAFETY: a plain system call on an open descriptor.
            if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } == 0 {
                return Ok(());
            }
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EOPNOTSUPP) {
                return Err(error);
            }
        }
    }
    file.set_len(len)
}

/// A scratch directory for decoded levels too large to hold in memory.
/// Nothing touches the disk until the first such level: the directory is
/// then created (emptied first if a killed run left it), and it is removed
/// when the `Scratch` is dropped (mappings stay valid until they are
/// dropped too). So a run that maps nothing writes nothing, and works on a
/// read-only directory. A [`Scratch::reusable`] one keeps the levels it
/// decoded from tables for the next run instead.
pub struct Scratch {
    dir: PathBuf,
    mapped_min_positions: u64,
    /// The pits per side of levels held flipped ([`Scratch::flipped`]).
    flipped_pits: Option<usize>,
    /// Bytes left for levels held in memory ([`Scratch::with_memory`]).
    memory_left: Option<AtomicU64>,
    /// Whether levels decoded from tables are kept ([`Scratch::reusable`]).
    reusable: bool,
    /// The notes of the levels a reusable space holds in memory, by level:
    /// one moved to a file later ([`Scratch::reserve`]) is kept under its
    /// note, as if it had been decoded straight into the file.
    memory_notes: Mutex<BTreeMap<u32, String>>,
    /// Whether the directory was created, and so is to be removed.
    created: AtomicBool,
}

impl Scratch {
    /// Scratch space in `dir`, for levels of at least
    /// `mapped_min_positions` positions.
    pub fn new(dir: impl Into<PathBuf>, mapped_min_positions: u64) -> Scratch {
        Scratch {
            dir: dir.into(),
            mapped_min_positions,
            flipped_pits: None,
            memory_left: None,
            reusable: false,
            memory_notes: Mutex::default(),
            created: AtomicBool::new(false),
        }
    }

    /// This scratch space, holding its mapped levels (of boards of `pits`
    /// pits per side) in [`Order::Flipped`]: what a solver whose lower
    /// levels may not fit in the page cache wants. A level a solver wrote,
    /// or a compact table, is transposed from rank order; a table whose
    /// entries are its values is gathered from its blocks and transposed
    /// a part at a time, so its flipped file is all it writes.
    pub fn flipped(mut self, pits: usize) -> Scratch {
        self.flipped_pits = Some(pits);
        self
    }

    /// This scratch space, keeping the files of the levels it decodes from
    /// tables for a later run over the same tables, which maps them
    /// instead of decoding the tables again: what a long run resumed after
    /// an interruption wants, since decoding its large lower levels takes
    /// minutes. Each such file is written under a temporary name and
    /// renamed when complete, with a note of the table it came from (its
    /// checksum, size and level) and of how it is held beside it; a file
    /// without its note, or whose note does not match, is decoded again.
    /// A level decoded into memory and moved to a file later
    /// ([`Scratch::reserve`]) is kept the same way.
    /// The directory must be the process's own while it runs (a lock the
    /// caller holds): its first use sweeps away everything but complete,
    /// noted files. Dropping the scratch space keeps the directory; a run
    /// that ends its work removes it with [`Scratch::clear`].
    pub fn reusable(mut self) -> Scratch {
        self.reusable = true;
        self
    }

    /// This scratch space, holding in memory (by rank) the levels that fit
    /// in `bytes` along with those held so far, smallest first, rather
    /// than as mapped files: a build whose memory has room spares the disk.
    /// Levels under the mapping threshold are always held in memory, and
    /// count.
    pub fn with_memory(mut self, bytes: u64) -> Scratch {
        self.memory_left = Some(AtomicU64::new(bytes));
        self
    }

    /// Gives `bytes` more to the levels held in memory from now on: what a
    /// caller set aside for a level it holds later (with no memory budget,
    /// there is nothing to give to).
    pub fn grant(&self, bytes: u64) {
        if let Some(left) = &self.memory_left {
            left.fetch_add(bytes, Relaxed);
        }
    }

    /// Makes `bytes` of the memory budget free for the next level held,
    /// moving the largest levels held in memory (of at least the mapping
    /// threshold's positions) to scratch files until they are: what a
    /// caller wants when that level is read at random and the levels
    /// below it, once mapped, are read nearly in sequence. The small
    /// levels, always held in memory, are overlooked: what they take
    /// beyond the budget does not count against `bytes`. With no memory
    /// budget, it does nothing.
    pub fn reserve<K: TableKind>(
        &self,
        levels: &mut Levels<K>,
        bytes: u64,
    ) -> Result<(), FormatError> {
        let Some(left) = &self.memory_left else {
            return Ok(());
        };
        while left.load(Relaxed) < bytes {
            let Some(n) = self.largest_movable(levels) else {
                break;
            };
            self.move_to_file(levels, n)?;
        }
        left.fetch_max(bytes, Relaxed);
        Ok(())
    }

    /// The largest level held in memory that is not small, if any.
    fn largest_movable<K: TableKind>(&self, levels: &Levels<K>) -> Option<u32> {
        let movable = |(n, (data, _)): (usize, &(LevelData, Order))| match data {
            LevelData::Owned(symbols)
                if (symbols.len() / K::WIDTH) as u64 >= self.mapped_min_positions =>
            {
                Some((symbols.len(), n as u32))
            }
            _ => None,
        };
        levels
            .levels
            .iter()
            .enumerate()
            .filter_map(movable)
            .max()
            .map(|(_, n)| n)
    }

    /// Moves level `n`, held in memory, to a scratch file, and gives its
    /// bytes back to the budget.
    fn move_to_file<K: TableKind>(
        &self,
        levels: &mut Levels<K>,
        n: u32,
    ) -> Result<(), FormatError> {
        let slot = &mut levels.levels[n as usize];
        let LevelData::Owned(symbols) = &slot.0 else {
            unreachable!("level {n} is not held in memory");
        };
        let map = self.level_file::<K>(n, symbols)?;
        if let Some(note) = self.memory_note(n) {
            self.seal(n, &note)?;
        }
        let bytes = symbols.len() as u64;
        *slot = (LevelData::Mapped(self.read_only(n, map)?), self.order());
        self.grant(bytes);
        Ok(())
    }

    /// Whether a level of `positions` positions, `bytes` bytes decoded,
    /// is held in memory (and takes its share of what is left).
    fn in_memory(&self, positions: u64, bytes: usize) -> bool {
        let bytes = bytes as u64;
        let small = positions < self.mapped_min_positions;
        let Some(left) = &self.memory_left else {
            return small;
        };
        let taken = left
            .fetch_update(Relaxed, Relaxed, |left| {
                left.checked_sub(bytes).or(small.then_some(0))
            })
            .is_ok();
        small || taken
    }

    /// The order mapped levels are held in.
    fn order(&self) -> Order {
        match self.flipped_pits {
            Some(_) => Order::Flipped,
            None => Order::Rank,
        }
    }

    /// Creates the directory on first use: emptied, or, if reusable, with
    /// only its complete, noted files left.
    fn ready(&self) -> Result<(), FormatError> {
        if !self.created.load(Relaxed) {
            let io = |e| FormatError::io(&self.dir, e);
            if self.reusable && self.dir.is_dir() {
                self.sweep().map_err(io)?;
            } else if self.dir.exists() {
                std::fs::remove_dir_all(&self.dir).map_err(io)?;
            }
            std::fs::create_dir_all(&self.dir).map_err(io)?;
            self.created.store(true, Relaxed);
        }
        Ok(())
    }

    /// Removes every file of the directory but the level files that have
    /// their notes, and the notes: what a killed run left half-written.
    fn sweep(&self) -> std::io::Result<()> {
        let names: Vec<String> = std::fs::read_dir(&self.dir)?
            .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()?;
        let kept = |name: &str| {
            let partner = match (name.strip_suffix(".raw"), name.strip_suffix(".note")) {
                (Some(level), _) => format!("{level}.note"),
                (_, Some(level)) => format!("{level}.raw"),
                _ => return false,
            };
            names.contains(&partner)
        };
        for name in names.iter().filter(|name| !kept(name)) {
            let path = self.dir.join(name);
            match path.is_dir() {
                true => std::fs::remove_dir_all(path)?,
                false => std::fs::remove_file(path)?,
            }
        }
        Ok(())
    }

    /// What a reusable file of level `table` held in this space's order
    /// was made from, as its note says it: the table file as the file
    /// system knows it (a table rewritten since is another file, and its
    /// checksum alone would not tell: two tables whose headers alone
    /// differ share it), and how its symbols are laid out.
    fn note<K: TableKind>(&self, table: &Table<K>) -> Result<String, FormatError> {
        let io = |e| FormatError::io(table.path(), e);
        let metadata = std::fs::metadata(table.path()).map_err(io)?;
        let modified = metadata
            .modified()
            .map_err(io)?
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        #[cfg(unix)]
        let file = {
            use std::os::unix::fs::MetadataExt;
            format!("device {} inode {}", metadata.dev(), metadata.ino())
        };
        #[cfg(not(unix))]
        let file = "";
        let header = table.header();
        Ok(format!(
            "{} level {}: {} ({file}), {} bytes, modified {}.{:09}, crc32 {:08x}; \
             {} symbols of {} bytes, {:?}\n",
            header.rules.variant().name(),
            header.level,
            table.path().display(),
            table.bytes(),
            modified.as_secs(),
            modified.subsec_nanos(),
            table.stored_checksum()?,
            table.symbols(),
            K::WIDTH,
            self.order(),
        ))
    }

    /// Level `n`'s file as a run before this one left it for `note`, if
    /// it did: complete, its note matching, and its bytes the ones the note
    /// has the checksum of (a damaged file is decoded again).
    fn reused(&self, n: u32, note: &str, len: usize) -> Result<Option<Mmap>, FormatError> {
        let (path, note_path) = (self.path(n), self.note_path(n));
        let matches = std::fs::metadata(&path).is_ok_and(|m| m.len() == len as u64)
            && std::fs::read_to_string(&note_path).is_ok_and(|kept| {
                let contents = file_crc(&path).map(|crc| contents_line(note, crc));
                contents.is_ok_and(|contents| kept == contents)
            });
        if !matches {
            return Ok(None);
        }
        let io = |e| FormatError::io(&path, e);
        let file = std::fs::File::open(&path).map_err(io)?;
        // SAFETY: the directory is the process's own while it runs
        // ([`Scratch::reusable`]): nothing writes the file while it is
        // mapped.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let _ = map.advise(memmap2::Advice::Random);
        Ok(Some(map))
    }

    /// Notes level `n`, held ([`Scratch::hold`], [`Scratch::hold_mapped`])
    /// from what the caller solved and then stored as `table`, for a later
    /// run, as if it had been decoded from that table: its file now, or,
    /// held in memory, the file it is moved to. Nothing to do if the space
    /// is not reusable.
    pub fn keep_for_reuse<K: TableKind>(
        &self,
        n: u32,
        table: &Table<K>,
    ) -> Result<(), FormatError> {
        if !self.reusable {
            return Ok(());
        }
        let note = self.note(table)?;
        if self.part_path(n).exists() {
            return self.seal(n, &note);
        }
        self.remember_note(n, note);
        Ok(())
    }

    /// Remembers the note of level `n`, held in memory, for the file it
    /// may be moved to.
    fn remember_note(&self, n: u32, note: String) {
        self.notes().insert(n, note);
    }

    /// The note remembered for level `n`, now to be written.
    fn memory_note(&self, n: u32) -> Option<String> {
        self.notes().remove(&n)
    }

    fn notes(&self) -> std::sync::MutexGuard<'_, BTreeMap<u32, String>> {
        // A panic elsewhere cannot leave the map half-changed.
        self.memory_notes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Seals level `n`'s complete file for a later run: flushed to disk,
    /// renamed from its temporary name, and its note written beside it
    /// (itself renamed into place, so that a note is never half-written).
    fn seal(&self, n: u32, note: &str) -> Result<(), FormatError> {
        let (part, path, note_path) = (self.part_path(n), self.path(n), self.note_path(n));
        let io = |e| FormatError::io(&part, e);
        std::fs::File::open(&part)
            .and_then(|f| f.sync_all())
            .map_err(io)?;
        let crc = file_crc(&part).map_err(io)?;
        std::fs::rename(&part, &path).map_err(|e| FormatError::io(&path, e))?;
        let written = self.dir.join(format!("level-{n:03}.note.part"));
        std::fs::write(&written, contents_line(note, crc))
            .map_err(|e| FormatError::io(&written, e))?;
        std::fs::rename(&written, &note_path).map_err(|e| FormatError::io(&note_path, e))
    }

    /// Removes the scratch files, for a build that will read none of the
    /// levels held here again: their blocks are freed once their mappings
    /// are dropped as well (a reusable space's, an earlier run's too). A
    /// level held later creates the directory anew.
    pub fn clear(&self) -> Result<(), FormatError> {
        let created = self.created.swap(false, Relaxed);
        if created || (self.reusable && self.dir.exists()) {
            std::fs::remove_dir_all(&self.dir).map_err(|e| FormatError::io(&self.dir, e))?;
        }
        Ok(())
    }

    /// Appends level `n`'s `symbols` to `levels`.
    pub fn hold<K: TableKind>(
        &self,
        levels: &mut Levels<K>,
        n: u32,
        symbols: Vec<i8>,
    ) -> Result<(), FormatError> {
        if self.in_memory((symbols.len() / K::WIDTH) as u64, symbols.len()) {
            levels.push(symbols);
            return Ok(());
        }
        let map = self.level_file::<K>(n, &symbols)?;
        drop(symbols);
        levels.push_mapped(self.read_only(n, map)?, self.order());
        Ok(())
    }

    /// Appends level `n`, whose symbols a solver wrote to `map` (a mapping
    /// of a file of its own), to `levels`.
    pub fn hold_mapped<K: TableKind>(
        &self,
        levels: &mut Levels<K>,
        n: u32,
        map: MmapMut,
    ) -> Result<(), FormatError> {
        if self.in_memory((map.len() / K::WIDTH) as u64, map.len()) {
            levels.push(bytemuck::cast_slice(&map).to_vec());
            return Ok(());
        }
        let map = match self.flipped_pits {
            Some(pits) => self.flipped_file::<K>(pits, n, bytemuck::cast_slice(&map))?,
            None => map,
        };
        levels.push_mapped(self.read_only(n, map)?, self.order());
        Ok(())
    }

    /// Appends the level stored in `table` to `levels`, decoded and, for a
    /// compact table, with the values it left to its reader restored from
    /// the levels below (which `levels` holds).
    pub fn hold_table<K: TableKind>(
        &self,
        levels: &mut Levels<K>,
        table: &Table<K>,
    ) -> Result<(), FormatError> {
        let header = table.header();
        let n = header.level;
        let note = match self.reusable {
            true => Some(self.note(table)?),
            false => None,
        };
        if self.in_memory(header.positions, table.symbols()) {
            let symbols = table.decode_entries(levels)?;
            levels.push(symbols);
            if let Some(note) = note {
                self.remember_note(n, note);
            }
            return Ok(());
        }
        if let Some(note) = &note {
            self.ready()?;
            if let Some(map) = self.reused(n, note, table.symbols())? {
                levels.push_mapped(map, self.order());
                return Ok(());
            }
            // A level held before under another note: decoded again.
            let _ = std::fs::remove_file(self.note_path(n));
        }
        let map = match self.flipped_pits {
            Some(pits) if table.entries_are_values() => {
                let mut map = self.new_level_file(n, table.symbols())?;
                flip_table(table, pits, cast_mut(&mut map))?;
                // Nothing to restore: all that is left is the check each
                // entry gets on its own, which holds in any order.
                K::complete(table, cast_mut(&mut map), Order::Flipped, levels)?;
                map
            }
            Some(pits) => {
                // Restoring a compact level reads the level itself in its
                // own order: it is decoded whole, by rank, first.
                let mut ranked = self.new_file(&self.ranked_path(n), table.symbols())?;
                let _ = std::fs::remove_file(self.ranked_path(n));
                table.decode_entries_into(cast_mut(&mut ranked), levels)?;
                self.flipped_file::<K>(pits, n, bytemuck::cast_slice(&ranked))?
            }
            None => {
                let mut map = self.new_level_file(n, table.symbols())?;
                table.decode_entries_into(cast_mut(&mut map), levels)?;
                map
            }
        };
        if let Some(note) = &note {
            self.seal(n, note)?;
        }
        levels.push_mapped(self.read_only(n, map)?, self.order());
        Ok(())
    }

    /// Level `n`'s file: while it is written, and always if it is not to
    /// be reused, under its temporary name ([`Scratch::part_path`]).
    fn path(&self, n: u32) -> PathBuf {
        self.dir.join(format!("level-{n:03}.raw"))
    }

    /// Level `n`'s file until it is sealed ([`Scratch::seal`]).
    fn part_path(&self, n: u32) -> PathBuf {
        match self.reusable {
            true => self.dir.join(format!("level-{n:03}.part")),
            false => self.path(n),
        }
    }

    /// The note beside level `n`'s reusable file.
    fn note_path(&self, n: u32) -> PathBuf {
        self.dir.join(format!("level-{n:03}.note"))
    }

    /// Where a level to be held flipped is decoded by rank first (the file
    /// is unlinked as soon as it is mapped).
    fn ranked_path(&self, n: u32) -> PathBuf {
        self.dir.join(format!("level-{n:03}.ranked"))
    }

    /// Level `n`'s file, written with `ranked` (its symbols in rank
    /// order) in the order mapped levels are held in.
    fn level_file<K: TableKind>(&self, n: u32, ranked: &[i8]) -> Result<MmapMut, FormatError> {
        match self.flipped_pits {
            Some(pits) => self.flipped_file::<K>(pits, n, ranked),
            None => {
                let mut map = self.new_level_file(n, ranked.len())?;
                map.copy_from_slice(bytemuck::cast_slice(ranked));
                Ok(map)
            }
        }
    }

    /// Level `n`'s file, written with `ranked` (its symbols in rank
    /// order) flipped.
    fn flipped_file<K: TableKind>(
        &self,
        pits: usize,
        n: u32,
        ranked: &[i8],
    ) -> Result<MmapMut, FormatError> {
        let mut to = self.new_level_file(n, ranked.len())?;
        flip(pits, n, K::WIDTH, ranked, cast_mut(&mut to));
        Ok(to)
    }

    fn new_level_file(&self, n: u32, len: usize) -> Result<MmapMut, FormatError> {
        self.new_file(&self.part_path(n), len)
    }

    fn new_file(&self, path: &Path, len: usize) -> Result<MmapMut, FormatError> {
        self.ready()?;
        new_mapped_file(path, len as u64)
    }

    fn read_only(&self, n: u32, map: MmapMut) -> Result<Mmap, FormatError> {
        let map = map
            .make_read_only()
            .map_err(|e| FormatError::io(self.path(n), e))?;
        let _ = map.advise(memmap2::Advice::Random);
        Ok(map)
    }
}

/// The CRC-32 of the file at `path`, read in sequence.
fn file_crc(path: &Path) -> std::io::Result<u32> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let (mut crc, mut buffer) = (crc32fast::Hasher::new(), vec![0; 1 << 20]);
    loop {
        match file.read(&mut buffer)? {
            0 => return Ok(crc.finalize()),
            read => crc.update(&buffer[..read]),
        }
    }
}

/// A kept file's note: what it was made from (`note`), and the checksum
/// `crc` of its contents.
fn contents_line(note: &str, crc: u32) -> String {
    format!("{}, contents crc32 {crc:08x}\n", note.trim_end())
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if *self.created.get_mut() && !self.reusable {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A writable mapping's bytes as symbols.
fn cast_mut(map: &mut MmapMut) -> &mut [i8] {
    bytemuck::cast_slice_mut(&mut map[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new mapped file is all zeros, and on Linux its blocks are
    /// allocated up front, so a full disk fails it rather than a later
    /// write through the mapping.
    #[test]
    fn a_new_mapped_file_is_zeroed_and_reserved() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("level.raw");
        let len = 1 << 20;
        let map = new_mapped_file(&path, len).unwrap();
        assert_eq!(map.len() as u64, len);
        assert!(map.iter().all(|&b| b == 0));
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(&path).unwrap();
            assert!(meta.blocks() * 512 >= len, "the file is sparse");
        }
    }

    /// A scratch space with memory holds levels in memory, smallest first,
    /// while they fit, and maps the rest; small levels always stay.
    #[test]
    fn levels_stay_in_memory_while_they_fit() {
        let dir = tempfile::TempDir::new().unwrap();
        let root = dir.path().join("scratch");
        let scratch = Scratch::new(&root, 100).with_memory(1000);
        let mut levels = Levels::<Even>::new();
        let mapped = |n: u32| root.join(format!("level-{n:03}.raw")).exists();
        for (n, len) in [50, 400, 500, 200, 90].into_iter().enumerate() {
            let symbols: Vec<i8> = (0..len).map(|i| (i % 7) as i8).collect();
            scratch
                .hold(&mut levels, n as u32, symbols.clone())
                .unwrap();
            assert_eq!(levels.symbols(n as u32), &symbols[..], "level {n}");
        }
        // 50, 400 and 500 fit (950 of 1000), 200 no longer does, and 90
        // stays, as a small level, whatever is left.
        assert_eq!(
            (0..5).map(mapped).collect::<Vec<_>>(),
            [false, false, false, true, false]
        );
        let without = Scratch::new(dir.path().join("plain"), 100);
        let mut levels = Levels::<Even>::new();
        without.hold(&mut levels, 0, vec![1; 400]).unwrap();
        assert!(dir.path().join("plain/level-000.raw").exists());
    }

    /// Reserving room moves the largest levels held in memory to files
    /// until it is there, keeps small levels in memory whatever they take,
    /// and leaves every level's symbols as they were.
    #[test]
    fn reserving_room_moves_the_largest_levels_to_files() {
        let dir = tempfile::TempDir::new().unwrap();
        let root = dir.path().join("scratch");
        let scratch = Scratch::new(&root, 100).with_memory(1000);
        let mut levels = Levels::<Even>::new();
        let mapped = |n: u32| root.join(format!("level-{n:03}.raw")).exists();
        let all: Vec<Vec<i8>> = [90, 300, 400, 200]
            .into_iter()
            .map(|len| (0..len).map(|i| (i % 11) as i8).collect())
            .collect();
        for (n, symbols) in all.iter().enumerate() {
            scratch
                .hold(&mut levels, n as u32, symbols.clone())
                .unwrap();
        }
        assert!((0..4).all(|n| !mapped(n)), "990 of 1000 taken");
        // 10 left: moving level 2 (400) leaves 410, short of 500; then
        // level 1 (300): 710.
        scratch.reserve(&mut levels, 500).unwrap();
        assert_eq!(
            (0..4).map(mapped).collect::<Vec<_>>(),
            [false, true, true, false]
        );
        scratch.hold(&mut levels, 4, vec![3; 500]).unwrap();
        assert!(!mapped(4), "held in the room reserved");
        // Nothing left to move but the small level: the room is granted
        // all the same.
        scratch.reserve(&mut levels, 1000).unwrap();
        assert_eq!(
            (0..5).map(mapped).collect::<Vec<_>>(),
            [false, true, true, true, true]
        );
        scratch.hold(&mut levels, 5, vec![4; 1000]).unwrap();
        assert!(!mapped(5));
        for (n, symbols) in all.iter().enumerate() {
            assert_eq!(levels.symbols(n as u32), &symbols[..], "level {n}");
        }
        assert_eq!(levels.symbols(4), &[3; 500][..]);
        // Without a memory budget there is nothing to reserve.
        let without = Scratch::new(dir.path().join("plain"), 100);
        without.reserve(&mut levels, 1 << 20).unwrap();
        assert!(!dir.path().join("plain").exists());
    }

    /// A reusable scratch space keeps the levels it decoded from tables,
    /// each with its note, after it is dropped; the next one over the same
    /// tables maps them as they are, decodes a level again whose table
    /// changed, and sweeps away what a killed run left half-written.
    #[test]
    fn a_reusable_scratch_keeps_decoded_tables_for_the_next_run() {
        use crate::{write_level, Header};
        use mancala_core::{LevelIndex, Rules, Variant};
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let dir = tempfile::TempDir::new().unwrap();
        let table = |n: u32, shift: i8| {
            let count = LevelIndex::new(6, n).count() as usize;
            let symbols: Vec<i8> = (0..count)
                .map(|i| ((i as i8 % 3) + shift).clamp(-(n as i8), n as i8))
                .collect();
            let path = dir.path().join(format!("level-{n:03}.mtb"));
            write_level(
                &Header::for_symbols::<Even>(&rules, n, &symbols, 64),
                &symbols,
                &path,
            )
            .unwrap();
            (Table::<Even>::open(&path, None).unwrap(), symbols)
        };
        let root = dir.path().join("scratch");
        let file = |n: u32| root.join(format!("level-{n:03}.raw"));
        let hold = |tables: &[&Table<Even>]| {
            let scratch = Scratch::new(&root, 0).flipped(6).reusable();
            let mut levels = Levels::<Even>::new();
            for _ in 0..2 {
                levels.push_unreached();
            }
            for table in tables {
                scratch.hold_table(&mut levels, table).unwrap();
            }
            (0..tables.len() as u32)
                .map(|k| {
                    let n = 2 + k;
                    let index = LevelIndex::new(6, n);
                    let by_rank: Vec<i8> = (0..index.count())
                        .map(|at| levels.entry(&index.unrank(at)))
                        .collect();
                    by_rank
                })
                .collect::<Vec<_>>()
        };
        let ((two, two_symbols), (three, three_symbols)) = (table(2, 0), table(3, 0));
        assert_eq!(hold(&[&two, &three]), [two_symbols.clone(), three_symbols]);
        let modified = |n: u32| std::fs::metadata(file(n)).unwrap().modified().unwrap();
        let (two_made, three_made) = (modified(2), modified(3));
        assert!(root.join("level-003.note").exists(), "kept with its note");
        // A killed run's leftovers.
        std::fs::write(root.join("level-004.part"), [1, 2, 3]).unwrap();
        std::fs::write(root.join("level-005.raw"), [1, 2, 3]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (three, three_symbols) = table(3, 1);
        assert_eq!(hold(&[&two, &three]), [two_symbols.clone(), three_symbols]);
        assert_eq!(modified(2), two_made, "level 2 mapped as it was");
        assert_ne!(modified(3), three_made, "level 3 decoded again");
        for leftover in ["level-004.part", "level-005.raw"] {
            assert!(!root.join(leftover).exists(), "{leftover} swept away");
        }
        // A kept file damaged since: decoded again.
        let mut damaged = std::fs::read(file(2)).unwrap();
        damaged[7] ^= 1;
        std::fs::write(file(2), damaged).unwrap();
        let damaged_at = modified(2);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(hold(&[&two])[0], two_symbols);
        assert_ne!(modified(2), damaged_at, "level 2 decoded again");
        let scratch = Scratch::new(&root, 0).flipped(6).reusable();
        let mut levels = Levels::<Even>::new();
        (0..2).for_each(|_| levels.push_unreached());
        scratch.hold_table(&mut levels, &two).unwrap();
        scratch.clear().unwrap();
        assert!(!root.exists(), "cleared");

        // A level a run solved and held itself, kept for reuse as the
        // table it stored.
        let scratch = Scratch::new(&root, 0).flipped(6).reusable();
        let mut levels = Levels::<Even>::new();
        (0..2).for_each(|_| levels.push_unreached());
        let (two, two_symbols) = table(2, 1);
        scratch.hold(&mut levels, 2, two_symbols.clone()).unwrap();
        scratch.keep_for_reuse(2, &two).unwrap();
        drop((scratch, levels));
        let made = modified(2);
        assert_eq!(hold(&[&two])[0], two_symbols);
        assert_eq!(modified(2), made, "mapped as it was");

        // A level decoded into memory, then moved to a file to make room
        // for a larger one: kept under its table's note all the same.
        std::fs::remove_dir_all(&root).unwrap();
        let scratch = Scratch::new(&root, 0)
            .flipped(6)
            .reusable()
            .with_memory(1 << 20);
        let mut levels = Levels::<Even>::new();
        (0..2).for_each(|_| levels.push_unreached());
        scratch.hold_table(&mut levels, &two).unwrap();
        assert!(!root.exists(), "held in memory");
        scratch.reserve(&mut levels, 2 << 20).unwrap();
        assert!(root.join("level-002.note").exists(), "moved, and kept");
        drop((scratch, levels));
        let made = modified(2);
        assert_eq!(hold(&[&two]), [two_symbols]);
        assert_eq!(modified(2), made, "mapped as it was");
    }

    /// A forced table whose checksums hold but one of whose pairs cannot
    /// be bounds of its level is refused when held flipped, the error
    /// naming the pair by its index in the table (by rank), not by where
    /// the flipped file holds it.
    #[test]
    fn impossible_bounds_held_flipped_are_named_by_their_rank() {
        use crate::{write_level, Forced, Header};
        use mancala_core::{LevelIndex, Rules, Variant};
        let rules = Rules::new(Variant::Oware, 6).unwrap();
        let n = 3;
        let index = LevelIndex::new(6, n);
        let at = (0..index.count())
            .find(|&at| Order::Flipped.index(&index.unrank(at)) != at)
            .unwrap();
        let mut symbols = vec![0i8; 2 * index.count() as usize];
        for pair in symbols.chunks_mut(2) {
            pair[1] = -(n as i8);
        }
        symbols[2 * at as usize] = n as i8 + 1;
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("level-003.mtb");
        write_level(
            &Header::for_symbols::<Forced>(&rules, n, &symbols, 64),
            &symbols,
            &path,
        )
        .unwrap();
        let table = Table::<Forced>::open(&path, None).unwrap();
        let scratch = Scratch::new(dir.path().join("scratch"), 0).flipped(6);
        let mut levels = Levels::<Forced>::new();
        for _ in 0..n {
            levels.push_unreached();
        }
        let err = scratch.hold_table(&mut levels, &table).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("impossible bounds stored for index {at}")),
            "{err}"
        );
    }
}
