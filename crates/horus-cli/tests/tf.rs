//! `horus tf frames` and `horus tf echo` against a real robot: this test process broadcasts
//! a tf tree (statics latched on `tf_static` before any tool runs, `odom → base_link` on
//! `tf` at ~100 Hz), the `horus` binary (another process) surveys and looks it up.

mod common;

use common::tf_tree::TfTree;
use common::{horus, horus_json, unique_ns};

fn shm_leftovers(ns: &str) -> Vec<String> {
    let prefix = format!("horus.{ns}.");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn frames_lists_the_tree_with_parents_rates_and_the_publisher() {
    let ns = unique_ns("tf-frames");
    {
        let _robot = TfTree::start(&ns);
        let (code, doc) = horus_json(&ns, &["tf", "frames", "--window", "0.5"]);
        assert_eq!(code, 0, "{doc}");
        assert_eq!(doc["roots"], serde_json::json!(["map"]), "{doc}");
        let frames = doc["frames"].as_array().unwrap();
        let frame = |name: &str| {
            frames
                .iter()
                .find(|f| f["frame"] == name)
                .unwrap_or_else(|| panic!("no frame {name} in {doc}"))
        };
        // The statics were published before `horus tf frames` started: latched.
        assert_eq!(frame("odom")["parent"], "map");
        assert_eq!(frame("odom")["static"], true);
        assert_eq!(frame("laser")["parent"], "base_link");
        let base = frame("base_link");
        assert_eq!(base["parent"], "odom");
        assert_eq!(base["static"], false);
        assert!(base["rate_hz"].as_f64().unwrap() > 0.0, "{base}");
        assert_eq!(base["publisher_pid"], std::process::id());

        let (code, text, err) = horus(&ns, &["tf", "frames", "--window", "0.3"]);
        assert_eq!(code, 0, "{err}");
        assert!(text.starts_with("FRAME"), "{text}");
        assert!(text.contains("\n    base_link  odom"), "{text}");

        let (code, dot, err) = horus(&ns, &["tf", "frames", "--dot", "--window", "0.3"]);
        assert_eq!(code, 0, "{err}");
        assert!(dot.starts_with("digraph tf {"), "{dot}");
        assert!(dot.contains(r#""map" -> "odom""#), "{dot}");
        assert!(dot.contains(r#""odom" -> "base_link""#), "{dot}");
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn frames_draws_svg_with_graphviz_or_says_it_is_missing() {
    let ns = unique_ns("tf-svg");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(&ns);
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("frames.svg");
    {
        let _robot = TfTree::start(&ns);
        let (code, _, err) = horus(
            &ns,
            &[
                "tf",
                "frames",
                "--window",
                "0.2",
                "-o",
                svg.to_str().unwrap(),
            ],
        );
        let have_dot = std::process::Command::new("dot").arg("-V").output().is_ok();
        if have_dot {
            assert_eq!(code, 0, "{err}");
            let text = std::fs::read_to_string(&svg).unwrap();
            assert!(text.contains("<svg"), "{text}");
        } else {
            assert_eq!(code, 1);
            assert!(err.contains("graphviz"), "{err}");
        }
        // A format nobody draws is refused before anything runs.
        let (code, _, err) = horus(&ns, &["tf", "frames", "--window", "0", "-o", "x.jpg"]);
        assert_eq!(code, 1);
        assert!(err.contains(".svg, .png or .dot"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn echo_prints_the_looked_up_transform_its_age_and_rate() {
    let ns = unique_ns("tf-echo");
    {
        let _robot = TfTree::start(&ns);
        let (code, out, err) = horus(
            &ns,
            &[
                "--json", "tf", "echo", "map", "laser", "-n", "2", "--rate", "10",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        for l in &lines {
            let t: Vec<f64> = serde_json::from_value(l["translation"].clone()).unwrap();
            // laser in map = odom→base_link (1, 2, 0) + base_link→laser (0.1, 0, 0.2).
            assert!(
                (t[0] - 1.1).abs() < 1e-9 && (t[1] - 2.0).abs() < 1e-9,
                "{l}"
            );
            assert!((t[2] - 0.2).abs() < 1e-9, "{l}");
            assert!(l["age_s"].as_f64().is_some(), "{l}");
        }
        // Between the two prints base_link changed: a rate.
        assert!(lines[1]["rate_hz"].as_f64().unwrap() > 0.0, "{out}");

        let (code, text, err) = horus(&ns, &["tf", "echo", "odom", "base_link", "-n", "1"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            text.contains("- Translation: [1.000, 2.000, 0.000]"),
            "{text}"
        );
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn echo_of_an_unknown_frame_fails_after_its_timeout_naming_it() {
    let ns = unique_ns("tf-echo-unknown");
    {
        let _robot = TfTree::start(&ns);
        let (code, _, err) = horus(&ns, &["tf", "echo", "map", "nowhere", "--timeout", "0.7"]);
        assert_eq!(code, 1);
        assert!(err.contains("\"nowhere\" does not exist"), "{err}");
        let (code, _, err) = horus(&ns, &["tf", "echo", "map", "odom", "--rate", "0"]);
        assert_eq!(code, 1);
        assert!(err.contains("--rate"), "{err}");
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}
