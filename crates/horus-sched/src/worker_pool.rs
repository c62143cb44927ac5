//! The worker pool that ticks compute nodes.
//!
//! The main loop takes each compute node's releases from its grid and submits
//! one job per release; a node whose previous job is still queued or running
//! (`NodeSlot::busy`) has the release skipped instead, so a node never runs
//! twice at once and the queue never holds more than one job per node (its
//! capacity is reserved up front: no allocation per job).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::runner::NodeSlot;

/// One release of one compute node.
pub(crate) struct Job {
    pub(crate) slot: Arc<NodeSlot>,
    pub(crate) release_ns: u64,
    /// Releases dropped before this one (the node was more than a period late).
    pub(crate) dropped: u64,
}

struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

/// A fixed set of worker threads fed from one FIFO queue.
pub(crate) struct WorkerPool {
    shared: Arc<Shared>,
}

impl WorkerPool {
    /// Starts `workers` threads; `capacity` is the number of compute nodes.
    pub(crate) fn start(
        workers: usize,
        capacity: usize,
        handles: &mut Vec<JoinHandle<()>>,
    ) -> std::io::Result<WorkerPool> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                jobs: VecDeque::with_capacity(capacity),
                closed: false,
            }),
            ready: Condvar::new(),
        });
        for i in 0..workers.max(1) {
            let s = shared.clone();
            let h = std::thread::Builder::new()
                .name(format!("horus-pool-{i}"))
                .spawn(move || worker(&s))?;
            handles.push(h);
        }
        Ok(WorkerPool { shared })
    }

    /// Queues `job`, or skips the release if the node is still busy.
    pub(crate) fn submit(&self, job: Job) {
        // AcqRel: Acquire sees the previous job's writes to the node (the
        // worker cleared `busy` with Release after unlocking it); Release is
        // not needed for correctness here but keeps the pair symmetric.
        if job.slot.busy.swap(true, Ordering::AcqRel) {
            // Still busy with an earlier release: this one, and any dropped
            // before it, are missed (the running tick reports its own miss
            // and applies the policy when it ends late).
            job.slot.shared.add_skipped(1 + job.dropped);
            job.slot.shared.add_deadline_misses(1 + job.dropped);
            return;
        }
        let mut q = self.shared.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.jobs.push_back(job);
        drop(q);
        self.shared.ready.notify_one();
    }

    /// Lets the workers finish the jobs they hold and exit; queued jobs are
    /// dropped (the scheduler is stopping).
    pub(crate) fn close(&self) {
        let mut q = self.shared.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.closed = true;
        for job in q.jobs.drain(..) {
            job.slot.busy.store(false, Ordering::Release);
        }
        drop(q);
        self.shared.ready.notify_all();
    }
}

fn worker(shared: &Shared) {
    crate::rt::minimize_timer_slack();
    loop {
        let job = {
            let mut q = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if q.closed {
                    return;
                }
                if let Some(job) = q.jobs.pop_front() {
                    break job;
                }
                q = shared.ready.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        job.slot.lock().on_release(job.release_ns, job.dropped);
        // Release: the next submitter (Acquire) sees everything this tick did.
        job.slot.busy.store(false, Ordering::Release);
    }
}
