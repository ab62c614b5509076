//! What building a level costs the machine, as its report gives it: the
//! peak resident memory, all of it and the anonymous part (which leaves out
//! the page cache of mapped files: what a build really needs), and the
//! bytes it read from and wrote to storage. Linux only; elsewhere the
//! figures are unknown.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the anonymous resident memory is sampled: the kernel keeps no
/// peak of it, so a spike shorter than this may be missed.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);

/// Starts a new peak-RSS measurement (Linux: `clear_refs` mode 5), so each
/// level reports its own peak. Elsewhere the peak stays cumulative.
pub(crate) fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process (Linux `VmHWM`) since the last
/// reset, if known.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kib("VmHWM:").map(|kib| kib * 1024)
}

/// Anonymous resident memory of this process now (Linux `RssAnon`).
fn anon_rss_bytes() -> Option<u64> {
    status_kib("RssAnon:").map(|kib| kib * 1024)
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(name: &str) -> Option<u64> {
    field(&std::fs::read_to_string("/proc/self/status").ok()?, name)
}

/// Bytes this process has had read from and written to storage (Linux
/// `/proc/self/io`: `read_bytes`, `write_bytes`), page faults of mapped
/// files included.
fn storage_bytes() -> Option<(u64, u64)> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    Some((field(&io, "read_bytes:")?, field(&io, "write_bytes:")?))
}

/// The number after `name` on its line of a `/proc` file's `text`.
fn field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What one level cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Peak resident memory while the level was built.
    pub peak_rss_bytes: Option<u64>,
    /// Peak anonymous resident memory while the level was built, sampled.
    pub peak_anon_bytes: Option<u64>,
    /// Bytes read from storage.
    pub read_bytes: Option<u64>,
    /// Bytes written to storage.
    pub written_bytes: Option<u64>,
}

/// Measures one level, from [`Metering::start`] (before it is solved) to
/// [`Metering::finish`] (once it is written).
pub(crate) struct Metering {
    storage_at_start: Option<(u64, u64)>,
    sampler: Option<Sampler>,
}

/// A thread keeping the largest anonymous resident memory seen.
struct Sampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Metering {
    pub(crate) fn start() -> Metering {
        reset_peak_rss();
        let sampler = anon_rss_bytes().and_then(|now| {
            let peak = Arc::new(AtomicU64::new(now));
            let stop = Arc::new(AtomicBool::new(false));
            let (seen, stopped) = (peak.clone(), stop.clone());
            let thread = std::thread::Builder::new()
                .name("anon-rss".into())
                .spawn(move || {
                    while !stopped.load(Relaxed) {
                        if let Some(now) = anon_rss_bytes() {
                            seen.fetch_max(now, Relaxed);
                        }
                        std::thread::park_timeout(SAMPLE_EVERY);
                    }
                })
                .ok()?;
            Some(Sampler { peak, stop, thread })
        });
        Metering {
            storage_at_start: storage_bytes(),
            sampler,
        }
    }

    pub(crate) fn finish(self) -> Usage {
        let peak_anon_bytes = self.sampler.map(|s| {
            s.stop.store(true, Relaxed);
            s.thread.thread().unpark();
            let _ = s.thread.join();
            let last = anon_rss_bytes().unwrap_or(0);
            s.peak.load(Relaxed).max(last)
        });
        let storage = self.storage_at_start.zip(storage_bytes());
        Usage {
            peak_rss_bytes: peak_rss_bytes(),
            peak_anon_bytes,
            read_bytes: storage.map(|((r0, _), (r1, _))| r1.saturating_sub(r0)),
            written_bytes: storage.map(|((_, w0), (_, w1))| w1.saturating_sub(w0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory taken while a level is metered shows in its anonymous peak,
    /// which never exceeds the whole peak.
    #[test]
    fn the_anonymous_peak_sees_memory_taken_and_freed() {
        if anon_rss_bytes().is_none() {
            return; // not Linux
        }
        let metering = Metering::start();
        let before = anon_rss_bytes().unwrap();
        let block = vec![1u8; 64 << 20];
        std::thread::sleep(SAMPLE_EVERY * 5);
        assert_eq!(std::hint::black_box(&block)[12345], 1);
        drop(block);
        let usage = metering.finish();
        let anon = usage.peak_anon_bytes.unwrap();
        assert!(anon >= before + (60 << 20), "{anon} after {before}");
        assert!(anon <= usage.peak_rss_bytes.unwrap());
        assert!(usage.read_bytes.is_some() && usage.written_bytes.is_some());
    }
}
