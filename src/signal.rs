//! Ctrl-C, SIGTERM and SIGHUP as a request to stop cleanly: long commands
//! (build, verify) poll a flag at their next check and end with their
//! files in order, rather than dying between two checkpoints or leaving
//! gigabytes of scratch files behind.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use anyhow::{Context, Result};

/// A flag that the first Ctrl-C (or SIGTERM, SIGHUP) sets, telling on
/// stderr that the command is `stopping` (what it does before it ends); a
/// second signal ends the process at once.
pub(crate) fn stop_on_signal(stopping: &'static str) -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || {
        if flag.swap(true, Relaxed) {
            std::process::exit(130);
        }
        // Best effort: a closed stderr loses the line.
        let _ = writeln!(
            std::io::stderr(),
            "{stopping} (a signal again stops at once)"
        );
    })
    .context("cannot handle Ctrl-C")?;
    Ok(stop)
}
