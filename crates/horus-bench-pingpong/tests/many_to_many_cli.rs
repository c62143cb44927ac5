//! Black-box runs of `many_to_many` with tiny counts: 4 publisher and 4 subscriber
//! processes, horus and iceoryx2 alternating; a bad pin list refused. Asserts behaviour,
//! never timings.

use std::process::Command;

use horus_bench::testing::run_suite as run;

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
