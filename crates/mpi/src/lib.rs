//! The MPI transport of a mancala-tb build across a cluster: the
//! all-to-all exchange of [`mancala_gen::Transport`] over rsmpi (the `mpi`
//! crate) on the system's MPI, Open MPI on Debian.
//!
//! Kept out of the other crates and of the default build: it needs an MPI
//! library and libclang at compile time (`openmpi-bin`, `libopenmpi-dev`,
//! `libclang-dev`), which a user of the tables never needs. The binary
//! uses it with its `mpi` feature.
//!
//! MPI's default error handler ends the whole job when a collective
//! fails, and `mpirun` ends it when any rank dies, so an exchange either
//! completes at every rank or the job stops: no rank is left waiting.

#![warn(missing_docs)]

use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

/// The job's world communicator, initialised once per process.
pub struct Mpi {
    world: SimpleCommunicator,
    rank: usize,
    ranks: usize,
    /// Finalises MPI when dropped: held last.
    _universe: Universe,
}

/// Why MPI could not be set up.
#[derive(Debug)]
pub struct InitError(String);

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InitError {}

impl Mpi {
    /// Initialises MPI. Only the thread that calls this exchanges (the
    /// solver's worker threads never call MPI), which is what MPI calls
    /// "funneled".
    pub fn init() -> Result<Mpi, InitError> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| InitError("MPI was already initialised".into()))?;
        if threading < Threading::Funneled {
            return Err(InitError(format!(
                "this MPI library offers {threading:?} threading; funneled is needed"
            )));
        }
        let world = universe.world();
        Ok(Mpi {
            rank: world.rank() as usize,
            ranks: world.size() as usize,
            world,
            _universe: universe,
        })
    }

    /// Ends every rank of the job with `code`, from any rank: for failures
    /// the other ranks cannot learn of at their next exchange.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

/// Offsets of consecutive parts of the given lengths.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |at, &c| {
            let start = *at;
            *at += c;
            Some(start)
        })
        .collect()
}

/// A buffer's length as MPI counts it.
fn count(len: usize) -> Count {
    Count::try_from(len).expect("an exchange buffer below 2 GiB (the solver sends in pieces)")
}

impl mancala_gen::Transport for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    /// Two collectives: the lengths (all-to-all), then the bytes
    /// (all-to-all-v).
    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(outgoing.len(), self.ranks, "one buffer per rank");
        let send_counts: Vec<Count> = outgoing.iter().map(|b| count(b.len())).collect();
        let mut recv_counts = vec![0 as Count; self.ranks];
        self.world
            .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        // One byte beyond the parts in each buffer: two empty buffers would
        // share a dangling address, which MPI takes for an aliased buffer.
        let mut send: Vec<u8> = outgoing.concat();
        send.push(0);
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        count(send.len());
        count(total + 1);
        let mut recv = vec![0u8; total + 1];
        {
            let send_displs = displacements(&send_counts);
            let recv_displs = displacements(&recv_counts);
            let send = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
            let mut into = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
            self.world.all_to_all_varcount_into(&send, &mut into);
        }
        let mut received = Vec::with_capacity(self.ranks);
        let mut at = 0;
        for &c in &recv_counts {
            received.push(recv[at..at + c as usize].to_vec());
            at += c as usize;
        }
        received
    }
}
