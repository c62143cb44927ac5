//! What a DDS peer sends a horus service through the bridge is checked: a request that is
//! not CDR of the service's request type is dropped and counted, and the service keeps
//! answering well-formed ones. The peer is a RustDDS participant in this test process.

mod service_common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use horus_ros2::raw::{PassThrough, WireCdr};
use horus_ros2::{BridgeConfig, Dds, Direction};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{QosPolicyBuilder, TopicKind};
use service_common::Rig;

/// The entry child processes of this binary run (see service_common/roles.rs).
#[test]
fn child_entry() {
    service_common::child_main();
}

#[test]
fn a_malformed_request_from_dds_is_dropped_and_counted() {
    let Some(rig) = Rig::new("rq-bad", 3) else {
        return;
    };
    let server = rig.horus_server("demo/guarded", "answer");
    let bridge = rig.bridge();
    // A bare DDS participant on the test's domain, on 127.0.0.1 only.
    let mut config = BridgeConfig::from_env("unused").unwrap();
    config.domain_id = rig.domain;
    config.localhost_only = true;
    let dds = Dds::start(&config).expect("DDS participant");
    let qos = QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(100),
        })
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 10 })
        .build();
    let topic = dds
        .participant()
        .create_topic(
            "rq/demo/guardedRequest".into(),
            "std_srvs::srv::dds_::SetBool_Request_".into(),
            &qos,
            TopicKind::NoKey,
        )
        .unwrap();
    let writer = dds
        .publisher()
        .create_datawriter_no_key::<WireCdr, PassThrough>(&topic, Some(qos))
        .unwrap();
    // Header only: a SetBool request needs one byte of body.
    let truncated = WireCdr(Bytes::from_static(&[0, 1, 0, 0]));
    let good = WireCdr(Bytes::from_static(&[0, 1, 0, 0, 1, 0, 0, 0]));
    let status = |want: &dyn Fn(&horus_ros2::ServiceCounters) -> bool, data: &WireCdr| {
        // Written until discovery has matched the bridge's reader and the bridge counted it.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            writer.write(data.clone(), None).unwrap();
            let st = rig.wait_service("demo/guarded", Direction::ToRos, "opened", |s| s.active);
            if want(&st.counters) {
                return st;
            }
            assert!(Instant::now() < deadline, "never counted: {st:#?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let st = status(&|c| c.malformed >= 1, &truncated);
    assert_eq!(st.counters.calls, 0, "{st:#?}");
    // The bridge and the service go on: a well-formed request is answered. This peer has no
    // reply reader, so the bridge holds the reply for one (`held_for_reader`) instead of
    // writing it to nobody (service_reply_early.rs).
    let st = status(&|c| c.held_for_reader >= 1, &good);
    assert_eq!(st.counters.calls, 0, "{st:#?}");
    assert!(st.counters.malformed >= 1, "{st:#?}");
    drop(writer);
    drop(dds);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}
