//! Each threshold's decisions written to its two lists by a thread of its
//! own, while the next threshold is solved: the lists are zstd streams,
//! written one entry at a time, which would otherwise leave the solver's
//! threads idle between two thresholds.

use std::path::Path;
use std::sync::{mpsc, Mutex};
use std::thread::{Scope, ScopedJoinHandle};

use super::lists::ListWriter;
use super::state::Decided;
use super::{first_path, second_path, Decisions};
use crate::error::BuildError;

/// Positions decided, in blocks, to wait at most in the hand-over: bounds
/// the memory they take while the writer is behind.
const QUEUED: usize = 2;

/// What the writer is handed.
enum Work {
    /// Threshold `t`'s lists begin.
    Begin(u32),
    /// Decisions of the threshold begun last, in index order, after those
    /// handed before.
    Decided(Vec<Decided>),
    /// The threshold's lists end.
    End,
}

/// The thread that writes the decision lists, and the thresholds handed
/// to it whose lists it has not yet given back.
pub(super) struct DecisionWriter<'scope> {
    work: Option<mpsc::SyncSender<Work>>,
    /// Behind a lock only so that the solver's ledger, which holds the
    /// writer, can be shared among its threads.
    written: Mutex<mpsc::Receiver<Result<Decisions, BuildError>>>,
    writer: Option<ScopedJoinHandle<'scope, ()>>,
    pending: usize,
}

impl<'scope> DecisionWriter<'scope> {
    /// A writer of lists in `dir`, on a thread of `scope`.
    pub(super) fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        dir: &'env Path,
    ) -> DecisionWriter<'scope> {
        let (work, todo) = mpsc::sync_channel(QUEUED);
        let (done, written) = mpsc::channel();
        let writer = scope.spawn(move || write(dir, todo, done));
        DecisionWriter {
            work: Some(work),
            written: Mutex::new(written),
            writer: Some(writer),
            pending: 0,
        }
    }

    /// Hands threshold `t`'s decisions over: `take` gives them, calling its
    /// argument with each group.
    pub(super) fn threshold(&mut self, t: u32, take: impl FnOnce(&mut dyn FnMut(Vec<Decided>))) {
        self.send(Work::Begin(t));
        take(&mut |blocks| self.send(Work::Decided(blocks)));
        self.send(Work::End);
        self.pending += 1;
    }

    fn send(&self, work: Work) {
        // A writer that is gone panicked: `written` tells it.
        let _ = self.work.as_ref().map(|w| w.send(work));
    }

    /// The lists of every threshold handed over so far and not given back
    /// yet, in the order they were handed, once they are written.
    pub(super) fn written(&mut self) -> Result<Vec<Decisions>, BuildError> {
        let mut lists = Vec::with_capacity(self.pending);
        while self.pending > 0 {
            let received = self.written.get_mut().expect("never poisoned").recv();
            match received {
                Ok(decisions) => lists.push(decisions?),
                Err(_) => self.join(),
            }
            self.pending -= 1;
        }
        Ok(lists)
    }

    /// Waits for the writer to end after its panic, and goes on with it.
    fn join(&mut self) -> ! {
        self.work = None;
        let writer = self.writer.take().expect("the writer is joined once");
        match writer.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the writer gives back every threshold handed to it"),
        }
    }
}

/// Writes the thresholds handed over `todo` to their lists in `dir`, each
/// one's lists (or the first error) told to `done` when it ends.
fn write(
    dir: &Path,
    todo: mpsc::Receiver<Work>,
    done: mpsc::Sender<Result<Decisions, BuildError>>,
) {
    let mut lists: Result<Option<(ListWriter, ListWriter)>, BuildError> = Ok(None);
    for work in todo {
        match work {
            Work::Begin(t) => {
                lists = ListWriter::create(first_path(dir, t))
                    .and_then(|first| Ok(Some((first, ListWriter::create(second_path(dir, t))?))));
            }
            Work::Decided(blocks) => {
                if let Ok(Some((first, second))) = &mut lists {
                    let extended = blocks.iter().try_for_each(|block| {
                        first.extend(&block.first)?;
                        second.extend(&block.second)
                    });
                    if let Err(e) = extended {
                        lists = Err(e);
                    }
                }
            }
            Work::End => {
                let finished = std::mem::replace(&mut lists, Ok(None)).and_then(|lists| {
                    let (first, second) = lists.expect("a threshold's lists begin before they end");
                    Ok(Decisions {
                        first: first.finish()?,
                        second: second.finish()?,
                    })
                });
                let _ = done.send(finished);
            }
        }
    }
}
