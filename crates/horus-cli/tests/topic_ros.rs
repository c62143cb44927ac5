//! `horus topic echo` and `horus topic pub` on ROS 2-typed topics, against real topics:
//! this test process publishes and subscribes through horus's run-time ROS 2 API, the
//! `horus` binary (another process) decodes from the topic's own definition and encodes
//! from the compiled-in standard types.

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use horus::inspect::{open_or_create_ros_topic, ros_qos, RawRosReader, TopicView};
use horus::msgs::Ros2Type;
use horus_idl::cdr::{decode, encode, CdrValue};
use horus_idl::{resolve_ros2msg, InterfaceSet, Resolved, TypeName};

/// How long a test waits for something to appear before calling it a hang (never a
/// measured duration).
const PATIENCE: Duration = Duration::from_secs(60);

fn ns(tag: &str) -> String {
    format!("cli-topic-ros-{}-{tag}", std::process::id())
}

fn horus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        .output()
        .expect("run horus")
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::piped())
        .spawn()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "horus failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A type of no standard package, known to the tools only through its definition.
const READING_DEFINITION: &str = "\
# A reading of a made-up sensor.
std_msgs/Header header
string label
float32[] values
Point2[<=4] corners
uint8[] raw
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
================================================================================
MSG: demo_msgs/Point2
float64 x
float64 y 0.5
";

fn reading_type() -> (Ros2Type, Resolved, TypeName) {
    let (resolved, root) = resolve_ros2msg("demo_msgs/msg/Reading", READING_DEFINITION).unwrap();
    let hash = resolved.type_hash("demo_msgs/msg/Reading").unwrap();
    let ty = Ros2Type::new(
        "demo_msgs/msg/Reading",
        &hash.to_string(),
        READING_DEFINITION,
    );
    (ty, resolved, root)
}

fn standard_type(name: &str) -> (Ros2Type, Resolved, TypeName) {
    let resolved = InterfaceSet::standard().unwrap().resolve().unwrap();
    let hash = resolved.type_hash(name).unwrap();
    let definition = resolved.ros2msg_definition(name).unwrap();
    let ty = Ros2Type::new(name, &hash.to_string(), &definition);
    (ty, resolved, TypeName::parse(name).unwrap())
}

fn f(name: &str, v: CdrValue) -> (String, CdrValue) {
    (name.to_owned(), v)
}

fn reading_value() -> CdrValue {
    CdrValue::Struct(vec![
        f(
            "header",
            CdrValue::Struct(vec![
                f(
                    "stamp",
                    CdrValue::Struct(vec![
                        f("sec", CdrValue::Int(7)),
                        f("nanosec", CdrValue::UInt(5)),
                    ]),
                ),
                f("frame_id", CdrValue::String("base_link".into())),
            ]),
        ),
        f("label", CdrValue::String("two words".into())),
        f(
            "values",
            CdrValue::Array((0..20).map(|i| CdrValue::Float32(i as f32 * 0.5)).collect()),
        ),
        f(
            "corners",
            CdrValue::Array(vec![CdrValue::Struct(vec![
                f("x", CdrValue::Float64(1.0)),
                f("y", CdrValue::Float64(-2.25)),
            ])]),
        ),
        f("raw", CdrValue::Bytes(vec![1, 2, 3])),
    ])
}

/// Waits until an observer (`horus topic echo`) has joined the topic.
fn wait_for_observer(view: &TopicView) {
    let end = Instant::now() + PATIENCE;
    while !view.snapshot().subscribers.iter().any(|s| s.observer) {
        assert!(Instant::now() < end, "echo never joined");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn recv(r: &mut RawRosReader) -> Vec<u8> {
    r.recv_timeout(PATIENCE)
        .expect("a message within the patience")
        .cdr()
        .to_vec()
}

fn assert_no_shm_left(ns: &str) {
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(ns))
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}

#[test]
fn echo_decodes_a_topic_of_an_unknown_type_from_its_definition_as_ros2_prints_it() {
    let ns = ns("echo");
    let (ty, resolved, root) = reading_type();
    {
        let view = open_or_create_ros_topic(&ns, "sensor/reading", &ty, &ros_qos(1 << 20)).unwrap();
        let mut publisher = view.ros_publisher().unwrap();
        let echo = spawn(&[
            "topic",
            "echo",
            "sensor/reading",
            "--namespace",
            &ns,
            "--once",
            "--timeout",
            "60",
        ]);
        wait_for_observer(&view);
        let bytes = encode(&resolved, &root, &reading_value()).unwrap();
        publisher.send_cdr(&bytes).unwrap();
        let text = stdout(&echo.wait_with_output().unwrap());
        let expected = "header:\n  stamp:\n    sec: 7\n    nanosec: 5\n  frame_id: base_link\n\
                        label: \"two words\"\n\
                        values:\n- 0.0\n- 0.5\n- 1.0\n- 1.5\n- 2.0\n- 2.5\n- 3.0\n- 3.5\n\
                        - '... 12 more'\n\
                        corners:\n- x: 1.0\n  y: -2.25\n\
                        raw:\n- 1\n- 2\n- 3\n---\n";
        assert_eq!(text, expected);

        // --full prints every element; --field selects.
        let echo = spawn(&[
            "topic",
            "echo",
            "sensor/reading",
            "--namespace",
            &ns,
            "--once",
            "--full",
            "-f",
            "header.frame_id",
            "--timeout",
            "60",
        ]);
        wait_for_observer(&view);
        publisher.send_cdr(&bytes).unwrap();
        let text = stdout(&echo.wait_with_output().unwrap());
        assert_eq!(text, "header.frame_id: base_link\n---\n");
    }
    assert_no_shm_left(&ns);
}

#[test]
fn what_echo_json_prints_pub_sends_back_byte_identical() {
    let ns = ns("roundtrip");
    let (ty, resolved, root) = reading_type();
    {
        let view = open_or_create_ros_topic(&ns, "reading", &ty, &ros_qos(1 << 20)).unwrap();
        let mut publisher = view.ros_publisher().unwrap();
        let mut sub = view.ros_subscriber(true).unwrap();
        let echo = spawn(&[
            "--json",
            "topic",
            "echo",
            "reading",
            "--namespace",
            &ns,
            "--once",
            "--timeout",
            "60",
        ]);
        wait_for_observer(&view);
        let mut value = reading_value();
        if let CdrValue::Struct(fields) = &mut value {
            fields[2].1 = CdrValue::Array(vec![
                CdrValue::Float32(f32::NAN),
                CdrValue::Float32(f32::NEG_INFINITY),
                CdrValue::Float32(0.1),
            ]);
        }
        let bytes = encode(&resolved, &root, &value).unwrap();
        publisher.send_cdr(&bytes).unwrap();
        assert_eq!(recv(&mut sub), bytes);
        let json = stdout(&echo.wait_with_output().unwrap());
        assert!(json.contains("\"values\":[\"nan\",\"-inf\",0.1]"), "{json}");

        // Back through `pub` without a type: the topic's own definition encodes it.
        let mut publish = spawn(&["topic", "pub", "reading", "-", "--namespace", &ns]);
        publish
            .stdin
            .take()
            .unwrap()
            .write_all(json.as_bytes())
            .unwrap();
        let out = stdout(&publish.wait_with_output().unwrap());
        assert_eq!(out, "reading: sent 1 message(s), 1 deliveries\n");
        let back = recv(&mut sub);
        assert_eq!(back, bytes);
        let decoded = decode(&resolved, &root, &back).unwrap();
        assert_eq!(decoded.field("label"), value.field("label"));
    }
    assert_no_shm_left(&ns);
}

#[test]
fn pub_with_a_standard_type_fills_ros2_defaults_for_missing_fields() {
    let ns = ns("pub");
    let (ty, resolved, root) = standard_type("sensor_msgs/msg/Imu");
    {
        let view = open_or_create_ros_topic(&ns, "imu", &ty, &ros_qos(1 << 20)).unwrap();
        let mut sub = view.ros_subscriber(true).unwrap();
        for type_arg in ["sensor_msgs/msg/Imu", "sensor_msgs/Imu"] {
            let out = horus(&[
                "topic",
                "pub",
                "imu",
                type_arg,
                "{header: {frame_id: imu}, linear_acceleration: {z: 9.81}}",
                "--namespace",
                &ns,
            ]);
            assert_eq!(stdout(&out), "imu: sent 1 message(s), 1 deliveries\n");
            let v = decode(&resolved, &root, &recv(&mut sub)).unwrap();
            let header = v.field("header").unwrap();
            assert_eq!(
                header.field("frame_id"),
                Some(&CdrValue::String("imu".into()))
            );
            let acc = v.field("linear_acceleration").unwrap();
            assert_eq!(acc.field("z"), Some(&CdrValue::Float64(9.81)));
            assert_eq!(acc.field("x"), Some(&CdrValue::Float64(0.0)));
            // geometry_msgs/Quaternion's file defaults w to 1.
            let q = v.field("orientation").unwrap();
            assert_eq!(q.field("w"), Some(&CdrValue::Float64(1.0)));
            assert_eq!(
                v.field("orientation_covariance"),
                Some(&CdrValue::Array(vec![CdrValue::Float64(0.0); 9]))
            );
        }
    }
    assert_no_shm_left(&ns);
}

#[test]
fn pub_with_a_type_creates_the_topic_that_typed_endpoints_then_meet() {
    let ns = ns("create");
    let out = horus(&[
        "topic",
        "pub",
        "chatter",
        "std_msgs/msg/String",
        "{data: hello}",
        "--namespace",
        &ns,
        "--rate",
        "200",
        "--count",
        "1",
    ]);
    // Nobody listened: sent, not delivered; the topic went away with its last endpoint.
    assert_eq!(stdout(&out), "chatter: sent 1 message(s), 0 deliveries\n");
    assert_no_shm_left(&ns);
}

#[test]
fn pub_refuses_unknown_fields_wrong_types_and_other_types_naming_them() {
    let ns = ns("refuse");
    let (ty, _, _) = standard_type("sensor_msgs/msg/Imu");
    {
        let view = open_or_create_ros_topic(&ns, "imu", &ty, &ros_qos(1 << 20)).unwrap();
        let mut sub = view.ros_subscriber(false).unwrap();
        for (message, expected) in [
            (
                "{header: {frame_idx: a}}",
                "field 'header.frame_idx': std_msgs/msg/Header has no such field",
            ),
            (
                "{orientation: {x: a}}",
                "field 'orientation.x': expected a number (float64)",
            ),
            (
                "{orientation_covariance: [1, 2]}",
                "field 'orientation_covariance': expected exactly 9 elements",
            ),
            (
                "{header: {stamp: {sec: 3000000000}}}",
                "field 'header.stamp.sec': 3000000000 is out of range for int32",
            ),
            (
                "{header: {stamp: {nanosec: -1}}}",
                "field 'header.stamp.nanosec': -1 is out of range for uint32",
            ),
            (
                "{header: {frame_id: 5}}",
                "field 'header.frame_id': expected a string",
            ),
            ("{header: 5}", "field 'header': expected a mapping"),
            ("[1, 2]", "the message: expected a mapping"),
            ("{orientation: {x: 1", "not YAML/JSON"),
        ] {
            let out = horus(&[
                "topic",
                "pub",
                "imu",
                "sensor_msgs/Imu",
                message,
                "--namespace",
                &ns,
            ]);
            assert_eq!(out.status.code(), Some(1), "{message}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(expected), "{message}: {err}");
            // The same without the type: the topic's definition.
            let out = horus(&["topic", "pub", "imu", message, "--namespace", &ns]);
            assert_eq!(out.status.code(), Some(1), "{message}");
        }
        for (args, expected) in [
            (
                &["std_msgs/msg/String", "{}"][..],
                "carries sensor_msgs/msg/Imu",
            ),
            (&["std_srvs/srv/SetBool", "{}"], "is a service or action"),
            (&["nope_msgs/Nope", "{}"], "unknown type 'nope_msgs/Nope'"),
        ] {
            let mut all = vec!["topic", "pub", "imu"];
            all.extend_from_slice(args);
            all.extend_from_slice(&["--namespace", &ns]);
            let out = horus(&all);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(expected), "{args:?}: {err}");
        }
        assert!(sub.try_recv().is_none(), "nothing was published");
    }
    assert_no_shm_left(&ns);
}

#[test]
fn echo_of_a_topic_whose_definition_does_not_read_fails_clearly() {
    let ns = ns("baddef");
    let hash = format!("RIHS01_{}", "ab".repeat(32));
    let ty = Ros2Type::new("demo_msgs/msg/Bad", &hash, "int33 x\n");
    {
        let view = open_or_create_ros_topic(&ns, "bad", &ty, &ros_qos(1 << 10)).unwrap();
        // An endpoint, so that the segment goes with the last one to leave.
        let _sub = view.ros_subscriber(false).unwrap();
        let out = horus(&["topic", "echo", "bad", "--namespace", &ns, "--once"]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("its ros2msg definition cannot be read"),
            "{err}"
        );
        assert!(err.contains("int33"), "{err}");
    }
    assert_no_shm_left(&ns);
}

#[test]
fn echo_skips_and_counts_bytes_that_are_not_the_type() {
    let ns = ns("garbage");
    let (ty, resolved, root) = reading_type();
    {
        let view = open_or_create_ros_topic(&ns, "reading", &ty, &ros_qos(1 << 20)).unwrap();
        let mut publisher = view.ros_publisher().unwrap();
        let echo = spawn(&[
            "topic",
            "echo",
            "reading",
            "--namespace",
            &ns,
            "--once",
            "--timeout",
            "60",
        ]);
        wait_for_observer(&view);
        // A header and a string length running past the end, then a good message.
        publisher
            .send_cdr(&[0, 1, 0, 0, 9, 9, 9, 9, 200, 0, 0, 0])
            .unwrap();
        let bytes = encode(&resolved, &root, &reading_value()).unwrap();
        publisher.send_cdr(&bytes).unwrap();
        let out = echo.wait_with_output().unwrap();
        let text = stdout(&out);
        assert!(text.starts_with("header:\n"), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("skipped a message that is not a valid demo_msgs/msg/Reading"),
            "{err}"
        );
        assert!(err.contains("1 undecodable"), "{err}");
    }
    assert_no_shm_left(&ns);
}

#[test]
fn echo_warns_when_the_definition_does_not_hash_to_the_type_hash_and_decodes_with_it() {
    let ns = ns("hash");
    let (mut ty, resolved, root) = reading_type();
    ty.type_hash = format!("RIHS01_{}", "cd".repeat(32));
    {
        let view = open_or_create_ros_topic(&ns, "reading", &ty, &ros_qos(1 << 20)).unwrap();
        let mut publisher = view.ros_publisher().unwrap();
        let echo = spawn(&[
            "topic",
            "echo",
            "reading",
            "--namespace",
            &ns,
            "--once",
            "--timeout",
            "60",
            "-f",
            "label",
        ]);
        wait_for_observer(&view);
        publisher
            .send_cdr(&encode(&resolved, &root, &reading_value()).unwrap())
            .unwrap();
        let out = echo.wait_with_output().unwrap();
        assert_eq!(stdout(&out), "label: two words\n---\n");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not to its type hash RIHS01_cdcd"), "{err}");
    }
    assert_no_shm_left(&ns);
}

#[test]
fn pub_with_a_ros_type_on_a_fixed_layout_topic_is_refused_naming_both() {
    let ns = ns("fixed");
    {
        let topic = horus::Topic::<horus::msgs::CmdVel>::builder("cmd_vel")
            .namespace(&ns)
            .open()
            .unwrap();
        let mut sub = topic.subscriber().unwrap();
        let out = horus(&[
            "topic",
            "pub",
            "cmd_vel",
            "geometry_msgs/msg/Twist",
            "{linear: {x: 1.0}}",
            "--namespace",
            &ns,
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("carries the horus type") && err.contains("geometry_msgs/msg/Twist"),
            "{err}"
        );
        assert!(sub.try_recv().is_none());
    }
    assert_no_shm_left(&ns);
}
