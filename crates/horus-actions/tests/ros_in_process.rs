//! ROS-typed actions meet ROS 2's own types: the vendored `tf2_msgs/action/LookupTransform`
//! end to end, its services called and its status topic read with plain typed horus
//! endpoints (`RosSrv<LookupTransform_SendGoal>`, `Topic<Ros<GoalStatusArray>>`).

mod common;

use std::time::{Duration, Instant};

use common::ns;
use horus::ros::{Ros, RosSrv};
use horus::Topic;
use horus_actions::{GoalStatus, RosActionClient, RosActionServer};
use horus_ros_msgs::action_msgs::msg::{GoalInfo, GoalStatusArray};
use horus_ros_msgs::action_msgs::srv::{CancelGoal, CancelGoal_Request, CancelGoal_Response};
use horus_ros_msgs::tf2_msgs::action::{
    LookupTransform, LookupTransform_Goal, LookupTransform_Result, LookupTransform_SendGoal,
    LookupTransform_SendGoal_Request,
};
use horus_ros_msgs::unique_identifier_msgs::msg::UUID;

const T: Duration = Duration::from_secs(10);

/// Runs `server`'s tick on a thread while `step` returns true (at most `T`).
fn serve(
    mut server: RosActionServer<LookupTransform>,
    mut step: impl FnMut(&mut RosActionServer<LookupTransform>) -> bool + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let end = Instant::now() + T;
        while Instant::now() < end && step(&mut server) {
            std::thread::sleep(Duration::from_millis(1));
        }
    })
}

#[test]
fn lookup_transform_goes_end_to_end_and_its_status_is_a_ros_goal_status_array() {
    let ns = ns("lookup");
    let server = RosActionServer::<LookupTransform>::new_in("tf_lookup", &ns).unwrap();
    let mut client = RosActionClient::<LookupTransform>::open_in("tf_lookup", &ns).unwrap();
    let status = Topic::<Ros<GoalStatusArray>>::builder("tf_lookup/_action/status")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut statuses = status.subscriber().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = std::sync::Arc::clone(&stop);
    let node = serve(server, move |s| {
        if let Some(g) = s.next_goal() {
            let goal = g.goal().clone();
            let id = s.accept(g);
            s.execute(id).unwrap();
            let mut r = LookupTransform_Result::default();
            r.transform.header.frame_id = goal.target_frame;
            r.transform.child_frame_id = goal.source_frame;
            r.transform.transform.translation.x = 1.5;
            s.succeed(id, &r).unwrap();
        }
        !stopped.load(std::sync::atomic::Ordering::Relaxed)
    });
    let goal = LookupTransform_Goal {
        target_frame: "map".into(),
        source_frame: "base_link".into(),
        ..Default::default()
    };
    let g = client.send_goal(&goal, T).unwrap();
    let (s, r) = g.result(T).unwrap();
    assert_eq!(s, GoalStatus::Succeeded);
    assert_eq!(
        (
            r.transform.header.frame_id.as_str(),
            r.transform.child_frame_id.as_str()
        ),
        ("map", "base_link")
    );
    assert_eq!(r.transform.transform.translation.x, 1.5);
    // The status topic: GoalStatusArray messages, the goal by its UUID, ROS 2's codes.
    let uuid = g.id().0.to_be_bytes();
    let mut seen = Vec::new();
    while let Some(m) = statuses.try_recv() {
        let a = m.decode().unwrap();
        seen.extend(
            a.status_list
                .iter()
                .filter(|s| s.goal_info.goal_id.uuid == uuid)
                .map(|s| s.status),
        );
    }
    assert_eq!(seen, [1, 2, 4], "accepted, executing, succeeded");
    drop((g, client));
    // Relaxed: a flag alone, nothing else published through it.
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    node.join().unwrap();
}

#[test]
fn plain_ros_service_clients_send_goals_and_cancel_every_goal() {
    let ns = ns("plain");
    let server = RosActionServer::<LookupTransform>::new_in("tf_plain", &ns).unwrap();
    let mut canceled = 0;
    let node = serve(server, move |s| {
        if let Some(g) = s.next_goal() {
            let id = s.accept(g);
            s.execute(id).unwrap();
        }
        for id in s.take_cancel_requests() {
            s.canceled(id, &LookupTransform_Result::default()).unwrap();
            canceled += 1;
        }
        canceled < 2 // stop once both goals were canceled
    });
    let send = RosSrv::<LookupTransform_SendGoal>::builder("tf_plain/_action/send_goal")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut c = send.client().unwrap();
    for k in 1..=2u8 {
        let req = LookupTransform_SendGoal_Request {
            goal_id: UUID { uuid: [k; 16] },
            goal: LookupTransform_Goal {
                target_frame: "odom".into(),
                ..Default::default()
            },
        };
        let resp = c.call_ros(&req, T).unwrap().decode().unwrap();
        assert!(resp.accepted && resp.stamp.sec > 0, "{resp:?}");
    }
    // A zero id and a zero stamp: cancel every goal (ROS 2's policy).
    let cancel = RosSrv::<CancelGoal>::builder("tf_plain/_action/cancel_goal")
        .namespace(&ns)
        .open()
        .unwrap();
    let req = CancelGoal_Request {
        goal_info: GoalInfo::default(),
    };
    let resp = cancel
        .client()
        .unwrap()
        .call_ros(&req, T)
        .unwrap()
        .decode()
        .unwrap();
    assert_eq!(resp.return_code, CancelGoal_Response::ERROR_NONE);
    let mut ids: Vec<_> = resp
        .goals_canceling
        .iter()
        .map(|g| g.goal_id.uuid[0])
        .collect();
    ids.sort();
    assert_eq!(ids, [1, 2]);
    node.join().unwrap();
}

/// Hostile messages on an action's topics (a feedback message too short for a goal id, a
/// status message that is not a `GoalStatusArray`): skipped and counted by the client,
/// which goes on following its goals.
#[test]
fn hostile_feedback_and_status_messages_are_counted_not_followed() {
    let ns = ns("hostile-topics");
    let server = RosActionServer::<LookupTransform>::new_in("tf_hostile", &ns).unwrap();
    let mut client = RosActionClient::<LookupTransform>::open_in("tf_hostile", &ns).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = std::sync::Arc::clone(&stop);
    let node = serve(server, move |s| {
        if let Some(g) = s.next_goal() {
            let id = s.accept(g);
            s.execute(id).unwrap();
        }
        !stopped.load(std::sync::atomic::Ordering::Relaxed)
    });
    let g = client
        .send_goal(&LookupTransform_Goal::default(), T)
        .unwrap();
    let pub_on = |topic: &str| {
        horus::inspect::TopicView::open(&ns, &format!("tf_hostile/_action/{topic}"))
            .unwrap()
            .ros_publisher()
            .unwrap()
    };
    // A 3-byte body: no room for the 16-byte goal id.
    pub_on("feedback").send_cdr(&[0, 1, 0, 0, 1, 2, 3]).unwrap();
    // A status list claiming 2^32-1 entries in 4 bytes.
    pub_on("status")
        .send_cdr(&[0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff])
        .unwrap();
    assert!(g.feedback().is_none());
    // The server's statuses still arrive past the hostile one.
    let deadline = Instant::now() + T;
    while g.status() != GoalStatus::Executing {
        assert!(
            Instant::now() < deadline,
            "status stuck at {:?}",
            g.status()
        );
        std::thread::yield_now();
    }
    let m = client.malformed();
    assert_eq!((m.feedback, m.status), (1, 1));
    drop((g, client));
    // Relaxed: a flag alone, nothing else published through it.
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    node.join().unwrap();
}

/// What is in /dev/shm of namespace `ns`.
fn left_in(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&format!(".{ns}.")))
        .collect()
}

/// A client opens before any server: it creates the action's three services with their
/// ROS 2 types (what the ROS 2 bridge reads to serve a ROS 2 server's action), a server
/// that comes later serves them, and once both are gone nothing is left in /dev/shm; a
/// client alone leaves nothing either.
#[test]
fn a_client_opened_first_creates_the_services_a_later_server_serves() {
    let ns = ns("first");
    {
        let client = RosActionClient::<LookupTransform>::open_in("tf_alone", &ns).unwrap();
        let services = left_in(&ns)
            .into_iter()
            .filter(|n| n.contains(".sv."))
            .count();
        assert_eq!(
            services,
            3,
            "send_goal, cancel_goal and get_result: {:?}",
            left_in(&ns)
        );
        drop(client);
        assert_eq!(
            left_in(&ns),
            Vec::<String>::new(),
            "a client alone leaves nothing"
        );
        let mut client = RosActionClient::<LookupTransform>::open_in("tf_first", &ns).unwrap();
        let server = RosActionServer::<LookupTransform>::new_in("tf_first", &ns).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = std::sync::Arc::clone(&stop);
        let node = serve(server, move |s| {
            if let Some(g) = s.next_goal() {
                let id = s.accept(g);
                s.execute(id).unwrap();
                s.succeed(id, &LookupTransform_Result::default()).unwrap();
            }
            !stopped.load(std::sync::atomic::Ordering::Relaxed)
        });
        let g = client
            .send_goal(&LookupTransform_Goal::default(), T)
            .unwrap();
        assert_eq!(g.result(T).unwrap().0, GoalStatus::Succeeded);
        drop((g, client));
        // Relaxed: a flag alone, nothing else published through it.
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        node.join().unwrap();
    }
    assert_eq!(left_in(&ns), Vec::<String>::new(), "left in /dev/shm");
}

/// Another type under one of the action's names is refused when the client opens (it
/// creates or opens the services then), not at its first call.
#[test]
fn another_type_under_an_actions_service_is_refused_at_open() {
    let ns = ns("othertype");
    {
        let _other = RosSrv::<horus_ros_msgs::std_srvs::srv::SetBool>::builder(
            "tf_other/_action/cancel_goal",
        )
        .namespace(&ns)
        .open()
        .unwrap();
        match RosActionClient::<LookupTransform>::open_in("tf_other", &ns) {
            Err(horus_actions::RosOpenError::Service(horus::ServiceError::SchemaMismatch {
                ..
            })) => {}
            Err(e) => panic!("refused, but not as another type: {e}"),
            Ok(_) => panic!("opened over a service of another type"),
        }
    }
    assert_eq!(left_in(&ns), Vec::<String>::new(), "left in /dev/shm");
}
