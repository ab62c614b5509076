//! Depth to conversion (`docs/RULES.md`, "Depth to conversion"), as the
//! threshold propagation finds it: the round of its threshold at which a
//! position joins its set. The terminal positions a threshold seeds are
//! round 0, the positions that convert at once round 1, and a position
//! that joins from a frontier of round `r` is round `r + 1`. Under even
//! values a position joins one set once, at the threshold of its value, so
//! it is given one depth. Under forced bounds it may join both, at the
//! thresholds of its two bounds: the first set's round is the mover's
//! depth, which is kept, and the second's the opponent's, which a depth
//! table does not store ([`Depths::records_second_set`]).

use std::io::Read;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

use mancala_core::Cycles;
use mancala_format::TableKind;
use rayon::prelude::*;

/// The depth of a position that has none (worth 0, or not solved yet).
pub const NO_DEPTH: u16 = u16::MAX;

/// A position's byte: its depth if below this, else one of the two below.
const LONG: u8 = 254;
/// A position's byte: no depth.
const NONE: u8 = 255;

/// The depth of each position of a level (or of a process's share of
/// one), filled in by the threshold propagation: a byte a position, with
/// the rare depths that do not fit in one listed beside them (a depth
/// table lists them the same way, and at most
/// [`mancala_format::Depth::MAX_LONG`] a level).
pub struct Depths {
    /// The level index of the first position.
    first: u64,
    /// Whether joining the second set gives a depth too.
    second_set: bool,
    /// Each position's depth, [`LONG`] or [`NONE`].
    rounds: Vec<AtomicU8>,
    /// `(index into this share, depth)` of the positions whose byte says
    /// [`LONG`].
    long: Mutex<Vec<(usize, u16)>>,
}

impl Depths {
    /// No depth yet for the `count` positions from level index `first`, of
    /// even values: both sets' members are given depths.
    pub fn new(first: u64, count: usize) -> Depths {
        Depths {
            first,
            second_set: true,
            rounds: (0..count)
                .into_par_iter()
                .map(|_| AtomicU8::new(NONE))
                .collect(),
            long: Mutex::new(Vec::new()),
        }
    }

    /// [`Depths::new`] for tables of kind `K`: of forced bounds, only the
    /// first set's members (the mover's bound) are given depths.
    pub fn for_kind<K: TableKind>(first: u64, count: usize) -> Depths {
        Depths {
            second_set: K::CYCLES == Cycles::Even,
            ..Depths::new(first, count)
        }
    }

    /// Whether a position that joins the second set is given its round as
    /// its depth: under even values (its mover is behind, and the tests
    /// check that depth too); not under forced bounds, where the position
    /// joins the first set as well, at its mover's bound, whose depth is
    /// the one kept.
    pub(crate) fn records_second_set(&self) -> bool {
        self.second_set
    }

    /// Positions `members` (level indices) join their set in round 0 or
    /// 1, as seeds.
    pub(crate) fn record(&self, members: &[u64], round: u32) {
        for &at in members {
            self.record_local((at - self.first) as usize, round);
        }
    }

    /// The position at `at` (an index into this share) joins its set in
    /// `round`. A round past what 16 bits hold is kept as the largest
    /// they do, which no table stores ([`mancala_format::Depth::MAX_PLIES`]
    /// is less): writing it fails.
    #[inline]
    pub(crate) fn record_local(&self, at: usize, round: u32) {
        let plies = u16::try_from(round)
            .unwrap_or(u16::MAX - 1)
            .min(u16::MAX - 1);
        self.set(at, plies);
    }

    /// Sets the depth of the position at `at` (an index into this share).
    fn set(&self, at: usize, plies: u16) {
        match u8::try_from(plies) {
            Ok(short) if short < LONG => self.rounds[at].store(short, Relaxed),
            _ if plies == NO_DEPTH => self.rounds[at].store(NONE, Relaxed),
            _ => {
                self.rounds[at].store(LONG, Relaxed);
                let mut long = self.long.lock().unwrap_or_else(|e| e.into_inner());
                long.push((at, plies));
            }
        }
    }

    /// The depths as they stand, for reading each position's (between
    /// thresholds, or once the level is solved: no depth is recorded
    /// meanwhile).
    pub(crate) fn finished(&self) -> Finished<'_> {
        let mut long = self.long.lock().unwrap_or_else(|e| e.into_inner());
        // A position joins a set once, so it is listed once.
        long.sort_unstable();
        Finished {
            rounds: &self.rounds,
            long,
        }
    }

    /// Every position's depth so far as two little-endian bytes, read in
    /// order, for a checkpoint: between thresholds the depths recorded are
    /// those of the thresholds done, which a resumed level does not find
    /// again.
    pub(crate) fn le_bytes(&self) -> impl Read + '_ {
        LeBytes {
            depths: self.finished(),
            next: 0,
            pending: None,
        }
    }

    /// Takes back the depths [`Depths::le_bytes`] gave; false (and
    /// nothing taken) if `bytes` are not two a position.
    pub(crate) fn restore(&self, bytes: &[u8]) -> bool {
        bytes.len() == 2 * self.rounds.len()
            && self.restore_with(|at| u16::from_le_bytes([bytes[2 * at], bytes[2 * at + 1]]))
    }

    /// The depths as two arrays of a byte a position, every depth's low
    /// bytes and then its high bytes: how the in-memory mode's checkpoint
    /// holds them beside its state's arrays ([`crate::checkpoint`]).
    pub(crate) fn planes(&self) -> [Vec<u8>; 2] {
        let depths = self.finished();
        let (low, high) = (0..depths.len())
            .into_par_iter()
            .map(|at| {
                let [low, high] = depths.plies(at).to_le_bytes();
                (low, high)
            })
            .unzip();
        [low, high]
    }

    /// Takes back the depths [`Depths::planes`] gave; false (and nothing
    /// taken) if they are not two arrays of a byte a position.
    pub(crate) fn restore_planes(&self, planes: &[Vec<u8>]) -> bool {
        let count = self.rounds.len();
        match planes {
            [low, high] if low.len() == count && high.len() == count => {
                self.restore_with(|at| u16::from_le_bytes([low[at], high[at]]))
            }
            _ => false,
        }
    }

    /// Sets every position's depth to `plies(index)`; true.
    fn restore_with(&self, plies: impl Fn(usize) -> u16 + Sync) -> bool {
        (0..self.rounds.len())
            .into_par_iter()
            .for_each(|at| self.set(at, plies(at)));
        true
    }

    /// The level index of the first position.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// Every position's depth in index order, [`NO_DEPTH`] where it has
    /// none.
    pub fn into_plies(self) -> Vec<u16> {
        let depths = self.finished();
        (0..depths.len()).map(|at| depths.plies(at)).collect()
    }
}

/// [`Depths`] done with: each position's depth.
pub(crate) struct Finished<'a> {
    rounds: &'a [AtomicU8],
    /// Sorted by index.
    long: MutexGuard<'a, Vec<(usize, u16)>>,
}

impl Finished<'_> {
    /// The depth of the position at `at` (an index into the share),
    /// [`NO_DEPTH`] where it has none.
    pub(crate) fn plies(&self, at: usize) -> u16 {
        match self.rounds[at].load(Relaxed) {
            NONE => NO_DEPTH,
            LONG => {
                let found = self.long.binary_search_by_key(&at, |&(k, _)| k);
                found.map_or(NO_DEPTH, |k| self.long[k].1)
            }
            short => short.into(),
        }
    }

    /// Positions in the share.
    pub(crate) fn len(&self) -> usize {
        self.rounds.len()
    }
}

/// [`Depths::le_bytes`].
struct LeBytes<'a> {
    depths: Finished<'a>,
    /// The next position whose bytes are read.
    next: usize,
    /// The second byte of a depth whose first one filled a buffer.
    pending: Option<u8>,
}

impl Read for LeBytes<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut written = 0;
        if let (Some(byte), Some(out)) = (self.pending, buf.first_mut()) {
            *out = byte;
            self.pending = None;
            written = 1;
        }
        let count = ((buf.len() - written) / 2).min(self.depths.len() - self.next);
        for (k, out) in buf[written..].chunks_exact_mut(2).take(count).enumerate() {
            out.copy_from_slice(&self.depths.plies(self.next + k).to_le_bytes());
        }
        self.next += count;
        written += 2 * count;
        if written < buf.len() && self.next < self.depths.len() {
            let [low, high] = self.depths.plies(self.next).to_le_bytes();
            buf[written] = low;
            self.pending = Some(high);
            self.next += 1;
            written += 1;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Depths past a byte are listed beside it and read back; the bytes a
    /// checkpoint holds, read in buffers of any size, restore every depth.
    #[test]
    fn long_depths_and_checkpoint_bytes_round_trip() {
        let depths = Depths::new(100, 600);
        let wanted: Vec<u16> = (0..600u32)
            .map(|at| match at % 7 {
                0 => NO_DEPTH,
                1 => (300 + at) as u16,
                2 => 253,
                3 => 254,
                _ => (at % 250) as u16,
            })
            .collect();
        for (at, &plies) in wanted.iter().enumerate() {
            if plies != NO_DEPTH {
                depths.record_local(at, plies.into());
            }
        }
        depths.record(&[100], 70_000);
        let mut wanted = wanted;
        wanted[0] = u16::MAX - 1;
        for size in [1, 2, 3, 7, 4096] {
            let mut bytes = Vec::new();
            let mut reader = depths.le_bytes();
            let mut buf = vec![0u8; size];
            loop {
                let read = reader.read(&mut buf).unwrap();
                if read == 0 {
                    break;
                }
                bytes.extend_from_slice(&buf[..read]);
            }
            drop(reader);
            let restored = Depths::new(100, 600);
            assert!(restored.restore(&bytes), "buffers of {size}");
            assert_eq!(restored.into_plies(), wanted, "buffers of {size}");
        }
        assert!(!Depths::new(0, 3).restore(&[0; 5]));
        assert_eq!(depths.into_plies(), wanted);
    }
}
