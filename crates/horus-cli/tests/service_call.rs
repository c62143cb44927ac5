//! `horus service call` against a running robot process: the request is typed from the
//! service's own description; failures are clear errors with exit status 1.

mod common;

use common::{horus, horus_json, unique_ns, Fixture};

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

#[test]
fn service_call_sends_a_yaml_request_and_prints_the_response() {
    let ns = unique_ns("svccall");
    let _robot = Fixture::robot(&ns);
    let (code, doc) = horus_json(&ns, &["service", "call", "math/add", "{a: 40, b: 2}"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc, serde_json::json!({"sum": 42}));
    let (code, text, _) = horus(
        &ns,
        &["service", "call", "math/add", "{\"a\": 1, \"b\": -3}"],
    );
    assert_eq!(code, 0);
    assert_eq!(text.trim(), "sum: -2");

    // Bad input: unknown field, wrong type, not YAML, unknown service.
    for (args, needle) in [
        (vec!["service", "call", "math/add", "{c: 1}"], "c"),
        (vec!["service", "call", "math/add", "{a: x}"], "a"),
        (vec!["service", "call", "math/add", "{a: ["], "YAML"),
        (vec!["service", "call", "nope", "{}"], "no such service"),
    ] {
        let (code, _, err) = horus(&ns, &args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_call_to_a_dead_server_fails_instead_of_hanging() {
    let ns = unique_ns("svcdead");
    let mut robot = Fixture::robot(&ns);
    robot.kill9();
    let (code, _, err) = horus(
        &ns,
        &[
            "service",
            "call",
            "math/add",
            "{a: 1, b: 1}",
            "--timeout",
            "30",
        ],
    );
    assert_eq!(code, 1);
    assert!(err.contains("call to math/add failed"), "{err}");
}
