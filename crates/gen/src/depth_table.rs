//! A level's depth table as a writer makes it (`docs/FORMAT.md`, "Depth
//! tables"), from its depths and values (or bounds): the same symbols however the
//! level was cut (in chunks, across ranks), since each block's free
//! positions are filled from its own start.

use mancala_format::{Depth, Realized, StoredDepth, TableKind};

use crate::error::BuildError;

/// The symbols of the positions from level index `first` (which starts a
/// block of `block_size`) of level `n`, the `k`-th of which has depth
/// `plies(k)` (`NO_DEPTH` where none) and its entry of kind `V` in
/// `values`, into `out`; returns the long depths among them. A position
/// whose mover has a value to realize ([`Realized::stores_depth`]) stores
/// its depth; every other one repeats the symbol before it in its block,
/// which the order-1 model codes in next to no bits.
pub(crate) fn depth_symbols<V: Realized>(
    n: u32,
    first: u64,
    block_size: u32,
    plies: impl Fn(usize) -> u16,
    values: &[i8],
    out: &mut [i8],
) -> Result<Vec<(u64, u16)>, BuildError> {
    debug_assert_eq!(first % u64::from(block_size), 0, "a share starts a block");
    let mut long = Vec::new();
    let mut last = [0i8];
    let entries = values.chunks_exact(V::WIDTH);
    for (k, (entry, out)) in entries.zip(out).enumerate() {
        let plies = plies(k);
        let at = first + k as u64;
        if at.is_multiple_of(u64::from(block_size)) {
            Depth::<V>::encode(n, StoredDepth::Plies(0), &mut last);
        }
        if V::stores_depth(entry) {
            if plies > Depth::MAX_PLIES {
                return Err(BuildError::DepthTooLong {
                    plies: plies.into(),
                });
            }
            let stored = if plies >= Depth::LONG_PLIES {
                long.push((at, plies));
                StoredDepth::Long
            } else {
                StoredDepth::Plies(plies)
            };
            Depth::<V>::encode(n, stored, &mut last);
        }
        *out = last[0];
    }
    Ok(long)
}

/// Level `n`'s long depths, if a depth table's header can list them all.
pub(crate) fn listable(n: u32, long: Vec<(u64, u16)>) -> Result<Vec<(u64, u16)>, BuildError> {
    if long.len() > Depth::MAX_LONG {
        return Err(BuildError::TooManyLongDepths {
            level: n,
            count: long.len(),
        });
    }
    Ok(long)
}
