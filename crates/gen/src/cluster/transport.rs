//! The seam between the distributed build and whatever carries its bytes:
//! one collective, an all-to-all of byte buffers, and the few collectives
//! the build needs written on top of it.
//!
//! A transport is MPI for a real cluster (the `mancala-mpi` crate) or
//! [`InProcess`], ranks as threads of one process: what the tests run, and
//! the model for a new transport.

use std::sync::{Arc, Condvar, Mutex};

/// How the ranks of one job reach each other.
///
/// Every rank makes the same calls in the same order: each call is one
/// step of the whole job, and a rank that makes no call (it failed, or was
/// killed) stops the job, never leaving the others waiting for ever.
pub trait Transport {
    /// This rank, `0..ranks()`.
    fn rank(&self) -> usize;

    /// How many ranks the job has.
    fn ranks(&self) -> usize;

    /// Sends `outgoing[r]` to rank `r` (one buffer per rank, this one's
    /// included) and returns what every rank sent this one, by sender.
    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
}

/// Every rank's `bytes`, by rank, at every rank.
pub fn all_gather(transport: &impl Transport, bytes: Vec<u8>) -> Vec<Vec<u8>> {
    transport.exchange(vec![bytes; transport.ranks()])
}

/// The largest of every rank's `value`, at every rank.
pub fn max(transport: &impl Transport, value: u64) -> u64 {
    gather_u64(transport, value).into_iter().max().unwrap_or(0)
}

/// Every rank's `value`, by rank.
pub fn gather_u64(transport: &impl Transport, value: u64) -> Vec<u64> {
    all_gather(transport, value.to_le_bytes().to_vec())
        .iter()
        .map(|b| u64::from_le_bytes(b[..8].try_into().expect("eight bytes from every rank")))
        .collect()
}

/// Rank 0's `bytes`, at every rank (the others' are not sent).
pub fn broadcast(transport: &impl Transport, bytes: Vec<u8>) -> Vec<u8> {
    let outgoing = if transport.rank() == 0 {
        vec![bytes; transport.ranks()]
    } else {
        vec![Vec::new(); transport.ranks()]
    };
    transport.exchange(outgoing).swap_remove(0)
}

/// Ranks as threads of one process, exchanging through shared memory.
///
/// [`InProcess::run`] starts the ranks; each gets its own handle. A rank
/// that ends (returns or panics) before the others makes any exchange they
/// are waiting in, or start, panic naming it, so a failed rank never
/// leaves the others blocked. The tests' transport (the `testing`
/// feature).
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub struct InProcess {
    shared: Arc<Shared>,
    rank: usize,
}

#[cfg_attr(not(feature = "testing"), allow(dead_code))]
struct Shared {
    ranks: usize,
    round: Mutex<Round>,
    changed: Condvar,
}

/// The mailboxes of the exchange under way.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
struct Round {
    /// `mail[to][from]`.
    mail: Vec<Vec<Option<Vec<u8>>>>,
    /// Ranks that have reached the present phase's end: posted this
    /// round's buffers, then taken theirs.
    arrived: usize,
    /// Counts the phases (all posted, all taken) gone by.
    phase: u64,
    /// A rank that ended, if one has.
    gone: Option<usize>,
}

#[cfg_attr(not(feature = "testing"), allow(dead_code))]
impl InProcess {
    /// Runs `rank_main` on `ranks` threads, each with its own transport,
    /// and returns their results by rank.
    pub fn run<T: Send>(ranks: usize, rank_main: impl Fn(&InProcess) -> T + Sync) -> Vec<T> {
        assert!(ranks > 0, "a job has at least one rank");
        let shared = Arc::new(Shared {
            ranks,
            round: Mutex::new(Round {
                mail: vec![vec![None; ranks]; ranks],
                arrived: 0,
                phase: 0,
                gone: None,
            }),
            changed: Condvar::new(),
        });
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..ranks)
                .map(|rank| {
                    let transport = InProcess {
                        shared: shared.clone(),
                        rank,
                    };
                    let rank_main = &rank_main;
                    scope.spawn(move || rank_main(&transport))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    }

    /// Counts this rank in at the end of the present phase: the last to
    /// arrive moves the phase on, the others wait until it has.
    fn arrive<'a>(
        &self,
        mut round: std::sync::MutexGuard<'a, Round>,
    ) -> std::sync::MutexGuard<'a, Round> {
        round.arrived += 1;
        if round.arrived == self.shared.ranks {
            round.arrived = 0;
            round.phase += 1;
            self.shared.changed.notify_all();
            round
        } else {
            let phase = round.phase;
            self.wait_past(round, phase)
        }
    }

    /// Waits, holding `round`, until the phase moves past `phase`.
    fn wait_past<'a>(
        &self,
        mut round: std::sync::MutexGuard<'a, Round>,
        phase: u64,
    ) -> std::sync::MutexGuard<'a, Round> {
        while round.phase == phase {
            if let Some(gone) = round.gone {
                panic!("rank {gone} left the job while rank {} waited", self.rank);
            }
            round = self
                .shared
                .changed
                .wait(round)
                .expect("no rank panics holding the lock");
        }
        round
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Ok(mut round) = self.shared.round.lock() {
            round.gone.get_or_insert(self.rank);
        }
        self.shared.changed.notify_all();
    }
}

impl Transport for InProcess {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.ranks
    }

    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let ranks = self.shared.ranks;
        assert_eq!(outgoing.len(), ranks, "one buffer per rank");
        let mut round = self
            .shared
            .round
            .lock()
            .expect("no rank panics holding the lock");
        if let Some(gone) = round.gone {
            panic!(
                "rank {gone} left the job before rank {} exchanged",
                self.rank
            );
        }
        for (to, bytes) in outgoing.into_iter().enumerate() {
            round.mail[to][self.rank] = Some(bytes);
        }
        round = self.arrive(round);
        let received = round.mail[self.rank]
            .iter_mut()
            .map(|m| m.take().expect("every rank posted"))
            .collect();
        drop(self.arrive(round));
        received
    }
}
