//! When a level's work stops to save a checkpoint, and when it stops for
//! good: asked between two steps of a phase (groups of the forward pass,
//! thresholds), where the state is whole.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::error::BuildError;

/// A level's checkpoint and interrupt timing.
pub(crate) struct Pacing<'a> {
    /// Set when the build is to stop.
    interrupt: Option<&'a AtomicBool>,
    /// Least working time between two checkpoints (`None`: never).
    every: Option<Duration>,
    /// When the level's work was last saved, or began.
    last_saved: Instant,
}

impl<'a> Pacing<'a> {
    /// Pacing of work that began (or was last saved) `since`: a
    /// checkpoint `every` so long, a stop when `interrupt` is set.
    pub(crate) fn new(
        interrupt: Option<&'a AtomicBool>,
        every: Option<Duration>,
        since: Instant,
    ) -> Pacing<'a> {
        Pacing {
            interrupt,
            every,
            last_saved: since,
        }
    }

    /// When the work was last saved, or began.
    pub(crate) fn last_saved(&self) -> Instant {
        self.last_saved
    }

    /// Whether the build has been asked to stop.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|i| i.load(Relaxed))
    }

    /// Between two steps: if the build is to stop, saves (with `save`) and
    /// returns [`BuildError::Interrupted`]; else saves if a checkpoint is
    /// due.
    pub(crate) fn between_steps(
        &mut self,
        save: impl FnOnce() -> Result<(), BuildError>,
    ) -> Result<(), BuildError> {
        if self.interrupted() {
            save()?;
            return Err(BuildError::Interrupted);
        }
        if self
            .every
            .is_some_and(|every| self.last_saved.elapsed() >= every)
        {
            save()?;
            self.last_saved = Instant::now();
        }
        Ok(())
    }
}
