//! The latency of single probes on real tables: the median, 90th and 99th
//! percentile of `Tablebase::value` over random positions.
//!
//! ```sh
//! cargo run --release -p mancala-probe --example probe_latency -- /tmp/tb20          # oware tables under /tmp/tb20, default cache
//! cargo run --release -p mancala-probe --example probe_latency -- /tmp/tb20 0        # without a block cache
//! cargo run --release -p mancala-probe --example probe_latency -- /tmp/tb20 256 3000000  # 3 M probes of warm-up
//! cargo run --release -p mancala-probe --example probe_latency -- /tmp/k20 256 20000 kalah  # kalah-6 tables
//! ```
//!
//! Positions are drawn uniformly from every position the tables cover (so
//! most come from the top levels), with a fixed seed. The first 20,000
//! probes (or as many as asked) warm up the block cache and are not
//! counted; the next 280,000 are each timed on their own. Run it with the page cache warm (read the
//! files once, or run it twice) to measure the library rather than the
//! disk.

use std::time::Instant;

use mancala_core::LevelIndex;
use mancala_probe::{Rules, Tablebase, Variant, DEFAULT_CACHE_BYTES};

const TIMED: usize = 280_000;
const WARM_UP: usize = 20_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or("usage: probe_latency DIR [CACHE_MIB [WARM_UP [RULES]]]")?;
    let cache_mib: usize = args
        .next()
        .map_or(Ok(DEFAULT_CACHE_BYTES >> 20), |s| s.parse())?;
    let warm_up: usize = args.next().map_or(Ok(WARM_UP), |s| s.parse())?;
    let variant = args
        .next()
        .map_or(Ok(Variant::Oware), |s| Variant::from_name(&s))?;
    let rules = Rules::new(variant, 6)?;
    let tb: Tablebase = Tablebase::open_with_cache(&dir, rules, cache_mib << 20)?;
    let max = tb
        .max_level()
        .ok_or_else(|| format!("no {} tables there", rules.id()))?;
    let counts: Vec<u64> = (0..=max)
        .map(|n| LevelIndex::new(rules.pits(), n).count())
        .collect();
    let total: u64 = counts.iter().sum();

    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut position = || {
        let mut at = random() % total;
        let mut n = 0;
        while at >= counts[n] {
            at -= counts[n];
            n += 1;
        }
        LevelIndex::new(rules.pits(), n as u32).unrank(at)
    };

    for _ in 0..warm_up {
        tb.value(&position())?;
    }
    // Drawn before timing, so that only probes are timed.
    let positions: Vec<_> = (0..TIMED).map(|_| position()).collect();
    let mut nanos = Vec::with_capacity(TIMED);
    for pos in &positions {
        let start = Instant::now();
        std::hint::black_box(tb.value(pos)?);
        nanos.push(start.elapsed().as_nanos() as u64);
    }
    nanos.sort_unstable();
    let at = |q: f64| nanos[((nanos.len() - 1) as f64 * q) as usize];
    let mean = nanos.iter().sum::<u64>() as f64 / nanos.len() as f64;
    println!(
        "{dir} (levels 0..={max}, {cache_mib} MiB cache, {warm_up} probes of warm-up): {} probes, median {} ns, p90 {} ns, p99 {} ns, mean {mean:.0} ns",
        nanos.len(),
        at(0.5),
        at(0.9),
        at(0.99)
    );
    Ok(())
}
