//! What the ranks send each other, as bytes: sorted lists of indices as
//! LEB128 varints of their gaps (a sorted batch of a level's indices has
//! small gaps, so most take a byte or two instead of eight).

/// Appends `value` as a LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a LEB128 varint at `*at`, moving past it.
pub(crate) fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= ((byte & 0x7f) as u64) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

/// Appends the ascending `values` (repeats allowed): their count, then the
/// gaps between them.
pub(crate) fn put_sorted(out: &mut Vec<u8>, values: &[u64]) {
    debug_assert!(values.is_sorted());
    put_varint(out, values.len() as u64);
    let mut last = 0;
    for &v in values {
        put_varint(out, v - last);
        last = v;
    }
}

/// Reads a list [`put_sorted`] wrote at `*at`, moving past it, passing
/// each value to `each`.
pub(crate) fn get_sorted(bytes: &[u8], at: &mut usize, mut each: impl FnMut(u64)) {
    let count = get_varint(bytes, at);
    let mut last = 0;
    for _ in 0..count {
        last += get_varint(bytes, at);
        each(last);
    }
}
