//! Raw payloads (types named at run time, as the Python bindings use them)
//! meet typed endpoints of the same types, and are refused by others.

mod common;

use std::thread;
use std::time::Duration;

use common::{ns, At, Count};
use horus_actions::{ActionClient, ActionError, ActionServer, GoalStatus, RawPayload, RawSpec};

const T: Duration = Duration::from_secs(10);

fn specs() -> (RawSpec, RawSpec, RawSpec) {
    (
        RawSpec::of::<Count>(),
        RawSpec::of::<At>(),
        RawSpec::of::<At>(),
    )
}

fn bytes_of<T: horus::Message>(v: &T) -> RawPayload {
    RawPayload(bytemuck::bytes_of(v).to_vec())
}

#[test]
fn raw_client_reaches_a_typed_server() {
    let ns = ns("raw-client");
    let mut server = ActionServer::<Count, At, At>::new_in("count", &ns).unwrap();
    let mut client = ActionClient::open_raw("count", Some(&ns), specs()).unwrap();
    let node = thread::spawn(move || {
        let g = loop {
            if let Some(g) = server.next_goal() {
                break g;
            }
            thread::sleep(Duration::from_micros(200));
        };
        let to = g.goal().to;
        let id = server.accept(g);
        server.execute(id).unwrap();
        server.publish_feedback(id, &At { n: to / 2 }).unwrap();
        server.succeed(id, &At { n: to }).unwrap();
        for _ in 0..5000 {
            server.poll();
            thread::sleep(Duration::from_micros(200));
        }
    });
    let goal = client.send_goal(&bytes_of(&Count { to: 8 }), T).unwrap();
    let (status, result) = goal.result(T).unwrap();
    assert_eq!(status, GoalStatus::Succeeded);
    assert_eq!(result, bytes_of(&At { n: 8 }));
    assert_eq!(goal.feedback(), Some(bytes_of(&At { n: 4 })));
    drop((goal, client));
    node.join().unwrap();
}

#[test]
fn typed_client_reaches_a_raw_server_and_another_type_is_refused() {
    let ns = ns("raw-server");
    let mut server = ActionServer::new_raw("count", Some(&ns), specs()).unwrap();
    let node = thread::spawn(move || {
        let g = loop {
            if let Some(g) = server.next_goal() {
                break g;
            }
            thread::sleep(Duration::from_micros(200));
        };
        assert_eq!(g.goal(), &bytes_of(&Count { to: 3 }));
        let id = server.accept(g);
        server
            .publish_feedback(id, &bytes_of(&At { n: 1 }))
            .unwrap();
        server.abort(id, &bytes_of(&At { n: 2 })).unwrap();
        for _ in 0..5000 {
            // A goal of another type is refused by next_goal itself.
            assert!(server.next_goal().is_none());
            thread::sleep(Duration::from_micros(200));
        }
    });
    let mut client = ActionClient::<Count, At, At>::open_in("count", &ns).unwrap();
    let goal = client.send_goal(&Count { to: 3 }, T).unwrap();
    assert_eq!(goal.result(T).unwrap(), (GoalStatus::Aborted, At { n: 2 }));
    assert_eq!(goal.feedback(), Some(At { n: 1 }));
    // The same action opened with the goal and feedback types swapped.
    let mut other = ActionClient::<At, At, At>::open_in("count", &ns).unwrap();
    assert_eq!(
        other.send_goal(&At { n: 1 }, T).err(),
        Some(ActionError::WrongType)
    );
    drop((goal, client, other));
    node.join().unwrap();
}

#[test]
fn a_raw_type_larger_than_a_payload_is_refused_at_open() {
    let (g, f, r) = specs();
    let big = RawSpec {
        size: horus_actions::PAYLOAD_MAX + 1,
        ..g
    };
    let e = ActionClient::open_raw("count", Some(&ns("raw-big")), (big, f, r)).err();
    assert!(matches!(e, Some(horus_actions::OpenError::TooLarge(_))));
}
