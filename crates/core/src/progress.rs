//! What long work over the levels tells as it goes: a build, a
//! verification, an export or a comparison all report through one trait,
//! so that one display (the command line's bars, the Python package's
//! callback) shows any of them.

/// Progress of work done level by level, in units each kind of work
/// defines (a build counts two a position, a verification one). Every
/// method has an empty default.
pub trait Progress: Sync {
    /// The work ahead is `work` units in all, over every level it does: an
    /// overall display's length. Work that cannot tell it ahead does not
    /// call this.
    fn started(&self, _work: u64) {}

    /// Level `level`, of `positions` positions, begins: `work` units long.
    fn level_started(&self, _level: u32, _positions: u64, _work: u64) {}

    /// `units` more units of the current level's work are done.
    fn advanced(&self, _units: u64) {}

    /// `units` of the current level's work were done by an earlier run,
    /// which this one goes on from: done, but not at the current rate, so
    /// a display that estimates the time left should not count them as
    /// such. By default, they are [`Progress::advanced`].
    fn resumed(&self, units: u64) {
        self.advanced(units);
    }
}

/// Progress that tells nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Progress for Quiet {}
