//! A node process declares parameters and serves them on `arm/params`; this
//! process lists, describes, gets and sets them (ok, wrong type, out of
//! range, unknown) and reads the node's report of each change it saw.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use horus::CallError;
use horus_params::{
    ParamClient, ParamClientError, ParamDecl, ParamError, ParamKind, ParamServer, ParamValue,
    Parameters, Range,
};

const NODE: &str = "arm";

fn unique_ns() -> String {
    format!("test-params-{}", std::process::id())
}

/// The parameters the node declares.
fn declare() -> Parameters {
    let mut p = Parameters::new();
    p.declare(
        ParamDecl::new("speed", 1.0)
            .description("top speed, m/s")
            .range(Range::F64 { min: 0.0, max: 2.0 }),
    )
    .unwrap();
    p.declare(ParamDecl::new("ids", vec![1_i64, 2]).range(Range::I64 { min: 0, max: 9 }))
        .unwrap();
    p.declare(ParamDecl::new("joints", vec!["shoulder".to_string()]))
        .unwrap();
    p.declare(ParamDecl::new("frame", "base_link")).unwrap();
    p.declare(ParamDecl::new("shutdown", false).description("stop the node"))
        .unwrap();
    p
}

/// The node: serves its parameters from its tick and prints every change.
fn node_main() {
    let mut params = declare();
    let file = std::env::var("HORUS_PARAMS_FILE").unwrap();
    params.load_yaml_file(&file).unwrap();
    params.take_changed();
    params.on_change(|name, _| println!("@@ callback {name}"));
    let mut server = ParamServer::new(NODE).unwrap();
    println!("@@ ready");
    let end = Instant::now() + Duration::from_secs(60); // parent gone: stop anyway
    while Instant::now() < end {
        server.serve_pending(&mut params);
        for name in params.take_changed() {
            println!("@@ changed {name} = {}", params.get(&name).unwrap());
        }
        if params.get("shutdown").unwrap() == &ParamValue::Bool(true) {
            params.dump_yaml_file(&file).unwrap();
            return;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    panic!("node not told to shut down");
}

#[test]
fn peer() {
    if std::env::var("HORUS_PARAMS_PEER").is_ok() {
        node_main();
    }
}

fn spawn_node(ns: &str, file: &std::path::Path) -> (Child, impl Iterator<Item = String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer", "--nocapture", "--test-threads=1"])
        .env("HORUS_NAMESPACE", ns)
        .env("HORUS_PARAMS_PEER", "1")
        .env("HORUS_PARAMS_FILE", file)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out: ChildStdout = child.stdout.take().unwrap();
    // The test harness prints its own text (`test peer ... ` before the
    // node's first line): keep what follows the node's `@@ ` marker.
    let lines = BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| l.find("@@ ").map(|i| l[i + 3..].to_owned()));
    (child, lines)
}

#[test]
fn another_process_lists_gets_and_sets_a_nodes_parameters() {
    let ns = unique_ns();
    // The node starts from a YAML file and dumps its parameters to it when it stops.
    let file = std::env::temp_dir().join(format!("{ns}.yaml"));
    std::fs::write(&file, "frame: map\nids: [4, 5]\n").unwrap();
    let (mut child, mut lines) = spawn_node(&ns, &file);
    assert_eq!(lines.next().as_deref(), Some("ready"));
    let mut client = ParamClient::open_in(NODE, &ns).unwrap();
    client.set_timeout(Duration::from_secs(10));

    // List: every declaration, in order, with default, description and range.
    let list = client.list().unwrap();
    let names: Vec<_> = list.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["speed", "ids", "joints", "frame", "shutdown"]);
    assert_eq!(list[0].kind, ParamKind::F64);
    assert_eq!(list[0].default, ParamValue::F64(1.0));
    assert_eq!(list[0].description, "top speed, m/s");
    assert_eq!(list[0].range, Some(Range::F64 { min: 0.0, max: 2.0 }));
    assert_eq!(
        list[2].default,
        ParamValue::StrArray(vec!["shoulder".into()])
    );
    assert_eq!(
        client.describe("ids").unwrap().range,
        Some(Range::I64 { min: 0, max: 9 })
    );

    // Get and a valid set, which the node reports (callback, then its tick).
    assert_eq!(client.get("speed").unwrap(), ParamValue::F64(1.0));
    assert_eq!(client.get("frame").unwrap(), ParamValue::Str("map".into()));
    assert_eq!(
        client.set("speed", &1.5.into()).unwrap(),
        ParamValue::F64(1.5)
    );
    assert_eq!(lines.next().as_deref(), Some("callback speed"));
    assert_eq!(lines.next().as_deref(), Some("changed speed = 1.5"));

    // Wrong type, out of range (scalar and one array element), unknown:
    // typed errors, value unchanged, nothing reported by the node.
    match client.set("speed", &"fast".into()) {
        Err(ParamClientError::Rejected(ParamError::WrongType {
            name,
            expected,
            got,
        })) => {
            assert_eq!(
                (name.as_str(), expected, got),
                ("speed", ParamKind::F64, ParamKind::Str)
            );
        }
        other => panic!("{other:?}"),
    }
    match client.set("speed", &9.0.into()) {
        Err(ParamClientError::Rejected(e @ ParamError::OutOfRange { .. })) => {
            assert_eq!(
                e.to_string(),
                "parameter `speed`: 9.0 is outside [0.0, 2.0]"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        client.set("ids", &vec![3_i64, 10].into()),
        Err(ParamClientError::Rejected(ParamError::OutOfRange { .. }))
    ));
    assert!(matches!(
        client.set("nope", &true.into()),
        Err(ParamClientError::Rejected(ParamError::NotFound { .. }))
    ));
    assert!(matches!(
        client.get("nope"),
        Err(ParamClientError::Rejected(ParamError::NotFound { .. }))
    ));
    // Too large for the service's value field: refused before sending.
    let huge = ParamValue::StrArray(vec!["x".repeat(200); 8]);
    assert!(matches!(
        client.set("joints", &huge),
        Err(ParamClientError::Rejected(ParamError::TooLarge { .. }))
    ));
    assert_eq!(client.get("speed").unwrap(), ParamValue::F64(1.5));
    assert_eq!(client.get("ids").unwrap(), ParamValue::I64Array(vec![4, 5]));
    assert_eq!(
        client.get("joints").unwrap(),
        ParamValue::StrArray(vec!["shoulder".into()])
    );

    // Arrays and strings set live.
    let joints = ParamValue::StrArray(vec!["shoulder".into(), "elbow".into()]);
    assert_eq!(client.set("joints", &joints).unwrap(), joints);
    assert_eq!(lines.next().as_deref(), Some("callback joints"));
    assert_eq!(
        lines.next().as_deref(),
        Some(r#"changed joints = ["shoulder", "elbow"]"#)
    );
    client.set("frame", &"odom".into()).unwrap();
    assert_eq!(lines.next().as_deref(), Some("callback frame"));
    assert_eq!(lines.next().as_deref(), Some(r#"changed frame = "odom""#));

    // Stop the node; it reports that change and exits cleanly.
    client.set("shutdown", &true.into()).unwrap();
    let rest: Vec<String> = lines.collect();
    assert_eq!(rest, ["callback shutdown", "changed shutdown = true"]);
    assert!(child.wait().unwrap().success());
    let mut reloaded = declare();
    reloaded.load_yaml_file(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(reloaded.get("speed").unwrap(), &ParamValue::F64(1.5));
    assert_eq!(
        reloaded.get("ids").unwrap(),
        &ParamValue::I64Array(vec![4, 5])
    );
    assert_eq!(reloaded.get("joints").unwrap(), &joints);
    assert_eq!(
        reloaded.get("frame").unwrap(),
        &ParamValue::Str("odom".into())
    );

    // The node is gone: a typed NoServer, at once.
    assert!(matches!(
        client.get("speed"),
        Err(ParamClientError::Call(CallError::NoServer(_)))
    ));
    drop(client);
    let leftovers: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(&ns))
        .collect();
    assert!(leftovers.is_empty(), "left in /dev/shm: {leftovers:?}");
}
