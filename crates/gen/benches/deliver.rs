//! Parent delivery (`LocalExchange::deliver`): a piece of random parents
//! bucketed and visited, with each parent's state prefetched a few parents
//! ahead and without, side by side.
//!
//! The state is a counting cell of four bits a position, as the lean even
//! state keeps, on huge pages as the solver's states are. Three shapes: a
//! state far larger than the caches with as many parents as the lean mode
//! delivers at once (fewer parents than cache lines, the lean mode's top
//! levels), a smaller state still beyond them with many more parents (as
//! the default mode delivers at its middle levels), and a
//! state that fits the caches (the small levels, which are visited
//! without prefetching whatever the visit offers).
//!
//! Run with `cargo bench -p mancala-gen --bench deliver`.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mancala_format::{filled_on_huge_pages, prefetch};
use mancala_gen::{Exchange, LocalExchange, Visit};

/// Two positions' cells.
struct Byte(AtomicU8);

impl Clone for Byte {
    fn clone(&self) -> Byte {
        Byte(AtomicU8::new(self.0.load(Relaxed)))
    }
}

/// Counts each visited position's cell down by its edges (two cells a
/// byte); a position whose count reaches zero joins.
struct CountDown<'a> {
    cells: &'a [Byte],
    prefetching: bool,
}

impl Visit for CountDown<'_> {
    fn visit(&self, at: usize, edges: u8) -> bool {
        let (byte, shift) = (&self.cells[at / 2].0, (at % 2) * 4);
        let old = byte.load(Relaxed);
        let count = ((old >> shift) & 15).wrapping_sub(edges) & 15;
        byte.store(old & !(15 << shift) | count << shift, Relaxed);
        count == 0
    }

    fn prefetch(&self, at: usize) {
        if self.prefetching {
            prefetch(self.cells, at / 2);
        }
    }
}

/// `count` parents drawn uniformly from `0..positions` (xorshift, fixed
/// seed: every run delivers the same).
fn random_parents(count: usize, positions: u64) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % positions
        })
        .collect()
}

fn bench_shape(c: &mut Criterion, name: &str, positions: u64, parents: usize) {
    let cells = filled_on_huge_pages(positions.div_ceil(2) as usize, Byte(AtomicU8::new(0xff)));
    let parents = random_parents(parents, positions);
    let mut group = c.benchmark_group(format!("deliver/{name}"));
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(parents.len() as u64));
    for prefetching in [false, true] {
        let visit = CountDown {
            cells: &cells,
            prefetching,
        };
        let label = if prefetching { "prefetched" } else { "plain" };
        group.bench_function(label, |b| {
            b.iter_batched(
                || parents.clone(),
                |parents| LocalExchange.deliver(parents, &visit),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// 2^31 positions (1 GiB of cells) and 2^21 parents: about a quarter of a
/// parent a cache line of each bucket's range, as at oware level 27 and
/// above in the lean mode.
fn beyond_the_caches(c: &mut Criterion) {
    bench_shape(c, "beyond_the_caches", 1 << 31, 1 << 21);
}

/// 2^20 positions (512 KiB of cells) and 2^21 parents.
fn within_the_caches(c: &mut Criterion) {
    bench_shape(c, "within_the_caches", 1 << 20, 1 << 21);
}

/// 2^28 positions (128 MiB of cells) and 2^24 parents: several parents a
/// cache line, as the default mode delivers them at oware level 22.
fn dense(c: &mut Criterion) {
    bench_shape(c, "dense", 1 << 28, 1 << 24);
}

criterion_group!(benches, beyond_the_caches, dense, within_the_caches);
criterion_main!(benches);
