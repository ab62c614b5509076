//! One build at a time per table directory.
//!
//! A build that has levels to write holds an exclusive lock on
//! `build.lock` in the rule set's directory until it ends (the operating
//! system releases it however the process ends). A second build finds it
//! held: it fails, naming the holder, or waits for it. While the lock is
//! held no other build writes there, so temporary files left behind are
//! stale and swept away.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use mancala_format::TEMPORARY_SUFFIX;

use crate::error::BuildError;

/// The lock file's name in a rule set's table directory.
pub const LOCK_FILE: &str = "build.lock";

/// A held lock; dropping it releases the directory.
pub(crate) struct DirLock {
    _file: File,
}

/// How often a build waiting for the lock tries it again and looks at its
/// interrupt flag: a blocking wait would not see the flag until the other
/// build ended, hours later perhaps.
const WAIT_STEP: Duration = Duration::from_millis(50);

/// Takes the lock on `dir`, waiting for another build to end if `wait`
/// (unless `interrupt` is set meanwhile: [`BuildError::Interrupted`]),
/// else failing with [`BuildError::Locked`] naming it.
pub(crate) fn lock(
    dir: &Path,
    wait: bool,
    interrupt: Option<&AtomicBool>,
) -> Result<DirLock, BuildError> {
    let path = dir.join(LOCK_FILE);
    let io = |source| BuildError::Io {
        path: path.clone(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if wait => {
                if interrupt.is_some_and(|i| i.load(Relaxed)) {
                    return Err(BuildError::Interrupted);
                }
                std::thread::sleep(WAIT_STEP);
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                return Err(BuildError::Locked {
                    dir: dir.to_path_buf(),
                    holder: holder.trim().to_string(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    // Who holds it, for the next build's message.
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    writeln!(file, "process {}", std::process::id()).map_err(io)?;
    Ok(DirLock { _file: file })
}

/// Removes the temporary files under `dir` (and its subdirectories one
/// level down) that a killed build left: only to be called holding the
/// lock. Links are not followed: a subdirectory that is a link may lead
/// to files the lock does not cover.
pub(crate) fn sweep_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            sweep_temporaries_in(&entry.path());
        } else if kind.is_file() && is_temporary(&entry.path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn sweep_temporaries_in(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_file()) && is_temporary(&path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

fn is_temporary(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(TEMPORARY_SUFFIX))
}
