//! Large arrays backed by huge pages, for memory read at random.
//!
//! A solver's lookups into the levels below, and its updates of the level
//! being solved, land all over arrays of hundreds of megabytes. With the
//! usual 4 KiB pages nearly every one of them also misses the processor's
//! address-translation cache and walks the page tables; with 2 MiB pages
//! the translations of a whole level fit in that cache. Linux backs
//! anonymous memory with huge pages where the program asks for them
//! (`madvise(MADV_HUGEPAGE)`; transparent huge pages in their default
//! `madvise` mode), before the memory is first touched. Elsewhere, or where
//! the kernel declines, the arrays are ordinary vectors: only speed
//! depends on it, never a value.

/// A vector of `len` copies of `value`, whose buffer the kernel is asked
/// to back with huge pages before it is filled.
pub fn filled_on_huge_pages<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut buffer = Vec::with_capacity(len);
    advise_huge_pages(buffer.spare_capacity_mut());
    buffer.resize(len, value);
    buffer
}

/// Asks the kernel to back the whole 2 MiB pages inside `memory` with huge
/// pages; memory it does not own whole pages of is left as it is.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(memory: &[std::mem::MaybeUninit<T>]) {
    const HUGE_PAGE: usize = 2 << 20;
    let start = memory.as_ptr() as usize;
    let end = start + std::mem::size_of_val(memory);
    let (first, last) = (
        start.next_multiple_of(HUGE_PAGE),
        end / HUGE_PAGE * HUGE_PAGE,
    );
    if last > first {
        // SAFETY: the range lies inside an allocation this vector owns and
        // nothing else references; the advice changes how the kernel backs
        // its pages, never their contents, and a refusal (an error code,
        // ignored) leaves ordinary pages.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_memory: &[std::mem::MaybeUninit<T>]) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_on_huge_pages_holds_its_values() {
        for len in [0, 1, 4095, (2 << 20) + 3, 5 << 20] {
            let v = filled_on_huge_pages(len, 7u8);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&b| b == 7));
        }
    }
}
