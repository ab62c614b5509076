//! Building tables across the ranks of a cluster job, byte for byte the
//! files one process writes.
//!
//! Each level is dealt out to the ranks in contiguous ranges of whole
//! blocks ([`Split`]); a rank holds the state of its range of the level
//! being solved and its ranges of the levels below, never a whole level.
//! Lookups into lower levels and parent updates go to the rank that owns
//! them, in bulk, through a [`Transport`]: MPI on a cluster, threads in
//! one process for the tests ([`InProcess`]). Each rank codes its own
//! blocks with the model fitted from every rank's counts, and the file is
//! assembled on the shared directory.
//!
//! - `transport.rs`: the seam, and the collectives built on it;
//! - `shares.rs`: who owns which positions;
//! - `solve.rs`: the retrograde strategy across ranks, and the lookups
//!   every strategy asks of the owners;
//! - `one_pass.rs`: the one-pass strategy across ranks, for levels that
//!   cannot cycle;
//! - `write.rs`: a level's file written by every rank;
//! - this file: the build pipeline every rank runs.
//!
//! Faults: a rank that fails tells the others at the next step where they
//! agree ([`BuildError::Rank`]), and every rank returns the error; a rank
//! that dies stops the job through its transport (MPI ends the job). A
//! killed job leaves no file that looks complete, and a rerun resumes
//! from the last level written.

mod compress;
mod one_pass;
mod shares;
mod solve;
mod transport;
mod wire;
mod write;

use std::path::Path;
use std::time::Instant;

use mancala_core::{Cycles, LevelIndex, Rules};
use mancala_format::{depth_path, level_path, Encoding, Even, Forced, Table, TableId};

pub use shares::Split;
#[cfg(feature = "testing")]
pub use transport::InProcess;
pub use transport::{all_gather, Transport};
use transport::{broadcast, gather_u64};

use crate::depth_table::depth_symbols;
use crate::error::BuildError;
use crate::kernel::Depths;
use crate::lock;
use crate::pipeline::{
    build_levels, keeping_block_size, level_report, prepare, reused_report, survey, BuildObserver,
    BuildOptions, LevelReport, MemoryMode, Site,
};
use crate::solve::Solve;
use crate::usage::Metering;
use compress::Compressed;
use shares::LowerShares;
use solve::LevelAcross;
use write::{write_across, write_depths_across, LevelShare};

/// What one rank did for one level.
#[derive(Clone, Debug)]
pub struct RankReport {
    /// The level, as one process would report it (this rank's peak RSS).
    pub level: LevelReport,
    /// Positions of the level this rank owns.
    pub owned: u64,
    /// Bytes this rank sent to other ranks while solving and writing it.
    pub sent_bytes: u64,
    /// Seconds this rank spent in exchanges (waiting for the others
    /// included).
    pub exchange_seconds: f64,
}

/// Builds levels `0..=options.max_stones` across the ranks of `transport`;
/// every rank calls it with the same options. Rank 0 takes the
/// directory's lock and reports progress to `observer` (the others should
/// pass [`crate::Quiet`]). Returns this rank's reports.
pub fn build_across(
    transport: &impl Transport,
    options: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<RankReport>, BuildError> {
    let compact = options.cycles == Cycles::Even
        && Even::stored_encoding(&options.rules, options.encoding) == Encoding::Compact;
    if compact {
        return Err(BuildError::NotAcrossRanks {
            what: "the compact encoding".into(),
        });
    }
    if options.memory == MemoryMode::Lean {
        return Err(BuildError::NotAcrossRanks {
            what: "a lean-memory build".into(),
        });
    }
    if options.max_memory.is_some() {
        return Err(BuildError::NotAcrossRanks {
            what: "a memory budget".into(),
        });
    }
    if options.top_only {
        return Err(BuildError::NotAcrossRanks {
            what: "a top-only build".into(),
        });
    }
    options.validate()?;
    match options.cycles {
        Cycles::Even => build_kind::<Even>(transport, options, observer),
        Cycles::Forced => build_kind::<Forced>(transport, options, observer),
    }
}

/// Every rank learns whether every rank's `result` is `Ok`; the first
/// failure (by rank) is every rank's error, else each keeps its value.
pub(crate) fn agree<T>(
    transport: &impl Transport,
    result: Result<T, BuildError>,
) -> Result<T, BuildError> {
    let mine = match &result {
        Ok(_) => Vec::new(),
        Err(e) => {
            let mut bytes = vec![1];
            bytes.extend_from_slice(e.to_string().as_bytes());
            bytes
        }
    };
    let all = all_gather(transport, mine);
    match all.iter().enumerate().find(|(_, b)| !b.is_empty()) {
        None => result,
        Some((rank, bytes)) => Err(BuildError::Rank {
            rank,
            message: String::from_utf8_lossy(&bytes[1..]).into_owned(),
        }),
    }
}

/// The transport with what went through it counted.
struct Metered<'a, T: Transport> {
    inner: &'a T,
    sent: std::sync::atomic::AtomicU64,
    nanos: std::sync::atomic::AtomicU64,
}

impl<'a, T: Transport> Metered<'a, T> {
    fn new(inner: &'a T) -> Self {
        Metered {
            inner,
            sent: 0.into(),
            nanos: 0.into(),
        }
    }

    /// Bytes sent to other ranks and seconds spent since the last call.
    fn take(&self) -> (u64, f64) {
        use std::sync::atomic::Ordering::Relaxed;
        let sent = self.sent.swap(0, Relaxed);
        let nanos = self.nanos.swap(0, Relaxed);
        (sent, nanos as f64 * 1e-9)
    }
}

impl<T: Transport> Transport for Metered<'_, T> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    fn ranks(&self) -> usize {
        self.inner.ranks()
    }

    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        use std::sync::atomic::Ordering::Relaxed;
        let me = self.rank();
        let sent: usize = (outgoing.iter().enumerate())
            .filter(|&(r, _)| r != me)
            .map(|(_, b)| b.len())
            .sum();
        self.sent.fetch_add(sent as u64, Relaxed);
        let start = Instant::now();
        let received = self.inner.exchange(outgoing);
        self.nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Relaxed);
        received
    }
}

fn build_kind<K: Solve>(
    transport: &impl Transport,
    options: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<Vec<RankReport>, BuildError> {
    let metered = &Metered::new(transport);
    let compressed = Compressed::new(metered);
    let transport = &compressed;
    let rank = transport.rank();
    let writer = gather_u64(transport, std::process::id() as u64)[0] as u32;
    let dir = options.dir();
    // Rank 0 alone looks at the directory, locks and sweeps it.
    let surveyed = if rank == 0 {
        look_at_directory::<K>(options).map(Some)
    } else {
        Ok(None)
    };
    let (flags, held, block_size) = agree(transport, surveyed)?.unwrap_or_default();
    let present: Vec<bool> = broadcast(transport, flags)
        .iter()
        .map(|&b| b != 0)
        .collect();
    let block_size = broadcast(transport, block_size.to_le_bytes().to_vec());
    let block_size =
        u32::from_le_bytes(block_size[..4].try_into().expect("four bytes from rank 0"));
    let options = &BuildOptions {
        block_size: Some(block_size),
        ..options.clone()
    };
    let last_to_build = present.iter().rposition(|&p| !p);
    let work: u64 = (0..=options.max_stones)
        .filter(|&n| !present[n as usize])
        .map(|n| 2 * positions(&options.rules, n))
        .sum();
    observer.started(work);
    let mut site = RankSite {
        transport,
        metered,
        options,
        dir: &dir,
        writer,
        observer,
        present,
        lower: LowerShares::<K>::new(),
    };
    let reports = build_levels(&mut site, last_to_build, observer);
    drop(held);
    reports
}

/// A rank's share of every level: read from the level's file, or solved
/// and written with the other ranks, and its range held for the levels
/// above.
struct RankSite<'a, K: Solve, T: Transport, M: Transport> {
    transport: &'a T,
    /// The transport under `transport`'s compression, which counts this
    /// rank's bytes and time.
    metered: &'a Metered<'a, M>,
    options: &'a BuildOptions,
    dir: &'a Path,
    /// The process id that names the temporary files.
    writer: u32,
    observer: &'a dyn BuildObserver,
    /// Whether each level's valid file is present (as rank 0 found it).
    present: Vec<bool>,
    lower: LowerShares<K>,
}

impl<K: Solve, T: Transport, M: Transport> RankSite<'_, K, T, M> {
    /// Level `n`'s split among the ranks.
    fn split(&self, n: u32) -> Split {
        let count = positions(&self.options.rules, n);
        Split::new(count, self.options.block_size(), self.transport.ranks())
    }

    /// This rank's report of level `n`, the exchanges' meter read.
    fn report(&self, level: LevelReport, split: &Split) -> RankReport {
        let (sent_bytes, exchange_seconds) = self.metered.take();
        let range = split.range(self.transport.rank());
        RankReport {
            level,
            owned: range.end - range.start,
            sent_bytes,
            exchange_seconds,
        }
    }
}

impl<K: Solve, T: Transport, M: Transport> Site for RankSite<'_, K, T, M> {
    type Report = RankReport;

    fn levels(&self) -> u32 {
        self.options.max_stones + 1
    }

    /// A build across ranks builds every level (a top-only one is refused).
    fn builds(&self, _n: u32) -> bool {
        true
    }

    fn present(&self, n: u32) -> bool {
        self.present[n as usize]
    }

    fn skip(&mut self, _n: u32, _needed: bool) -> Result<(), BuildError> {
        unreachable!("a build across ranks builds every level")
    }

    fn reuse(&mut self, n: u32, needed: bool) -> Result<RankReport, BuildError> {
        let (rank, split) = (self.transport.rank(), self.split(n));
        let path = level_path(self.dir, n);
        let read = read_share::<K>(&self.options.rules, &path, n, &split, rank, needed);
        let (report, share) = agree(self.transport, read)?;
        if let Some(symbols) = share {
            self.lower.push(split.clone(), rank, symbols);
        }
        Ok(self.report(report, &split))
    }

    fn build(&mut self, n: u32, needed: bool) -> Result<RankReport, BuildError> {
        let split = self.split(n);
        let path = level_path(self.dir, n);
        let (report, symbols) = solve_and_write(
            self.transport,
            self.options,
            n,
            &split,
            &self.lower,
            &path,
            self.writer,
            self.observer,
        )?;
        if needed {
            self.lower
                .push(split.clone(), self.transport.rank(), symbols);
        }
        Ok(self.report(report, &split))
    }

    fn level_report(report: &RankReport) -> &LevelReport {
        &report.level
    }
}

fn positions(rules: &Rules, n: u32) -> u64 {
    LevelIndex::new(rules.pits(), n).count()
}

/// Rank 0's look at the tables' directory (created, then surveyed): one
/// byte per level, whether a valid file of it is present, the lock if
/// levels are to be written, and the block size (the set's own where none
/// is asked, as in a one-process build), which every rank then uses.
fn look_at_directory<K: Solve>(
    options: &BuildOptions,
) -> Result<(Vec<u8>, Option<lock::DirLock>, u32), BuildError> {
    let dir = prepare(options)?;
    let options = keeping_block_size::<K>(options, &dir);
    let survey = survey::<K>(&options, &dir)?;
    let flags = survey.present.iter().map(|t| t.is_some() as u8).collect();
    Ok((flags, survey.lock, options.block_size()))
}

/// A present level: its report, and this rank's share of its symbols if
/// they are `needed` (for a level above it).
fn read_share<K: Solve>(
    rules: &Rules,
    path: &Path,
    n: u32,
    split: &Split,
    rank: usize,
    needed: bool,
) -> Result<(LevelReport, Option<Vec<i8>>), BuildError> {
    let expected = TableId {
        rules: *rules,
        level: n,
    };
    let table = Table::<K>::open(path, Some(expected))?;
    let report = reused_report(&table);
    if !needed {
        return Ok((report, None));
    }
    let range = split.range(rank);
    let block_size = table.header().block_size as u64;
    let mut symbols = Vec::with_capacity((range.end - range.start) as usize * K::WIDTH);
    for block in range.start / block_size..range.end.div_ceil(block_size) {
        symbols.extend(table.decode_block(block)?);
    }
    Ok((report, Some(symbols)))
}

/// Writes level `n`'s depth table across the ranks from this rank's
/// `depths` and values (`symbols`), to `path` with temporary files named
/// after `writer`.
fn write_depths<K: Solve>(
    transport: &impl Transport,
    options: &BuildOptions,
    n: u32,
    depths: Depths,
    symbols: &[i8],
    (path, writer): (&Path, u32),
) -> Result<(), BuildError> {
    let first = depths.first();
    let plies = depths.finished();
    let mut out = vec![0i8; plies.len()];
    let plies = |at| plies.plies(at);
    let long = depth_symbols::<K>(n, first, options.block_size(), plies, symbols, &mut out);
    let long = agree(transport, long)?;
    let share = LevelShare {
        path,
        writer,
        first,
        symbols: &out,
    };
    write_depths_across::<K>(
        transport,
        &options.rules,
        n,
        options.block_size(),
        &share,
        &long,
    )
}

/// Solves level `n` across the ranks and writes its file (and its depth
/// table, where asked); returns this rank's report and share of the
/// symbols.
#[allow(clippy::too_many_arguments)]
fn solve_and_write<K: Solve>(
    transport: &impl Transport,
    options: &BuildOptions,
    n: u32,
    split: &Split,
    lower: &LowerShares<K>,
    path: &Path,
    writer: u32,
    observer: &dyn BuildObserver,
) -> Result<(LevelReport, Vec<i8>), BuildError> {
    let rank = transport.rank();
    let count = split.range(split.ranks() - 1).end;
    let range = split.range(rank);
    let owned = range.end - range.start;
    observer.level_started(n, count, 2 * count);
    let metering = Metering::start();
    let start = Instant::now();
    // Rank 0 shows its own progress, scaled to the level.
    let reported = std::sync::atomic::AtomicU64::new(0);
    let progress = |units: u64| {
        if rank == 0 && owned > 0 {
            let scaled = units * count / owned;
            reported.fetch_add(scaled, std::sync::atomic::Ordering::Relaxed);
            observer.advanced(scaled);
        }
    };
    let across = LevelAcross {
        transport,
        rules: &options.rules,
        level: n,
        split,
        lower,
        progress: &progress,
    };
    // Depths come out of the threshold rounds, which a level of a rule
    // set that cannot cycle then takes too.
    let depths = options
        .depths
        .then(|| Depths::for_kind::<K>(range.start, owned as usize));
    let symbols = if options.rules.variant().can_cycle() || depths.is_some() {
        across.solve(depths.as_ref())?
    } else {
        across.solve_in_one_pass()
    };
    if let Some(depths) = depths {
        let depth_path = depth_path(path.parent().expect("a level file is in a directory"), n);
        write_depths::<K>(
            transport,
            options,
            n,
            depths,
            &symbols,
            (&depth_path, writer),
        )?;
    }
    let share = LevelShare {
        path,
        writer,
        first: range.start,
        symbols: &symbols,
    };
    let (header, bytes) =
        write_across::<K>(transport, &options.rules, n, options.block_size(), &share)?;
    let done = reported.into_inner();
    if rank == 0 && done < 2 * count {
        observer.advanced(2 * count - done);
    }
    let seconds = start.elapsed().as_secs_f64();
    let report = level_report(&header, seconds, bytes, metering.finish(), false);
    Ok((report, symbols))
}
