//! Sorted lists of position indices on disk, the lean mode's sequential
//! streams: each index written as its gap from the one before (a LEB128
//! varint), the gaps compressed with zstd. Gaps between sorted indices of
//! one level are small and repetitive, which is what both the varints and
//! zstd compress well; a list is written once, in order, and read back
//! once, in order.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

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
        let out = zstd::Encoder::new(BufWriter::new(file), LEVEL).map_err(|e| io(&path, e))?;
        Ok(ListWriter {
            path,
            out,
            last: None,
            len: 0,
            pending: Vec::with_capacity(READ_AHEAD),
        })
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
    /// The list's indices, in order.
    pub(crate) fn read(&self) -> Result<ListReader, BuildError> {
        let file = File::open(&self.path).map_err(|e| io(&self.path, e))?;
        let input = zstd::Decoder::new(file).map_err(|e| io(&self.path, e))?;
        Ok(ListReader {
            path: self.path.clone(),
            input,
            left: self.len,
            last: None,
            buf: Vec::new(),
            at: 0,
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

/// Every index of every list of `lists`, `visit(k, at)` called with list
/// `k`'s index `at`, all lists read together a window of indices at a
/// time. A pass that writes what the lists say into a level's symbols
/// then writes each page of them while it is in memory: a list at a time
/// over a mapped level larger than the page cache would write every page
/// back to disk (and read it again) once per list.
pub(crate) fn visit_by_windows(
    lists: &[&List],
    mut visit: impl FnMut(usize, u64),
) -> Result<(), BuildError> {
    let mut readers = lists
        .iter()
        .map(|list| list.read())
        .collect::<Result<Vec<_>, _>>()?;
    let mut next = readers
        .iter_mut()
        .map(ListReader::next_index)
        .collect::<Result<Vec<_>, _>>()?;
    let mut end = WINDOW;
    while next.iter().any(Option::is_some) {
        for (k, reader) in readers.iter_mut().enumerate() {
            while let Some(at) = next[k].filter(|&at| at < end) {
                visit(k, at);
                next[k] = reader.next_index()?;
            }
        }
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
    last: Option<u64>,
    /// Decompressed gaps, read from `at` on.
    buf: Vec<u8>,
    at: usize,
}

impl ListReader {
    /// The next index, or `None` at the end of the list. A list that ends
    /// early or holds a broken varint is an error, not a shorter list.
    pub(crate) fn next_index(&mut self) -> Result<Option<u64>, BuildError> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut gap = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.next_byte()?;
            gap |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                let at = match self.last {
                    None => gap,
                    Some(last) => last + gap + 1,
                };
                self.last = Some(at);
                self.left -= 1;
                return Ok(Some(at));
            }
        }
        Err(self.broken("a gap longer than 64 bits"))
    }

    fn next_byte(&mut self) -> Result<u8, BuildError> {
        if self.at == self.buf.len() {
            self.buf.resize(READ_AHEAD, 0);
            let read = self
                .input
                .read(&mut self.buf)
                .map_err(|e| io(&self.path, e))?;
            if read == 0 {
                return Err(self.broken("the list ends early"));
            }
            self.buf.truncate(read);
            self.at = 0;
        }
        self.at += 1;
        Ok(self.buf[self.at - 1])
    }

    fn broken(&self, what: &str) -> BuildError {
        io(
            &self.path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string()),
        )
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

fn io(path: &Path, source: std::io::Error) -> BuildError {
    BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}
