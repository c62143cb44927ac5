//! The threads that call a horus service for ROS 2 clients (a horus call blocks until its
//! response or timeout; the bridge loop never does).
//!
//! An ordinary service has one worker: its calls are made one at a time, each given up
//! after the bridge's call timeout. An action's `get_result` service is different: its
//! server answers only when the goal ends, which may be minutes away (a navigation goal),
//! and several goals' results are awaited at once. So its calls are **lasting**: up to
//! [`MAX_RESULT_WORKERS`] workers (started as calls arrive) each make one call at a time,
//! and a call that times out is made again (asking for a goal's result is idempotent), for
//! as long as the ROS 2 client that asked is still there and the route is open. It ends with
//! the goal's result, with the server leaving (`ServerDied`/`NoServer`), with the client
//! leaving (counted `caller_gone`), or when the route closes (counted `abandoned`; then
//! within one call timeout).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use horus::{CallError, RawClient};
use rustdds::rpc::SampleIdentity;

use super::reaper::Reaper;

/// Calls waiting at the bridge for one service (queued or being called).
pub(crate) const MAX_WAITING: usize = 64;

/// Workers of one lasting (`get_result`) service: goals whose results are awaited at once.
pub(crate) const MAX_RESULT_WORKERS: usize = 16;

/// A call for a worker.
pub(crate) struct Job {
    /// The request's identity (its reply names it).
    pub(crate) id: SampleIdentity,
    /// The GUID of the DDS writer that sent the request (`{:?}`, as discovery lists it).
    pub(crate) client: String,
    /// The request as a horus record.
    pub(crate) record: Vec<u8>,
}

/// What a worker's call gave.
pub(crate) struct Done {
    pub(crate) id: SampleIdentity,
    pub(crate) result: Result<Vec<u8>, Ended>,
}

/// Why a call gave no response.
pub(crate) enum Ended {
    /// The horus call failed.
    Call(CallError),
    /// A lasting call's ROS 2 client left before the answer came.
    ClientGone,
}

/// What the workers share with the route.
struct Shared {
    jobs: Mutex<Receiver<Job>>,
    /// Set when the route closes: no job is called after it, no lasting call made again.
    cancel: AtomicBool,
    /// The DDS writers of the service's ROS 2 clients now (lasting calls only).
    clients: Mutex<HashSet<String>>,
}

/// The workers of one service.
pub(crate) struct Workers {
    shared: Arc<Shared>,
    jobs: SyncSender<Job>,
    done_tx: mpsc::Sender<Done>,
    done: Receiver<Done>,
    handles: Vec<std::thread::JoinHandle<()>>,
    /// Workers at most: 1, or [`MAX_RESULT_WORKERS`] for a lasting service.
    max: usize,
    lasting: bool,
    timeout: Duration,
    namespace: String,
    name: String,
    reaper: Reaper,
}

impl Workers {
    /// Workers calling horus service `name` of `namespace`, the first with `client`; each
    /// call waits at most `timeout` (lasting: made again while its client is there).
    pub(crate) fn start(
        client: RawClient,
        namespace: &str,
        name: &str,
        timeout: Duration,
        lasting: bool,
        reaper: &Reaper,
    ) -> std::io::Result<Workers> {
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(MAX_WAITING);
        let (done_tx, done) = mpsc::channel::<Done>();
        let mut w = Workers {
            shared: Arc::new(Shared {
                jobs: Mutex::new(job_rx),
                cancel: AtomicBool::new(false),
                clients: Mutex::new(HashSet::new()),
            }),
            jobs,
            done_tx,
            done,
            handles: Vec::new(),
            max: if lasting { MAX_RESULT_WORKERS } else { 1 },
            lasting,
            timeout,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            reaper: reaper.clone(),
        };
        w.spawn(client)?;
        Ok(w)
    }

    fn spawn(&mut self, client: RawClient) -> std::io::Result<()> {
        let (shared, done, t, lasting) = (
            Arc::clone(&self.shared),
            self.done_tx.clone(),
            self.timeout,
            self.lasting,
        );
        let h = std::thread::Builder::new()
            .name(format!("ros2-svc {}", self.name))
            .spawn(move || work(client, &shared, &done, t, lasting))?;
        self.handles.push(h);
        Ok(())
    }

    /// Hands `job` to a worker; `busy` calls are queued or in progress (a lasting service
    /// starts another worker when every one is busy). Gives the job back when the queue is
    /// full or the workers ended.
    pub(crate) fn submit(&mut self, job: Job, busy: usize) -> Result<(), TrySendError<Job>> {
        if busy >= self.handles.len() && self.handles.len() < self.max {
            // A worker of its own for this call; without one it queues behind the others.
            if let Ok(c) = RawClient::open(&self.namespace, &self.name) {
                let _ = self.spawn(c);
            }
        }
        self.jobs.try_send(job)
    }

    /// The finished calls' outcomes so far.
    pub(crate) fn finished(&self) -> mpsc::TryIter<'_, Done> {
        self.done.try_iter()
    }

    /// The DDS writers (GUIDs as discovery lists them) of the ROS 2 clients there now: a
    /// lasting call whose client is not among them is given up at its next timeout.
    pub(crate) fn set_clients(&self, clients: impl IntoIterator<Item = String>) {
        if self.lasting {
            *lock(&self.shared.clients) = clients.into_iter().collect();
        }
    }

    /// Calls no more jobs (those queued are dropped; calls in progress end at their timeout).
    pub(crate) fn cancel(&self) {
        // Relaxed: the flag carries no data; workers read it before each call.
        self.shared.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for Workers {
    /// Ends the workers without waiting for them: they call none of the jobs still queued,
    /// finish the call they are in (at most the call timeout) off the bridge loop, and the
    /// reaper joins them.
    fn drop(&mut self) {
        self.cancel();
        let (closed, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.jobs, closed));
        for h in self.handles.drain(..) {
            self.reaper.adopt(h);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Calls the horus service for each job until the route is dropped (its sender gone) or
/// cancelled (jobs still queued are then not called).
fn work(
    mut client: RawClient,
    shared: &Shared,
    done: &mpsc::Sender<Done>,
    t: Duration,
    lasting: bool,
) {
    loop {
        // The lock is held only while waiting for the next job (one worker waits at a time).
        let Ok(job) = lock(&shared.jobs).recv() else {
            return;
        };
        let cancelled = || shared.cancel.load(Ordering::Relaxed);
        if cancelled() {
            return;
        }
        let result = loop {
            match client.call(&job.record, t) {
                Err(CallError::Timeout(_)) if lasting && !cancelled() => {
                    if !lock(&shared.clients).contains(&job.client) {
                        break Err(Ended::ClientGone);
                    }
                }
                r => break r.map_err(Ended::Call),
            }
        };
        if done.send(Done { id: job.id, result }).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::record::record;
    use horus::description::ServiceDescription;
    use horus::msgs::{MessageDescription, Ros2Type};
    use horus::RawServer;
    use horus_ros_msgs::horus_cdr::RosMessage;
    use horus_ros_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};
    use rustdds::{SequenceNumber, GUID};
    use std::time::Instant;

    fn set_bool() -> ServiceDescription {
        let d = |n, h, def| MessageDescription::ros2(Ros2Type::new(n, h, def)).unwrap();
        ServiceDescription {
            request: d(
                SetBool_Request::TYPE_NAME,
                SetBool_Request::TYPE_HASH,
                SetBool_Request::DEFINITION,
            ),
            response: d(
                SetBool_Response::TYPE_NAME,
                SetBool_Response::TYPE_HASH,
                SetBool_Response::DEFINITION,
            ),
        }
    }

    fn job(client: &str, seq: i64) -> Job {
        Job {
            id: SampleIdentity {
                writer_guid: GUID::GUID_UNKNOWN,
                sequence_number: SequenceNumber::from(seq),
            },
            client: client.to_owned(),
            // SetBool { data: true }: CDR LE header + bool.
            record: record(&[0, 1, 0, 0, 1]),
        }
    }

    /// SetBool_Response { success: true, message: "" }.
    fn answer() -> Vec<u8> {
        record(&[0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0])
    }

    struct Fixture {
        ns: String,
        server: RawServer,
        workers: Workers,
        reaper: Reaper,
    }

    fn fixture(tag: &str, lasting: bool, t: Duration) -> Fixture {
        let ns = format!("hr2-unit-{tag}-{}", std::process::id());
        let server = RawServer::create(&ns, "res", &set_bool()).expect("server");
        let client = RawClient::open(&ns, "res").expect("client");
        let reaper = Reaper::default();
        let workers = Workers::start(client, &ns, "res", t, lasting, &reaper).expect("workers");
        Fixture {
            ns,
            server,
            workers,
            reaper,
        }
    }

    impl Fixture {
        /// Closes the workers (joined once their calls ended) and the server.
        fn close(self) {
            let Fixture {
                ns,
                server,
                workers,
                reaper,
            } = self;
            drop(workers);
            drop(server);
            reaper.join_all();
            horus::clean::clean_stale(&ns).ok();
        }
    }

    fn wait_done(w: &Workers, n: usize) -> Vec<Done> {
        let mut out = Vec::new();
        let guard = Instant::now() + Duration::from_secs(60);
        while out.len() < n && Instant::now() < guard {
            out.extend(w.finished());
            std::thread::sleep(Duration::from_millis(5));
        }
        out
    }

    /// Before, an action's get_result was an ordinary call: given up after the bridge's
    /// call timeout, so a goal running longer lost its result to the ROS 2 client.
    #[test]
    fn a_result_outlasting_the_call_timeout_still_reaches_its_client() {
        let mut f = fixture("lasting", true, Duration::from_millis(100));
        f.workers.set_clients(["c1".to_owned()]);
        f.workers.submit(job("c1", 1), 0).expect("queued");
        // The goal runs for several call timeouts: the call is made again each time;
        // from the fourth time on, the goal has ended and every call is answered.
        // (Requests are held, as the action server holds them: dropping one answers it.)
        let mut held = Vec::new();
        let mut done = Vec::new();
        let guard = Instant::now() + Duration::from_secs(60);
        while done.is_empty() && Instant::now() < guard {
            if let Some(r) = f.server.recv_timeout(Duration::from_millis(20)) {
                if held.len() >= 3 {
                    let _ = r.reply(&answer());
                } else {
                    held.push(r);
                }
            }
            done.extend(f.workers.finished());
        }
        let asked = held.len();
        assert_eq!(asked, 3, "the call was not made again after its timeout");
        assert!(
            matches!(done.as_slice(), [Done { result: Ok(r), .. }] if *r == answer()),
            "no result"
        );
        drop(held);
        f.close();
    }

    /// Before, a closed route's worker went on calling every queued job against a server
    /// that never answers (up to 64 x the call timeout, joined on the bridge loop).
    #[test]
    fn a_closed_routes_worker_calls_none_of_its_queued_jobs() {
        let mut f = fixture("cancel", false, Duration::from_millis(300));
        for i in 0..3 {
            f.workers.submit(job("c1", i), i as usize).expect("queued");
        }
        // The first call reaches the server (never answered); then the route closes.
        let first = f.server.recv_timeout(Duration::from_secs(30));
        assert!(first.is_some(), "the first job was called");
        f.workers.cancel();
        let done_first = wait_done(&f.workers, 1);
        assert_eq!(done_first.len(), 1, "the first call ended");
        assert!(
            f.server.recv_timeout(Duration::from_millis(400)).is_none(),
            "a queued job was called after the route closed"
        );
        assert_eq!(f.workers.finished().count(), 0, "only the first call ended");
        drop(first);
        f.close();
    }

    /// Before, one worker per service made one call at a time: a second goal's result
    /// call waited until the first goal ended.
    #[test]
    fn two_goals_results_are_awaited_at_once() {
        let mut f = fixture("two", true, Duration::from_secs(30));
        f.workers.set_clients(["c1".to_owned()]);
        f.workers.submit(job("c1", 1), 0).expect("queued");
        f.workers.submit(job("c1", 2), 1).expect("queued");
        // Both calls reach the server before either is answered.
        let a = f
            .server
            .recv_timeout(Duration::from_secs(30))
            .expect("first");
        let b = f.server.recv_timeout(Duration::from_secs(30));
        assert!(b.is_some(), "the second call waited for the first");
        b.unwrap().reply(&answer()).expect("reply");
        a.reply(&answer()).expect("reply");
        let done = wait_done(&f.workers, 2);
        assert_eq!(done.iter().filter(|d| d.result.is_ok()).count(), 2);
        f.close();
    }

    /// A lasting call whose ROS 2 client left is given up (not made again for ever).
    #[test]
    fn a_lasting_call_ends_when_its_client_leaves() {
        let mut f = fixture("gone", true, Duration::from_millis(100));
        f.workers.set_clients(["c1".to_owned()]);
        f.workers.submit(job("c1", 1), 0).expect("queued");
        let _held = f
            .server
            .recv_timeout(Duration::from_secs(30))
            .expect("asked");
        f.workers.set_clients(Vec::new());
        let done = wait_done(&f.workers, 1);
        assert!(matches!(
            done.as_slice(),
            [Done {
                result: Err(Ended::ClientGone),
                ..
            }]
        ));
        drop(_held);
        f.close();
    }

    /// An ordinary service's call is still given up after the call timeout.
    #[test]
    fn an_ordinary_call_times_out_once() {
        let mut f = fixture("plain", false, Duration::from_millis(100));
        f.workers.submit(job("c1", 1), 0).expect("queued");
        let _held = f
            .server
            .recv_timeout(Duration::from_secs(30))
            .expect("asked");
        let done = wait_done(&f.workers, 1);
        assert!(matches!(
            done.as_slice(),
            [Done {
                result: Err(Ended::Call(CallError::Timeout(_))),
                ..
            }]
        ));
        assert!(
            f.server.recv_timeout(Duration::from_millis(300)).is_none(),
            "an ordinary call was made again"
        );
        drop(_held);
        f.close();
    }
}
