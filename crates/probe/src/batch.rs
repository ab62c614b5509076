//! Batches: many positions probed at once, each table block decoded once
//! per batch however many of the positions (and their children) fall in it,
//! on every core. This is how `query -` and the server score their input.

use mancala_core::{Bounds, Move, MoveBounds, MoveValue, Position, Successors};
use mancala_format::{EntryReader, Even, Forced, TableKind, Window};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::tablebase::{restore_value, Tablebase};

/// One probe of a batch: where it reads (see [`Probe::key`]), the caller's
/// slot, and the stored symbols once read.
#[derive(Clone, Copy, Default)]
struct Probe {
    key: u64,
    slot: u32,
    symbols: [i8; 2],
}

impl Probe {
    /// Bits of the key for the block within its level: far more blocks than
    /// any disk holds.
    const BLOCK_BITS: u32 = 40;

    /// Level, block and offset packed into one integer in that order, so
    /// that a batch sorts by a plain integer key.
    fn key(level: u32, block: u64, offset: usize) -> u64 {
        assert!(
            block < 1 << Self::BLOCK_BITS,
            "block {block} out of key range"
        );
        (level as u64) << (Self::BLOCK_BITS + 16) | block << 16 | offset as u64
    }

    /// The level and block of the probe, as one integer.
    fn block_key(&self) -> u64 {
        self.key >> 16
    }

    fn level(&self) -> u32 {
        (self.key >> (Self::BLOCK_BITS + 16)) as u32
    }

    fn block(&self) -> u64 {
        self.block_key() & ((1 << Self::BLOCK_BITS) - 1)
    }

    fn offset(&self) -> usize {
        (self.key & 0xffff) as usize
    }
}

/// A block a batch decoded whole, for the cache: its key, its level's
/// block count and its symbols.
struct Decoded {
    key: (u32, u64),
    blocks: u64,
    values: Box<[i8]>,
}

/// Positions per unit of parallel work; children are gathered per chunk so
/// that no per-position move list is kept.
const CHILDREN_CHUNK: usize = 4096;

impl<K: TableKind> Tablebase<K> {
    /// The probes of `positions`, read, in the positions' order.
    fn read_entries(&self, positions: &[Position]) -> Result<Vec<Probe>> {
        let mut probes: Vec<Probe> = positions
            .par_iter()
            .enumerate()
            .map(|(slot, pos)| {
                let (level, block, offset) = self.locate(pos)?;
                Ok(Probe {
                    key: Probe::key(level, block, offset),
                    slot: slot as u32,
                    symbols: [0; 2],
                })
            })
            .collect::<Result<_>>()?;
        self.fill(&mut probes)?;
        probes.par_sort_unstable_by_key(|p| p.slot);
        Ok(probes)
    }

    /// Reads the stored symbols of every probe. Sorts the probes by where
    /// they read, and reads each block once for all its probes: from the
    /// block cache if it holds it, else decoded up to its last probe into
    /// a buffer reused across blocks, or, for a block missed before while
    /// the cache has free room, decoded whole and kept. So repeated
    /// batches over tables the cache can hold are answered from it, and a
    /// batch never evicts a block (a large one would only flush the
    /// cache).
    fn fill(&self, probes: &mut [Probe]) -> Result<()> {
        probes.par_sort_unstable_by_key(|p| p.key);
        let decoded: Vec<Option<Decoded>> = probes
            .par_chunk_by_mut(|a, b| a.block_key() == b.block_key())
            .map_init(Vec::new, |buffer, group| self.fill_block(group, buffer))
            .collect::<Result<_>>()?;
        // Kept after the batch, under one acquisition of the cache's lock,
        // which the batch's reads of it then never wait for.
        self.block_cache().keep_in_room(
            decoded
                .into_iter()
                .flatten()
                .map(|d| (d.key, d.blocks, d.values)),
        );
        Ok(())
    }

    /// Reads the probes of one block (`group`, sorted by offset); returns
    /// the block decoded whole if it is to be kept.
    fn fill_block(&self, group: &mut [Probe], buffer: &mut Vec<i8>) -> Result<Option<Decoded>> {
        let width = K::WIDTH;
        let last = group[group.len() - 1];
        let (level, block) = (last.level(), last.block());
        let key = (level, block);
        let table = self.level(level)?;
        let copy = |group: &mut [Probe], values: &[i8]| {
            for probe in group.iter_mut() {
                let at = probe.offset();
                probe.symbols[..width].copy_from_slice(&values[at..at + width]);
            }
        };
        let cache = self.cache_for(table);
        if let Some(cache) = cache {
            if cache
                .read_block(key, |values| copy(group, values))
                .is_some()
            {
                return Ok(None);
            }
        }
        let failed = |e| self.table_error(level, e);
        let room = table.header().block_symbols();
        if cache.is_some_and(|c| c.has_room_for(room) && c.admits(key)) {
            let values = table.decode_block(block).map_err(failed)?;
            copy(group, &values);
            return Ok(Some(Decoded {
                key,
                blocks: table.header().block_count,
                values: values.into_boxed_slice(),
            }));
        }
        buffer.resize(last.offset() + width, 0);
        table.decode_prefix(block, buffer).map_err(failed)?;
        copy(group, buffer);
        Ok(None)
    }

    /// Answers every child of `positions` (and the positions themselves,
    /// first, if `own`) with one `probe` batch, and pairs each legal move
    /// with its child's answer through `per_move`: the answers of the
    /// positions, and per position its moves' results in pit order.
    fn probe_with_children<T: Copy + Send + Sync, M: Send>(
        &self,
        positions: &[Position],
        own: bool,
        probe: impl Fn(&[Position]) -> Result<Vec<T>>,
        per_move: impl Fn(&Move, T) -> M + Sync,
    ) -> Result<(Vec<T>, Vec<Vec<M>>)> {
        let rules = self.rules();
        positions.par_iter().try_for_each(|pos| self.check(pos))?;
        let children_of = |chunk: &[Position]| {
            let mut children = Vec::with_capacity(chunk.len() * rules.pits());
            for pos in chunk {
                rules.for_each_move(pos, |m| children.push(m.child));
            }
            children
        };
        let per_chunk: Vec<Vec<Position>> = positions
            .par_chunks(CHILDREN_CHUNK)
            .map(children_of)
            .collect();
        let own_count = if own { positions.len() } else { 0 };
        let mut probes =
            Vec::with_capacity(own_count + per_chunk.iter().map(Vec::len).sum::<usize>());
        probes.extend_from_slice(&positions[..own_count]);
        let mut chunk_starts = Vec::with_capacity(per_chunk.len());
        for children in per_chunk {
            chunk_starts.push(probes.len() - own_count);
            probes.extend(children);
        }
        let mut answers = probe(&probes)?;
        drop(probes);
        let child_answers = answers.split_off(own_count);
        let moves = positions
            .par_chunks(CHILDREN_CHUNK)
            .zip(chunk_starts)
            .flat_map_iter(|(chunk, start)| {
                let mut next = child_answers[start..].iter();
                let per_move = &per_move;
                chunk.iter().map(move |pos| {
                    let mut moves = Vec::new();
                    rules.for_each_move(pos, |m| {
                        let child = *next.next().expect("one answer per child");
                        moves.push(per_move(m, child));
                    });
                    moves
                })
            })
            .collect();
        Ok((answers, moves))
    }
}

impl Tablebase<Even> {
    /// The values of many positions, in order; fails if any position is
    /// not covered ([`Tablebase::check`] them first to sort those out) or a
    /// table is damaged. Probes are grouped by table block, and each block
    /// is decoded once, up to the last probe into it. Where tables are
    /// compact, the values are then restored by the search of a single
    /// probe, run on every core against the compact levels that are small
    /// next to the batch, decoded whole first; other levels are read
    /// through the block cache.
    pub fn values(&self, positions: &[Position]) -> Result<Vec<i32>> {
        positions.par_iter().try_for_each(|pos| self.check(pos))?;
        let entries = self.entries(positions)?;
        let searched: Vec<usize> = (0..positions.len())
            .into_par_iter()
            .filter_map(|i| match self.level(positions[i].stones()) {
                Ok(table) => (!table.entries_are_values()).then_some(Ok(i)),
                Err(e) => Some(Err(e)),
            })
            .collect::<Result<_>>()?;
        if searched.is_empty() {
            return Ok(entries);
        }
        let decoded = DecodedLevels::for_batch(self, positions, searched.len())?;
        let restored: Vec<i32> = searched
            .par_iter()
            .map(|&i| decoded.value(&positions[i], entries[i], Window::ALL))
            .collect::<Result<_>>()?;
        let mut values = entries;
        for (&i, value) in searched.iter().zip(restored) {
            values[i] = value;
        }
        Ok(values)
    }

    /// The entries of `positions`, in order.
    fn entries(&self, positions: &[Position]) -> Result<Vec<i32>> {
        Ok(self
            .read_entries(positions)?
            .iter()
            .map(|probe| probe.symbols[0] as i32)
            .collect())
    }

    /// [`Tablebase::move_values`] of many positions, in order, with every
    /// child probed in one [`Tablebase::values`] batch; fails like it.
    pub fn move_values_many(&self, positions: &[Position]) -> Result<Vec<Vec<MoveValue>>> {
        let (_, moves) = self.probe_with_children(
            positions,
            false,
            |children| self.values(children),
            |m, child| MoveValue {
                pit: m.pit,
                value: m.value_given_child(child),
            },
        )?;
        Ok(moves)
    }

    /// The value and the move values of many positions, in order, from one
    /// [`Tablebase::values`] batch of all their children. A position's own
    /// value is not read: it is the best of its moves' values (the table
    /// holds the fixpoint of the rules' recursion, endless play included:
    /// a position worth 0 by the even split has a move worth 0 and none
    /// worth more), or its terminal value.
    pub fn values_and_moves(&self, positions: &[Position]) -> Result<Vec<(i32, Vec<MoveValue>)>> {
        let moves = self.move_values_many(positions)?;
        // The positions' own tables are opened, and so checked, although
        // no value is read from them. Covered levels are at most
        // `MAX_LEVEL` (127).
        let levels = positions
            .par_iter()
            .map(|pos| 1u128 << pos.stones())
            .reduce(|| 0, |a, b| a | b);
        for n in (0..128).filter(|n| levels >> n & 1 == 1) {
            self.level(n)?;
        }
        let rules = self.rules();
        Ok(positions
            .par_iter()
            .zip(moves)
            .map(|(pos, moves)| {
                let best = moves.iter().map(|m| m.value).max();
                let value = best.unwrap_or_else(|| match rules.successors(pos) {
                    Successors::Terminal(value) => value,
                    Successors::Moves(_) => unreachable!("a position with moves has move values"),
                });
                (value, moves)
            })
            .collect())
    }
}

impl Tablebase<Forced> {
    /// The bounds of `pos` and of each of its legal moves, in pit order
    /// (none when the position is terminal), from a batch of probes like
    /// [`Tablebase::values`].
    pub fn bounds_and_moves(
        &self,
        positions: &[Position],
    ) -> Result<Vec<(Bounds, Vec<MoveBounds>)>> {
        let bounds_of = |positions: &[Position]| {
            self.read_entries(positions)?
                .iter()
                .map(|probe| {
                    let n = probe.level();
                    let block_size = self.level(n)?.header().block_size as u64;
                    let at = probe.block() * block_size + (probe.offset() / Forced::WIDTH) as u64;
                    self.bounds_from(n, &probe.symbols, at)
                })
                .collect::<Result<Vec<Bounds>>>()
        };
        let (bounds, moves) =
            self.probe_with_children(positions, true, bounds_of, |m, child| MoveBounds {
                pit: m.pit,
                bounds: Bounds::after_move(m, child),
            })?;
        Ok(bounds.into_iter().zip(moves).collect())
    }
}

/// The levels a batch of values decodes whole before it searches
/// ([`Tablebase::values`]): a search reads several entries a value, from all
/// over the tables, and a large batch reads most blocks of the smaller
/// levels many times over. Other levels are read through the block cache.
struct DecodedLevels<'a> {
    tb: &'a Tablebase<Even>,
    /// Every entry of level `n`, if decoded.
    levels: Vec<Option<Vec<i8>>>,
}

/// Levels of up to this many positions per value of a batch are decoded
/// whole: a probe decodes half a block, a search reads a few entries.
const DECODE_POSITIONS_PER_VALUE: u64 = 64;
/// The most a batch decodes whole: all of oware levels 0–21.
const BATCH_DECODE_BYTES: u64 = 512 << 20;

impl<'a> DecodedLevels<'a> {
    /// Decodes, from level 0 up, the compact levels at or below the highest
    /// of `positions` that are small next to `values` searches, within
    /// [`BATCH_DECODE_BYTES`].
    fn for_batch(tb: &'a Tablebase<Even>, positions: &[Position], values: usize) -> Result<Self> {
        let top = positions.iter().map(Position::stones).max().unwrap_or(0);
        let most = values as u64 * DECODE_POSITIONS_PER_VALUE;
        let mut levels = Vec::new();
        let mut bytes = 0;
        for n in 0..=top {
            if !tb.has_level(n) {
                // A level the tables skip: a probe of it fails on its own.
                levels.push(None);
                continue;
            }
            let table = tb.level(n)?;
            let count = table.header().positions;
            let decode =
                !table.entries_are_values() && count <= most && bytes + count <= BATCH_DECODE_BYTES;
            levels.push(if decode {
                bytes += count;
                Some(table.decode_all().map_err(|e| tb.table_error(n, e))?)
            } else {
                None
            });
        }
        Ok(DecodedLevels { tb, levels })
    }
}

impl EntryReader for DecodedLevels<'_> {
    type Error = Error;

    fn entry(&self, pos: &Position) -> Result<i32> {
        match self.levels.get(pos.stones() as usize) {
            Some(Some(entries)) => Ok(entries[mancala_core::rank(pos) as usize] as i32),
            _ => self.tb.entry(pos),
        }
    }

    fn value(&self, pos: &Position, entry: i32, window: Window) -> Result<i32> {
        restore_value(self.tb, self, pos, entry, window)
    }
}
