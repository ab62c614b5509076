//! Sorted lists of position indices on disk, the lean mode's sequential
//! streams: each index written as its gap from the one before (a LEB128
//! varint), the gaps compressed with zstd. Gaps between sorted indices of
//! one level are small and repetitive, which is what both the varints and
//! zstd compress well; a list is written once, in order, and read back
//! once, in order.
//!
//! Every frame carries zstd's checksum of its content, and a list is read
//! to its very end, so that a damaged list (a disk fault, a file changed
//! under the build) is an error, [`BuildError::ScratchDamaged`], and never
//! a table built from wrong lists: the indices read before the damage
//! shows have changed nothing but the level's state in memory, which the
//! error throws away.
//!
//! A list being written can be *sealed*: its zstd frame ended and the file
//! synced, so that a checkpoint can record where it stands ([`Sealed`]).
//! Writing goes on in a new frame; a list reopened at a seal drops
//! whatever a killed run wrote after it. zstd reads frames one after
//! another as one stream, so a sealed list reads as any other.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::BuildError;

/// zstd's level for the lists: its fastest, since a list is written once
/// while the level is being solved and the time goes to the solver.
const LEVEL: i32 = 1;
/// Bytes of decompressed gaps read at a time.
const READ_AHEAD: usize = 1 << 16;

/// A list being written: indices pushed in strictly increasing order.
pub(crate) struct ListWriter {
    path: PathBuf,
    out: zstd::Encoder<'static, BufWriter<File>>,
    /// The index pushed last, if any.
    last: Option<u64>,
    len: u64,
    /// Varints not yet handed to the encoder.
    pending: Vec<u8>,
}

/// Where a sealed list stood: enough to reopen it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sealed {
    /// The file's length, every frame complete.
    pub(crate) bytes: u64,
    /// Indices written.
    pub(crate) len: u64,
    /// The last index written (if `len` is not 0).
    pub(crate) last: u64,
}

/// A list written out: where it is and how many indices it holds.
#[derive(Clone, Debug)]
pub struct List {
    pub(crate) path: PathBuf,
    pub(crate) len: u64,
}

impl ListWriter {
    /// A new, empty list at `path` (replacing any file there).
    pub(crate) fn create(path: PathBuf) -> Result<ListWriter, BuildError> {
        let file = File::create(&path).map_err(|source| io(&path, source))?;
        ListWriter::writing_to(path, file, None, 0)
    }

    /// The list at `path` as it was when it was `sealed`, to be written
    /// on: anything a killed run wrote after the seal is cut off. The file
    /// must hold the seal's bytes ([`ListWriter::can_reopen`]).
    pub(crate) fn reopen(path: PathBuf, sealed: Sealed) -> Result<ListWriter, BuildError> {
        let file = cut_back(&path, sealed.bytes)?;
        let last = (sealed.len > 0).then_some(sealed.last);
        ListWriter::writing_to(path, file, last, sealed.len)
    }

    fn writing_to(
        path: PathBuf,
        file: File,
        last: Option<u64>,
        len: u64,
    ) -> Result<ListWriter, BuildError> {
        let mut out = zstd::Encoder::new(BufWriter::new(file), LEVEL).map_err(|e| io(&path, e))?;
        out.include_checksum(true).map_err(|e| io(&path, e))?;
        Ok(ListWriter {
            path,
            out,
            last,
            len,
            pending: Vec::with_capacity(READ_AHEAD),
        })
    }

    /// Whether `path` holds at least what `sealed` says was written to
    /// it: a list that can be reopened there.
    pub(crate) fn can_reopen(path: &Path, sealed: &Sealed) -> bool {
        std::fs::metadata(path).is_ok_and(|m| m.len() >= sealed.bytes)
    }

    /// Appends `at`, which must be above every index pushed before.
    pub(crate) fn push(&mut self, at: u64) -> Result<(), BuildError> {
        let gap = match self.last {
            None => at,
            Some(last) => {
                debug_assert!(at > last, "list indices must increase");
                at - last - 1
            }
        };
        self.last = Some(at);
        self.len += 1;
        put_varint(&mut self.pending, gap);
        if self.pending.len() >= READ_AHEAD {
            self.flush_pending()?;
        }
        Ok(())
    }

    /// Appends every index of `sorted`, each above the last pushed.
    pub(crate) fn extend(&mut self, sorted: &[u64]) -> Result<(), BuildError> {
        sorted.iter().try_for_each(|&at| self.push(at))
    }

    fn flush_pending(&mut self) -> Result<(), BuildError> {
        self.out
            .write_all(&self.pending)
            .map_err(|e| io(&self.path, e))?;
        self.pending.clear();
        Ok(())
    }

    /// Ends the current frame and syncs the file: everything pushed so
    /// far is on disk. Returns the list, to be written on in a new frame,
    /// and where it stands.
    pub(crate) fn seal(mut self) -> Result<(ListWriter, Sealed), BuildError> {
        self.flush_pending()?;
        let path = self.path;
        let mut out = self.out.finish().map_err(|e| io(&path, e))?;
        out.flush().map_err(|e| io(&path, e))?;
        let file = out.into_inner().map_err(|e| io(&path, e.into_error()))?;
        file.sync_data().map_err(|e| io(&path, e))?;
        let bytes = file.metadata().map_err(|e| io(&path, e))?.len();
        let sealed = Sealed {
            bytes,
            len: self.len,
            last: self.last.unwrap_or(0),
        };
        let writer = ListWriter::writing_to(path, file, self.last, self.len)?;
        Ok((writer, sealed))
    }

    /// Ends the stream and closes the file.
    pub(crate) fn finish(mut self) -> Result<List, BuildError> {
        self.flush_pending()?;
        let path = self.path;
        let mut out = self.out.finish().map_err(|e| io(&path, e))?;
        out.flush().map_err(|e| io(&path, e))?;
        Ok(List {
            path,
            len: self.len,
        })
    }
}

impl List {
    /// The list's indices, in order; each must be below `below` (the
    /// level's positions), or the list is damaged.
    pub(crate) fn read(&self, below: u64) -> Result<ListReader, BuildError> {
        let file = File::open(&self.path).map_err(|e| io(&self.path, e))?;
        let input = zstd::Decoder::new(file).map_err(|e| io(&self.path, e))?;
        Ok(ListReader {
            path: self.path.clone(),
            input,
            left: self.len,
            below,
            last: None,
            buf: Vec::new(),
            at: 0,
            ended: false,
        })
    }
}

/// Indices per window of [`visit_by_windows`]. Small in debug builds, so
/// the tests put levels together in several windows.
const WINDOW: u64 = if cfg!(debug_assertions) {
    1 << 10
} else {
    1 << 24
};

/// Every index of every list of `lists` (each below `below`), `visit(k,
/// at)` called with list
/// `k`'s index `at`, all lists read together a window of indices at a
/// time, the lists of a window in parallel. A pass that writes what the
/// lists say into a level's symbols then writes each page of them while it
/// is in memory: a list at a time over a mapped level larger than the page
/// cache would write every page back to disk (and read it again) once per
/// list.
pub(crate) fn visit_by_windows(
    lists: &[&List],
    below: u64,
    visit: impl Fn(usize, u64) + Sync,
) -> Result<(), BuildError> {
    let mut readers = lists
        .iter()
        .map(|list| Ok((list.read(below)?, None)))
        .collect::<Result<Vec<(ListReader, Option<u64>)>, BuildError>>()?;
    for (reader, next) in &mut readers {
        *next = reader.next_index()?;
    }
    let mut end = WINDOW;
    while readers.iter().any(|(_, next)| next.is_some()) {
        readers
            .par_iter_mut()
            .enumerate()
            .try_for_each(|(k, (reader, next))| {
                while let Some(at) = next.filter(|&at| at < end) {
                    visit(k, at);
                    *next = reader.next_index()?;
                }
                Ok::<_, BuildError>(())
            })?;
        end += WINDOW;
    }
    Ok(())
}

/// Reads a [`List`] back.
pub(crate) struct ListReader {
    path: PathBuf,
    input: zstd::Decoder<'static, std::io::BufReader<File>>,
    /// Indices still to read.
    left: u64,
    /// Every index is below this.
    below: u64,
    last: Option<u64>,
    /// Decompressed gaps, read from `at` on.
    buf: Vec<u8>,
    at: usize,
    /// Whether the file was read to its end, every frame's checksum
    /// checked.
    ended: bool,
}

impl ListReader {
    /// The next index, or `None` at the end of the list (once the file
    /// has been read to its end). A list that ends early, holds more than
    /// its length, a broken varint, an index out of range or a frame whose
    /// checksum fails is damaged: an error, not a shorter list.
    pub(crate) fn next_index(&mut self) -> Result<Option<u64>, BuildError> {
        if self.left == 0 {
            self.read_to_end()?;
            return Ok(None);
        }
        let mut gap = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.next_byte()?;
            gap |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                let at = match self.last {
                    None => Some(gap),
                    Some(last) => last.checked_add(gap).and_then(|at| at.checked_add(1)),
                };
                let Some(at) = at.filter(|&at| at < self.below) else {
                    return Err(self.broken("an index past the level's end".into()));
                };
                self.last = Some(at);
                self.left -= 1;
                return Ok(Some(at));
            }
        }
        Err(self.broken("a gap longer than 64 bits".into()))
    }

    /// Reads what follows the last index: nothing, but the ends of the
    /// frames, whose checksums zstd checks as it reads them.
    fn read_to_end(&mut self) -> Result<(), BuildError> {
        if self.ended {
            return Ok(());
        }
        let mut rest = [0u8; 64];
        let more = self.at < self.buf.len()
            || self
                .input
                .read(&mut rest)
                .map_err(|e| self.broken(e.to_string()))?
                > 0;
        if more {
            return Err(self.broken("more than the list's length".into()));
        }
        self.ended = true;
        Ok(())
    }

    /// The next `most` indices, fewer at the end of the list.
    pub(crate) fn next_indices(&mut self, most: usize) -> Result<Vec<u64>, BuildError> {
        let mut indices = Vec::with_capacity(most.min(self.left as usize));
        while indices.len() < most {
            match self.next_index()? {
                Some(at) => indices.push(at),
                None => break,
            }
        }
        Ok(indices)
    }

    fn next_byte(&mut self) -> Result<u8, BuildError> {
        if self.at == self.buf.len() {
            self.buf.resize(READ_AHEAD, 0);
            let read = self.input.read(&mut self.buf);
            let read = read.map_err(|e| self.broken(e.to_string()))?;
            if read == 0 {
                return Err(self.broken("the list ends early".into()));
            }
            self.buf.truncate(read);
            self.at = 0;
        }
        self.at += 1;
        Ok(self.buf[self.at - 1])
    }

    fn broken(&self, why: String) -> BuildError {
        BuildError::ScratchDamaged {
            path: self.path.clone(),
            why,
        }
    }
}

/// `value` as a LEB128 varint: seven bits a byte, low first.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The file at `path` cut back to its first `bytes` (whatever a killed run
/// wrote after them dropped), open to be written on at its end.
pub(super) fn cut_back(path: &Path, bytes: u64) -> Result<File, BuildError> {
    let mut file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io(path, e))?;
    file.set_len(bytes)
        .and_then(|()| file.seek(SeekFrom::End(0)))
        .map_err(|e| io(path, e))?;
    Ok(file)
}

pub(super) fn io(path: &Path, source: std::io::Error) -> BuildError {
    BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index of `list`, read back.
    fn read_all(list: &List) -> Vec<u64> {
        let mut reader = list.read(u64::MAX).unwrap();
        std::iter::from_fn(|| reader.next_index().unwrap()).collect()
    }

    /// A list sealed, written on past the seal (more than the writer
    /// holds back, so part of it reaches the file), and reopened at the
    /// seal as a killed run's list is: it reads as if written in one go,
    /// and what came after the seal is gone.
    #[test]
    fn a_list_reopened_at_its_seal_forgets_what_came_after() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("list");
        let before: Vec<u64> = (0..50_000).map(|i| 4 * i + i % 3).collect();
        let after: Vec<u64> = (200_000..260_000).map(|i| 2 * i).collect();
        let mut writer = ListWriter::create(path.clone()).unwrap();
        writer.extend(&before).unwrap();
        let (mut writer, sealed) = writer.seal().unwrap();
        assert_eq!(sealed.len, before.len() as u64);
        assert_eq!(sealed.last, *before.last().unwrap());
        writer
            .extend(&(1_000_000..1_300_000).collect::<Vec<_>>())
            .unwrap();
        writer.flush_pending().unwrap();
        drop(writer);
        assert!(std::fs::metadata(&path).unwrap().len() > sealed.bytes);

        assert!(ListWriter::can_reopen(&path, &sealed));
        let mut writer = ListWriter::reopen(path.clone(), sealed).unwrap();
        writer.extend(&after).unwrap();
        let (writer, _) = writer.seal().unwrap();
        let list = writer.finish().unwrap();
        let expected: Vec<u64> = before.iter().chain(&after).copied().collect();
        assert_eq!(list.len, expected.len() as u64);
        assert!(read_all(&list) == expected, "the reopened list differs");

        let short = Sealed {
            bytes: std::fs::metadata(&path).unwrap().len() + 1,
            ..sealed
        };
        assert!(!ListWriter::can_reopen(&path, &short));
    }

    /// An empty list sealed and reopened is still empty, and then takes
    /// its first index as any new list does.
    #[test]
    fn an_empty_list_reopens_empty() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("list");
        let (writer, sealed) = ListWriter::create(path.clone()).unwrap().seal().unwrap();
        drop(writer);
        let mut writer = ListWriter::reopen(path, sealed).unwrap();
        writer.extend(&[0, 5]).unwrap();
        assert_eq!(read_all(&writer.finish().unwrap()), [0, 5]);
    }

    /// Every damage to a list's file is an error on reading it, never a
    /// different list: a byte changed anywhere, the file cut anywhere, an
    /// index past the bound.
    #[test]
    fn a_damaged_list_is_an_error_not_another_list() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("list");
        let indices: Vec<u64> = (0..20_000).map(|i| 3 * i + i % 2).collect();
        let mut writer = ListWriter::create(path.clone()).unwrap();
        writer.extend(&indices).unwrap();
        let list = writer.finish().unwrap();
        let intact = std::fs::read(&path).unwrap();
        let read_all = |below: u64| -> Result<Vec<u64>, BuildError> {
            let mut reader = list.read(below)?;
            let mut read = Vec::new();
            while let Some(at) = reader.next_index()? {
                read.push(at);
            }
            Ok(read)
        };
        assert!(read_all(u64::MAX).unwrap() == indices);
        assert!(matches!(
            read_all(*indices.last().unwrap()),
            Err(BuildError::ScratchDamaged { .. })
        ));
        for at in (0..intact.len()).step_by(7) {
            let mut changed = intact.clone();
            changed[at] ^= 0x10;
            std::fs::write(&path, &changed).unwrap();
            assert!(read_all(u64::MAX).is_err(), "a byte changed at {at}");
            std::fs::write(&path, &intact[..at]).unwrap();
            assert!(read_all(u64::MAX).is_err(), "cut at {at}");
        }
    }
}
