//! Black-box runs of `peers` and `interleaved` with tiny counts: every peer answers over
//! its transport and horus alternates with each peer in every round. Asserts behaviour,
//! never timings.

use horus_bench::testing::run_suite as run;

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
