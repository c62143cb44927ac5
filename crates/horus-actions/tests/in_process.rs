//! Actions within one process: the server is ticked from a thread, as a
//! node would be, and driven by commands from the test.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{ns, At, Count};
use horus_actions::{ActionClient, ActionError, ActionServer, GoalError, GoalId, GoalStatus};

const T: Duration = Duration::from_secs(10);

type Server = ActionServer<Count, At, At>;
type Client = ActionClient<Count, At, At>;

/// What the test tells the server node to do.
enum Cmd {
    Execute(GoalId),
    Feedback(GoalId, u64),
    Succeed(GoalId, u64),
    Abort(GoalId, u64),
    Canceled(GoalId, u64),
    Stop,
}

/// What the server node reports.
#[derive(Debug, PartialEq)]
enum Ev {
    Goal(GoalId, u64),
    CancelRequested(GoalId),
    Done(Result<(), GoalError>),
}

/// Runs a server node: accepts goals with `to > 0`, rejects the others,
/// reports cancel requests, obeys commands.
fn node(
    ns: String,
    retention: Duration,
) -> (
    mpsc::Sender<Cmd>,
    mpsc::Receiver<Ev>,
    thread::JoinHandle<()>,
) {
    let (cmd_tx, cmd_rx) = mpsc::channel();
    let (ev_tx, ev_rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let mut s = Server::new_in("count", &ns).unwrap();
        s.set_result_retention(retention);
        ready_tx.send(()).unwrap();
        loop {
            if let Some(g) = s.next_goal() {
                if g.goal().to == 0 {
                    s.reject(g);
                } else {
                    let to = g.goal().to;
                    let id = s.accept(g);
                    ev_tx.send(Ev::Goal(id, to)).unwrap();
                }
            }
            for id in s.take_cancel_requests() {
                assert_eq!(s.status(id), Some(GoalStatus::Canceling));
                ev_tx.send(Ev::CancelRequested(id)).unwrap();
            }
            match cmd_rx.try_recv() {
                Ok(Cmd::Stop) => return,
                Ok(c) => {
                    let r = match c {
                        Cmd::Execute(id) => s.execute(id),
                        Cmd::Feedback(id, n) => s.publish_feedback(id, &At { n }),
                        Cmd::Succeed(id, n) => s.succeed(id, &At { n }),
                        Cmd::Abort(id, n) => s.abort(id, &At { n }),
                        Cmd::Canceled(id, n) => s.canceled(id, &At { n }),
                        Cmd::Stop => unreachable!(),
                    };
                    ev_tx.send(Ev::Done(r)).unwrap();
                }
                Err(mpsc::TryRecvError::Empty) => thread::sleep(Duration::from_micros(200)),
                Err(mpsc::TryRecvError::Disconnected) => return,
            }
        }
    });
    ready_rx.recv().unwrap();
    (cmd_tx, ev_rx, h)
}

fn next(ev: &mpsc::Receiver<Ev>) -> Ev {
    ev.recv_timeout(T).expect("server event")
}

fn run(cmd: &mpsc::Sender<Cmd>, ev: &mpsc::Receiver<Ev>, c: Cmd) {
    cmd.send(c).unwrap();
    assert_eq!(next(ev), Ev::Done(Ok(())));
}

#[test]
fn two_concurrent_goals_feedback_succeed_and_abort() {
    let ns = ns("two");
    let (cmd, ev, h) = node(ns.clone(), Duration::from_secs(60));
    let mut client = Client::open_in("count", &ns).unwrap();

    let a = client.send_goal(&Count { to: 3 }, T).unwrap();
    assert_eq!(next(&ev), Ev::Goal(a.id(), 3));
    let b = client.send_goal(&Count { to: 7 }, T).unwrap();
    assert_eq!(next(&ev), Ev::Goal(b.id(), 7));
    assert_ne!(a.id(), b.id());
    assert_eq!(a.status(), GoalStatus::Accepted);

    run(&cmd, &ev, Cmd::Execute(a.id()));
    run(&cmd, &ev, Cmd::Execute(b.id()));
    for n in 1..=3 {
        run(&cmd, &ev, Cmd::Feedback(a.id(), n));
    }
    run(&cmd, &ev, Cmd::Feedback(b.id(), 70));
    // Each goal's feedback stream holds its own messages, in order.
    let fa: Vec<u64> = std::iter::from_fn(|| a.feedback()).map(|f| f.n).collect();
    assert_eq!(fa, [1, 2, 3]);
    assert_eq!(a.status(), GoalStatus::Executing);
    // b's feedback is ignored until later: still there.
    run(&cmd, &ev, Cmd::Succeed(a.id(), 3));
    run(&cmd, &ev, Cmd::Abort(b.id(), 5));
    assert_eq!(a.result(T).unwrap(), (GoalStatus::Succeeded, At { n: 3 }));
    assert_eq!(b.result(T).unwrap(), (GoalStatus::Aborted, At { n: 5 }));
    assert_eq!(b.feedback(), Some(At { n: 70 }));
    assert_eq!(b.feedback(), None);
    assert_eq!(a.status(), GoalStatus::Succeeded);
    // The result stays available within the retention time.
    assert_eq!(a.result(T).unwrap(), (GoalStatus::Succeeded, At { n: 3 }));

    // A finished goal cannot change again.
    cmd.send(Cmd::Succeed(a.id(), 9)).unwrap();
    assert!(matches!(
        next(&ev),
        Ev::Done(Err(GoalError::InvalidTransition {
            from: GoalStatus::Succeeded,
            ..
        }))
    ));
    cmd.send(Cmd::Stop).unwrap();
    h.join().unwrap();
}

#[test]
fn result_waits_for_the_goal_to_finish() {
    let ns = ns("wait");
    let (cmd, ev, h) = node(ns.clone(), Duration::from_secs(60));
    let mut client = Client::open_in("count", &ns).unwrap();
    let g = client.send_goal(&Count { to: 2 }, T).unwrap();
    assert_eq!(next(&ev), Ev::Goal(g.id(), 2));
    let id = g.id();
    let waiter = thread::spawn(move || g.result(T));
    // While one handle waits for its result, the client sends another goal.
    let g = client.send_goal(&Count { to: 1 }, T).unwrap();
    assert_eq!(next(&ev), Ev::Goal(g.id(), 1));
    run(&cmd, &ev, Cmd::Execute(id));
    run(&cmd, &ev, Cmd::Succeed(id, 2));
    assert_eq!(
        waiter.join().unwrap().unwrap(),
        (GoalStatus::Succeeded, At { n: 2 })
    );
    // Not finished in time: a typed timeout.
    assert_eq!(
        g.result(Duration::from_millis(20)),
        Err(ActionError::Timeout(Duration::from_millis(20)))
    );
    cmd.send(Cmd::Stop).unwrap();
    h.join().unwrap();
}

#[test]
fn cancel_is_acknowledged_then_canceled() {
    let ns = ns("cancel");
    let (cmd, ev, h) = node(ns.clone(), Duration::from_secs(60));
    let mut client = Client::open_in("count", &ns).unwrap();
    let g = client.send_goal(&Count { to: 100 }, T).unwrap();
    assert_eq!(next(&ev), Ev::Goal(g.id(), 100));
    run(&cmd, &ev, Cmd::Execute(g.id()));
    // The acknowledgement comes from the server's poll, not from the goal's work.
    assert_eq!(g.cancel(T).unwrap(), GoalStatus::Canceling);
    assert_eq!(g.status(), GoalStatus::Canceling);
    assert_eq!(next(&ev), Ev::CancelRequested(g.id()));
    // A second cancel is acknowledged the same way, not reported twice.
    assert_eq!(g.cancel(T).unwrap(), GoalStatus::Canceling);
    run(&cmd, &ev, Cmd::Canceled(g.id(), 42));
    assert_eq!(g.result(T).unwrap(), (GoalStatus::Canceled, At { n: 42 }));
    // Cancelling a finished goal reports its final status.
    assert_eq!(g.cancel(T).unwrap(), GoalStatus::Canceled);
    cmd.send(Cmd::Stop).unwrap();
    h.join().unwrap();
    assert!(ev.try_recv().is_err(), "no second cancel request");
}

#[test]
fn rejected_unknown_and_expired_goals() {
    let ns = ns("unknown");
    let (cmd, ev, h) = node(ns.clone(), Duration::from_millis(1));
    let mut client = Client::open_in("count", &ns).unwrap();
    // Rejected by the server.
    assert!(matches!(
        client.send_goal(&Count { to: 0 }, T),
        Err(ActionError::Rejected(_))
    ));
    // A goal the server never saw.
    let stranger = client.handle(GoalId(7));
    assert_eq!(stranger.cancel(T), Err(ActionError::UnknownGoal(GoalId(7))));
    assert_eq!(stranger.result(T), Err(ActionError::UnknownGoal(GoalId(7))));
    // A result past its retention time is gone.
    let g = client.send_goal(&Count { to: 1 }, T).unwrap();
    assert_eq!(next(&ev), Ev::Goal(g.id(), 1));
    run(&cmd, &ev, Cmd::Succeed(g.id(), 1));
    thread::sleep(Duration::from_millis(20));
    assert_eq!(g.result(T), Err(ActionError::UnknownGoal(g.id())));
    // Unknown on the server side too.
    run_err(
        &cmd,
        &ev,
        Cmd::Feedback(g.id(), 1),
        GoalError::UnknownGoal(g.id()),
    );
    cmd.send(Cmd::Stop).unwrap();
    h.join().unwrap();
}

fn run_err(cmd: &mpsc::Sender<Cmd>, ev: &mpsc::Receiver<Ev>, c: Cmd, e: GoalError) {
    cmd.send(c).unwrap();
    assert_eq!(next(ev), Ev::Done(Err(e)));
}

#[test]
fn no_server_is_reported_at_once() {
    let ns = ns("noserver");
    let mut client = Client::open_in("count", &ns).unwrap();
    assert_eq!(
        client.send_goal(&Count { to: 1 }, T).err(),
        Some(ActionError::NoServer("count".into()))
    );
}

#[test]
fn a_goal_of_another_type_is_refused() {
    let ns = ns("wrongtype");
    let (cmd, _ev, h) = node(ns.clone(), Duration::from_secs(60));
    let mut client = ActionClient::<At, At, At>::open_in("count", &ns).unwrap();
    assert_eq!(
        client.send_goal(&At { n: 1 }, T).err(),
        Some(ActionError::WrongType)
    );
    cmd.send(Cmd::Stop).unwrap();
    h.join().unwrap();
}

#[test]
fn has_pending_sees_a_waiting_goal() {
    let ns = ns("pending");
    let mut server = Server::new_in("count", &ns).unwrap();
    let mut client = Client::open_in("count", &ns).unwrap();
    assert!(!server.has_pending());
    let sender = thread::spawn(move || client.send_goal(&Count { to: 4 }, T).map(|g| g.id()));
    let deadline = std::time::Instant::now() + T;
    while !server.has_pending() {
        assert!(std::time::Instant::now() < deadline, "goal never arrived");
        thread::yield_now();
    }
    let g = server.next_goal().expect("the waiting goal");
    assert_eq!(g.goal().to, 4);
    let id = server.accept(g);
    assert_eq!(sender.join().unwrap(), Ok(id));
    assert_eq!(server.status(id), Some(GoalStatus::Accepted));
    assert_eq!(server.active_goals(), [id]);
}

/// Sends `Count { to: 4 }` from a thread with `send_goal_or_stop`, stopped once the
/// returned flag is set (Release; read with Acquire); the thread gives the goal's id.
fn send_goal_until_stopped(
    mut client: Client,
) -> (
    Arc<AtomicBool>,
    thread::JoinHandle<Result<GoalId, ActionError>>,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    let sender = thread::spawn(move || {
        client
            .send_goal_or_stop(&Count { to: 4 }, T, || s.load(Ordering::Acquire))
            .map(|g| g.id())
    });
    (stop, sender)
}

/// `send_goal_or_stop`: a goal whose stop condition holds before any server took it is
/// withdrawn (`Call(Stopped)`) and never reaches the server.
#[test]
fn a_stopped_send_goal_never_reaches_the_server() {
    let ns = ns("stop-send");
    let mut server = Server::new_in("count", &ns).unwrap();
    let (stop, sender) = send_goal_until_stopped(Client::open_in("count", &ns).unwrap());
    let deadline = std::time::Instant::now() + T;
    while !server.has_pending() {
        assert!(std::time::Instant::now() < deadline, "goal never arrived");
        thread::yield_now();
    }
    stop.store(true, Ordering::Release);
    assert_eq!(
        sender.join().unwrap(),
        Err(ActionError::Call(horus::CallError::Stopped))
    );
    assert!(
        server.next_goal().is_none(),
        "a withdrawn goal was handed over"
    );
    assert!(server.active_goals().is_empty());
}

/// `send_goal_or_stop` stopped after the server took the goal: the client has no handle,
/// and the goal the server accepts runs all the same (as after a `Timeout`).
#[test]
fn a_goal_taken_before_the_stop_is_accepted_without_a_handle() {
    let ns = ns("stop-taken");
    let mut server = Server::new_in("count", &ns).unwrap();
    let (stop, sender) = send_goal_until_stopped(Client::open_in("count", &ns).unwrap());
    let deadline = std::time::Instant::now() + T;
    let g = loop {
        if let Some(g) = server.next_goal() {
            break g;
        }
        assert!(std::time::Instant::now() < deadline, "goal never arrived");
        thread::yield_now();
    };
    stop.store(true, Ordering::Release);
    assert_eq!(
        sender.join().unwrap(),
        Err(ActionError::Call(horus::CallError::Stopped))
    );
    let id = server.accept(g);
    assert_eq!(server.active_goals(), [id]);
}
