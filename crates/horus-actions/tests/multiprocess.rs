//! A server process counts towards each goal's target, one step per tick,
//! publishing feedback; this process sends goals, reads feedback, waits for
//! a result and cancels a goal.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ns, At, Count};
use horus_actions::{ActionClient, ActionError, ActionServer, GoalStatus};

const T: Duration = Duration::from_secs(10);

/// The server node: accepts goals with `to > 0`; a goal with `to == 0` is
/// rejected and stops the node.
fn server_main() {
    let ns = std::env::var("HORUS_ACTIONS_NS").unwrap();
    let mut s = ActionServer::<Count, At, At>::new_in("count", &ns).unwrap();
    let mut goals = HashMap::new();
    println!("@@ ready");
    let end = Instant::now() + Duration::from_secs(60); // parent gone: stop anyway
    while Instant::now() < end {
        if let Some(g) = s.next_goal() {
            if g.goal().to == 0 {
                s.reject(g);
                return;
            }
            let to = g.goal().to;
            let id = s.accept(g);
            s.execute(id).unwrap();
            goals.insert(id, (to, 0_u64));
        }
        for id in s.take_cancel_requests() {
            let (_, n) = goals.remove(&id).unwrap();
            s.canceled(id, &At { n }).unwrap();
        }
        let mut finished = Vec::new();
        for (id, (to, n)) in goals.iter_mut() {
            *n += 1;
            s.publish_feedback(*id, &At { n: *n }).unwrap();
            if n == to {
                s.succeed(*id, &At { n: *n }).unwrap();
                finished.push(*id);
            }
        }
        finished.iter().for_each(|id| {
            goals.remove(id);
        });
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn peer() {
    if std::env::var("HORUS_ACTIONS_PEER").is_ok() {
        server_main();
    }
}

fn spawn_server(ns: &str) -> (std::process::Child, impl Iterator<Item = String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer", "--nocapture", "--test-threads=1"])
        .env("HORUS_ACTIONS_NS", ns)
        .env("HORUS_ACTIONS_PEER", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| l.find("@@ ").map(|i| l[i + 3..].to_owned()));
    (child, lines)
}

#[test]
fn a_server_that_dies_is_reported_not_waited_for() {
    let ns = ns("died");
    let (mut child, mut lines) = spawn_server(&ns);
    assert_eq!(lines.next().as_deref(), Some("ready"));
    let mut client = ActionClient::<Count, At, At>::open_in("count", &ns).unwrap();
    let g = client.send_goal(&Count { to: u64::MAX }, T).unwrap();
    let pid = child.id();
    let waiter = std::thread::spawn(move || g.result(T));
    child.kill().unwrap();
    child.wait().unwrap();
    // Typed and before the timeout: the server died holding the call, or
    // (killed before it took the call) there is no server left.
    let r = waiter.join().unwrap();
    assert!(
        matches!(r, Err(ActionError::ServerDied { pid: p }) if p == pid)
            || matches!(r, Err(ActionError::NoServer(_))),
        "{r:?}"
    );
}

#[test]
fn another_process_serves_goals_with_feedback_success_and_cancel() {
    let ns = ns("mp");
    let (mut child, mut lines) = spawn_server(&ns);
    assert_eq!(lines.next().as_deref(), Some("ready"));
    let mut client = ActionClient::<Count, At, At>::open_in("count", &ns).unwrap();

    // Success, with the feedback stream counting up to the target.
    let g = client.send_goal(&Count { to: 5 }, T).unwrap();
    assert_eq!(g.result(T).unwrap(), (GoalStatus::Succeeded, At { n: 5 }));
    let fb: Vec<u64> = std::iter::from_fn(|| g.feedback()).map(|f| f.n).collect();
    assert_eq!(fb, [1, 2, 3, 4, 5]);
    assert_eq!(g.status(), GoalStatus::Succeeded);

    // Cancel: acknowledged, then canceled with the count reached.
    let g = client.send_goal(&Count { to: u64::MAX }, T).unwrap();
    let deadline = Instant::now() + T;
    let first = loop {
        if let Some(f) = g.feedback() {
            break f.n;
        }
        assert!(Instant::now() < deadline, "no feedback");
        std::thread::yield_now();
    };
    assert_eq!(first, 1);
    // Acknowledged by the server's poll, before the goal's work winds down.
    assert_eq!(g.cancel(T).unwrap(), GoalStatus::Canceling);
    let (status, at) = g.result(T).unwrap();
    assert_eq!(status, GoalStatus::Canceled);
    assert!(at.n >= 1, "{at:?}");

    // Rejected; the node stops.
    assert!(matches!(
        client.send_goal(&Count { to: 0 }, T),
        Err(ActionError::Rejected(_))
    ));
    assert!(child.wait().unwrap().success());
    drop(g);
    drop(client);
}
