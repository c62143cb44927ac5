//! Actions across the bridge against rclpy (separate processes, a network namespace and
//! ROS 2 domain of their own): a horus action server (`horus_actions::ros`, the ROS 2
//! `tf2_msgs/action/LookupTransform`) and a horus client of it in one child process, the
//! bridge in another, and an rclpy node that follows the action's status with rcl_action's
//! status QoS (transient-local) and cancels the goal through the action's cancel service.
//!
//! `tf2_msgs` has no rclpy wheel, so here rclpy uses only the parts whose types it has
//! (`action_msgs`: the status topic and the cancel service); a whole goal (`send_goal`,
//! `feedback`, `get_result`) driven by an rclpy `ActionClient` is in action_fibonacci.rs,
//! with `test_msgs/action/Fibonacci` (docs/ros2-bridge.md, "Actions").

mod common;

use std::time::Duration;

use common::World;
use horus_actions::ros::{RosActionClient, RosActionServer};
use horus_ros_msgs::tf2_msgs::action::{LookupTransform, LookupTransform_Goal};

/// Set in the child that runs the horus action server and client: the action's name.
const ACTION_ENV: &str = "HORUS_ROS2_TEST_ACTION";

bridge_process_test!();

/// The horus side: serves the action (accepts every goal, executes it, honours cancel
/// requests) on a thread; on the line `go` from stdin sends one goal (prints `goal HEX`),
/// waits for its result (prints `result STATUS`); exits when stdin closes.
#[test]
fn action_side() {
    let Ok(action) = std::env::var(ACTION_ENV) else {
        return;
    };
    let ns = std::env::var("HORUS_NAMESPACE").expect("namespace");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let server = {
        let (action, ns, stop) = (action.clone(), ns.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut server =
                RosActionServer::<LookupTransform>::new_in(&action, &ns).expect("server");
            ready_tx.send(()).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                while let Some(goal) = server.next_goal() {
                    let id = server.accept(goal);
                    server.execute(id).expect("execute");
                }
                for id in server.take_cancel_requests() {
                    server.canceled(id, &Default::default()).expect("canceled");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    ready_rx.recv().unwrap();
    let mut client = RosActionClient::<LookupTransform>::open_in(&action, &ns).expect("client");
    println!("ready");
    let mut lines = std::io::stdin().lines();
    while let Some(Ok(line)) = lines.next() {
        if line.trim() == "go" {
            let goal = LookupTransform_Goal {
                target_frame: "map".into(),
                source_frame: "base_link".into(),
                ..Default::default()
            };
            let h = client
                .send_goal(&goal, Duration::from_secs(10))
                .expect("goal");
            println!("goal {:032x}", h.id().0);
            match h.result(Duration::from_secs(60)) {
                Ok((status, _)) => println!("result {status:?}"),
                Err(e) => println!("result error {e}"),
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap();
}

#[test]
fn an_rclpy_node_follows_a_horus_actions_status_and_cancels_its_goal() {
    if let Some(why) = common::skip_reason() {
        println!("SKIPPED: {why}");
        return;
    }
    let w = World::new("action");
    let bridge = w.bridge();
    let mut horus = w.spawn_self("action_side", ACTION_ENV, "look");
    // `ready` only once rclpy's transient-local status reader matched the bridge's writer
    // and the cancel service is there: what rclpy's ActionClient.wait_for_server checks.
    let peer_py =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rclpy/action_peer.py");
    let peer = w.spawn(
        common::python().to_str().unwrap(),
        &[peer_py.to_str().unwrap(), "/look"],
        "ready",
    );
    horus.send("go");
    let goal = horus.next_line("goal ");
    let id = goal.trim_start_matches("goal ").trim().to_owned();
    assert_eq!(id.len(), 32, "{goal}");
    // rclpy saw the horus goal executing under the same UUID, canceled it through the
    // cancel service, and saw it CANCELED.
    // The cancel's answer and the CANCELED status travel separately (either may come first).
    let (mut cancel, mut canceled) = (None, None);
    while cancel.is_none() || canceled.is_none() {
        let l = peer.next_line("cancel");
        if l.starts_with("canceled ") {
            canceled = Some(l);
        } else {
            cancel = Some(l);
        }
    }
    assert_eq!(
        cancel.unwrap(),
        format!("cancel return_code=0 canceling={id}")
    );
    assert_eq!(canceled.unwrap(), format!("canceled {id}"));
    // The horus client got the outcome the ROS 2 node asked for.
    assert_eq!(horus.next_line("result "), "result Canceled");
    peer.stop();
    horus.stop();
    bridge.stop();
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}
