//! Complete `ros2msg` definitions (MCAP schemas, topic descriptions) through horus-idl's
//! reader (`resolve_ros2msg`).
//!
//! The first byte picks the root type name, the rest is the definition. Reading must
//! return a `Ros2MsgError` or resolved types, never panic or run unbounded; when it reads,
//! the root has a RIHS01 hash, and the definition horus writes for the root, read back,
//! has the same hash.
#![no_main]

use horus_idl::resolve_ros2msg;
use libfuzzer_sys::fuzz_target;

const ROOTS: [&str; 4] = [
    "fuzz_pkg/msg/Root",
    "fuzz_pkg/Root",
    "fuzz_pkg/srv/S_Event",
    "fuzz_pkg/action/A_FeedbackMessage",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, definition)) = data.split_first() else {
        return;
    };
    let root = ROOTS[usize::from(selector) % ROOTS.len()];
    let Ok((resolved, root)) = resolve_ros2msg(root, definition) else {
        return;
    };
    let name = root.to_string();
    let hash = resolved.type_hash(&name).expect("the root is resolved");
    let written = resolved
        .ros2msg_definition(&name)
        .expect("the root is a structure");
    // The writer cannot express every structure of an action in .msg form (documented);
    // whatever it writes that reads back must be the same type.
    if let Ok((again, _)) = resolve_ros2msg(&name, written.as_bytes()) {
        assert_eq!(again.type_hash(&name), Some(hash), "{name}:\n{written}");
    }
});
