//! `horus clean` against real processes: a killed robot's topic, service and scheduler files
//! are removed; a running robot's are kept and it keeps working.

mod common;

use common::{horus, horus_json, poll_json, shm_files, unique_ns, Fixture};
use serde_json::Value;

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

fn fates(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["fate"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn clean_removes_everything_a_killed_robot_left() {
    let ns = unique_ns("cleankilled");
    let mut robot = Fixture::robot(&ns);
    // Wait for the call, so its response channel exists too.
    poll_json(&ns, &["service", "list"], |d| {
        d["services"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["totals"]["clients"]["responses"] == 1))
    });
    robot.kill9();
    let left = shm_files(&ns);
    for kind in [".t.", ".sv.", ".sq.", ".sr.", ".sched."] {
        assert!(left.iter().any(|f| f.contains(kind)), "{kind} in {left:?}");
    }
    assert_eq!(horus_json(&ns, &["doctor"]).0, 1);

    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["removed"], left.len(), "{doc}");
    for key in ["segments", "services", "schedulers"] {
        let f = fates(&doc, key);
        assert!(
            !f.is_empty() && f.iter().all(|f| f == "removed"),
            "{key}: {doc}"
        );
    }
    assert!(shm_files(&ns).is_empty(), "{:?}", shm_files(&ns));
    let (code, doc) = horus_json(&ns, &["doctor"]);
    assert!(doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["check"] != "stale files"));
    assert_eq!(code, i32::from(doc["ok"] == false));
}

#[test]
fn clean_keeps_a_running_robot_and_it_keeps_working() {
    let ns = unique_ns("cleanlive");
    let _robot = Fixture::robot(&ns);
    poll_json(&ns, &["service", "list"], |d| {
        d["services"].as_array().is_some_and(|s| s.len() == 2)
    });
    let before = shm_files(&ns);
    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["removed"], 0, "{doc}");
    for key in ["segments", "services", "schedulers"] {
        let f = fates(&doc, key);
        assert!(
            !f.is_empty() && f.iter().all(|f| f.starts_with("live")),
            "{key}: {doc}"
        );
    }
    assert_eq!(shm_files(&ns), before);
    // The node still answers.
    let (code, text, _) = horus(&ns, &["param", "get", "base", "rate_hz", "--timeout", "30"]);
    assert_eq!((code, text.trim()), (0, "50"));
    let (code, text, _) = horus(&ns, &["clean"]);
    assert_eq!(code, 0);
    assert!(text.contains("live (1 server, 1 client)"), "{text}");
}

/// Regression: `horus clean` did not look at the host's tf buffer, so the buffer of processes
/// that were all killed stayed in `/dev/shm` for good (its last participant never left).
#[test]
fn clean_removes_the_tf_buffer_of_killed_processes() {
    let ns = unique_ns("cleantf");
    let buffer = format!("horus.{ns}.tf.buffer");
    // `horus tf echo` opens the shared buffer as a listener and waits for frames never sent.
    let mut echo = std::process::Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(["tf", "echo", "map", "odom"])
        .env("HORUS_NAMESPACE", &ns)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let end = std::time::Instant::now() + common::PATIENCE;
    while !shm_files(&ns).contains(&buffer) {
        assert!(
            std::time::Instant::now() < end,
            "no tf buffer: {:?}",
            shm_files(&ns)
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    echo.kill().unwrap();
    echo.wait().unwrap();
    assert!(shm_files(&ns).contains(&buffer));

    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["tf_buffer"]["fate"], "removed", "{doc}");
    assert!(shm_files(&ns).is_empty(), "{:?}", shm_files(&ns));
}

/// Role variable of [`pool_holder`]: the pool id to create.
const POOL_HOLDER: &str = "HORUS_CLI_POOL_HOLDER";

/// The pool holder process's body (does nothing in a normal test run): creates a small tensor
/// pool with the id in [`POOL_HOLDER`], allocates a tensor from it, says `ready` and waits to be
/// killed.
#[test]
fn pool_holder() {
    let Ok(id) = std::env::var(POOL_HOLDER) else {
        return;
    };
    let ns = std::env::var("HORUS_NAMESPACE").unwrap();
    let cfg = horus_tensor::PoolConfig {
        slots: Some(2),
        slot_bytes: Some(4096),
    };
    let pool = horus_tensor::TensorPool::open(&ns, id.parse().unwrap(), cfg).unwrap();
    let _tensor = pool.alloc(64).unwrap();
    println!("\nready");
    // Until killed: stdin stays open and silent.
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// Regression: `horus clean` did not look at tensor pools, so a pool whose creator was SIGKILLed
/// stayed in `/dev/shm` for good (its last holder never left to unlink it).
#[test]
fn clean_removes_a_tensor_pool_whose_creator_was_sigkilled() {
    use std::io::BufRead;
    let ns = unique_ns("cleanpool");
    let pool = format!("horus.{ns}.tp.7");
    let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "pool_holder", "--nocapture", "--test-threads=1"])
        .env("HORUS_NAMESPACE", &ns)
        .env(POOL_HOLDER, "7")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(holder.stdout.take().unwrap());
    assert!(
        out.lines()
            .map_while(Result::ok)
            .any(|l| l.trim() == "ready"),
        "the pool holder ended before creating its pool"
    );
    assert_eq!(shm_files(&ns), std::slice::from_ref(&pool));
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(shm_files(&ns), std::slice::from_ref(&pool));

    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    let left = shm_files(&ns);
    // Leave nothing behind, whatever `horus clean` did.
    let _ = horus_tensor::remove_stale_pools(&ns);
    assert!(left.is_empty(), "{left:?}: {doc}");
    assert_eq!(doc["removed"], 1, "{doc}");
    assert_eq!(fates(&doc, "tensor_pools"), ["removed"], "{doc}");
    assert_eq!(
        doc["tensor_pools"][0]["path"],
        format!("/dev/shm/{pool}"),
        "{doc}"
    );
    let (code, text, _) = horus(&ns, &["clean"]);
    assert_eq!(code, 0);
    assert!(text.contains("removed 0"), "{text}");
}
