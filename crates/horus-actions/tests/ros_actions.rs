//! ROS-typed actions across processes: a server process serves the test package's
//! `horus_action_test/action/Fetch` (strings and sequences in goal, feedback and result)
//! on ROS 2's endpoints (`fetch/_action/send_goal`, …); this process sends goals, reads
//! feedback and results, cancels, and sends hostile and oversized bytes.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ns;
use horus_actions::ros::{RawRosActionClient, RosActionTypes, TOPIC_MAX_BODY};
use horus_actions::{
    ActionError, GoalStatus, RosActionClient, RosActionError, RosActionServer, RosGoalError,
};
use horus_ros_msgs::horus_cdr::{encode_message, EncodeError};

#[allow(clippy::all, missing_docs)]
mod gen {
    include!(concat!(env!("OUT_DIR"), "/test_actions.rs"));
}
use gen::horus_action_test::action::{Fetch, Fetch_Feedback, Fetch_Goal, Fetch_Result};

const T: Duration = Duration::from_secs(10);

/// The server node. Goals: shelf "reject" is rejected and stops the node; "hold" runs until
/// canceled (feedback each tick); "huge" gets feedback larger than the topic takes (the
/// typed error is reported on stdout) and aborts with a result too large to be answered; others get one feedback per item and
/// succeed with the items fetched `repeat` times each.
fn server_main() {
    let ns = std::env::var("HORUS_ACTIONS_NS").unwrap();
    let mut s = RosActionServer::<Fetch>::new_in("fetch", &ns).unwrap();
    println!("@@ ready");
    let mut held = Vec::new();
    let end = Instant::now() + Duration::from_secs(60); // parent gone: stop anyway
    while Instant::now() < end {
        if let Some(g) = s.next_goal() {
            let goal = g.goal().clone();
            if goal.shelf == "reject" {
                s.reject(g);
                let m = s.malformed();
                println!(
                    "@@ malformed {} {} {}",
                    m.send_goal, m.cancel_goal, m.get_result
                );
                return;
            }
            let id = s.accept(g);
            s.execute(id).unwrap();
            match goal.shelf.as_str() {
                "hold" => held.push((id, 0usize)),
                "huge" => {
                    let f = Fetch_Feedback {
                        current: "x".repeat(TOPIC_MAX_BODY + 1),
                        progress: vec![],
                    };
                    let e = s.publish_feedback(id, &f).unwrap_err();
                    println!(
                        "@@ huge feedback: {}",
                        matches!(e, RosGoalError::Publish(_))
                    );
                    // A result that breaks the type's rules: nothing sent, status unchanged.
                    let bad = Fetch_Result {
                        summary: "nul\0inside".into(),
                        ..Default::default()
                    };
                    let e = s.abort(id, &bad).unwrap_err();
                    println!("@@ bad result: {}", matches!(e, RosGoalError::Encode(_)));
                    // A result over the get_result service's largest response (1 MiB
                    // of tail): stored, but every result call is told ReplyFailed.
                    let big = Fetch_Result {
                        summary: "r".repeat(2 << 20),
                        ..Default::default()
                    };
                    s.abort(id, &big).unwrap();
                }
                _ => {
                    for (i, item) in goal.items.iter().enumerate() {
                        let f = Fetch_Feedback {
                            current: item.clone(),
                            progress: (0..=i)
                                .map(|k| k as f32 / goal.items.len() as f32)
                                .collect(),
                        };
                        s.publish_feedback(id, &f).unwrap();
                    }
                    let r = Fetch_Result {
                        summary: format!("{} from {}", goal.items.len(), goal.shelf),
                        fetched: goal.items.clone(),
                        counts: vec![goal.repeat as i32; goal.items.len()],
                    };
                    s.succeed(id, &r).unwrap();
                }
            }
        }
        for id in s.take_cancel_requests() {
            let Some(k) = held.iter().position(|(h, _)| *h == id) else {
                continue;
            };
            let (_, n) = held.remove(k);
            let r = Fetch_Result {
                summary: "canceled".into(),
                fetched: vec![format!("{n} ticks")],
                counts: vec![n as i32],
            };
            s.canceled(id, &r).unwrap();
        }
        for (id, n) in held.iter_mut() {
            *n += 1;
            let f = Fetch_Feedback {
                current: format!("tick {n}"),
                progress: vec![*n as f32],
            };
            s.publish_feedback(*id, &f).unwrap();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn peer() {
    if std::env::var("HORUS_ACTIONS_ROS_PEER").is_ok() {
        server_main();
    }
}

fn spawn_server(ns: &str) -> (std::process::Child, impl Iterator<Item = String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer", "--nocapture", "--test-threads=1"])
        .env("HORUS_ACTIONS_NS", ns)
        .env("HORUS_ACTIONS_ROS_PEER", "1")
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

fn goal(shelf: &str, items: &[&str]) -> Fetch_Goal {
    Fetch_Goal {
        shelf: shelf.into(),
        items: items.iter().map(|s| s.to_string()).collect(),
        weights: items.iter().map(|s| s.len() as f64 * 0.5).collect(),
        repeat: 3,
    }
}

#[test]
fn a_ros_action_in_another_process_carries_strings_and_sequences_with_feedback_result_and_cancel() {
    let ns = ns("ros");
    let mut client = RosActionClient::<Fetch>::open_in("fetch", &ns).unwrap();
    // No server yet: reported at once, nothing waited for.
    assert!(matches!(
        client.send_goal(&goal("a", &["x"]), T),
        Err(RosActionError::Action(ActionError::NoServer(_)))
    ));
    let (mut child, mut lines) = spawn_server(&ns);
    assert_eq!(lines.next().as_deref(), Some("ready"));

    // Strings and sequences in goal, feedback and result, longer than any fixed payload.
    let items: Vec<String> = (0..40)
        .map(|i| format!("item-{i}-{}", "ü".repeat(i)))
        .collect();
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    let g = client.send_goal(&goal("shelf 7", &refs), T).unwrap();
    let (status, result) = g.result(T).unwrap();
    assert_eq!(status, GoalStatus::Succeeded);
    assert_eq!(result.summary, "40 from shelf 7");
    assert_eq!(result.fetched, items);
    assert_eq!(result.counts, vec![3; 40]);
    let fb: Vec<Fetch_Feedback> = std::iter::from_fn(|| g.feedback())
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        fb.iter().map(|f| f.current.clone()).collect::<Vec<_>>(),
        items
    );
    assert_eq!(fb[39].progress.len(), 40);
    assert_eq!(g.status(), GoalStatus::Succeeded);
    // The result stays available to a second request.
    assert_eq!(g.result(T).unwrap().1, result);

    // Cancel: acknowledged, then canceled with a partial result.
    let g = client.send_goal(&goal("hold", &[]), T).unwrap();
    let deadline = Instant::now() + T;
    let first = loop {
        if let Some(f) = g.feedback() {
            break f.unwrap();
        }
        assert!(Instant::now() < deadline, "no feedback");
        std::thread::yield_now();
    };
    assert!(first.current.starts_with("tick "), "{first:?}");
    assert_eq!(g.cancel(T).unwrap(), GoalStatus::Canceling);
    let (status, r) = g.result(T).unwrap();
    assert_eq!(
        (status, r.summary.as_str()),
        (GoalStatus::Canceled, "canceled")
    );
    assert!(r.counts[0] >= 1, "{r:?}");
    // Canceling a finished goal answers its final status.
    assert_eq!(g.cancel(T).unwrap(), GoalStatus::Canceled);

    // A goal that breaks its type's rules: a typed error, nothing sent.
    let bad = goal("a\0b", &["x"]);
    assert!(matches!(
        client.send_goal(&bad, T),
        Err(RosActionError::Encode(
            EncodeError::StringContainsNul { .. }
        ))
    ));

    // A goal over the service's largest request (1 MiB of tail): a typed error, nothing
    // sent (the server sees no goal: its malformed count below stays 3).
    let big = goal(&"s".repeat(2 << 20), &[]);
    let r = client.send_goal(&big, T);
    assert!(
        matches!(
            r,
            Err(RosActionError::Action(ActionError::Call(
                horus::CallError::TooLarge { .. }
            )))
        ),
        "{:?}",
        r.err()
    );

    // Feedback over the topic's size and a result that cannot be encoded: typed errors on
    // the server; the goal ends aborted.
    let g = client.send_goal(&goal("huge", &[]), T).unwrap();
    let r = g.result(T);
    assert!(
        matches!(
            r,
            Err(RosActionError::Action(ActionError::Call(
                horus::CallError::ReplyFailed
            )))
        ),
        "{:?}",
        r.err()
    );
    assert_eq!(g.status(), GoalStatus::Aborted);
    assert_eq!(lines.next().as_deref(), Some("huge feedback: true"));
    assert_eq!(lines.next().as_deref(), Some("bad result: true"));

    // Hostile goal bytes: a huge string length, a truncated goal, no goal id. Each is
    // rejected by the server and counted; nothing panics, the server goes on.
    let types = RosActionTypes::of::<Fetch>();
    let mut raw = RawRosActionClient::open("fetch", Some(&ns), &types).unwrap();
    let huge_len = [0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff];
    let truncated = &encode_message(&goal("shelf", &["a", "b"])).unwrap()[..20];
    for hostile in [&huge_len[..], truncated] {
        let r = raw.send_goal(hostile, T);
        assert!(
            matches!(r, Err(RosActionError::Action(ActionError::Rejected(_)))),
            "{:?}",
            r.err()
        );
    }
    let mut svc = horus::RawClient::open(&ns, "fetch/_action/send_goal").unwrap();
    let no_id = [0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3];
    let resp = svc.call(&no_id, T).unwrap();
    assert_eq!(resp[8], 0, "not accepted");
    // Not a goal id: the result request for an unknown goal says so.
    let unknown = client.handle(horus_actions::GoalId(42));
    assert_eq!(
        unknown.result(T).unwrap_err(),
        RosActionError::Action(ActionError::UnknownGoal(horus_actions::GoalId(42)))
    );

    // Rejected; the node reports what it refused and stops.
    assert!(matches!(
        client.send_goal(&goal("reject", &[]), T),
        Err(RosActionError::Action(ActionError::Rejected(_)))
    ));
    // send_goal: huge length, truncated (undecodable goals), no id (malformed request).
    assert_eq!(lines.next().as_deref(), Some("malformed 3 0 0"));
    assert!(child.wait().unwrap().success());
}

/// A goal's server gone and another on its way (as when the ROS 2 bridge serves a ROS 2
/// server's three action services each as it matches it, so `cancel_goal` and
/// `get_result` can come a moment after `send_goal` answered): the goal handle's `cancel`
/// and `result` wait within their timeout for a server and return its answer. Before,
/// `cancel` said `NoServer` at once.
#[test]
fn a_goals_cancel_and_result_wait_within_their_timeout_for_a_server_not_there_yet() {
    let ns = ns("late");
    let (mut child, mut lines) = spawn_server(&ns);
    assert_eq!(lines.next().as_deref(), Some("ready"));
    let mut client = RosActionClient::<Fetch>::open_in("fetch", &ns).unwrap();
    let g = client.send_goal(&goal("hold", &[]), T).unwrap();
    let id = g.id();
    // A rejected goal stops the server: nobody serves the action's services now.
    assert!(matches!(
        client.send_goal(&goal("reject", &[]), T),
        Err(RosActionError::Action(ActionError::Rejected(_)))
    ));
    assert!(lines.next().unwrap().starts_with("malformed"), "server");
    assert!(child.wait().unwrap().success());
    // Still nobody at the deadline: NoServer, for both.
    let short = Duration::from_millis(50);
    for r in [g.cancel(short).map(|_| ()), g.result(short).map(|_| ())] {
        assert!(
            matches!(r, Err(RosActionError::Action(ActionError::NoServer(_)))),
            "{r:?}"
        );
    }
    // A new server starts while cancel waits; it does not know the goal and says so.
    let ns2 = ns.clone();
    let later = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        spawn_server(&ns2)
    });
    assert_eq!(
        g.cancel(T).unwrap_err(),
        RosActionError::Action(ActionError::UnknownGoal(id))
    );
    assert_eq!(
        g.result(T).unwrap_err(),
        RosActionError::Action(ActionError::UnknownGoal(id))
    );
    let (mut child, mut lines) = later.join().unwrap();
    assert_eq!(lines.next().as_deref(), Some("ready"));
    assert!(matches!(
        client.send_goal(&goal("reject", &[]), T),
        Err(RosActionError::Action(ActionError::Rejected(_)))
    ));
    assert!(lines.next().unwrap().starts_with("malformed"), "server");
    assert!(child.wait().unwrap().success());
}

/// A server killed while its client lives: when the client goes, nothing of the action is
/// left in shared memory (the raw topics reclaimed the dead server's places and unlinked,
/// as typed topics do; before, `fetch/_action/feedback` and `status` stayed).
#[test]
fn a_killed_servers_action_topics_are_not_left_behind() {
    let ns = ns("killed");
    let (mut child, mut lines) = spawn_server(&ns);
    assert_eq!(lines.next().as_deref(), Some("ready"));
    let mut client = RosActionClient::<Fetch>::open_in("fetch", &ns).unwrap();
    let g = client.send_goal(&goal("shelf", &["a"]), T).unwrap();
    assert_eq!(g.result(T).unwrap().0, GoalStatus::Succeeded);
    child.kill().unwrap();
    child.wait().unwrap();
    drop((g, client));
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&ns))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}
