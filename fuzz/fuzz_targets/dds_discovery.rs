//! What any DDS peer on the network can announce to the ROS 2 bridge (crates/horus-ros2):
//! the serialized payload of a discovery DATA (SPDP participant data; SEDP publications,
//! subscriptions and topics; a dispose's key), on arbitrary bytes, through the vendored
//! RustDDS's discovery decoders (`rustdds::horus_fuzz_discovery::decode_discovery_payload`,
//! HORUS-PATCH.md): the encapsulation header, the parameter list in PL_CDR_LE or PL_CDR_BE,
//! and every decoder of the built-in discovery readers; what decodes is offered to a
//! discovery database.
//!
//! What must hold: no panic, no hang; nothing decodes unless the header names a parameter
//! list; the database keeps at most the one participant, the two endpoints and the three
//! topic records (the writer's, the reader's, the topic's) one payload can announce.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustdds::horus_fuzz_discovery::{decode_discovery_payload, Decoded};

fuzz_target!(|data: &[u8]| {
    let d = decode_discovery_payload(data);
    if !d.parameter_list {
        assert_eq!(d, Decoded::default());
    }
    assert!(d.participants <= 1);
    assert!(d.endpoints <= 2);
    assert!(d.topic_records <= 3);
});
