//! A subscriber's reports, written by a thread of their own so that the
//! thread that receives never waits on the file system.
//!
//! Under `Block`, a subscriber that stops reading holds every publisher
//! back. Writing a report (write, then rename over the old one) and looking
//! for the stop file are file-system calls, and on ext4 under writeback
//! (the build before the soak leaves gigabytes dirty) a rename can wait on
//! the journal: 263 ms measured beside a 3 GB `dd`, and a cold `make test`
//! saw every running publisher stall 955 ms at once. A receiving loop that
//! did them itself would stop reading as long, hold `Block` publishers
//! and, most likely, so made the one send that timed out then, which
//! `block_no_timeout` rightly counts. Here the receiving
//! thread only hands over a snapshot (replacing one not yet written: every
//! report is cumulative, so the newest is all that matters) and reads a
//! flag; this thread does the writing and the looking.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use anyhow::Context;
use serde::Serialize;

use crate::child::{stop_requested, Role};
use crate::report::{self, REPORT_EVERY};

/// Writes the reports handed to it into `path`, newest first, and watches
/// for the stop file of its role.
pub(crate) struct ReportWriter<T> {
    shared: Arc<Shared<T>>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
    path: PathBuf,
}

struct Shared<T> {
    slot: Mutex<Slot<T>>,
    wake: Condvar,
    /// Set once the writer has seen the stop file.
    stop_seen: AtomicBool,
}

struct Slot<T> {
    /// The newest snapshot not yet written.
    pending: Option<T>,
    /// Set by [`ReportWriter::finish`]: write nothing more.
    closed: bool,
}

impl<T: Serialize + Send + 'static> ReportWriter<T> {
    /// Starts the writing thread for the report at `path`; it looks for
    /// `role`'s stop file in `dir` after every report and at least every
    /// [`REPORT_EVERY`].
    pub(crate) fn start(path: PathBuf, dir: &Path, role: Role) -> anyhow::Result<Self> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot {
                pending: None,
                closed: false,
            }),
            wake: Condvar::new(),
            stop_seen: AtomicBool::new(false),
        });
        let thread = std::thread::Builder::new()
            .name("report-writer".into())
            .spawn({
                let shared = Arc::clone(&shared);
                let path = path.clone();
                let dir = dir.to_path_buf();
                move || write_loop(&shared, &path, &dir, role)
            })
            .context("starting the report writer")?;
        Ok(ReportWriter {
            shared,
            thread: Some(thread),
            path,
        })
    }

    /// Hands over the newest snapshot, replacing one not yet written.
    /// Never waits on the file system.
    pub(crate) fn offer(&self, snapshot: T) {
        let mut slot = self.shared.lock();
        slot.pending = Some(snapshot);
        drop(slot);
        self.shared.wake.notify_one();
    }

    /// Whether the stop file has been seen.
    pub(crate) fn stop_requested(&self) -> bool {
        // Acquire pairs with the writer's Release: the orchestrator makes
        // the stop file only after every publisher has exited, so what the
        // caller drains after seeing `true` is everything they sent.
        self.shared.stop_seen.load(Ordering::Acquire)
    }

    /// The writer's error, if it has stopped on one (a report it could not
    /// write); `Ok` while it runs.
    pub(crate) fn check(&mut self) -> anyhow::Result<()> {
        if self.thread.as_ref().is_some_and(JoinHandle::is_finished) {
            self.join()?;
        }
        Ok(())
    }

    /// Stops the writer (a snapshot it has not written yet is dropped) and
    /// writes `last` in this thread, so that no older report can replace it.
    pub(crate) fn finish(mut self, last: &T) -> anyhow::Result<()> {
        self.shared.lock().closed = true;
        self.shared.wake.notify_one();
        self.join()?;
        report::write_atomic(&self.path, last)
    }

    fn join(&mut self) -> anyhow::Result<()> {
        match self.thread.take() {
            Some(t) => match t.join() {
                Ok(r) => r,
                Err(_) => anyhow::bail!("the report writer panicked"),
            },
            None => Ok(()),
        }
    }
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot<T>> {
        // A panic while holding the lock leaves the slot whole (one
        // assignment): carry on with it.
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn write_loop<T: Serialize>(
    shared: &Shared<T>,
    path: &Path,
    dir: &Path,
    role: Role,
) -> anyhow::Result<()> {
    loop {
        let next = {
            let mut slot = shared.lock();
            if slot.pending.is_none() && !slot.closed {
                slot = shared
                    .wake
                    .wait_timeout(slot, REPORT_EVERY)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            if slot.closed {
                return Ok(());
            }
            slot.pending.take()
        };
        if let Some(snapshot) = next {
            report::write_atomic(path, &snapshot)?;
        }
        if stop_requested(dir, role) {
            // Release pairs with `stop_requested`'s Acquire.
            shared.stop_seen.store(true, Ordering::Release);
        }
    }
}
