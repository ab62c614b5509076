//! The speed of `Tablebase::values` on a batch read from a file: what the
//! Python package's `tb.values` is measured against
//! (`python/examples/benchmark.py` writes the file and runs this on it).
//!
//! ```sh
//! cargo run --release -p mancala-probe --example batch_values -- TABLES POSITIONS.u8 [REPEATS [RULES]]
//! ```
//!
//! `POSITIONS.u8` holds the positions as bytes, `2P` counts a position
//! (mover's row first), one after the other. The batch is probed once
//! unmeasured (files opened, pages read), then `REPEATS` times (default 5):
//! the first of those keeps the blocks it decodes in the default block
//! cache, as far as it has room, and the others read them there. The
//! output is one line: positions, the median seconds and positions/s.

use std::time::Instant;

use mancala_probe::{Position, Rules, Tablebase, Variant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: batch_values TABLES POSITIONS.u8 [REPEATS [RULES]]";
    let dir = args.next().ok_or(usage)?;
    let file = args.next().ok_or(usage)?;
    let repeats: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let variant = args
        .next()
        .map_or(Ok(Variant::Oware), |s| Variant::from_name(&s))?;
    let rules = Rules::new(variant, 6)?;
    let bytes = std::fs::read(&file)?;
    let width = 2 * rules.pits();
    let positions: Vec<Position> = bytes
        .chunks_exact(width)
        .map(|row| {
            let counts: Vec<u32> = row.iter().map(|&c| c as u32).collect();
            Position::from_counts(rules.pits(), &counts)
        })
        .collect::<Result<_, _>>()?;
    let tb: Tablebase = Tablebase::open(&dir, rules)?;
    tb.values(&positions)?;
    let mut seconds: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            let values = tb.values(&positions);
            let elapsed = start.elapsed().as_secs_f64();
            values.map(|_| elapsed)
        })
        .collect::<Result<_, _>>()?;
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2];
    println!(
        "{} positions, median {median:.4} s, {:.0} positions/s",
        positions.len(),
        positions.len() as f64 / median
    );
    Ok(())
}
