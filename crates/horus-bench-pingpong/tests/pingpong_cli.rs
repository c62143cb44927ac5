//! Black-box runs of the `pingpong` binary: every system completes a tiny run across
//! processes and the JSON it writes is complete. Asserts behaviour, never timings.

use std::process::Command;

fn tiny_run(extra: &[&str]) -> serde_json::Value {
    let json = std::env::temp_dir().join(format!(
        "horus-bench-test-{}-{}.json",
        std::process::id(),
        extra.join("_").replace(['-', ','], "")
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_pingpong"))
        .args([
            "--warmup",
            "5",
            "--iters",
            "50",
            "--one-way",
            "50",
            "--sizes",
            "16,5000",
        ])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running pingpong");
    assert!(
        out.status.success(),
        "pingpong failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    serde_json::from_str(&text).expect("valid json")
}

fn rows<'a>(v: &'a serde_json::Value, system: &str) -> Vec<&'a serde_json::Value> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["system"] == system)
        .collect()
}

#[test]
fn every_system_produces_rows_for_every_size_and_pass() {
    let v = tiny_run(&[]);
    assert!(v["errors"].as_array().unwrap().is_empty());
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    for system in ["ref:copy", "ref:touch", "uds", "iceoryx2"] {
        let rtt: Vec<_> = rows(&v, system)
            .into_iter()
            .filter(|r| r["kind"] == "rtt")
            .collect();
        assert_eq!(rtt.len(), 4, "{system}: 2 sizes x 2 passes");
        for r in rtt {
            assert_eq!(r["rtt"]["iterations"], 50);
        }
    }
    for system in ["floor:cacheline", "ref:wake"] {
        assert_eq!(rows(&v, system).len(), 2, "{system}: once per pass");
    }
    let one_way: Vec<_> = rows(&v, "iceoryx2")
        .into_iter()
        .filter(|r| r["kind"] == "one-way")
        .collect();
    assert_eq!(one_way.len(), 4);
    for r in one_way {
        assert_eq!(r["one_way"]["messages"], 50);
    }
}

#[test]
fn touch_mode_is_labelled_and_only_filters() {
    let v = tiny_run(&["--touch", "--pinned-only", "--only", "iceoryx2"]);
    let all = v["rows"].as_array().unwrap();
    assert!(!all.is_empty());
    assert!(all
        .iter()
        .all(|r| r["system"] == "iceoryx2" && r["payload"] == "touch"));
    assert!(all.iter().all(|r| r["pinned"] == true));
}
