//! Build throughput: how fast one level is solved, by the strategy a build
//! chooses for its rule set (oware: retrograde analysis, forward pass plus
//! threshold propagation; kalah: one pass by distance).
//!
//! The lower levels are solved once, outside the measurement; each iteration
//! then solves the same level again from them, so the figure is the solver's
//! own speed, reported as positions per second.
//!
//! Run with `cargo bench -p mancala-gen --bench build`.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use mancala_core::{LevelIndex, Rules, Variant};
use mancala_format::Even;
use mancala_gen::{solve_in_memory, solve_level, Quiet};

/// Solves `level` of `variant` with `pits` pits per side, repeatedly.
fn bench_level(c: &mut Criterion, variant: Variant, pits: usize, level: u32) {
    let rules = Rules::new(variant, pits).expect("valid rules");
    let lower = solve_in_memory::<Even>(&rules, level - 1);
    let positions = LevelIndex::new(pits, level).count();

    let mut group = c.benchmark_group(format!("solve_level/{}", rules.id()));
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(12))
        .throughput(Throughput::Elements(positions));
    group.bench_function(format!("level_{level}"), |b| {
        b.iter(|| {
            let solution = solve_level(&rules, black_box(level), &lower, &Quiet);
            assert_eq!(solution.symbols.len() as u64, positions);
            solution
        })
    });
    group.finish();
}

fn oware_level_12(c: &mut Criterion) {
    // 1,352,078 positions.
    bench_level(c, Variant::Oware, 6, 12);
}

fn kalah_level_10(c: &mut Criterion) {
    // 352,716 positions.
    bench_level(c, Variant::Kalah, 6, 10);
}

fn kalah_level_16(c: &mut Criterion) {
    // 13,037,895 positions: the lower levels no longer fit the caches.
    bench_level(c, Variant::Kalah, 6, 16);
}

criterion_group!(benches, oware_level_12, kalah_level_10, kalah_level_16);
criterion_main!(benches);
