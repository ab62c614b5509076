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

use std::sync::atomic::{AtomicU16, Ordering::Relaxed};

use mancala_core::Cycles;
use mancala_format::TableKind;
use rayon::prelude::*;

/// The depth of a position that has none (worth 0, or not solved yet).
pub const NO_DEPTH: u16 = u16::MAX;

/// The depth of each position of a level (or of a process's share of
/// one), filled in by the threshold propagation.
pub struct Depths {
    /// The level index of the first position.
    first: u64,
    /// Whether joining the second set gives a depth too.
    second_set: bool,
    plies: Vec<AtomicU16>,
}

impl Depths {
    /// No depth yet for the `count` positions from level index `first`, of
    /// even values: both sets' members are given depths.
    pub fn new(first: u64, count: usize) -> Depths {
        Depths {
            first,
            second_set: true,
            plies: (0..count)
                .into_par_iter()
                .map(|_| AtomicU16::new(NO_DEPTH))
                .collect(),
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
        self.plies[at].store(plies, Relaxed);
    }

    /// Every position's depth so far as two little-endian bytes, for a
    /// checkpoint: between thresholds the depths recorded are those of the
    /// thresholds done, which a resumed level does not find again.
    pub(crate) fn to_le_bytes(&self) -> Vec<u8> {
        self.plies
            .par_iter()
            .flat_map_iter(|plies| plies.load(Relaxed).to_le_bytes())
            .collect()
    }

    /// Takes back the depths [`Depths::to_le_bytes`] gave; false (and
    /// nothing taken) if `bytes` are not two a position.
    pub(crate) fn restore(&self, bytes: &[u8]) -> bool {
        if bytes.len() != 2 * self.plies.len() {
            return false;
        }
        self.plies
            .par_iter()
            .zip(bytes.par_chunks_exact(2))
            .for_each(|(plies, b)| plies.store(u16::from_le_bytes([b[0], b[1]]), Relaxed));
        true
    }

    /// The level index of the first position.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// Every position's depth in index order, [`NO_DEPTH`] where it has
    /// none.
    pub fn into_plies(self) -> Vec<u16> {
        self.plies.into_iter().map(AtomicU16::into_inner).collect()
    }
}
