//! The decoded-block cache of a tablebase.
//!
//! Probes read the cache far more often than they fill it (a compact
//! table's probe reads several entries), and a read of a random block
//! misses the processor's caches, so a hit is kept to as few dependent
//! memory accesses as can be: per level an array from block number to the
//! decoded block, read under a shared lock, and a bit in a per-level bitmap
//! set instead of moving the block in a list. Eviction is CLOCK, the usual
//! approximation of least-recently-used: the hand passes over the blocks
//! held, clearing the bits of those read since its last pass, and evicts
//! the first one not read.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, RwLock};

use lru::LruCache;

/// A block of a level: `(level, block)`.
pub(crate) type BlockKey = (u32, u64);

/// Decoded blocks, holding at most `capacity` bytes of decoded symbols,
/// with a second-chance admission: a block missed once is only remembered
/// (its probe decodes just up to the value it needs, half a block on
/// average); missed again, it is decoded whole and kept. Random probes
/// into tables far larger than the cache then cost one partial decode
/// each, while blocks that are probed again stay decoded.
pub(crate) struct BlockCache {
    pool: RwLock<Pool>,
    /// Blocks missed once, at most `remembered` of them. Unbounded to the
    /// map itself, which then grows as blocks are missed instead of being
    /// allocated for its whole capacity up front.
    missed_once: Mutex<LruCache<BlockKey, ()>>,
    remembered: usize,
}

/// The blocks held.
struct Pool {
    /// Per level, empty until the level's first block is kept. A level's
    /// blocks are kept only if the whole level fits the cache, so its
    /// arrays cost a small fraction of the capacity.
    levels: Vec<LevelBlocks>,
    /// Every block held, in the order the CLOCK hand visits them.
    clock: Vec<BlockKey>,
    hand: usize,
    /// Bytes of decoded symbols held.
    held: usize,
    capacity: usize,
}

/// The blocks held of one level.
#[derive(Default)]
struct LevelBlocks {
    /// Block number → its decoded symbols, if held.
    blocks: Box<[Option<Box<[i8]>>]>,
    /// One bit per block: read since the hand last passed.
    referenced: Box<[AtomicU64]>,
}

/// Blocks of the smallest size the cache remembers as missed once: as
/// many as would fill it.
const SMALLEST_BLOCK: usize = 512;

impl BlockCache {
    pub(crate) fn new(capacity: usize) -> BlockCache {
        BlockCache {
            pool: RwLock::new(Pool {
                levels: Vec::new(),
                clock: Vec::new(),
                hand: 0,
                held: 0,
                capacity,
            }),
            missed_once: Mutex::new(LruCache::unbounded()),
            remembered: (capacity / SMALLEST_BLOCK).max(1),
        }
    }

    /// Copies the symbols at `offset` of block `key` into `out`, if the
    /// block is held.
    #[inline]
    pub(crate) fn read(&self, key: BlockKey, offset: usize, out: &mut [i8]) -> bool {
        self.read_block(key, |values| {
            out.copy_from_slice(&values[offset..offset + out.len()]);
        })
        .is_some()
    }

    /// For each `(block, offset)` of `wanted`, the symbol there if the
    /// block is held, under one acquisition of the lock: the reads of
    /// several blocks then overlap.
    #[inline]
    pub(crate) fn read_firsts(&self, wanted: &[(BlockKey, usize)], out: &mut [Option<i8>]) {
        let pool = self.pool.read().unwrap_or_else(|e| e.into_inner());
        for (&(key, offset), out) in wanted.iter().zip(&mut *out) {
            *out = pool.block(key).map(|values| values[offset]);
        }
        // Marked after every read is issued, so that no atomic update
        // stands between the loads.
        for (&(key, _), found) in wanted.iter().zip(&*out) {
            if found.is_some() {
                pool.mark_read(key);
            }
        }
    }

    /// Runs `read` on the decoded symbols of block `key`, if it is held,
    /// under one acquisition of the lock: a batch reads all its probes of
    /// a block at once.
    #[inline]
    pub(crate) fn read_block<R>(&self, key: BlockKey, read: impl FnOnce(&[i8]) -> R) -> Option<R> {
        let pool = self.pool.read().unwrap_or_else(|e| e.into_inner());
        let found = pool.block(key).map(read);
        if found.is_some() {
            pool.mark_read(key);
        }
        found
    }

    /// Whether a block of `len` symbols would be kept without evicting
    /// another: batches fill the cache's free room only, so that a batch
    /// over tables larger than the cache never churns it.
    pub(crate) fn has_room_for(&self, len: usize) -> bool {
        let pool = self.pool.read().unwrap_or_else(|e| e.into_inner());
        pool.held + len <= pool.capacity
    }

    /// Whether a block just missed is to be decoded whole and kept: it was
    /// missed before. Either way the miss is remembered.
    pub(crate) fn admits(&self, key: BlockKey) -> bool {
        let mut missed_once = self.missed_once.lock().unwrap_or_else(|e| e.into_inner());
        let seen_before = missed_once.pop(&key).is_some();
        if !seen_before {
            missed_once.put(key, ());
            if missed_once.len() > self.remembered {
                missed_once.pop_lru();
            }
        }
        seen_before
    }

    /// Keeps `values`, block `key` of a level of `blocks` blocks, evicting
    /// blocks not read lately as needed.
    pub(crate) fn keep(&self, key: BlockKey, blocks: u64, values: Box<[i8]>) {
        let mut pool = self.pool.write().unwrap_or_else(|e| e.into_inner());
        pool.keep(key, blocks, values);
    }

    /// Keeps each of `blocks` (key, its level's block count, symbols)
    /// that fits the free room, evicting none: what a batch decoded whole.
    pub(crate) fn keep_in_room(&self, blocks: impl Iterator<Item = (BlockKey, u64, Box<[i8]>)>) {
        let mut blocks = blocks.peekable();
        if blocks.peek().is_none() {
            return;
        }
        let mut pool = self.pool.write().unwrap_or_else(|e| e.into_inner());
        for (key, count, values) in blocks {
            if pool.held + values.len() <= pool.capacity {
                pool.keep(key, count, values);
            }
        }
    }

    /// Bytes of decoded symbols held.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.pool.read().unwrap().held
    }

    /// Whether block `key` is held.
    #[cfg(test)]
    fn holds(&self, key: BlockKey) -> bool {
        self.pool.read().unwrap().block(key).is_some()
    }
}

/// Where block `block`'s reference bit is: its word, and the bit in it.
fn bit_of(block: u64) -> (usize, u64) {
    (block as usize / 64, 1 << (block % 64))
}

impl Pool {
    /// The decoded symbols of block `key`, if held.
    #[inline]
    fn block(&self, (level, block): BlockKey) -> Option<&[i8]> {
        let values = self
            .levels
            .get(level as usize)?
            .blocks
            .get(block as usize)?;
        values.as_deref()
    }

    /// Sets the reference bit of block `key`, which is held. Only a bit not
    /// set yet is written, so that hits on blocks already marked leave the
    /// bitmap's cache line shared between cores.
    #[inline]
    fn mark_read(&self, (level, block): BlockKey) {
        let (word, bit) = bit_of(block);
        let word = &self.levels[level as usize].referenced[word];
        if word.load(Relaxed) & bit == 0 {
            word.fetch_or(bit, Relaxed);
        }
    }

    fn keep(&mut self, key: BlockKey, blocks: u64, values: Box<[i8]>) {
        let len = values.len();
        if len > self.capacity || self.block(key).is_some() {
            // Too large to hold, or kept by another thread meanwhile.
            return;
        }
        while self.held + len > self.capacity {
            self.evict_one();
        }
        let (level, block) = (key.0 as usize, key.1 as usize);
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, Default::default);
        }
        let level = &mut self.levels[level];
        if level.blocks.is_empty() {
            level.blocks = (0..blocks).map(|_| None).collect();
            level.referenced = (0..blocks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect();
        }
        level.blocks[block] = Some(values);
        self.clock.push(key);
        self.mark_read(key);
        self.held += len;
    }

    /// Moves the hand on to the first block held not read since its last
    /// pass, clearing the bits of those that were, and evicts it. Called
    /// only while blocks are held, so it ends within two rounds.
    fn evict_one(&mut self) {
        loop {
            if self.hand >= self.clock.len() {
                self.hand = 0;
            }
            let (level, block) = self.clock[self.hand];
            let level = &mut self.levels[level as usize];
            let (word, bit) = bit_of(block);
            if level.referenced[word].fetch_and(!bit, Relaxed) & bit != 0 {
                self.hand += 1;
                continue;
            }
            let values = level.blocks[block as usize]
                .take()
                .expect("the clock lists only blocks held");
            self.held -= values.len();
            // The last block takes the evicted one's place, and is looked
            // at next.
            self.clock.swap_remove(self.hand);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(len: usize) -> Box<[i8]> {
        vec![0i8; len].into_boxed_slice()
    }

    /// A cache asked for more memory than any machine has takes none until
    /// blocks are kept: its bookkeeping grows as blocks are missed (it was
    /// once allocated whole, and a huge capacity aborted the process).
    #[test]
    fn a_huge_cache_costs_nothing_until_it_is_used() {
        let cache = BlockCache::new(usize::MAX / 2);
        assert!(!cache.admits((0, 0)), "first miss");
        assert!(cache.admits((0, 0)), "second miss");
        cache.keep((0, 0), 1, block(512));
        assert_eq!(cache.held(), 512);
    }

    /// The cache remembers at most as many missed blocks as its capacity
    /// has room for blocks of the smallest size.
    #[test]
    fn missed_blocks_are_remembered_within_bounds() {
        let cache = BlockCache::new(4 * SMALLEST_BLOCK);
        for block in 0..100 {
            cache.admits((0, block));
        }
        assert_eq!(cache.missed_once.lock().unwrap().len(), 4);
        assert!(cache.admits((0, 99)), "recently missed, still remembered");
        assert!(!cache.admits((0, 0)), "missed long ago, forgotten");
    }

    /// A held block reads back what was kept, at any offset.
    #[test]
    fn a_kept_block_reads_back() {
        let cache = BlockCache::new(1 << 20);
        let values: Box<[i8]> = (0..100).map(|v| v as i8).collect();
        let mut out = [0i8; 2];
        assert!(!cache.read((3, 7), 0, &mut out), "nothing held yet");
        cache.keep((3, 7), 10, values);
        assert!(cache.read((3, 7), 41, &mut out));
        assert_eq!(out, [41, 42]);
        assert!(!cache.read((3, 6), 0, &mut out), "another block");
        assert!(!cache.read((2, 7), 0, &mut out), "another level");
    }

    /// What a batch keeps goes into the free room only: nothing held is
    /// evicted for it, and what does not fit is dropped.
    #[test]
    fn a_batch_keeps_blocks_in_the_free_room_only() {
        let cache = BlockCache::new(3000);
        cache.keep((0, 0), 4, block(1024));
        assert!(cache.has_room_for(1976) && !cache.has_room_for(1977));
        let batch = (1..4).map(|b| ((0, b), 4, block(1024)));
        cache.keep_in_room(batch);
        assert!(cache.holds((0, 0)) && cache.holds((0, 1)));
        assert!(!cache.holds((0, 2)) && !cache.holds((0, 3)));
        assert_eq!(cache.held(), 2048);
        let mut out = [0i8; 4];
        let read = cache.read_block((0, 1), |values| out.copy_from_slice(&values[8..12]));
        assert!(read.is_some());
        assert!(cache.read_block((0, 2), |_| ()).is_none());
    }

    /// The cache holds at most its capacity in decoded bytes, whatever the
    /// block sizes, and evicts a block not read since the hand last passed
    /// before one that was.
    #[test]
    fn the_block_cache_is_bounded_in_bytes() {
        let cache = BlockCache::new(5000);
        let mut out = [0i8; 1];
        cache.keep((1, 0), 4, block(2048));
        cache.keep((1, 1), 4, block(2048));
        cache.keep((0, 0), 1, block(512));
        assert_eq!(cache.held(), 4608);
        // Every block starts referenced: the hand clears them all, then
        // evicts the first, (1, 0), unless it is read again meanwhile.
        cache.keep((1, 2), 4, block(2048));
        assert!(cache.held() <= 5000);
        assert!(!cache.holds((1, 0)), "not read since the hand passed");
        assert!(cache.holds((1, 1)) && cache.holds((0, 0)));
        assert!(cache.read((1, 1), 0, &mut out));
        cache.keep((1, 3), 4, block(512));
        assert!(cache.holds((1, 1)), "read since the hand passed");
        assert!(!cache.holds((0, 0)), "not read since the hand passed");
        assert!(cache.holds((1, 2)) && cache.holds((1, 3)));
        assert!(cache.held() <= 5000);
        let pool = cache.pool.read().unwrap();
        let held: usize = pool
            .levels
            .iter()
            .flat_map(|l| l.blocks.iter().flatten())
            .map(|b| b.len())
            .sum();
        assert_eq!(pool.held, held);
        assert_eq!(pool.clock.len(), 3);
    }
}
