//! Board bits: a board as one 128-bit number, pit `i` in byte `i`
//! ([`crate::Position`]'s own layout), so that a sowing is a few additions
//! of byte masks instead of a loop a stone. Move generation runs for every
//! edge the solver and the searches look at.

/// One stone in each of pits `from..to` (none if `to <= from`).
#[inline]
pub(super) fn ones(from: usize, to: usize) -> u128 {
    /// `LOW[k]`: one stone in each of pits `0..k`.
    const LOW: [u128; 17] = {
        let mut low = [0u128; 17];
        let mut k = 1;
        while k < 17 {
            low[k] = low[k - 1] | 1 << (8 * (k - 1));
            k += 1;
        }
        low
    };
    if to <= from {
        0
    } else {
        LOW[to] - LOW[from]
    }
}

/// The bits of a row of `p` pits.
#[inline]
pub(super) fn row_mask(p: usize) -> u64 {
    if p >= 8 {
        u64::MAX
    } else {
        (1 << (8 * p)) - 1
    }
}
