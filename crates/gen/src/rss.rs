//! The process's peak resident memory, as each level reports it.

/// Starts a new peak-RSS measurement (Linux: `clear_refs` mode 5), so each
/// level reports its own peak. Elsewhere the peak stays cumulative.
pub(crate) fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process (Linux `VmHWM`) since the last
/// reset, if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
