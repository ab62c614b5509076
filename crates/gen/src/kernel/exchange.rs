//! The kernel's seam between processes: delivering the same-level parents
//! a frontier found to whoever holds their state, applying the update
//! there, and the few agreements the processes solving one level need.
//!
//! Each propagation step finds, for every new member of a threshold set,
//! its same-level parents by un-moving, and must then update each parent
//! with the number of edges that reached it. In one process that is
//! [`LocalExchange`]: parents bucketed by index range, then each bucket
//! applied by one thread. A build across ranks (`cluster/exchange.rs`)
//! sends each parent to the rank that owns its index range, which applies
//! its share the same way; the kernel does not change.

use std::ops::Range;

use rayon::prelude::*;

/// Delivers parents to their owners and applies a visit to each; tells the
/// kernel which positions this process holds and how many steps every
/// process takes.
///
/// Frontiers and parents are level indices; a visit gets the index into
/// this process's own state (the level index less [`Exchange::owned`]'s
/// start).
pub trait Exchange {
    /// Frontier members whose parents are gathered and delivered at once:
    /// bounds the parent buffer (8 bytes an edge) however large a
    /// frontier grows.
    const FRONTIER_PIECE: usize = 1 << 24;

    /// Calls `visit.visit(parent, edges)` for the entries of `parents`
    /// this process holds, wherever they were found, a parent occurring
    /// `k` times being visited with edges summing to `k` (once with `k`, or
    /// in several smaller visits), and returns, in no particular order, the
    /// parents for which a visit returned true. A parent is visited by one
    /// thread only, so a visit may update its state with plain (relaxed,
    /// non-read-modify-write) loads and stores. The states' visits count
    /// edges down and act when the count reaches its end, so however the
    /// edges are grouped, a level solves the same.
    fn deliver(&self, parents: Vec<u64>, visit: &impl Visit) -> Vec<u64>;

    /// The positions of a level of `count` whose state this process holds:
    /// all of them, unless the level is shared among processes.
    fn owned(&self, count: u64) -> Range<u64> {
        0..count
    }

    /// The largest `value` any process solving the level has: every
    /// process takes that many of a step that all must take together (a
    /// delivery, a round of a threshold), its own work done or not.
    fn most(&self, value: u64) -> u64 {
        value
    }
}

/// What a delivery does at each parent it holds: the visit that updates
/// its state, and a hint given a few parents ahead.
pub trait Visit: Sync {
    /// A parent `at` (an index into this process's state) of `edges` new
    /// members: whether it joined a set.
    fn visit(&self, at: usize, edges: u8) -> bool;

    /// `at` will be visited soon: its state may be fetched into the cache
    /// meanwhile. On the largest levels a bucket's parents are fewer than
    /// the cache lines of its range of the state, so nearly every visit
    /// would otherwise wait for memory, one at a time.
    fn prefetch(&self, _at: usize) {}
}

/// The exchange of one process: parents bucketed by index range (one
/// counting pass and one scatter), then each bucket's parents visited one
/// edge at a time by one thread, with no sort of the whole buffer and no
/// locked instruction (which would stall on every cache miss). On small
/// levels a bucket's range of the state fits in a core's cache, so its
/// random updates hit the cache. On large ones the buckets are few, so the
/// scatter writes to few places at once, and each parent's state is asked
/// for a few parents before its visit ([`Visit::prefetch`]), so that many
/// fetches from memory are in flight at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalExchange;

/// Positions per bucket at the least: their state (two or three bytes
/// each) stays well inside a core's cache while the bucket is applied, so
/// buckets this small are visited without prefetching.
const MIN_BUCKET_BITS: u32 = 16;
/// Buckets at the most: few enough that the scatter's places to write
/// next (one a bucket) stay in the cache. On larger levels buckets grow
/// past [`MIN_BUCKET_BITS`] instead, beyond the cache, and their parents'
/// state is prefetched.
const MAX_BUCKETS_BITS: u32 = 10;
/// Parents per piece of the scatter, at the least.
const MIN_PIECE: usize = 1 << 16;
/// Buckets per unit of parallel work when they are applied.
const BUCKETS_PER_TASK: usize = 8;
/// Parents between a parent's prefetch and its visit: enough to keep
/// several fetches from memory in flight, few enough that the lines are
/// still in the cache when they are visited.
const PREFETCH_AHEAD: usize = 16;

impl Exchange for LocalExchange {
    fn deliver(&self, parents: Vec<u64>, visit: &impl Visit) -> Vec<u64> {
        let Some(&largest) = parents.par_iter().max() else {
            return Vec::new();
        };
        let buckets = Buckets::of(&parents, largest);
        drop(parents);
        let ahead = match buckets.shift > MIN_BUCKET_BITS {
            true => PREFETCH_AHEAD,
            false => 0,
        };
        let found: Vec<Vec<u64>> = (0..buckets.count)
            .into_par_iter()
            .step_by(BUCKETS_PER_TASK)
            .map(|first| {
                let mut joined = Vec::new();
                for bucket in first..buckets.count.min(first + BUCKETS_PER_TASK) {
                    for piece in &buckets.pieces {
                        visit_bucket(piece.bucket(bucket), visit, ahead, &mut joined);
                    }
                }
                joined
            })
            .collect();
        found.concat()
    }
}

/// Visits `parents` one edge at a time, each's state prefetched `ahead`
/// parents before (none if 0), adding those that joined to `joined`.
fn visit_bucket(parents: &[u64], visit: &impl Visit, ahead: usize, joined: &mut Vec<u64>) {
    for &parent in &parents[..ahead.min(parents.len())] {
        visit.prefetch(parent as usize);
    }
    for (k, &parent) in parents.iter().enumerate() {
        if ahead > 0 {
            if let Some(&later) = parents.get(k + ahead) {
                visit.prefetch(later as usize);
            }
        }
        if visit.visit(parent as usize, 1) {
            joined.push(parent);
        }
    }
}

/// Parents grouped by index range (bucket `b` holds `b << shift` up to
/// the next bucket's start), piece by piece as they were scattered.
struct Buckets {
    count: usize,
    shift: u32,
    pieces: Vec<Piece>,
}

/// One piece's parents in bucket order, with where each bucket starts.
struct Piece {
    parents: Vec<u64>,
    starts: Vec<usize>,
}

impl Buckets {
    /// `parents` (none above `largest`) scattered into buckets, pieces in
    /// parallel.
    fn of(parents: &[u64], largest: u64) -> Buckets {
        let bits = u64::BITS - largest.leading_zeros();
        let shift = MIN_BUCKET_BITS.max(bits.saturating_sub(MAX_BUCKETS_BITS));
        let count = (largest >> shift) as usize + 1;
        let piece_len = MIN_PIECE.max(parents.len().div_ceil(4 * rayon::current_num_threads()));
        let pieces = parents
            .par_chunks(piece_len)
            .map(|piece| Piece::scattered(piece, shift, count))
            .collect();
        Buckets {
            count,
            shift,
            pieces,
        }
    }
}

impl Piece {
    /// The piece's parents in `bucket`.
    fn bucket(&self, bucket: usize) -> &[u64] {
        &self.parents[self.starts[bucket]..self.starts[bucket + 1]]
    }

    /// A counting sort of `parents` by `parent >> shift`, into `count`
    /// buckets.
    fn scattered(parents: &[u64], shift: u32, count: usize) -> Piece {
        let mut starts = vec![0; count + 1];
        for &parent in parents {
            starts[(parent >> shift) as usize + 1] += 1;
        }
        for b in 0..count {
            starts[b + 1] += starts[b];
        }
        let mut next = starts.clone();
        let mut scattered = vec![0; parents.len()];
        for &parent in parents {
            let slot = &mut next[(parent >> shift) as usize];
            scattered[*slot] = parent;
            *slot += 1;
        }
        Piece {
            parents: scattered,
            starts,
        }
    }
}
