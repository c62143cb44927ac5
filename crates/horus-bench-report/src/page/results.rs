//! The result files of one benchmark run, each parsed if present.

use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde_json::Value;

use horus_bench::block_wake::BlockWakeDoc;
use horus_bench::interleaved::RoundRow;
use horus_bench::logging::LogRow;
use horus_bench::many_to_many::ManyRow;
use horus_bench::report::{Machine, Row};
use horus_bench::rows::{PathRow, RoboticsRow, ScaleRow, SweepRow};
use horus_bench::rpc::rows::RpcRow;
use horus_bench::suite::Doc;
use horus_bench::tables;
use horus_bench_multi_host_rows::rows::MhRow;
use horus_bench_ros::ros_rows::RosRow;
use horus_bench_ros::tf_rows::TfDoc;
use horus_bench_ros2_rows::table::Row as Ros2Row;

/// The result files of one run, each parsed if present.
pub(crate) struct Results {
    pub(crate) peers: Option<Doc<Row>>,
    /// `interleaved`: the rounds every "faster" verdict is drawn from.
    pub(crate) interleaved: Option<Doc<RoundRow>>,
    /// `many_to_many`: 4 publishers × 4 subscribers against iceoryx2, in rounds.
    pub(crate) many_to_many: Option<Doc<ManyRow>>,
    pub(crate) robotics: Option<Doc<RoboticsRow>>,
    pub(crate) sweep: Option<Doc<SweepRow>>,
    pub(crate) paths: Option<Doc<PathRow>>,
    pub(crate) scale: Option<Doc<ScaleRow>>,
    pub(crate) pingpong: Option<Value>,
    /// `pingpong --touch` (the 1 MiB-vs-16 B loan target); optional.
    pub(crate) pingpong_touch: Option<Value>,
    pub(crate) determinism: Option<Value>,
    pub(crate) scheduler_scaling: Option<Value>,
    /// `python/bench/python_latency.py --json`.
    pub(crate) python: Option<Value>,
    /// `rpc`.
    pub(crate) rpc: Option<Doc<RpcRow>>,
    /// `logging`.
    pub(crate) logging: Option<Doc<LogRow>>,
    /// `block_wake` (a `Block` publisher waiting for room).
    pub(crate) block_wake: Option<BlockWakeDoc>,
    /// `tf` (transform lookups; shared against per-process buffers).
    pub(crate) tf: Option<TfDoc>,
    /// `multi_host`.
    pub(crate) multi_host: Option<Doc<MhRow>>,
    /// `ros_messages` (ROS 2 messages, Rust).
    pub(crate) ros: Option<Doc<RosRow>>,
    /// `ros2` (horus ↔ rclpy through the bridge, beside rclpy ↔ rclpy).
    pub(crate) ros2: Option<Doc<Ros2Row>>,
    /// `python/bench/ros_python.py --json` (ROS 2 messages, Python).
    pub(crate) ros_python: Option<Value>,
    /// `python/bench/ros_messages_py.py --json` (the ROS 2 messages ping-pong, Python).
    pub(crate) ros_messages_py: Option<Value>,
    pub(crate) missing: Vec<String>,
}

fn load<T: DeserializeOwned>(
    dir: &Path,
    name: &str,
    missing: &mut Vec<String>,
) -> anyhow::Result<Option<T>> {
    let path = dir.join(format!("{name}.json"));
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            missing.push(path.display().to_string());
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

impl Results {
    pub(crate) fn load(dir: &Path) -> anyhow::Result<Self> {
        let mut missing = Vec::new();
        let m = &mut missing;
        Ok(Self {
            peers: load(dir, "peers", m)?,
            interleaved: load(dir, "interleaved", m)?,
            many_to_many: load(dir, "many_to_many", m)?,
            robotics: load(dir, "robotics_messages", m)?,
            sweep: load(dir, "payload_sweep", m)?,
            paths: load(dir, "all_paths", m)?,
            scale: load(dir, "scalability", m)?,
            pingpong: load(dir, "pingpong", m)?,
            pingpong_touch: load(dir, "pingpong_touch", &mut Vec::new())?,
            determinism: load(dir, "determinism", m)?,
            scheduler_scaling: load(dir, "scheduler_scaling", m)?,
            python: load(dir, "python_latency", m)?,
            rpc: load(dir, "rpc", m)?,
            logging: load(dir, "logging", m)?,
            block_wake: load(dir, "block_wake", m)?,
            tf: load(dir, "tf", m)?,
            multi_host: load(dir, "multi_host", m)?,
            ros: load(dir, "ros_messages", m)?,
            ros2: load(dir, "ros2", m)?,
            ros_python: load(dir, "ros_python", m)?,
            ros_messages_py: load(dir, "ros_messages_py", m)?,
            missing,
        })
    }

    pub(crate) fn machine(&self) -> Option<Machine> {
        let m = [
            self.peers.as_ref().map(|d| d.machine.clone()),
            self.robotics.as_ref().map(|d| d.machine.clone()),
            self.sweep.as_ref().map(|d| d.machine.clone()),
        ];
        m.into_iter().flatten().next().or_else(|| {
            serde_json::from_value(self.pingpong.as_ref()?.get("machine")?.clone()).ok()
        })
    }

    pub(crate) fn errors(&self) -> Vec<String> {
        fn of<R>(name: &str, d: &Option<Doc<R>>) -> Vec<String> {
            d.iter()
                .flat_map(|d| d.errors.iter().map(move |e| format!("{name}: {e}")))
                .collect()
        }
        let mut v = of("peers", &self.peers);
        v.extend(of("interleaved", &self.interleaved));
        v.extend(of("many_to_many", &self.many_to_many));
        v.extend(of("robotics_messages", &self.robotics));
        v.extend(of("payload_sweep", &self.sweep));
        v.extend(of("all_paths", &self.paths));
        v.extend(of("scalability", &self.scale));
        v.extend(of("rpc", &self.rpc));
        v.extend(of("logging", &self.logging));
        v.extend(of("multi_host", &self.multi_host));
        v.extend(of("ros_messages", &self.ros));
        v.extend(of("ros2", &self.ros2));
        for (name, errors) in [
            ("tf", self.tf.as_ref().map(|d| &d.errors)),
            ("block_wake", self.block_wake.as_ref().map(|d| &d.errors)),
        ] {
            v.extend(errors.into_iter().flatten().map(|e| format!("{name}: {e}")));
        }
        if let Some(py) = &self.ros_python {
            for e in py["errors"].as_array().into_iter().flatten() {
                v.push(format!("ros_python: {}", e.as_str().unwrap_or("?")));
            }
        }
        if let Some(py) = &self.ros_messages_py {
            for e in py["errors"].as_array().into_iter().flatten() {
                v.push(format!("ros_messages_py: {}", e.as_str().unwrap_or("?")));
            }
        }
        if let Some(py) = &self.python {
            v.extend(
                tables::python_failures(py)
                    .into_iter()
                    .map(|e| format!("python_latency: {e}")),
            );
        }
        if let Some(pp) = &self.pingpong {
            for e in pp["errors"].as_array().into_iter().flatten() {
                v.push(format!("pingpong: {}", e.as_str().unwrap_or("?")));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failures_of_tf_and_block_wake_are_listed() {
        let dir = std::env::temp_dir().join(format!("horus-report-errors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("tf.json"),
            r#"{"rounds":1,"lookups":[],"cpu":[],"python":".venv/bin/python",
                "errors":["round 1: lookups: no map <- c0_f5 after 20 s"]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("block_wake.json"),
            r#"{"rounds":0,"wake_ns":{"min":0,"p50":0,"p99":0,"max":0},"cpu_ms_per_s":0.0,
                "errors":["wake-up round 3: send: timed out"]}"#,
        )
        .unwrap();
        let r = Results::load(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            r.unwrap().errors(),
            [
                "tf: round 1: lookups: no map <- c0_f5 after 20 s",
                "block_wake: wake-up round 3: send: timed out"
            ]
        );
    }
}
