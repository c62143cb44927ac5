//! The demo's recording (`make demo` writes it: `DEMO_RECORDING`) read by ROS 2's own tools.
//!
//! The scan, IMU, command, odometry and transform (`tf`, `tf_static`) topics are ROS-typed, so
//! `horus record` writes them as `ros2msg`/`cdr` channels. This test reads every message of
//! those six channels with
//! horus (the generated types of `horus-ros-msgs`, the same the robot publishes with), checks
//! what the demo must have written (types and hashes, frames, 360 ranges, stamps in order,
//! a pose that follows the commands), writes every decoded message as JSON, and has
//! `tests/ros2_readers/check_demo_recording.py` decode the same file with
//! `mcap-ros2-support`, `rosbags` (its type store built from the file, hashes verified) and
//! rclpy's `deserialize_message`, and compare each message field by field with horus's.
//!
//! Without `DEMO_RECORDING` the test has no recording to read: it says so and passes (the
//! Makefile's test-demo-smoke phase runs it right after `make demo` with the variable set;
//! then a missing ROS 2 venv fails the test rather than skipping it).

use std::path::{Path, PathBuf};
use std::process::Command;

use horus::cdr::{decode_message, RosMessage};
use horus_record::RecordingReader;
use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::geometry_msgs::msg::{
    Point, Pose, PoseWithCovariance, Quaternion, Twist, TwistWithCovariance, Vector3,
};
use horus_ros_msgs::nav_msgs::msg::Odometry;
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};
use horus_ros_msgs::std_msgs::msg::Header;
use horus_ros_msgs::tf2_msgs::msg::TFMessage;
use serde_json::{json, Value as Json};

const SCAN: &str = "demo/scan";
const IMU: &str = "demo/imu";
const CMD_VEL: &str = "demo/cmd_vel";
const ODOM: &str = "demo/odom";
const TF: &str = "tf";
const TF_STATIC: &str = "tf_static";

/// A float as `check_demo_recording.py` reads it: JSON has no ±∞/NaN, so those are
/// `{"$float": "inf" | "-inf" | "nan"}` (the scan's "no return" beams are +∞).
fn f(v: f64) -> Json {
    if v.is_finite() {
        json!(v)
    } else if v.is_nan() {
        json!({"$float": "nan"})
    } else if v > 0.0 {
        json!({"$float": "inf"})
    } else {
        json!({"$float": "-inf"})
    }
}

fn floats<T: Copy + Into<f64>>(v: &[T]) -> Json {
    Json::Array(v.iter().map(|x| f((*x).into())).collect())
}

fn time(t: &Time) -> Json {
    json!({"sec": t.sec, "nanosec": t.nanosec})
}

fn header(h: &Header) -> Json {
    json!({"stamp": time(&h.stamp), "frame_id": h.frame_id})
}

fn vector3(v: &Vector3) -> Json {
    json!({"x": f(v.x), "y": f(v.y), "z": f(v.z)})
}

fn point(p: &Point) -> Json {
    json!({"x": f(p.x), "y": f(p.y), "z": f(p.z)})
}

fn quaternion(q: &Quaternion) -> Json {
    json!({"x": f(q.x), "y": f(q.y), "z": f(q.z), "w": f(q.w)})
}

fn scan_json(m: &LaserScan) -> Json {
    json!({
        "header": header(&m.header),
        "angle_min": f(m.angle_min.into()),
        "angle_max": f(m.angle_max.into()),
        "angle_increment": f(m.angle_increment.into()),
        "time_increment": f(m.time_increment.into()),
        "scan_time": f(m.scan_time.into()),
        "range_min": f(m.range_min.into()),
        "range_max": f(m.range_max.into()),
        "ranges": floats(&m.ranges),
        "intensities": floats(&m.intensities),
    })
}

fn imu_json(m: &Imu) -> Json {
    json!({
        "header": header(&m.header),
        "orientation": quaternion(&m.orientation),
        "orientation_covariance": floats(&m.orientation_covariance),
        "angular_velocity": vector3(&m.angular_velocity),
        "angular_velocity_covariance": floats(&m.angular_velocity_covariance),
        "linear_acceleration": vector3(&m.linear_acceleration),
        "linear_acceleration_covariance": floats(&m.linear_acceleration_covariance),
    })
}

fn twist_json(m: &Twist) -> Json {
    json!({"linear": vector3(&m.linear), "angular": vector3(&m.angular)})
}

fn pose_json(p: &Pose) -> Json {
    json!({"position": point(&p.position), "orientation": quaternion(&p.orientation)})
}

fn odom_json(m: &Odometry) -> Json {
    let PoseWithCovariance { pose, covariance } = &m.pose;
    let TwistWithCovariance {
        twist,
        covariance: twist_cov,
    } = &m.twist;
    json!({
        "header": header(&m.header),
        "child_frame_id": m.child_frame_id,
        "pose": {"pose": pose_json(pose), "covariance": floats(covariance)},
        "twist": {"twist": twist_json(twist), "covariance": floats(twist_cov)},
    })
}

fn tf_json(m: &TFMessage) -> Json {
    json!({"transforms": m.transforms.iter().map(|t| json!({
        "header": header(&t.header),
        "child_frame_id": t.child_frame_id,
        "transform": {
            "translation": vector3(&t.transform.translation),
            "rotation": quaternion(&t.transform.rotation),
        },
    })).collect::<Vec<_>>()})
}

/// One ROS-typed channel of the recording, decoded by horus.
struct Channel<M> {
    topic: &'static str,
    messages: Vec<M>,
}

impl<M: RosMessage> Channel<M> {
    fn new(topic: &'static str) -> Self {
        Channel {
            topic,
            messages: Vec::new(),
        }
    }

    fn expected(&self, to_json: fn(&M) -> Json) -> Json {
        json!({
            "topic": self.topic,
            "type": M::TYPE_NAME,
            "hash": M::TYPE_HASH,
            "messages": self.messages.iter().map(to_json).collect::<Vec<_>>(),
        })
    }
}

fn ns(t: &Time) -> u64 {
    u64::try_from(t.sec).unwrap() * 1_000_000_000 + u64::from(t.nanosec)
}

/// The stamps of `headers` rise strictly (each message stamped at its send).
fn assert_rising<'a>(topic: &str, headers: impl Iterator<Item = &'a Header>) {
    let stamps: Vec<u64> = headers.map(|h| ns(&h.stamp)).collect();
    assert!(
        stamps.windows(2).all(|w| w[0] < w[1]),
        "{topic}: header stamps not rising"
    );
}

/// The ROS 2 venv's Python (`HORUS_ROS2_PYTHON`, else the repository's scripts/ros2-python,
/// which runs `make setup-ros2`'s venv).
fn ros2_python() -> PathBuf {
    match std::env::var_os("HORUS_ROS2_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ros2-python"),
    }
}

#[test]
fn demo_recording_decodes_field_by_field_in_three_ros2_readers() {
    let Some(path) = std::env::var_os("DEMO_RECORDING").map(PathBuf::from) else {
        eprintln!(
            "SKIPPED: DEMO_RECORDING is not set (make test-demo-smoke sets it after `make demo`)"
        );
        return;
    };
    let mut scans = Channel::<LaserScan>::new(SCAN);
    let mut imus = Channel::<Imu>::new(IMU);
    let mut twists = Channel::<Twist>::new(CMD_VEL);
    let mut odoms = Channel::<Odometry>::new(ODOM);
    let mut tfs = Channel::<TFMessage>::new(TF);
    let mut statics = Channel::<TFMessage>::new(TF_STATIC);
    let mut r = RecordingReader::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    while let Some(m) = r.next_message().unwrap() {
        let ch = r.channel(m.channel).unwrap();
        let (name, hash) = match &ch.ros2 {
            Some(Ok(ros2)) => (ros2.name.clone(), ros2.hash.clone()),
            Some(Err(e)) => panic!("{}: not a readable ROS 2 channel: {e}", ch.topic),
            None => continue, // demo/stop, demo/control_trace: horus fixed-layout types
        };
        macro_rules! take {
            ($chan:expr) => {{
                assert_eq!(name, type_name_of(&$chan), "{} type", ch.topic);
                assert_eq!(hash.as_deref(), Some(hash_of(&$chan)), "{} hash", ch.topic);
                $chan
                    .messages
                    .push(decode_message(&m.cdr).unwrap_or_else(|e| {
                        panic!("{}: horus cannot decode a message: {e}", ch.topic)
                    }));
            }};
        }
        match ch.topic.as_str() {
            SCAN => take!(scans),
            IMU => take!(imus),
            CMD_VEL => take!(twists),
            ODOM => take!(odoms),
            TF => take!(tfs),
            TF_STATIC => take!(statics),
            other => panic!("unexpected ROS-typed channel {other}"),
        }
    }
    for (topic, n) in [
        (SCAN, scans.messages.len()),
        (IMU, imus.messages.len()),
        (CMD_VEL, twists.messages.len()),
        (ODOM, odoms.messages.len()),
        (TF, tfs.messages.len()),
        (TF_STATIC, statics.messages.len()),
    ] {
        assert!(n > 0, "{}: no {topic} messages", path.display());
    }

    // What the robot publishes.
    for s in &scans.messages {
        assert_eq!(s.header.frame_id, "laser");
        assert_eq!(s.ranges.len(), 360);
        assert!(s.angle_min < 0.0 && s.angle_max > 0.0 && s.angle_increment > 0.0);
        assert!(s
            .ranges
            .iter()
            .all(|&r| r.is_infinite() || r >= s.range_min));
    }
    assert!(
        scans
            .messages
            .iter()
            .any(|s| s.ranges.iter().any(|&r| r < 2.0)),
        "the obstacle is seen"
    );
    for i in &imus.messages {
        assert_eq!(i.header.frame_id, "imu");
        assert_eq!(i.linear_acceleration.z, 9.81);
        let q = &i.orientation;
        assert!((q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w - 1.0).abs() < 1e-9);
    }
    for o in &odoms.messages {
        assert_eq!(o.header.frame_id, "odom");
        assert_eq!(o.child_frame_id, "base_link");
    }
    assert_rising(SCAN, scans.messages.iter().map(|m| &m.header));
    assert_rising(IMU, imus.messages.iter().map(|m| &m.header));
    assert_rising(ODOM, odoms.messages.iter().map(|m| &m.header));
    // The odometry's velocity is a command the controller sent (or zero: none yet, stale,
    // stopped), and the robot moved.
    for o in &odoms.messages {
        let t = &o.twist.twist;
        assert!(
            (t.linear.x == 0.0 && t.angular.z == 0.0)
                || twists
                    .messages
                    .iter()
                    .any(|c| c.linear.x == t.linear.x && c.angular.z == t.angular.z),
            "odometry velocity {t:?} was never commanded"
        );
    }
    // The tf tree: map → odom → base_link → laser/imu, the statics once (latched), the
    // odometry's pose as odom → base_link.
    let edges = |m: &TFMessage| -> Vec<(String, String)> {
        m.transforms
            .iter()
            .map(|t| (t.header.frame_id.clone(), t.child_frame_id.clone()))
            .collect()
    };
    let mut static_edges = edges(&statics.messages[0]);
    static_edges.sort();
    assert_eq!(
        static_edges,
        [
            ("base_link".to_owned(), "imu".to_owned()),
            ("base_link".to_owned(), "laser".to_owned()),
            ("map".to_owned(), "odom".to_owned()),
        ]
    );
    for m in &tfs.messages {
        assert_eq!(edges(m), [("odom".to_owned(), "base_link".to_owned())]);
    }
    assert_rising(TF, tfs.messages.iter().map(|m| &m.transforms[0].header));
    let last = &odoms.messages.last().unwrap().pose.pose.position;
    assert!(last.x != 0.0 || last.y != 0.0, "the robot never moved");

    // The ROS 2 readers, compared with what horus decoded.
    let expected = json!({"topics": [
        scans.expected(scan_json),
        imus.expected(imu_json),
        twists.expected(twist_json),
        odoms.expected(odom_json),
        tfs.expected(tf_json),
        statics.expected(tf_json),
    ]});
    let dir = std::env::temp_dir().join(format!("horus-demo-ros2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let expected_path = dir.join("expected.json");
    std::fs::write(&expected_path, serde_json::to_vec(&expected).unwrap()).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ros2_readers/check_demo_recording.py");
    let python = ros2_python();
    let out = Command::new(&python)
        .arg(&script)
        .arg(&path)
        .arg(&expected_path)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{text}");
    assert!(
        out.status.success(),
        "the ROS 2 readers' check failed:\n{text}"
    );
    let n = scans.messages.len()
        + imus.messages.len()
        + twists.messages.len()
        + odoms.messages.len()
        + tfs.messages.len()
        + statics.messages.len();
    assert!(
        text.contains(&format!("OK: 6 topics, {n} messages, 3 readers")),
        "{text}"
    );
    // rclpy's wheels have no tf2_msgs (no PyPI package): only it skips the two transform
    // channels, which mcap-ros2-support and rosbags (its type store from the file) decode.
    let skipped: Vec<&str> = text.lines().filter(|l| l.contains("skipped:")).collect();
    assert!(
        skipped
            .iter()
            .all(|l| l.starts_with("skipped: rclpy tf2_msgs/msg/TFMessage on tf")),
        "a reader skipped a type:\n{text}"
    );
}

fn type_name_of<M: RosMessage>(_: &Channel<M>) -> &'static str {
    M::TYPE_NAME
}

fn hash_of<M: RosMessage>(_: &Channel<M>) -> &'static str {
    M::TYPE_HASH
}
