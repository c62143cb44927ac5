//! ROS 2 service types on horus services: `Service<Ros<Req>, Ros<Resp>>` called across
//! processes, requests and responses written in place and viewed in place; encoding errors
//! are typed and send nothing; another pair of types does not open the service.

mod common;
mod ros_types;

use std::time::Duration;

use common::{enter_peer, peer_ns, report, unique_ns, Peer};
use horus::cdr::{DecodeError, EncodeError};
use horus::ros::{Ros, RosCallError, RosReplyError, RosSrv};
use horus::{CallError, Service, ServiceError};
use ros_types::{blob, Blob, Count, Other};

/// Calls the cross-process test makes.
const CALLS: u32 = 50;
const PATIENCE: Duration = Duration::from_secs(30);

/// The service: a `Blob` request, answered by an `Other` whose `n` is the number of values.
fn service(ns: &str) -> RosSrv<Count> {
    RosSrv::<Count>::builder("count")
        .namespace(ns)
        .open()
        .unwrap()
}

#[test]
fn peer() {
    let Some((role, _)) = enter_peer() else {
        return;
    };
    assert_eq!(role, "server");
    let svc = service(&peer_ns());
    let mut server = svc.server().unwrap();
    report("ready");
    let mut answered = 0;
    while answered < CALLS + 2 {
        let Some(req) = server.recv_timeout(common::PEER_PATIENCE) else {
            panic!("no request");
        };
        match req.view() {
            Ok(v) => {
                // In place in the request's chunk.
                let cdr = req.cdr().as_ptr_range();
                assert!(v.values.is_empty() || cdr.contains(&v.values.as_ptr().cast()));
                let n = v.values.len() as i32;
                assert_eq!(req.decode().unwrap().values.len() as i32, n);
                req.reply_ros(&Other { n }).unwrap();
            }
            Err(e) => {
                // Hostile or broken request bytes: answered with -1.
                assert!(matches!(e, DecodeError::CountTooLarge { .. }), "{e:?}");
                req.reply_ros(&Other { n: -1 }).unwrap();
            }
        }
        answered += 1;
    }
    report("done");
}

#[test]
fn ros_service_calls_cross_processes() {
    let ns = unique_ns("ros-svc");
    let svc = service(&ns);
    let mut server = Peer::spawn(&ns, "server", &[]);
    server.expect("ready");
    let mut client = svc.client().unwrap();
    for i in 0..CALLS {
        let req = blob(i, (i as usize * 13) % 500);
        let resp = client.call_ros(&req, PATIENCE).unwrap();
        assert!(resp.is_zero_copy());
        assert_eq!(
            resp.cdr(),
            horus::cdr::encode_message(&Other {
                n: req.values.len() as i32
            })
            .unwrap()
        );
        assert_eq!(resp.decode().unwrap().n, req.values.len() as i32);
        assert_eq!(resp.view().unwrap().0, req.values.len() as i32);
    }
    // A request that cannot be encoded: typed error, nothing sent.
    let mut bad = blob(1, 1);
    bad.small = vec![0; 9];
    assert!(matches!(
        client.call_ros(&bad, PATIENCE),
        Err(RosCallError::Encode(EncodeError::BoundExceeded {
            bound: 4,
            ..
        }))
    ));
    // A request whose bytes are not a Blob (a hand-written body claiming a huge count):
    // the server's view gives a typed error and it carries on.
    let resp = client
        .call_with(
            8,
            |frame, tail| {
                *frame = Ros::new();
                tail.copy_from_slice(&[0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0]);
            },
            PATIENCE,
        )
        .unwrap();
    assert_eq!(resp.decode().unwrap().n, -1);
    // And the next call is served as usual.
    let last = blob(2, 3);
    assert_eq!(
        client
            .call_ros(&last, PATIENCE)
            .unwrap()
            .decode()
            .unwrap()
            .n,
        3
    );
    server.expect("done");
    server.finish();
    let stats = client.stats();
    assert_eq!(stats.calls, CALLS as u64 + 2);
    assert_eq!(stats.responses, CALLS as u64 + 2);
}

#[test]
fn a_response_that_cannot_be_encoded_is_a_typed_error_and_the_client_is_told() {
    let ns = unique_ns("ros-svc-reply");
    let svc = Service::<Ros<Other>, Ros<Blob>>::builder("s")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut server = svc.server().unwrap();
    let mut client = svc.client().unwrap();
    let pending = client.call_async(&Ros::new()).unwrap();
    let req = server.recv_timeout(PATIENCE).unwrap();
    // An empty body is not an `Other` (4 bytes): a typed error.
    assert!(matches!(req.view(), Err(DecodeError::Truncated { .. })));
    let mut bad = blob(1, 1);
    bad.name = "nul\0".into();
    assert!(matches!(
        req.reply_ros(&bad),
        Err(RosReplyError::Encode(EncodeError::StringContainsNul { .. }))
    ));
    assert!(matches!(pending.wait(PATIENCE), Err(CallError::Unanswered)));
}

#[test]
fn another_pair_of_types_does_not_open_the_service() {
    let ns = unique_ns("ros-svc-types");
    let _svc = service(&ns);
    let other = Service::<Ros<Other>, Ros<Other>>::builder("count")
        .namespace(&ns)
        .open();
    assert!(
        matches!(other, Err(ServiceError::SchemaMismatch { .. })),
        "{:?}",
        other.err()
    );
}
