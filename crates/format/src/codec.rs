//! The value codec: an order-1 context model with rANS entropy coding.
//!
//! Values of neighbouring positions in index order are strongly correlated
//! (neighbours differ by one stone moved between the mover's first pits), so
//! each value is coded with the distribution of values that follow the
//! previous one (`docs/SOLVER.md`, "Table size", gives the entropies
//! measured; on small blocks general-purpose compressors do worse than
//! this model's order 0). rANS codes each value in its information
//! content, and decoding one is a table lookup, a multiply and an
//! occasional byte read, with no per-block setup: a probe decodes from the
//! start of its block to its value and no further.
//!
//! Per level the model is fitted once ([`Model::fit`], or from
//! [`ModelCounts`] that workers summed): for each context
//! (the previous value's symbol, or "block start") the counts of the next
//! symbol, normalised to [`crate::PROB_SCALE`]. Symbols are `value − min value`.
//! Every block is coded on its own, starting in the block-start context, so
//! any block decodes without the others.
//!
//! A model may also split each context by a per-position *feature* that a
//! reader computes from the positions themselves ([`Contexts`]): compact
//! tables use the mover's stones ([`crate::encoding::MoverContexts`]).
//! Context `f · (symbols + 1) + previous` is the previous symbol's context
//! under feature `f`, so a model with one feature is the plain order-1
//! model, and decoding adds the feature's offset to the previous symbol,
//! never a multiplication, on its critical path.

use rayon::prelude::*;

/// Probabilities are integers out of `2^PROB_BITS`.
pub(crate) const PROB_BITS: u32 = 11;
/// The sum of every context's frequencies.
pub(crate) const PROB_SCALE: u32 = 1 << PROB_BITS;
/// rANS keeps its state in `[RANS_L, 2^32)` and moves 16 bits at a time,
/// so decoding one value reads at most one 16-bit word, without a branch.
const RANS_L: u32 = 1 << 16;
/// Symbols are bytes: values span at most 255 (−127..=127).
pub(crate) const MAX_SYMBOLS: usize = 255;

/// The feature of every position a model conditions on, computed by
/// writers and readers alike from the positions' indices.
pub trait Contexts: Sync {
    /// The features of consecutive positions.
    type Walk: Iterator<Item = usize>;
    /// How many features there are (each is below this).
    fn features(&self) -> usize;
    /// The features of positions `first`, `first + 1`, ….
    fn walk(&self, first: u64) -> Self::Walk;
}

/// No feature: the plain order-1 model.
pub struct Uniform;

impl Contexts for Uniform {
    type Walk = std::iter::Repeat<usize>;

    fn features(&self) -> usize {
        1
    }

    fn walk(&self, _first: u64) -> Self::Walk {
        std::iter::repeat(0)
    }
}

/// A level's model: for each context, the frequency of each symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Model {
    /// The value of symbol 0.
    min: i8,
    /// Number of symbols (values `min..min + symbols`).
    symbols: usize,
    /// Number of features each previous-symbol context is split by.
    features: usize,
    /// `features × (symbols + 1) × symbols` frequencies, context-major;
    /// context `f · (symbols + 1) + symbols` is the block start under
    /// feature `f`. Each used context sums to [`crate::PROB_SCALE`]; an unused one
    /// is all zero.
    freqs: Vec<u16>,
    /// Per context, the running sum of the frequencies before each symbol.
    starts: Vec<u32>,
}

/// What a model looks like in a file header: the value of symbol 0, and
/// per context its non-zero `(symbol, frequency)` pairs.
pub(crate) type StoredModel = (i8, Vec<Vec<(u8, u16)>>);

/// How often each symbol follows each context in some whole blocks of a
/// level: what a `Model` is fitted from. Counts of disjoint ranges of
/// blocks add up ([`ModelCounts::merge`]), so workers that each hold a part
/// of a level fit the very model one process holding all of it would.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct ModelCounts {
    /// The value of symbol 0.
    min: i8,
    /// Number of symbols (values `min..min + symbols`).
    symbols: usize,
    /// Features each previous-symbol context is split by.
    features: usize,
    /// `features × (symbols + 1) × symbols` counts, laid out as
    /// [`Model::freqs`].
    counts: Vec<u64>,
}

impl ModelCounts {
    /// Counts `values`, the symbols of positions `first, first + 1, …` of
    /// a level, coded in blocks of `block_size` (`first` starts a block),
    /// in the contexts of `contexts`.
    pub fn count(
        values: &[i8],
        first: u64,
        block_size: usize,
        contexts: &impl Contexts,
    ) -> ModelCounts {
        debug_assert_eq!(first % block_size as u64, 0, "counts start at a block");
        let min = values.iter().copied().min().unwrap_or(0);
        let max = values.iter().copied().max().unwrap_or(0);
        let symbols = (max as i32 - min as i32 + 1) as usize;
        let features = contexts.features();
        let all = features * (symbols + 1);
        let counts = values
            .par_chunks(block_size)
            .enumerate()
            .fold(
                || vec![0u64; all * symbols],
                |mut counts, (b, block)| {
                    let mut prev = symbols;
                    let walk = contexts.walk(first + (b * block_size) as u64);
                    for (&v, f) in block.iter().zip(walk) {
                        let s = (v as i32 - min as i32) as usize;
                        counts[(f * (symbols + 1) + prev) * symbols + s] += 1;
                        prev = s;
                    }
                    counts
                },
            )
            .reduce(|| vec![0u64; all * symbols], add_counts);
        ModelCounts {
            min,
            symbols,
            features,
            counts,
        }
    }

    /// The counts of both ranges of blocks together.
    pub fn merge(self, other: ModelCounts) -> ModelCounts {
        assert_eq!(self.features, other.features, "counts of one model");
        let min = self.min.min(other.min);
        let max = self.max().max(other.max());
        let symbols = (max as i32 - min as i32 + 1) as usize;
        let widened = add_counts(self.widened(min, symbols), other.widened(min, symbols));
        ModelCounts {
            min,
            symbols,
            features: self.features,
            counts: widened,
        }
    }

    fn max(&self) -> i8 {
        (self.min as i32 + self.symbols as i32 - 1) as i8
    }

    /// How often each symbol occurs in the counted blocks, ascending, zero
    /// counts left out (as [`crate::histogram`] of their symbols): each
    /// occurrence is counted once, in the context it follows.
    pub fn histogram(&self) -> Vec<(i8, u64)> {
        let mut totals = vec![0u64; self.symbols];
        for context in self.counts.chunks(self.symbols) {
            totals.iter_mut().zip(context).for_each(|(t, c)| *t += c);
        }
        (self.min as i32..)
            .zip(totals)
            .filter(|&(_, c)| c > 0)
            .map(|(v, c)| (v as i8, c))
            .collect()
    }

    /// The counts as bytes, for workers that sum them over a network.
    pub fn to_bytes(&self) -> Vec<u8> {
        bincode::encode_to_vec(self, bincode::config::standard()).expect("counts encode")
    }

    /// Counts from [`ModelCounts::to_bytes`], if `bytes` are counts of a
    /// well-formed model.
    pub fn from_bytes(bytes: &[u8]) -> Option<ModelCounts> {
        let config = bincode::config::standard().with_limit::<{ 1 << 24 }>();
        let (counts, read): (ModelCounts, usize) =
            bincode::decode_from_slice(bytes, config).ok()?;
        let well_formed = read == bytes.len()
            && (1..=MAX_SYMBOLS).contains(&counts.symbols)
            && counts.counts.len() == counts.features * (counts.symbols + 1) * counts.symbols;
        well_formed.then_some(counts)
    }

    /// The counts laid out for the symbols `min..min + symbols`, which
    /// include this range.
    fn widened(&self, min: i8, symbols: usize) -> Vec<u64> {
        if (min, symbols) == (self.min, self.symbols) {
            return self.counts.clone();
        }
        let shift = (self.min as i32 - min as i32) as usize;
        let mut out = vec![0u64; self.features * (symbols + 1) * symbols];
        for f in 0..self.features {
            for prev in 0..=self.symbols {
                // The block start stays the last context of its feature.
                let to_prev = if prev == self.symbols {
                    symbols
                } else {
                    prev + shift
                };
                let from = (f * (self.symbols + 1) + prev) * self.symbols;
                let to = (f * (symbols + 1) + to_prev) * symbols + shift;
                out[to..to + self.symbols].copy_from_slice(&self.counts[from..from + self.symbols]);
            }
        }
        out
    }
}

fn add_counts(mut a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
    a
}

impl Model {
    /// Fits the model to `values`, coded in blocks of `block_size`, with
    /// the features of `contexts`.
    pub fn fit(values: &[i8], block_size: usize, contexts: &impl Contexts) -> Model {
        Model::from_counts(&ModelCounts::count(values, 0, block_size, contexts))
    }

    /// The model of `counts`: each context's counts normalised to
    /// [`crate::PROB_SCALE`].
    pub fn from_counts(counts: &ModelCounts) -> Model {
        let freqs = counts
            .counts
            .chunks(counts.symbols)
            .flat_map(normalize)
            .collect();
        Model::new(counts.min, counts.symbols, counts.features, freqs)
    }

    fn new(min: i8, symbols: usize, features: usize, freqs: Vec<u16>) -> Model {
        let starts = freqs
            .chunks(symbols)
            .flat_map(|f| {
                f.iter().scan(0u32, |sum, &f| {
                    let start = *sum;
                    *sum += f as u32;
                    Some(start)
                })
            })
            .collect();
        Model {
            min,
            symbols,
            features,
            freqs,
            starts,
        }
    }

    /// The model as stored in a header.
    pub fn to_stored(&self) -> StoredModel {
        let contexts = self
            .freqs
            .chunks(self.symbols)
            .map(|f| {
                f.iter()
                    .enumerate()
                    .filter(|&(_, &f)| f > 0)
                    .map(|(s, &f)| (s as u8, f))
                    .collect()
            })
            .collect();
        (self.min, contexts)
    }

    /// The model a header stores, with `features` features, checked: per
    /// feature one context per symbol plus the block start, each empty or
    /// summing to [`crate::PROB_SCALE`].
    pub fn from_stored(stored: &StoredModel, features: usize) -> Result<Model, String> {
        let (min, contexts) = stored;
        if features == 0 || contexts.len() % features != 0 {
            return Err(format!(
                "a model of {} contexts for {features} features",
                contexts.len()
            ));
        }
        let symbols = (contexts.len() / features).saturating_sub(1);
        if symbols == 0 || symbols > MAX_SYMBOLS || *min as i32 + symbols as i32 - 1 > 127 {
            return Err(format!("a model of {} contexts", contexts.len()));
        }
        let mut freqs = vec![0u16; contexts.len() * symbols];
        for (ctx, pairs) in contexts.iter().enumerate() {
            let mut sum = 0u32;
            for &(s, f) in pairs {
                if s as usize >= symbols || f == 0 {
                    return Err(format!("context {ctx}: symbol {s} frequency {f}"));
                }
                freqs[ctx * symbols + s as usize] = f;
                sum += f as u32;
            }
            if !pairs.is_empty() && sum != PROB_SCALE {
                return Err(format!("context {ctx} sums to {sum}"));
            }
        }
        Ok(Model::new(*min, symbols, features, freqs))
    }

    /// The smallest value the model codes.
    pub fn min(&self) -> i8 {
        self.min
    }

    /// The largest value the model codes.
    pub fn max(&self) -> i8 {
        (self.min as i32 + self.symbols as i32 - 1) as i8
    }

    /// Number of contexts: previous symbols and block start, per feature.
    fn contexts(&self) -> usize {
        self.features * (self.symbols + 1)
    }

    /// The context of a symbol after `prev` (`symbols` at a block start)
    /// at a position of feature `feature`.
    fn context(&self, feature: usize, prev: usize) -> usize {
        feature * (self.symbols + 1) + prev
    }

    fn freq(&self, ctx: usize, s: usize) -> u32 {
        self.freqs[ctx * self.symbols + s] as u32
    }

    /// Per context and symbol `s`, the likeliest symbol at most `s` (the
    /// largest of equally likely ones; `s` itself if the context has seen
    /// none of them).
    fn likeliest_at_most(&self) -> Vec<u8> {
        let mut table = vec![0u8; self.contexts() * self.symbols];
        for ctx in 0..self.contexts() {
            let mut best: Option<usize> = None;
            for s in 0..self.symbols {
                if self.freq(ctx, s) > 0
                    && best.is_none_or(|b| self.freq(ctx, s) >= self.freq(ctx, b))
                {
                    best = Some(s);
                }
                table[ctx * self.symbols + s] = best.unwrap_or(s) as u8;
            }
        }
        table
    }

    /// Codes one block, whose positions have the features `walk`. Every
    /// value must have been seen by [`Model::fit`] in the same context.
    ///
    /// Two rANS states alternate (even positions use the first, odd ones
    /// the second) and share one stream of 16-bit words: decoding a value
    /// then waits only for the previous value's symbol, not for the state
    /// update of the previous value, which about doubles decoding speed.
    pub fn encode_block(&self, values: &[i8], walk: impl Iterator<Item = usize>) -> Vec<u8> {
        let symbols: Vec<usize> = values
            .iter()
            .map(|&v| (v as i32 - self.min as i32) as usize)
            .collect();
        let features: Vec<usize> = walk.take(values.len()).collect();
        let mut words: Vec<u16> = Vec::with_capacity(values.len() / 4 + 4);
        let mut states = [RANS_L; 2];
        for i in (0..symbols.len()).rev() {
            let prev = if i == 0 { self.symbols } else { symbols[i - 1] };
            let ctx = self.context(features[i], prev);
            let s = symbols[i];
            let freq = self.freq(ctx, s);
            assert!(freq > 0, "value {} unseen in its context", values[i]);
            let start = self.starts[ctx * self.symbols + s];
            let x = &mut states[i % 2];
            let x_max = ((RANS_L as u64 >> PROB_BITS) << 16) * freq as u64;
            if *x as u64 >= x_max {
                words.push(*x as u16);
                *x >>= 16;
            }
            *x = ((*x / freq) << PROB_BITS) + (*x % freq) + start;
        }
        for x in states.iter().rev() {
            words.push(*x as u16);
            words.push((*x >> 16) as u16);
        }
        words.reverse();
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The decoding tables of this model.
    pub fn decoder(&self) -> Decoder {
        let contexts = self.contexts();
        let mut symbol_of_slot = vec![0u8; contexts << PROB_BITS];
        let mut freq_start = vec![0u32; contexts << 8];
        for ctx in 0..contexts {
            let table = &mut symbol_of_slot[ctx << PROB_BITS..][..PROB_SCALE as usize];
            let mut start = 0u32;
            for s in 0..self.symbols {
                let freq = self.freq(ctx, s);
                table[start as usize..(start + freq) as usize].fill(s as u8);
                freq_start[(ctx << 8) | s] = freq | start << 16;
                start += freq;
            }
            if start == 0 {
                // Never used: one symbol owning every slot keeps a corrupt
                // stream inside the tables.
                freq_start[ctx << 8] = PROB_SCALE;
            }
        }
        Decoder {
            min: self.min,
            symbols: self.symbols,
            symbol_of_slot,
            freq_start,
        }
    }
}

/// The symbols to store for `values`, coded in blocks of `block_size`,
/// when a position marked `free` may store any value at most its own: the
/// value the order-1 model finds likeliest after the symbol stored before
/// it. Two rounds of fitting the model and choosing: the first fits the
/// values themselves, the second what the first chose. Values that are not
/// free are kept. Returns the symbols and the model fitted to them, which
/// codes them.
pub(crate) fn lower_free_values(
    values: &[i8],
    free: &[bool],
    block_size: usize,
    contexts: &impl Contexts,
) -> (Vec<i8>, Model) {
    let mut stored = values.to_vec();
    for _ in 0..2 {
        let model = Model::fit(&stored, block_size, contexts);
        let likeliest = model.likeliest_at_most();
        let symbols = model.symbols;
        stored
            .par_chunks_mut(block_size)
            .zip(values.par_chunks(block_size))
            .zip(free.par_chunks(block_size))
            .enumerate()
            .for_each(|(b, ((stored, values), free))| {
                let mut prev = symbols;
                let walk = contexts.walk((b * block_size) as u64);
                for (((stored, &value), &free), f) in
                    stored.iter_mut().zip(values).zip(free).zip(walk)
                {
                    let ctx = model.context(f, prev);
                    // Every value is at least the model's smallest (each
                    // is at least what the last round stored for it); a
                    // free one may exceed the largest, and then takes a
                    // symbol at most the largest.
                    let s = (value as i32 - model.min as i32) as usize;
                    let chosen = if free {
                        likeliest[ctx * symbols + s.min(symbols - 1)] as usize
                    } else {
                        s
                    };
                    *stored = (model.min as i32 + chosen as i32) as i8;
                    prev = chosen;
                }
            });
    }
    let model = Model::fit(&stored, block_size, contexts);
    (stored, model)
}

/// Scales counts to frequencies summing to [`crate::PROB_SCALE`], every non-zero
/// count keeping a frequency of at least 1 (all zero if every count is).
fn normalize(counts: &[u64]) -> Vec<u16> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return vec![0; counts.len()];
    }
    let mut freqs: Vec<i64> = counts
        .iter()
        .map(|&c| match c {
            0 => 0,
            c => {
                ((c as u128 * PROB_SCALE as u128 + total as u128 / 2) / total as u128).max(1) as i64
            }
        })
        .collect();
    let mut excess: i64 = freqs.iter().sum::<i64>() - PROB_SCALE as i64;
    while excess != 0 {
        // Adjust the largest frequency: the relative error is smallest there.
        let (largest, _) = freqs
            .iter()
            .enumerate()
            .max_by_key(|&(_, &f)| f)
            .expect("a non-empty context");
        let step = if excess > 0 {
            excess.min(freqs[largest] - 1)
        } else {
            excess
        };
        freqs[largest] -= step;
        excess -= step;
        if step == 0 {
            // Every frequency is 1 and still too many: cannot happen with
            // at most MAX_SYMBOLS < PROB_SCALE symbols.
            unreachable!("{} symbols exceed the probability scale", counts.len());
        }
    }
    freqs.into_iter().map(|f| f as u16).collect()
}

/// The decoding tables of a [`Model`]: per context, the symbol owning each
/// of the [`crate::PROB_SCALE`] slots (a byte each, so the tables a block uses stay
/// in the first-level cache), and per context and symbol the frequency and
/// start (`freq | start << 16`, 256 entries per context so that indexing is
/// a shift).
pub(crate) struct Decoder {
    min: i8,
    symbols: usize,
    symbol_of_slot: Vec<u8>,
    freq_start: Vec<u32>,
}

/// Why a block did not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The data ended before the values did.
    Truncated,
    /// The data did not end where the values did.
    Inconsistent,
}

impl Decoder {
    /// Decodes a whole block, whose positions have the features `walk`,
    /// into `out` (exactly the block's length) and checks that the data is
    /// consumed exactly.
    pub fn decode_block(
        &self,
        data: &[u8],
        out: &mut [i8],
        walk: impl Iterator<Item = usize>,
    ) -> Result<(), DecodeError> {
        let stream = self.decode_into(data, out, walk)?;
        if stream.states != [RANS_L; 2] || stream.at != data.len() {
            return Err(DecodeError::Inconsistent);
        }
        Ok(())
    }

    /// Decodes the first `out.len()` values of a block into `out`.
    pub fn decode_prefix(
        &self,
        data: &[u8],
        out: &mut [i8],
        walk: impl Iterator<Item = usize>,
    ) -> Result<(), DecodeError> {
        self.decode_into(data, out, walk).map(|_| ())
    }

    fn decode_into<'a>(
        &'a self,
        data: &'a [u8],
        out: &mut [i8],
        mut walk: impl Iterator<Item = usize>,
    ) -> Result<Stream<'a>, DecodeError> {
        let mut stream = Stream::new(self, data)?;
        let mut pairs = out.chunks_exact_mut(2);
        for pair in &mut pairs {
            pair[0] = stream.next(0, feature(&mut walk))?;
            pair[1] = stream.next(1, feature(&mut walk))?;
        }
        if let [last] = pairs.into_remainder() {
            *last = stream.next(0, feature(&mut walk))?;
        }
        Ok(stream)
    }

    /// The value at `offset` of a block whose positions have the features
    /// `walk`, decoding only up to it.
    pub fn decode_at(
        &self,
        data: &[u8],
        offset: usize,
        mut walk: impl Iterator<Item = usize>,
    ) -> Result<i8, DecodeError> {
        let mut stream = Stream::new(self, data)?;
        for _ in 0..offset / 2 {
            stream.next(0, feature(&mut walk))?;
            stream.next(1, feature(&mut walk))?;
        }
        if offset % 2 == 1 {
            stream.next(0, feature(&mut walk))?;
            return stream.next(1, feature(&mut walk));
        }
        stream.next(0, feature(&mut walk))
    }
}

/// The next feature of a walk; a walk that ends early (it never should)
/// gives feature 0, which decodes to garbage that the block checks catch,
/// rather than a panic.
#[inline(always)]
fn feature(walk: &mut impl Iterator<Item = usize>) -> usize {
    walk.next().unwrap_or(0)
}

/// The state of decoding one block.
struct Stream<'a> {
    decoder: &'a Decoder,
    data: &'a [u8],
    /// Next unread byte.
    at: usize,
    states: [u32; 2],
    /// The previous symbol, or `symbols` at the block start.
    prev: usize,
    /// Contexts per feature: `symbols + 1`.
    stride: usize,
}

impl<'a> Stream<'a> {
    fn new(decoder: &'a Decoder, data: &'a [u8]) -> Result<Stream<'a>, DecodeError> {
        let head = data.get(..8).ok_or(DecodeError::Truncated)?;
        let word = |i: usize| u32::from(u16::from_le_bytes([head[2 * i], head[2 * i + 1]]));
        Ok(Stream {
            decoder,
            data,
            at: 8,
            states: [word(0) << 16 | word(1), word(2) << 16 | word(3)],
            prev: decoder.symbols,
            stride: decoder.symbols + 1,
        })
    }

    /// Decodes the next value, of a position with feature `feature`, with
    /// state `which` (position parity).
    #[inline(always)]
    fn next(&mut self, which: usize, feature: usize) -> Result<i8, DecodeError> {
        let x = self.states[which];
        let slot = x & (PROB_SCALE - 1);
        // The feature's offset does not depend on the previous symbol, so
        // only the addition waits for it.
        let ctx = feature * self.stride + self.prev;
        let symbol = self.decoder.symbol_of_slot[(ctx << PROB_BITS) | slot as usize] as usize;
        let entry = self.decoder.freq_start[(ctx << 8) | symbol];
        let (freq, start) = (entry & 0xffff, entry >> 16);
        let x = freq * (x >> PROB_BITS) + slot - start;
        // Renormalise without a branch on the state (it would mispredict
        // about every other value): the next word is read either way and
        // taken only if needed.
        let refill = x < RANS_L;
        let word = match self.data.get(self.at..self.at + 2) {
            Some(w) => u16::from_le_bytes([w[0], w[1]]) as u32,
            None if refill => return Err(DecodeError::Truncated),
            None => 0,
        };
        // Arithmetic, not `if`: the compiler would turn an `if` into a
        // branch again.
        let refill = refill as u32;
        self.states[which] = (x << (16 * refill)) | (word & refill.wrapping_neg());
        self.at += 2 * refill as usize;
        self.prev = symbol;
        Ok((self.decoder.min as i32 + symbol as i32) as i8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(values: &[i8], block_size: usize) -> usize {
        round_trip_with(values, block_size, &Uniform)
    }

    /// A feature of three values that scatters over the index.
    struct Scattered;

    fn scattered(i: u64) -> usize {
        ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 3) as usize
    }

    impl Contexts for Scattered {
        type Walk = std::iter::Map<std::ops::RangeFrom<u64>, fn(u64) -> usize>;

        fn features(&self) -> usize {
            3
        }

        fn walk(&self, first: u64) -> Self::Walk {
            (first..).map(scattered)
        }
    }

    fn round_trip_with(values: &[i8], block_size: usize, contexts: &impl Contexts) -> usize {
        let model = Model::fit(values, block_size, contexts);
        let model = Model::from_stored(&model.to_stored(), contexts.features()).unwrap();
        let decoder = model.decoder();
        let mut bytes = 0;
        for (b, block) in values.chunks(block_size).enumerate() {
            let first = (b * block_size) as u64;
            let data = model.encode_block(block, contexts.walk(first));
            bytes += data.len();
            let mut out = vec![0i8; block.len()];
            decoder
                .decode_block(&data, &mut out, contexts.walk(first))
                .unwrap();
            assert_eq!(out, block);
            for (i, &v) in block.iter().enumerate() {
                assert_eq!(decoder.decode_at(&data, i, contexts.walk(first)), Ok(v));
            }
        }
        bytes
    }

    #[test]
    fn blocks_round_trip() {
        round_trip(&[0], 4);
        round_trip(&[-127, 127, 0, 5, -127], 2);
        let skewed: Vec<i8> = (0..10_000u32)
            .map(|i| if i % 97 == 0 { (i % 13) as i8 - 6 } else { 0 })
            .collect();
        let bytes = round_trip(&skewed, 512);
        assert!(bytes < 10_000 / 4, "{bytes} bytes for a skewed source");
    }

    #[test]
    fn a_feature_the_values_follow_is_learned() {
        // Each value is its index's feature: with the feature known, every
        // value is certain and costs almost nothing; without it, about
        // log2(3) bits.
        let values: Vec<i8> = (0..30_000u64).map(|i| scattered(i) as i8 * 5).collect();
        let with = round_trip_with(&values, 1000, &Scattered);
        let without = round_trip(&values, 1000);
        assert!(
            with * 4 < without,
            "{with} bytes with the feature, {without} without"
        );
        let stored = Model::fit(&values, 1000, &Scattered).to_stored();
        assert!(
            Model::from_stored(&stored, 5).is_err(),
            "36 contexts are not 5 features"
        );
    }

    #[test]
    fn a_corrupt_stream_is_an_error_not_a_panic() {
        let values: Vec<i8> = (0..1000).map(|i| ((i * 7919) % 23) as i8 - 11).collect();
        let model = Model::fit(&values, 1000, &Uniform);
        let decoder = model.decoder();
        let data = model.encode_block(&values, Uniform.walk(0));
        let mut out = vec![0i8; values.len()];
        assert_eq!(
            decoder.decode_block(&data[..data.len() / 2], &mut out, Uniform.walk(0)),
            Err(DecodeError::Truncated)
        );
        let mut flipped = data.clone();
        flipped[data.len() / 3] ^= 0x10;
        assert!(
            decoder
                .decode_block(&flipped, &mut out, Uniform.walk(0))
                .is_err()
                || out != values
        );
    }

    /// Counts of two ranges of blocks, merged, are the counts of both
    /// together, even when the ranges hold different symbols: workers that
    /// each count their own part fit the model of the whole.
    #[test]
    fn counts_of_parts_add_up_to_the_counts_of_the_whole() {
        let values: Vec<i8> = (0..9000u64)
            .map(|i| match i {
                0..4000 => (i % 5) as i8 - 2,
                _ => (scattered(i) as i8) * 3 + 1,
            })
            .collect();
        for block_size in [1000, 250] {
            let whole = ModelCounts::count(&values, 0, block_size, &Scattered);
            let cut = 4 * block_size;
            let first = ModelCounts::count(&values[..cut], 0, block_size, &Scattered);
            let second = ModelCounts::count(&values[cut..], cut as u64, block_size, &Scattered);
            assert_ne!((first.min, first.symbols), (second.min, second.symbols));
            assert_eq!(first.clone().merge(second.clone()), whole);
            assert_eq!(second.merge(first), whole);
            assert_eq!(
                Model::from_counts(&whole),
                Model::fit(&values, block_size, &Scattered)
            );
            assert_eq!(whole.histogram(), crate::histogram(&values));
            assert_eq!(ModelCounts::from_bytes(&whole.to_bytes()), Some(whole));
        }
    }

    #[test]
    fn frequencies_sum_to_the_scale() {
        for counts in [vec![1u64], vec![5, 0, 1_000_000, 1], vec![1; 255]] {
            let f = normalize(&counts);
            assert_eq!(f.iter().map(|&f| f as u32).sum::<u32>(), PROB_SCALE);
            for (c, f) in counts.iter().zip(&f) {
                assert_eq!(*c == 0, *f == 0);
            }
        }
    }
}
