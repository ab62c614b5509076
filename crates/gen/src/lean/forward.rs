//! The lean mode's forward pass: the kernel's (`crate::kernel`), every
//! position's exits, from the lower levels, written to the exit lists in
//! index order, and its first state ([`Start`]: its moves that keep the
//! level, and whether it is eligible from the start) to the level's state
//! file, in index order too.
//!
//! The pass reads the lower levels (held flipped, so that a run of
//! positions reaches a few stretches of each: [`mancala_format::Order`])
//! and holds nothing of the level's own state: the state file is read into
//! memory only when the pass is over, so while the lower levels are read,
//! the page cache has the memory the state will take.
//!
//! A pass of a large level takes long, so it saves checkpoints of its own
//! ([`checkpoint::save_forward`]) between the kernel's groups of
//! positions: its exit lists sealed, the state file synced, and how many
//! positions they cover. A killed pass goes on from the last one, its
//! files cut back to that; they hold the same either way.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::ScopedJoinHandle;
use std::time::Instant;

use mancala_core::LevelIndex;
use mancala_format::filled_on_huge_pages;

use super::lists::{cut_back, io, List, ListWriter, Sealed};
use super::state::{LeanState, Start};
use super::{checkpoint, exit_path, recreate, LeanKind};
use crate::error::BuildError;
use crate::kernel::{forward_pass, LocalExchange, Pacing, Part, Record, Summary};
use crate::strategy::LevelJob;

/// What a forward pass leaves: the state file, every position's first
/// state, and the exit lists.
pub(super) struct Passed {
    pub(super) state: PathBuf,
    /// The CRC-32 of what was written to the state file.
    pub(super) state_crc: u32,
    pub(super) exits: Vec<List>,
    /// When the level's work was last saved (or the pass began).
    pub(super) last_saved: Instant,
}

/// Lists level `job.level`'s positions (of `index`) under their exits in
/// `dir`, and writes their first states to its state file, going on from
/// the pass's checkpoint if there is a valid one.
pub(super) fn pass<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    dir: &Path,
) -> Result<Passed, BuildError> {
    let count = index.count();
    let began = Instant::now();
    let (lists, state, listed) = match resumed::<K>(job, index, dir)? {
        Some((lists, state, listed)) => {
            job.report_resumed(listed as u64);
            (lists, state, listed)
        }
        None => {
            let (lists, state) = started::<K>(job, dir)?;
            (lists, state, 0)
        }
    };
    let part = Part {
        rules: job.rules,
        index: *index,
        owned: 0..count,
    };
    let every = job.checkpoints.map(|c| c.every);
    let mut pacing = Pacing::new(job.interrupt, every, began);
    let files = Files {
        lists,
        state,
        starts: Vec::new(),
    };
    let lower = (job.lower, &LocalExchange);
    let files = std::thread::scope(|scope| {
        let (work, todo) = mpsc::sync_channel(1);
        let writer = scope.spawn(move || files.write(job, index, todo));
        let mut listing = Listing {
            job,
            work: Some(work),
            writer: Some(writer),
        };
        let passed = forward_pass(&part, listed as u64, lower, &mut pacing, &mut listing);
        let written = listing.writer_result();
        passed.and(written)
    })?;
    let lists = files
        .lists
        .into_iter()
        .map(ListWriter::finish)
        .collect::<Result<Vec<_>, _>>()?;
    let (state, state_crc) = files.state.finish()?;
    Ok(Passed {
        state,
        state_crc,
        exits: lists,
        last_saved: pacing.last_saved(),
    })
}

/// Removes the state file of the level whose lists are in `dir`, once a
/// checkpoint between thresholds holds the state: the checkpoint replaced
/// the forward pass's, the only one that named the file, and a large
/// level's state file is as large as its checkpoint.
pub(super) fn remove_state_file(dir: &Path) {
    let _ = std::fs::remove_file(StateFile::path(dir));
}

/// The state of a level of `count` positions with `pits` pits a side: its
/// starts read from the state file its forward pass wrote (which stays: a
/// pass that was checkpointed at its end reads it again when it resumes),
/// checked against the CRC-32 of what was written to it.
pub(super) fn read_state<K: LeanKind>(
    passed: &Passed,
    count: usize,
    pits: usize,
) -> Result<K::Lean, BuildError> {
    let path = &passed.state;
    let mut bytes = filled_on_huge_pages(K::Lean::bytes_for(count, pits), 0);
    let starts = &mut bytes[..K::Lean::start_bytes_for(count, pits)];
    let mut file = File::open(path).map_err(|e| io(path, e))?;
    let length = file.metadata().map_err(|e| io(path, e))?.len();
    if length != starts.len() as u64 {
        return Err(state_damaged(
            path,
            format!("{length} bytes, not {}", starts.len()),
        ));
    }
    file.read_exact(starts).map_err(|e| io(path, e))?;
    if crc32fast::hash(starts) != passed.state_crc {
        return Err(state_damaged(path, "its checksum fails".into()));
    }
    Ok(K::Lean::from_bytes(bytes, count, pits))
}

/// The state file at `path` found damaged: `why`.
pub(super) fn state_damaged(path: &Path, why: String) -> BuildError {
    BuildError::ScratchDamaged {
        path: path.to_path_buf(),
        why,
    }
}

/// What the pass asks of the thread that writes its files.
enum Work<K: LeanKind> {
    /// The summaries of the positions from a level index on.
    Record(u64, Vec<Summary<K>>),
    /// Seal the files and save a checkpoint of a pass whose positions up
    /// to a level index are recorded, then say how that went.
    Save(u64, mpsc::Sender<Result<(), BuildError>>),
}

/// The forward pass's summaries, handed to a thread of their own that
/// writes them to the exit lists and the state file, so that the pass
/// sums up the next group of positions meanwhile: the lists are zstd
/// streams, written one entry at a time, which would otherwise leave the
/// pass's threads idle for every group.
struct Listing<'scope, 'a, K: LeanKind> {
    job: &'a LevelJob<'a, K>,
    /// Taken when the pass is over, which ends the writer's work.
    work: Option<mpsc::SyncSender<Work<K>>>,
    writer: Option<ScopedJoinHandle<'scope, Result<Files, BuildError>>>,
}

impl<K: LeanKind> Listing<'_, '_, K> {
    /// Hands `work` to the writer; the writer's error if it has stopped.
    fn send(&mut self, work: Work<K>) -> Result<(), BuildError> {
        let sent = self.work.as_ref().map(|w| w.send(work).is_ok());
        match sent {
            Some(true) => Ok(()),
            _ => Err(self.writer_error()),
        }
    }

    /// The error the writer stopped at, once it has stopped early.
    fn writer_error(&mut self) -> BuildError {
        match self.writer_result() {
            Err(e) => e,
            Ok(_) => unreachable!("the writer stops on errors only"),
        }
    }

    /// The writer's files once it has written all it was handed, or the
    /// error it stopped at.
    fn writer_result(&mut self) -> Result<Files, BuildError> {
        self.work = None;
        let writer = self.writer.take().expect("the writer is waited for once");
        writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

impl<K: LeanKind> Record<K> for Listing<'_, '_, K> {
    fn record(&mut self, first: u64, summaries: Vec<Summary<K>>) -> Result<(), BuildError> {
        let len = summaries.len() as u64;
        self.send(Work::Record(first, summaries))?;
        (self.job.progress)(len);
        Ok(())
    }

    fn save(&mut self, next: u64) -> Result<(), BuildError> {
        if self.job.checkpoints.is_none() {
            return Ok(());
        }
        let (told, done) = mpsc::channel();
        self.send(Work::Save(next, told))?;
        match done.recv() {
            Ok(saved) => saved,
            Err(_) => Err(self.writer_error()),
        }
    }
}

/// The files the forward pass writes.
struct Files {
    lists: Vec<ListWriter>,
    state: StateFile,
    /// The bytes of a group's first states, reused from group to group.
    starts: Vec<u8>,
}

impl Files {
    /// Does the work handed over `todo` until the pass is over (or an
    /// error stops it); returns the files, to be finished.
    fn write<K: LeanKind>(
        mut self,
        job: &LevelJob<K>,
        index: &LevelIndex,
        todo: mpsc::Receiver<Work<K>>,
    ) -> Result<Files, BuildError> {
        for work in todo {
            match work {
                Work::Record(first, summaries) => self.record(job, first, &summaries)?,
                // The pass stops at an error it is told of.
                Work::Save(next, told) => {
                    let _ = told.send(self.save(job, index, next));
                }
            }
        }
        Ok(self)
    }

    fn record<K: LeanKind>(
        &mut self,
        job: &LevelJob<K>,
        first: u64,
        summaries: &[Summary<K>],
    ) -> Result<(), BuildError> {
        let n = job.level;
        for (at, (exits, _)) in (first..).zip(summaries) {
            for k in K::lists_of(n, *exits).into_iter().flatten() {
                self.lists[k].push(at)?;
            }
        }
        let starts = summaries.iter().map(|&(exits, moves)| Start {
            moves,
            eligible: K::eligible_from_start(exits),
        });
        self.starts.clear();
        K::Lean::write_starts(job.rules.pits(), starts, &mut self.starts);
        self.state.write(&self.starts)
    }

    fn save<K: LeanKind>(
        &mut self,
        job: &LevelJob<K>,
        index: &LevelIndex,
        next: u64,
    ) -> Result<(), BuildError> {
        let Some(checkpoints) = job.checkpoints else {
            return Ok(());
        };
        let (lists, sealed): (Vec<_>, Vec<_>) = std::mem::take(&mut self.lists)
            .into_iter()
            .map(ListWriter::seal)
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .unzip();
        self.lists = lists;
        let state = self.state.sync()?;
        let n = job.level;
        checkpoint::save_forward(&checkpoints.path(n), n, index.count(), next, state, &sealed)
    }
}

/// The level's state file, written as the pass goes, with the CRC-32 of
/// what was written to it.
struct StateFile {
    path: PathBuf,
    out: BufWriter<File>,
    crc: crc32fast::Hasher,
}

impl StateFile {
    fn path(dir: &Path) -> PathBuf {
        dir.join("state")
    }

    fn create(dir: &Path) -> Result<StateFile, BuildError> {
        let path = StateFile::path(dir);
        let file = File::create(&path).map_err(|e| io(&path, e))?;
        Ok(StateFile::writing_to(path, file, crc32fast::Hasher::new()))
    }

    /// The state file in `dir` cut back to its first `bytes` (whose
    /// CRC-32 was `crc` when they were written), to be written on; `None`
    /// if it is shorter.
    fn reopen(dir: &Path, (bytes, crc): (u64, u32)) -> Result<Option<StateFile>, BuildError> {
        let path = StateFile::path(dir);
        if !std::fs::metadata(&path).is_ok_and(|m| m.len() >= bytes) {
            return Ok(None);
        }
        let file = cut_back(&path, bytes)?;
        let crc = crc32fast::Hasher::new_with_initial_len(crc, bytes);
        Ok(Some(StateFile::writing_to(path, file, crc)))
    }

    fn writing_to(path: PathBuf, file: File, crc: crc32fast::Hasher) -> StateFile {
        StateFile {
            path,
            out: BufWriter::with_capacity(1 << 20, file),
            crc,
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), BuildError> {
        self.crc.update(bytes);
        self.out.write_all(bytes).map_err(|e| io(&self.path, e))
    }

    /// Everything written so far on disk; returns its length and CRC-32.
    fn sync(&mut self) -> Result<(u64, u32), BuildError> {
        let path = &self.path;
        self.out.flush().map_err(|e| io(path, e))?;
        let file = self.out.get_ref();
        file.sync_data().map_err(|e| io(path, e))?;
        let length = file.metadata().map_err(|e| io(path, e))?.len();
        Ok((length, self.crc.clone().finalize()))
    }

    /// Ends the writing; returns where the file is and the CRC-32 of what
    /// was written to it.
    fn finish(self) -> Result<(PathBuf, u32), BuildError> {
        let path = self.path;
        self.out
            .into_inner()
            .map_err(|e| io(&path, e.into_error()))?;
        Ok((path, self.crc.finalize()))
    }
}

/// New, empty exit lists and state file in `dir` (emptied first), the
/// level's checkpoint removed: one that was not valid could otherwise seem
/// to fit files written from now on.
fn started<K: LeanKind>(
    job: &LevelJob<K>,
    dir: &Path,
) -> Result<(Vec<ListWriter>, StateFile), BuildError> {
    if let Some(checkpoints) = job.checkpoints {
        checkpoints.remove(job.level);
    }
    recreate(dir)?;
    let lists = (0..K::exit_lists(job.level))
        .map(|k| ListWriter::create(exit_path(dir, k)))
        .collect::<Result<_, _>>()?;
    Ok((lists, StateFile::create(dir)?))
}

/// The exit lists and state file in `dir` reopened where the pass's
/// checkpoint says they stood, and the positions they cover, if the job
/// keeps checkpoints and a valid one is there, every file with it.
fn resumed<K: LeanKind>(
    job: &LevelJob<K>,
    index: &LevelIndex,
    dir: &Path,
) -> Result<Option<(Vec<ListWriter>, StateFile, usize)>, BuildError> {
    let n = job.level;
    let Some(saved) = job
        .checkpoints
        .and_then(|c| checkpoint::load_forward(&c.path(n), n, index.count()))
    else {
        return Ok(None);
    };
    let fits = |(k, sealed): (usize, &Sealed)| ListWriter::can_reopen(&exit_path(dir, k), sealed);
    let state_bytes = K::Lean::start_bytes_for(saved.listed as usize, job.rules.pits()) as u64;
    if saved.lists.len() != K::exit_lists(n)
        || !saved.lists.iter().enumerate().all(fits)
        || saved.state_bytes != state_bytes
    {
        return Ok(None);
    }
    let Some(state) = StateFile::reopen(dir, (state_bytes, saved.state_crc))? else {
        return Ok(None);
    };
    let lists = saved
        .lists
        .into_iter()
        .enumerate()
        .map(|(k, sealed)| ListWriter::reopen(exit_path(dir, k), sealed))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((lists, state, saved.listed as usize)))
}
