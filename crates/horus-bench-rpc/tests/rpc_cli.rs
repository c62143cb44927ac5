//! Black-box runs of the `rpc` binary: each system completes a quick run with its
//! server in another process and the JSON holds every table's rows; a system
//! whose server cannot start is reported as failed while the others are still
//! printed. Asserts behaviour, never timings.

use std::process::{Command, Output};

fn rpc(tag: &str, args: &[&str]) -> (Output, serde_json::Value) {
    let json =
        std::env::temp_dir().join(format!("horus-rpc-test-{}-{tag}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_rpc"))
        .args(["--quick", "--pinned-only"])
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running rpc");
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    (out, serde_json::from_str(&text).expect("valid json"))
}

fn rows<'a>(doc: &'a serde_json::Value, kind: &str, system: &str) -> Vec<&'a serde_json::Value> {
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["kind"] == kind && r["system"] == system)
        .collect()
}

#[test]
fn every_system_answers_every_table() {
    let systems = "horus,horus-blocking,iceoryx2,zenoh,grpc-tcp,grpc-uds";
    let (out, doc) = rpc("all", &["--systems", systems, "--sizes", "64,65536"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "rpc failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(doc["errors"].as_array().map(Vec::len), Some(0));
    for system in systems.split(',') {
        let latency = rows(&doc, "latency", system);
        let full: Vec<_> = latency.iter().filter(|r| r["touch"] == "full").collect();
        assert_eq!(full.len(), 2, "{system}: one latency row per size");
        assert!(full
            .iter()
            .all(|r| r["rtt"]["iterations"].as_u64() > Some(0)));
        let stress = rows(&doc, "stress", system);
        assert_eq!(stress.len(), 2, "{system}: one stress row per size");
        assert!(stress
            .iter()
            .all(|r| r["calls_per_sec"].as_f64() > Some(0.0)));
        let in_flight: Vec<u64> = rows(&doc, "in-flight", system)
            .iter()
            .filter_map(|r| r["in_flight"].as_u64())
            .collect();
        assert_eq!(in_flight, [1, 2, 4, 8], "{system}");
    }
    assert_eq!(rows(&doc, "topic", "horus-topic").len(), 1);
    assert_eq!(rows(&doc, "wake", "ref:wake").len(), 1);
    for table in [
        "1. call latency",
        "2. calls per second",
        "3. latency versus calls in flight",
    ] {
        assert!(stdout.contains(table), "{table} missing:\n{stdout}");
    }
    assert!(stdout.contains("service latency targets"));
}

#[test]
fn a_system_that_cannot_start_is_marked_failed_and_the_others_still_print() {
    // CPU 4095 is never usable: every server process fails to pin itself and exits;
    // the client side (CPU 0) runs, so each session fails with the reason.
    let (out, doc) = rpc(
        "fail",
        &[
            "--systems",
            "horus,grpc-uds",
            "--sizes",
            "64",
            "--cpus",
            "0,4095",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "a failed measurement must fail the run"
    );
    let errors: Vec<&str> = doc["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    for system in ["horus", "grpc-uds"] {
        assert!(
            errors.iter().any(|e| e.contains(&format!(" {system} 64:"))),
            "{system} not among {errors:?}"
        );
    }
    assert!(stdout.contains("failed"), "no failed cell:\n{stdout}");
    assert!(stdout.contains("horus (busy-poll)") && stdout.contains("gRPC uds (blocking)"));
}
