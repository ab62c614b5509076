//! What the generator needs to know of a kind of table: how a position's
//! exits are summed up ([`Solve`]) and the working state of a level being
//! solved, with its threshold rules ([`LevelState`]).
//!
//! The even values ([`crate::even`]) and the forced bounds
//! ([`crate::forced`]) are the two instances; the strategy, the exchange,
//! the checkpoints and the build pipeline are written once, generic over
//! them.

use std::sync::atomic::{AtomicI8, AtomicU8};

use mancala_core::{Move, Rules};
use mancala_format::{filled_on_huge_pages, Encoding, Header, Realized};
use memmap2::MmapMut;

/// A kind of table as the generator solves it.
pub trait Solve: Realized {
    /// What the forward pass learns of a position's moves that leave its
    /// level (or of a terminal position), from the lower levels.
    type Exits: Copy + Send + Sync;

    /// The working state of a level under the retrograde strategy.
    type State: LevelState<Exits = Self::Exits>;

    /// The summary of a position none of whose moves leaves the level yet.
    fn no_exit() -> Self::Exits;

    /// Adds the exit `m`, whose child stores `child`, to `exits`.
    fn add_exit(exits: &mut Self::Exits, m: &Move, child: Self::Entry);

    /// The summary of a terminal position of `n` stones worth `value`.
    fn terminal(n: u32, value: i32) -> Self::Exits;

    /// The value (the mover's stones minus the opponent's, of the `n` still
    /// on the board) that `entry` of level `n` stands for, in a rule set
    /// whose levels cannot cycle: there every entry is exact.
    fn acyclic_value(n: u32, entry: Self::Entry) -> i32;

    /// The solved level of `n` stones, in a rule set whose levels cannot
    /// cycle, from every position's value in index order.
    fn from_values(n: u32, values: Vec<i8>) -> Solution;

    /// The encoding a level of `rules` is stored in when `asked` is asked
    /// for: the one asked where the kind and the rule set allow it.
    fn stored_encoding(rules: &Rules, asked: Encoding) -> Encoding;

    /// The header and the symbols to store for a solved level, with the
    /// encoding asked for where the kind and the rule set allow it
    /// ([`Solve::stored_encoding`]).
    fn to_store<'a>(
        rules: &Rules,
        n: u32,
        solution: &'a Solution,
        encoding: Encoding,
        block_size: u32,
    ) -> (Header, std::borrow::Cow<'a, [i8]>);
}

/// A solved level.
pub struct Solution {
    /// The level's symbols in index order: what lower levels are held as
    /// while higher ones are solved ([`mancala_format::TableKind::WIDTH`] per position).
    /// Empty where [`Solution::mapped`] holds them.
    pub symbols: Vec<i8>,
    /// The symbols in a file-backed mapping instead: a level the lean mode
    /// solved that is too large to hold in memory. Its pages are the page
    /// cache's, which the kernel writes back and takes back as it needs.
    pub mapped: Option<MmapMut>,
    /// Even tables solved by a strategy that marks them: per position,
    /// whether its value is its best restoring exit's (a move that leaves
    /// the level without an extra turn), or its terminal value, which is
    /// where a compact table needs no entry for it
    /// ([`mancala_format::SolvedValues::exit_best`]). Compact tables are
    /// written only from marked levels.
    pub exit_best: Option<Vec<bool>>,
}

impl Solution {
    /// The level's symbols, wherever they are held.
    pub fn held_symbols(&self) -> &[i8] {
        match &self.mapped {
            Some(map) => bytemuck::cast_slice(map),
            None => &self.symbols,
        }
    }
}

/// The working state of a level being solved by threshold propagation: its
/// memory layout and the rules by which positions join the two sets of
/// each threshold `t` (for even tables "the mover can force at least `t`"
/// and "the mover cannot avoid `−t`"; for forced ones "the mover is sure
/// of `t`" and "the opponent is sure of `t`").
///
/// The strategy ([`crate::Retrograde`]) calls these from many threads, but
/// never for one position from two threads at once: a position's state may
/// be updated with plain (relaxed) loads and stores.
pub trait LevelState: Sync + Sized {
    /// The forward pass's summary of a position.
    type Exits: Copy;

    /// The state of a level of `count` positions before the forward pass.
    fn new(count: usize) -> Self;

    /// The forward pass's result for position `at`: its exits and its
    /// number of moves that keep the level.
    fn record(&self, at: usize, exits: Self::Exits, stays: u8);

    /// One flag byte per position, scanned to seed each threshold.
    fn flags(&self) -> &[AtomicU8];

    /// Whether position `at`, whose flag byte is `flag`, joins the first or
    /// the second set of threshold `t` on its own (and records it).
    fn seed(&self, t: u8, at: usize, flag: u8) -> (bool, bool);

    /// The thresholds at which position `at` could still join a set on its
    /// own ([`LevelState::seed`]), as bits: bit `t` for threshold `t`, the
    /// top bit for every threshold from 63 up. More bits than needed cost
    /// time only; a missing one would lose a seed.
    fn seed_thresholds(&self, at: usize) -> u64;

    /// A parent of `edges` new members of the first set: whether it joins
    /// the second set (and records it).
    fn parent_of_first(&self, t: u8, at: usize, edges: u8) -> bool;

    /// A parent of a new member of the second set: whether it joins the
    /// first set (and records it).
    fn parent_of_second(&self, t: u8, at: usize) -> bool;

    /// The state's byte arrays, one byte per position each: what a
    /// checkpoint saves between two thresholds.
    fn arrays(&self) -> Vec<&[AtomicU8]>;

    /// The state from arrays a checkpoint saved, if there are as many as
    /// [`LevelState::arrays`] gives.
    fn from_arrays(arrays: Vec<Vec<u8>>) -> Option<Self>;

    /// The solved level of `n` stones, once every threshold is done.
    fn into_solution(self, n: u32) -> Solution;
}

/// Threshold `t` in a set of thresholds held as a `u64`: bit `t`, with
/// every threshold from 63 up sharing the top bit.
#[inline]
pub(crate) fn threshold_bit(t: u8) -> u64 {
    1 << t.min(63)
}

/// `count` atomic bytes, each holding `value`.
pub(crate) fn bytes(count: usize, value: u8) -> Vec<AtomicU8> {
    // Collected in place: the atomics keep the buffer, and its huge pages.
    atomic(filled_on_huge_pages(count, value))
}

/// `values` as atomics, so that many threads can write to distinct places
/// of them.
pub(crate) fn as_atomic(values: &mut [i8]) -> &[AtomicI8] {
    // SAFETY: `AtomicI8` has the size and alignment of `i8`, and the
    // exclusive borrow leaves no other access to `values` while the atomics
    // live.
    unsafe { &*(values as *mut [i8] as *const [AtomicI8]) }
}

/// Atomic bytes from plain ones (a checkpoint being resumed).
pub(crate) fn atomic(bytes: Vec<u8>) -> Vec<AtomicU8> {
    bytes.into_iter().map(AtomicU8::new).collect()
}
