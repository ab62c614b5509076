//! The exchange is a seam: a transport that delivers parents the way a
//! cluster would (each to the worker that owns its index range, each worker
//! applying its own share in turn) solves every level exactly as the local
//! exchange does.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use mancala_core::{Rules, Variant};
use mancala_format::{Even, Forced, Levels};
use mancala_gen::{solve_in_memory, Exchange, LevelJob, Retrograde, Solve, Strategy, Visit};

/// Parents split among `workers` by index range (`range` positions each,
/// dealt round robin), each worker's share sorted and applied on its own,
/// one worker after another.
pub(crate) struct Sharded {
    workers: u64,
    range: u64,
    /// Parents delivered, to show the test went through this exchange.
    delivered: AtomicU64,
}

impl Sharded {
    pub(crate) fn new(workers: u64, range: u64) -> Sharded {
        Sharded {
            workers,
            range,
            delivered: AtomicU64::new(0),
        }
    }
}

impl Exchange for Sharded {
    fn deliver(&self, parents: Vec<u64>, visit: &impl Visit) -> Vec<u64> {
        self.delivered.fetch_add(parents.len() as u64, Relaxed);
        let mut shares = vec![Vec::new(); self.workers as usize];
        for parent in parents {
            shares[((parent / self.range) % self.workers) as usize].push(parent);
        }
        let mut joined = Vec::new();
        for mut share in shares {
            share.sort_unstable();
            for run in share.chunk_by(|a, b| a == b) {
                if visit.visit(run[0] as usize, run.len() as u8) {
                    joined.push(run[0]);
                }
            }
        }
        joined
    }
}

/// Levels `0..=max` solved with the sharded exchange equal the local ones.
fn assert_sharded_equals_local<K: Solve>(rules: Rules, max: u32) {
    let local = solve_in_memory::<K>(&rules, max);
    let strategy = Retrograde {
        exchange: Sharded::new(3, 1000),
    };
    let mut sharded = Levels::<K>::new();
    for n in 0..=max {
        let job = LevelJob {
            rules: &rules,
            level: n,
            lower: &sharded,
            progress: &|_| {},
            resumed: None,
            checkpoints: None,
            interrupt: None,
            mark_exits: false,
            depths: None,
        };
        let solution = strategy.solve(&job).unwrap();
        assert_eq!(
            solution.symbols,
            local.symbols(n),
            "{} level {n}: sharded and local exchanges differ",
            rules.id()
        );
        sharded.push(solution.symbols);
    }
    assert!(
        strategy.exchange.delivered.load(Relaxed) > 0,
        "nothing delivered"
    );
}

#[test]
fn a_sharded_exchange_solves_as_the_local_one() {
    for (variant, pits, max) in [
        (Variant::Oware, 6, 8),
        (Variant::Awari, 4, 10),
        (Variant::Wari, 3, 10),
        (Variant::Kalah, 4, 10),
    ] {
        let rules = Rules::new(variant, pits).unwrap();
        assert_sharded_equals_local::<Even>(rules, max);
        assert_sharded_equals_local::<Forced>(rules, max);
    }
}
