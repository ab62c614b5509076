//! `build` as one rank of an MPI job: `mpirun -np R mancala-tb build …`
//! (`docs/guide/cluster.md`). Needs the binary built with the `mpi`
//! feature; without it, a build launched by `mpirun` stops with a message
//! rather than have every rank build the same tables on its own.

use anyhow::Result;
use mancala_gen::{BuildObserver, BuildOptions, LevelReport};

/// Where a build runs: this process alone, or one rank of an MPI job.
pub enum Job {
    /// One process, the usual build.
    Alone,
    /// A rank of the job `mpirun` started.
    #[cfg(feature = "mpi")]
    Rank(mancala_mpi::Mpi),
}

/// Whether `mpirun` (Open MPI, or an MPICH-style launcher) started this
/// process.
fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

impl Job {
    /// The job this process is part of.
    pub fn join() -> Result<Job> {
        if !launched_by_mpirun() {
            return Ok(Job::Alone);
        }
        #[cfg(feature = "mpi")]
        {
            Ok(Job::Rank(mancala_mpi::Mpi::init()?))
        }
        #[cfg(not(feature = "mpi"))]
        {
            anyhow::bail!(
                "started by mpirun, but this mancala-tb was built without MPI: build it with `cargo build --release --features mpi` (docs/guide/cluster.md)"
            )
        }
    }

    /// Whether this process builds alone, not as a rank of a job (whose
    /// signals `mpirun` handles).
    pub fn is_alone(&self) -> bool {
        matches!(self, Job::Alone)
    }

    /// Whether this process prints the build's progress and summary: the
    /// only process, or rank 0.
    pub fn leads(&self) -> bool {
        match self {
            Job::Alone => true,
            #[cfg(feature = "mpi")]
            Job::Rank(mpi) => mancala_gen::Transport::rank(mpi) == 0,
        }
    }

    /// Builds the tables; `observer` hears rank 0 only. Returns the level
    /// reports and, in a job, one summary line per rank (at rank 0; none
    /// elsewhere).
    pub fn build(
        &self,
        options: &BuildOptions,
        observer: &dyn BuildObserver,
    ) -> Result<(Vec<LevelReport>, Vec<String>)> {
        match self {
            Job::Alone => Ok((mancala_gen::build(options, observer)?, Vec::new())),
            #[cfg(feature = "mpi")]
            Job::Rank(mpi) => build_as_rank(mpi, options, observer),
        }
    }
}

#[cfg(feature = "mpi")]
fn build_as_rank(
    mpi: &mancala_mpi::Mpi,
    options: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<(Vec<LevelReport>, Vec<String>)> {
    use mancala_gen::Transport;
    let rank = mpi.rank();
    let observer = if rank == 0 {
        observer
    } else {
        &mancala_gen::Quiet
    };
    let reports = mancala_gen::build_across(mpi, options, observer)?;
    let line = rank_summary(rank, &reports);
    let lines = mancala_gen::all_gather(mpi, line.into_bytes())
        .into_iter()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let lines = if rank == 0 {
        lines.collect()
    } else {
        Vec::new()
    };
    Ok((reports.into_iter().map(|r| r.level).collect(), lines))
}

/// One rank's line of the job's summary: what it owned, held and sent.
#[cfg(feature = "mpi")]
fn rank_summary(rank: usize, reports: &[mancala_gen::RankReport]) -> String {
    let built: Vec<_> = reports.iter().filter(|r| !r.level.reused).collect();
    let owned: u64 = built.iter().map(|r| r.owned).sum();
    let sent: u64 = built.iter().map(|r| r.sent_bytes).sum();
    let exchange: f64 = built.iter().map(|r| r.exchange_seconds).sum();
    let solving: f64 = built.iter().map(|r| r.level.seconds).sum();
    let peak = reports
        .iter()
        .filter_map(|r| r.level.usage.peak_rss_bytes)
        .max();
    format!(
        "rank {rank}: {owned} positions owned, {sent} bytes sent ({:.2} bytes/position), {exchange:.2} s of {solving:.2} s in exchanges, peak RSS {}",
        sent as f64 / owned.max(1) as f64,
        peak.map_or("unknown".into(), |b| format!("{:.0} MiB", b as f64 / (1 << 20) as f64))
    )
}
