//! Black-box runs of the suite binaries with tiny counts: every endpoint placement
//! (threads, processes) and every peer completes and the JSON is complete. Asserts
//! behaviour, never timings.

use horus_bench::testing::run_suite as run;

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
