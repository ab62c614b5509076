//! Probe speed: values read back from memory-mapped table files.
//!
//! Setup (not measured): Oware tables with 6 pits per side are built for
//! levels 0..=14 into a temporary directory, once with each encoding
//! (`full` and `compact`, one benchmark group each), a `Tablebase` is
//! opened on it,
//! and 100,000 random positions of levels 8..=14 are drawn with a fixed-seed
//! xorshift generator (level uniform, then a uniform index of that level,
//! unranked), so every run probes the same positions. One full pass over
//! them opens every level file before anything is timed.
//!
//! Measured:
//! - `value/random`: one `Tablebase::value` call, cycling through the random
//!   positions (mostly block-cache misses: a random position rarely falls in
//!   a block decoded recently, so this includes one block decompression);
//! - `value/repeat`: the same position again and again (block-cache hit:
//!   ranking, lookup and locking only);
//! - `move_values/random`: one `Tablebase::move_values` call (move
//!   generation plus one probe per legal move);
//! - `value/batch_100k`: all 100,000 positions in one iteration, reported
//!   as probes per second;
//! - with depth tables (`probe/oware-6-depth`, full encoding):
//!   `Tablebase::<Depth>::depth` of the positions whose mover is ahead
//!   (`depth/ahead`: one value and one stored depth) and behind
//!   (`depth/behind`: one ply of search over the values and the stored
//!   depths), warm caches.
//!
//! Run with `cargo bench -p mancala-probe --bench probe`.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use mancala_core::LevelIndex;
use mancala_format::Encoding;
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_probe::{Access, Depth, Position, Rules, Successors, Tablebase, Variant};

const MAX_STONES: u32 = 14;
const MIN_PROBE_LEVEL: u32 = 8;
const POSITIONS: usize = 100_000;
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// xorshift64* — deterministic and good enough to pick positions.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..bound` (modulo bias is negligible for these bounds).
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

fn random_positions(pits: usize, count: usize) -> Vec<Position> {
    let mut rng = XorShift(SEED);
    let levels = MAX_STONES - MIN_PROBE_LEVEL + 1;
    (0..count)
        .map(|_| {
            let level = MIN_PROBE_LEVEL + rng.below(levels as u64) as u32;
            let index = LevelIndex::new(pits, level);
            index.unrank(rng.below(index.count()))
        })
        .collect()
}

struct Fixture {
    // Kept alive for the tables' lifetime; removed on drop.
    _dir: tempfile::TempDir,
    tablebase: Tablebase,
    positions: Vec<Position>,
}

fn fixture(encoding: Encoding, depths: bool) -> Fixture {
    let rules = Rules::new(Variant::Oware, 6).expect("valid rules");
    let dir = tempfile::tempdir().expect("temporary directory");
    let options = BuildOptions {
        encoding,
        depths,
        ..BuildOptions::new(dir.path(), rules, MAX_STONES)
    };
    build(&options, &Quiet).expect("build tables");
    let tablebase: Tablebase = Tablebase::open(dir.path(), rules).expect("open tables");
    assert_eq!(tablebase.max_level(), Some(MAX_STONES));
    let positions = random_positions(rules.pits(), POSITIONS);

    // Warm-up pass: opens (maps and validates) every level file, and checks
    // that every probe succeeds. On a sample, also check that a position's
    // value is its best move's value, so a broken table can't go unnoticed.
    for (i, pos) in positions.iter().enumerate() {
        let value = tablebase.value(pos).expect("probe");
        if i < 2_000 {
            if let Successors::Moves(_) = rules.successors(pos) {
                let best = tablebase
                    .move_values(pos)
                    .expect("move values")
                    .iter()
                    .map(|m| m.value)
                    .max()
                    .expect("a legal move");
                assert_eq!(value, best, "value of {pos} is not its best move's");
            }
        }
    }
    Fixture {
        _dir: dir,
        tablebase,
        positions,
    }
}

fn probes(c: &mut Criterion) {
    probes_of(c, Encoding::Full, "probe/oware-6-full");
    probes_of(c, Encoding::Compact, "probe/oware-6-compact");
    depth_probes(c);
}

fn depth_probes(c: &mut Criterion) {
    let Fixture {
        _dir,
        tablebase,
        positions,
    } = fixture(Encoding::Full, true);
    let depths: Tablebase<Depth> = Tablebase::open(_dir.path(), *tablebase.rules()).expect("open");
    let tb = &tablebase;
    let of_sign = |ahead: bool| -> Vec<Position> {
        let chosen: Vec<Position> = positions
            .iter()
            .filter(|pos| {
                let value = tb.value(pos).expect("probe");
                value != 0 && (value > 0) == ahead
            })
            .copied()
            .collect();
        for pos in &chosen {
            depths.depth(tb, pos).expect("depth").expect("a depth");
        }
        chosen
    };
    let mut group = c.benchmark_group("probe/oware-6-depth");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (name, chosen) in [
        ("depth/ahead", of_sign(true)),
        ("depth/behind", of_sign(false)),
    ] {
        let mut next = 0usize;
        group.bench_function(name, |b| {
            b.iter(|| {
                let pos = &chosen[next];
                next = (next + 1) % chosen.len();
                depths.depth(tb, black_box(pos)).expect("depth")
            })
        });
    }
    group.finish();
}

fn probes_of(c: &mut Criterion, encoding: Encoding, name: &str) {
    let Fixture {
        _dir,
        tablebase,
        positions,
    } = fixture(encoding, false);
    let tb = &tablebase;

    let mut group = c.benchmark_group(name);
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));

    // The default 256 MiB cache holds every block of these levels, so this
    // measures the probe path with its block already decoded.
    let mut next = 0usize;
    group.bench_function("value/random", |b| {
        b.iter(|| {
            let pos = &positions[next];
            next = (next + 1) % positions.len();
            tb.value(black_box(pos)).expect("probe")
        })
    });

    // No cache: every probe decodes its block up to its value (page cache
    // warm), the cost when the tables are much larger than the cache.
    let uncached: Tablebase =
        Tablebase::open_with_cache(_dir.path(), *tb.rules(), 0).expect("open tables");
    let mut next = 0usize;
    group.bench_function("value/random_block_decode", |b| {
        b.iter(|| {
            let pos = &positions[next];
            next = (next + 1) % positions.len();
            uncached.value(black_box(pos)).expect("probe")
        })
    });

    // No cache and positioned reads instead of the mapping: what `serve`
    // pays for a block its cache does not hold.
    let read: Tablebase =
        Tablebase::open_with(_dir.path(), *tb.rules(), 0, Access::Read).expect("open tables");
    let mut next = 0usize;
    group.bench_function("value/random_block_read", |b| {
        b.iter(|| {
            let pos = &positions[next];
            next = (next + 1) % positions.len();
            read.value(black_box(pos)).expect("probe")
        })
    });

    let one = positions[0];
    group.bench_function("value/repeat", |b| {
        b.iter(|| tb.value(black_box(&one)).expect("probe"))
    });

    let mut next = 0usize;
    group.bench_function("move_values/random", |b| {
        b.iter(|| {
            let pos = &positions[next];
            next = (next + 1) % positions.len();
            tb.move_values(black_box(pos)).expect("move values")
        })
    });

    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(15))
        .throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("value/batch_100k", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|pos| tb.value(black_box(pos)).expect("probe") as i64)
                .sum::<i64>()
        })
    });
    // The same 100k positions through the batched API (probes grouped by
    // block, both cores).
    group.bench_function("values/batched_100k", |b| {
        b.iter(|| {
            tb.values(black_box(&positions))
                .expect("batch")
                .iter()
                .map(|&v| v as i64)
                .sum::<i64>()
        })
    });
    group.bench_function("move_values_many/batched_100k", |b| {
        b.iter(|| {
            tb.move_values_many(black_box(&positions))
                .expect("batch")
                .len()
        })
    });
    // What `query -` asks for each line: the value and every move's value.
    group.bench_function("values_and_moves/batched_100k", |b| {
        b.iter(|| {
            tb.values_and_moves(black_box(&positions))
                .expect("batch")
                .len()
        })
    });
    group.finish();
}

criterion_group!(benches, probes);
criterion_main!(benches);
