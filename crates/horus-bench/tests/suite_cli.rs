//! Black-box runs of the suite binaries with tiny counts: every endpoint placement
//! (threads, processes) and every peer completes and the JSON is complete. Asserts
//! behaviour, never timings.

use std::process::Command;

fn run(bin: &str, args: &[&str]) -> serde_json::Value {
    let name = std::path::Path::new(bin)
        .file_name()
        .unwrap()
        .to_string_lossy();
    let json = std::env::temp_dir().join(format!(
        "horus-suite-test-{}-{name}.json",
        std::process::id()
    ));
    let out = Command::new(bin)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running the benchmark");
    assert!(
        out.status.success(),
        "{bin} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    assert!(v["errors"].as_array().unwrap().is_empty());
    assert!(!v["method"].as_array().unwrap().is_empty());
    v
}

#[test]
fn all_paths_covers_every_route_in_threads_and_processes() {
    let v = run(
        env!("CARGO_BIN_EXE_all_paths"),
        &["--iters", "40", "--warmup", "4", "--n", "2"],
    );
    let routes: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["route"].as_str().unwrap())
        .collect();
    assert_eq!(routes.len(), 11);
    assert!(routes.contains(&"cross-process 2:2") && routes.contains(&"cross-thread 1:2"));
    for r in v["rows"].as_array().unwrap() {
        let pubs = r["pubs"].as_u64().unwrap();
        assert_eq!(r["rtt"]["iterations"].as_u64().unwrap(), 40 / pubs * pubs);
        // Send-only beside every round trip: one sample per timed burst.
        assert_eq!(
            r["send_only"]["iterations"].as_u64().unwrap(),
            40 / pubs * pubs,
            "send-only of {r}"
        );
    }
}

#[test]
fn robotics_messages_move_between_processes() {
    let v = run(
        env!("CARGO_BIN_EXE_robotics_messages"),
        &[
            "--quick",
            "--iters",
            "40",
            "--warmup",
            "4",
            "--messages",
            "CmdVel,PointCloud1k",
        ],
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        for key in [
            "rtt_1to1",
            "rtt_nn",
            "throughput_1to1",
            "throughput_nn",
            "headroom",
        ] {
            assert!(!r[key].is_null(), "{key} missing in {r}");
        }
        assert_eq!(r["rtt_nn"]["iterations"], 40);
    }
}

#[test]
fn every_peer_answers_over_its_transport() {
    let v = run(
        env!("CARGO_BIN_EXE_peers"),
        &["--sizes", "16,5000", "--iters", "30", "--warmup", "3"],
    );
    let rows = v["rows"].as_array().unwrap();
    for system in [
        "horus",
        "iceoryx2",
        "zenoh",
        "zenoh-shm",
        "uds",
        "ref:touch",
        "horus:futex",
    ] {
        let n = rows.iter().filter(|r| r["system"] == system).count();
        let want = if system == "horus" { 4 } else { 2 };
        assert_eq!(n, want, "{system}");
    }
}

#[test]
fn interleaved_alternates_horus_and_each_peer_in_every_round() {
    let v = run(
        env!("CARGO_BIN_EXE_interleaved"),
        &[
            "--rounds",
            "2",
            "--sizes",
            "16",
            "--peers",
            "iceoryx2,uds",
            "--iters",
            "30",
            "--warmup",
            "3",
        ],
    );
    let rows = v["rows"].as_array().unwrap();
    // Per round: busy-poll horus and iceoryx2, blocking horus and the socket.
    assert_eq!(rows.len(), 2 * 4);
    for round in 0..2u64 {
        let mut of: Vec<(u64, &str)> = rows
            .iter()
            .filter(|r| r["round"] == round)
            .map(|r| (r["order"].as_u64().unwrap(), r["system"].as_str().unwrap()))
            .collect();
        of.sort_unstable();
        let systems: Vec<&str> = of.iter().map(|x| x.1).collect();
        let want: &[&str] = if round == 0 {
            &["horus", "horus:futex", "iceoryx2", "uds"]
        } else {
            &["iceoryx2", "uds", "horus", "horus:futex"]
        };
        assert_eq!(systems, want, "round {round}");
    }
    for r in rows {
        assert_eq!(r["rtt"]["iterations"], 30);
        let blocking = r["system"] == "horus:futex" || r["system"] == "uds";
        assert_eq!(r["wait"], if blocking { "blocking" } else { "busy-poll" });
    }
}

#[test]
fn scalability_counts_every_message() {
    let v = run(
        env!("CARGO_BIN_EXE_scalability"),
        &[
            "--seconds",
            "0.2",
            "--fanout",
            "2",
            "--topics",
            "3",
            "--size",
            "64",
        ],
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let x = &r["result"];
        let (received, lost) = (x["received"].as_u64().unwrap(), x["lost"].as_u64().unwrap());
        assert_eq!(received + lost, x["expected"].as_u64().unwrap());
        assert_eq!(
            x["subscriber_cpu_percent"].as_array().unwrap().len() as u64,
            x["subs"].as_u64().unwrap()
        );
    }
}

#[test]
fn many_to_many_measures_four_by_four_alternating_horus_and_iceoryx2() {
    let v = run(
        env!("CARGO_BIN_EXE_many_to_many"),
        &[
            "--rounds",
            "2",
            "--messages",
            "CmdVel",
            "--iters",
            "5",
            "--warmup",
            "1",
            "--no-pin",
        ],
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2);
    for round in 0..2u64 {
        let mut of: Vec<(u64, &str)> = rows
            .iter()
            .filter(|r| r["round"] == round)
            .map(|r| (r["order"].as_u64().unwrap(), r["system"].as_str().unwrap()))
            .collect();
        of.sort_unstable();
        let want = if round == 0 {
            [(0, "horus"), (1, "iceoryx2")]
        } else {
            [(0, "iceoryx2"), (1, "horus")]
        };
        assert_eq!(of, want, "round {round}");
    }
    for r in rows {
        assert_eq!((r["pubs"].as_u64(), r["subs"].as_u64()), (Some(4), Some(4)));
        assert_eq!(r["wait"], "busy-poll");
        assert_eq!(r["pinned"], false);
        // 5 timed round trips from each of the 4 publishers, pooled.
        assert_eq!(r["rtt"]["iterations"], 20);
    }
}

#[test]
fn many_to_many_refuses_a_pin_list_that_is_not_eight_distinct_cpus() {
    let out = Command::new(env!("CARGO_BIN_EXE_many_to_many"))
        .args(["--quick", "--pin-cpus", "0,0,1,1,2,2,3,3"])
        .output()
        .expect("running many_to_many");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("8 distinct CPUs"));
}
