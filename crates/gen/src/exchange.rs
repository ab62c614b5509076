//! The solver's exchange: delivering the same-level parents a frontier
//! found to whoever holds their state, and applying the update there.
//!
//! Each propagation step of the retrograde strategy finds, for every new
//! member of a threshold set, its same-level parents by un-moving, and must
//! then update each parent once with the number of edges that reached it.
//! In one process that is [`LocalExchange`]: sort, then let each thread
//! own a disjoint range of parents. A distributed build delivers the same
//! parents to the worker that owns their index range first, and applies
//! them there the same way; the strategy does not change.

use rayon::prelude::*;
use voracious_radix_sort::RadixSort;

/// Delivers parents to their owners and applies a visit to each.
pub trait Exchange: Sync {
    /// Calls `visit(parent, edges)` once per distinct entry of `parents`
    /// (`edges` = how often it occurs) and returns, in no particular order,
    /// the parents for which it returned true. A parent is visited by one
    /// thread only, so `visit` may update its state with plain (relaxed,
    /// non-read-modify-write) loads and stores.
    fn deliver(&self, parents: Vec<u64>, visit: impl Fn(usize, u8) -> bool + Sync) -> Vec<u64>;
}

/// The exchange of one process: parents sorted (a parallel radix sort, a
/// few sequential passes over the buffer where a comparison sort makes
/// many), then updated in parallel over disjoint ranges. Sorting turns the
/// random updates into a sweep in index order, and no update needs a
/// locked instruction (which would stall on every cache miss).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalExchange;

/// Parents per unit of parallel work when they are applied.
const RUN_CHUNK: usize = 1 << 13;

impl Exchange for LocalExchange {
    fn deliver(&self, mut parents: Vec<u64>, visit: impl Fn(usize, u8) -> bool + Sync) -> Vec<u64> {
        parents.voracious_mt_sort(rayon::current_num_threads());
        let found: Vec<Vec<u64>> = split_between_runs(&parents, RUN_CHUNK)
            .into_par_iter()
            .map(|chunk| {
                chunk
                    .chunk_by(|a, b| a == b)
                    .filter(|run| visit(run[0] as usize, run.len() as u8))
                    .map(|run| run[0])
                    .collect()
            })
            .collect();
        found.concat()
    }
}

/// Cuts sorted `items` into pieces of about `size`, never inside a run of
/// equal items.
fn split_between_runs(items: &[u64], size: usize) -> Vec<&[u64]> {
    let mut pieces = Vec::with_capacity(items.len() / size + 1);
    let mut rest = items;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while cut < rest.len() && rest[cut] == rest[cut - 1] {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}
