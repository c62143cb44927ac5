//! ROS 2 interface files (`.msg` / `.srv` / `.action`) through horus-idl.
//!
//! The first byte picks the kind, the rest is the file. Parsing must return a
//! `ParseError` or a spec, never panic or run unbounded; a parsed file is then
//! resolved next to the packages that services and actions need, and every type
//! it yields must have a description and a RIHS01 hash whose hashed JSON is ASCII.
#![no_main]

use std::sync::OnceLock;

use horus_idl::{hashable_json, standard_interfaces_dir, InterfaceKind, InterfaceSet};
use libfuzzer_sys::fuzz_target;

fn base() -> &'static InterfaceSet {
    static BASE: OnceLock<InterfaceSet> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut set = InterfaceSet::new();
        for p in [
            "builtin_interfaces",
            "service_msgs",
            "unique_identifier_msgs",
        ] {
            set.add_package_dir(p, &standard_interfaces_dir().join(p))
                .expect("vendored packages load");
        }
        // std_msgs/Header only: the whole package would make every iteration's copy slow.
        let header = standard_interfaces_dir().join("std_msgs/msg/Header.msg");
        let source = std::fs::read(&header).expect("vendored Header.msg");
        set.add_source(
            "std_msgs/msg/Header.msg",
            "std_msgs",
            "Header",
            InterfaceKind::Message,
            &source,
        )
        .expect("vendored Header.msg parses");
        set
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, source)) = data.split_first() else {
        return;
    };
    let kind = match selector % 3 {
        0 => InterfaceKind::Message,
        1 => InterfaceKind::Service,
        _ => InterfaceKind::Action,
    };
    let mut set = base().clone();
    // A second message of the same package, so that files can refer to each other.
    set.add_source(
        "fuzz_pkg/msg/Other.msg",
        "fuzz_pkg",
        "Other",
        InterfaceKind::Message,
        b"Fuzz[<=1] f\n",
    )
    .expect("fixed file parses");
    if set
        .add_source("fuzz", "fuzz_pkg", "Fuzz", kind, source)
        .is_err()
    {
        return;
    }
    let Ok(resolved) = set.resolve() else {
        return;
    };
    for name in resolved.type_names().filter(|n| n.starts_with("fuzz_pkg/")) {
        let description = resolved
            .type_description(name)
            .expect("every listed type is described");
        assert!(hashable_json(&description).is_ascii());
        assert!(resolved.type_hash(name).is_some());
    }
});
