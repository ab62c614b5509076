//! A level's depth table as a writer makes it (`docs/FORMAT.md`, "Depth
//! tables"), from its depths and values: the same symbols however the
//! level was cut (in chunks, across ranks), since each block's free
//! positions are filled from its own start.

use mancala_format::{stores_depth, Depth, StoredDepth, TableKind};

use crate::error::BuildError;

/// The symbols of the positions from level index `first` (which starts a
/// block of `block_size`) of level `n`, whose depths are `plies`
/// ([`crate::kernel::NO_DEPTH`] where none) and values `values`, into
/// `out`; returns the long depths among them. A position whose mover is
/// ahead stores its depth; every other one repeats the symbol before it in
/// its block, which the order-1 model codes in next to no bits.
pub(crate) fn depth_symbols(
    n: u32,
    first: u64,
    block_size: u32,
    plies: &[u16],
    values: &[i8],
    out: &mut [i8],
) -> Result<Vec<(u64, u16)>, BuildError> {
    debug_assert_eq!(first % u64::from(block_size), 0, "a share starts a block");
    let mut long = Vec::new();
    let mut last = [0i8];
    for (k, ((&plies, &value), out)) in plies.iter().zip(values).zip(out).enumerate() {
        let at = first + k as u64;
        if at.is_multiple_of(u64::from(block_size)) {
            Depth::encode(n, StoredDepth::Plies(0), &mut last);
        }
        if stores_depth(value.into()) {
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
            Depth::encode(n, stored, &mut last);
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
