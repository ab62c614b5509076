//! The decoded-block cache of a tablebase.

use std::sync::Arc;

use lru::LruCache;

/// A block of a level: `(level, block)`.
pub(crate) type BlockKey = (u32, u64);

/// Decoded blocks, holding at most `capacity` bytes of decoded symbols,
/// least recently used evicted first, with a second-chance admission: a
/// block missed once is only remembered (its probe decodes just up to the
/// value it needs, half a block on average); missed again, it is decoded
/// whole and kept. Random probes into tables far larger than the cache then
/// cost one partial decode each, while blocks that are probed again stay
/// decoded.
pub(crate) struct BlockCache {
    pub(crate) decoded: LruCache<BlockKey, Arc<[i8]>>,
    /// Blocks missed once, at most `remembered` of them. Unbounded to the
    /// map itself, which then grows as blocks are missed instead of being
    /// allocated for its whole capacity up front.
    missed_once: LruCache<BlockKey, ()>,
    remembered: usize,
    /// Bytes of decoded symbols held.
    held: usize,
    capacity: usize,
}

/// Blocks of the smallest size the cache remembers as missed once: as
/// many as would fill it.
const SMALLEST_BLOCK: usize = 512;

impl BlockCache {
    pub(crate) fn new(capacity: usize) -> BlockCache {
        BlockCache {
            decoded: LruCache::unbounded(),
            missed_once: LruCache::unbounded(),
            remembered: (capacity / SMALLEST_BLOCK).max(1),
            held: 0,
            capacity,
        }
    }

    /// Whether a block just missed is to be decoded whole and kept: it was
    /// missed before. Either way the miss is remembered.
    pub(crate) fn admits(&mut self, key: BlockKey) -> bool {
        let seen_before = self.missed_once.pop(&key).is_some();
        if !seen_before {
            self.missed_once.put(key, ());
            if self.missed_once.len() > self.remembered {
                self.missed_once.pop_lru();
            }
        }
        seen_before
    }

    /// Keeps `values`, evicting the least recently used blocks as needed.
    pub(crate) fn keep(&mut self, key: BlockKey, values: Arc<[i8]>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache asked for more memory than any machine has takes none until
    /// blocks are kept: its bookkeeping grows as blocks are missed (it was
    /// once allocated whole, and a huge capacity aborted the process).
    #[test]
    fn a_huge_cache_costs_nothing_until_it_is_used() {
        let mut cache = BlockCache::new(usize::MAX / 2);
        assert!(!cache.admits((0, 0)), "first miss");
        assert!(cache.admits((0, 0)), "second miss");
        cache.keep((0, 0), vec![1i8; 512].into());
        assert_eq!(cache.held, 512);
    }

    /// The cache remembers at most as many missed blocks as its capacity
    /// has room for blocks of the smallest size.
    #[test]
    fn missed_blocks_are_remembered_within_bounds() {
        let mut cache = BlockCache::new(4 * SMALLEST_BLOCK);
        for block in 0..100 {
            cache.admits((0, block));
        }
        assert_eq!(cache.missed_once.len(), 4);
        assert!(cache.admits((0, 99)), "recently missed, still remembered");
        assert!(!cache.admits((0, 0)), "missed long ago, forgotten");
    }

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
