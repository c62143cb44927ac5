//! What any DDS peer on the network can send the ROS 2 bridge (crates/horus-ros2): one UDP
//! datagram, on arbitrary bytes, through the vendored RustDDS's receive path up to the
//! readers (`rustdds::horus_fuzz::parse_datagram`, HORUS-PATCH.md item 5): the RTPS
//! header and submessage parser (`Message::read_from_buffer`: DATA with inline QoS,
//! DATA_FRAG, HEARTBEAT, ACKNACK, GAP, INFO_TS, INFO_DST, NACK_FRAG, …), each DATA's
//! serialized payload header, and every DATA_FRAG through the bounded fragment assembler
//! (horus_reassembly's admission checks, `FragmentAssembler`, the NACK_FRAG scan).
//!
//! What must hold: no panic, no hang; what stays in reassembly is within a reader's budget
//! (`budget_per_reader`, 256 MiB) and, with what every other sample of the process holds,
//! within the process's (`budget_per_process`, 1 GiB; each open sample holds exactly its
//! cost of it, given back when it goes), and no more samples complete or stay open than the
//! datagram had submessages. The low bit of the GUID prefix's first byte (which the parser
//! does not interpret) picks a reliable or a best-effort reader's eviction.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustdds::{horus_fuzz, horus_reassembly};

fuzz_target!(|data: &[u8]| {
    let reliable = data.get(8).is_none_or(|b| b & 1 == 0);
    let parsed = horus_fuzz::parse_datagram(data, reliable);
    assert!(parsed.reserved <= horus_reassembly::budget_per_reader());
    assert!(parsed.held_in_process <= horus_reassembly::budget_per_process());
    // One input at a time: the open samples' process charges are exactly their cost (every
    // evicted or completed sample gave its charge back), and none outlives the datagram.
    assert_eq!(parsed.held_in_process, parsed.reserved);
    assert_eq!(horus_reassembly::held_in_process(), 0);
    assert!(
        parsed.samples_completed + parsed.samples_open + parsed.fragments_refused
            <= parsed.submessages
    );
    if !parsed.message {
        assert_eq!(parsed, horus_fuzz::Parsed::default());
    }
});
