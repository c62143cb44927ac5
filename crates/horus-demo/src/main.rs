//! `horus-demo`: a small robot in several OS processes, each running a horus
//! scheduler, and a monitor that shows how well it keeps time.
//!
//! ```text
//! sensors process            control process          motor process
//!   lidar  10 Hz ─ demo/scan ─┐
//!                             ├─ controller 100 Hz ─ demo/cmd_vel ─ motor 1 kHz ─ demo/odom
//!   imu  1 kHz ─── demo/imu ──┘        │
//!                                      └─ demo/stop ─ detector 20 Hz ─ demo/scan
//!                                         python process (horus.Scheduler)
//!                  all schedulers ── demo/estop (on an emergency stop) ─ motor
//! ```
//!
//! The scan, IMU, command and odometry are ROS 2 messages (`sensor_msgs/msg/LaserScan`,
//! `sensor_msgs/msg/Imu`, `geometry_msgs/msg/Twist`, `nav_msgs/msg/Odometry`: topics of
//! `Ros<M>` carrying ROS 2's own CDR bytes, which `horus record` writes as ros2msg/cdr
//! channels that ROS 2 tools read); the stop flags and the controller's trace are horus
//! fixed-layout messages.
//!
//! The detector is a Python node (`python -m horus.demo.obstacle_detector`,
//! in `python/horus/demo/`) run with the interpreter named by `HORUS_PYTHON`
//! (`make demo` builds the package and sets it); without it the robot runs
//! without the detector, and says so.
//!
//! Run without arguments, it is the monitor: it creates the topics, starts
//! this same executable once per role (`horus-demo --role sensors|control|motor`),
//! subscribes to every topic as an extra subscriber, prints per-topic rate,
//! latency and loss and per-node rate, jitter and misses once a second, then
//! stops the robot with SIGTERM and checks every process exited 0 and
//! nothing was left in /dev/shm.
//!
//! With `--observe`, it is only the monitor of a robot that `horus launch` started
//! (`make demo` runs `launch/demo.yaml`; see `monitor/observe.rs`).
//!
//! Namespace: `HORUS_NAMESPACE` if set, else `demo-<pid>` (so parallel runs
//! never collide); the children get it through their environment.

mod child;
mod control;
mod frames;
mod monitor;
mod motor;
mod replay;
mod sensors;
mod topics;
mod world;

use anyhow::{bail, Context};

use child::Role;

const USAGE: &str = "\
usage: horus-demo [--seconds N]     run the demo robot for N seconds (default 5)
       horus-demo --role ROLE       run one robot process (ROLE: sensors, control, motor);
                                    the monitor starts these itself
       horus-demo --observe SCHEDS [--seconds N]
                                    only the monitor, for a robot started by `horus launch`
                                    (launch/demo.yaml): SCHEDS lists the robot's schedulers
                                    (e.g. sensors,control,motor,python); when done it asks
                                    horus launch (HORUS_LAUNCH_PID) to stop everything
       horus-demo --replay FILE.mcap
                                    re-run the controller twice on the simulated clock from
                                    a recording of the demo; exit 1 unless both runs and the
                                    recorded commands are identical, byte for byte";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Mode {
    Monitor {
        seconds: u64,
    },
    Observe {
        seconds: u64,
        schedulers: Vec<String>,
    },
    Child(Role),
    Replay(std::path::PathBuf),
    Help,
}

fn parse(args: impl IntoIterator<Item = String>) -> anyhow::Result<Mode> {
    let mut seconds = 5;
    let mut role = None;
    let mut observe = None;
    let mut replay = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let v = args.next().context("--seconds needs a value")?;
                seconds = v
                    .parse()
                    .ok()
                    .filter(|&s| s > 0)
                    .with_context(|| format!("--seconds: {v:?} is not a whole number ≥ 1"))?;
            }
            "--role" => {
                let v = args.next().context("--role needs a value")?;
                role = Some(Role::parse(&v).with_context(|| format!("unknown role {v:?}"))?);
            }
            "--observe" => {
                let v = args
                    .next()
                    .context("--observe needs a list of schedulers")?;
                let list: Vec<String> = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                if list.is_empty() {
                    bail!("--observe: no scheduler named");
                }
                observe = Some(list);
            }
            "--replay" => {
                replay = Some(args.next().context("--replay needs a recording")?.into());
            }
            "-h" | "--help" => return Ok(Mode::Help),
            other => bail!("unexpected argument {other:?}"),
        }
    }
    if let Some(path) = replay {
        if role.is_some() || observe.is_some() {
            bail!("--replay runs alone");
        }
        return Ok(Mode::Replay(path));
    }
    Ok(match (role, observe) {
        (Some(_), Some(_)) => bail!("--role and --observe exclude each other"),
        (Some(role), None) => Mode::Child(role),
        (None, Some(schedulers)) => Mode::Observe {
            seconds,
            schedulers,
        },
        (None, None) => Mode::Monitor { seconds },
    })
}

/// Runs `f` with horus-log set up (records in this process's log ring, read by `horus log`,
/// the monitor and the recorder; printed on stderr too); the ring is removed when `f`
/// returns (before `process::exit`, which runs no destructors).
fn with_log(f: impl FnOnce() -> i32) -> i32 {
    let guard = match horus_log::Builder::new().init() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("horus-demo: logging unavailable: {e}");
            None
        }
    };
    let code = f();
    drop(guard);
    code
}

fn main() {
    let code = match parse(std::env::args().skip(1)) {
        Ok(Mode::Help) => {
            println!("{USAGE}");
            0
        }
        Ok(Mode::Monitor { seconds }) => monitor::run(seconds).unwrap_or_else(|e| {
            eprintln!("horus-demo: {e:#}");
            1
        }),
        Ok(Mode::Observe {
            seconds,
            schedulers,
        }) => monitor::observe(seconds, schedulers).unwrap_or_else(|e| {
            eprintln!("horus-demo: {e:#}");
            1
        }),
        Ok(Mode::Replay(path)) => with_log(|| match replay::run(&path) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("horus-demo: {e:#}");
                1
            }
        }),
        Ok(Mode::Child(role)) => with_log(|| {
            child::run(role).unwrap_or_else(|e| {
                eprintln!("horus-demo[{}]: {e:#}", role.name());
                1
            })
        }),
        Err(e) => {
            eprintln!("horus-demo: {e:#}\n{USAGE}");
            2
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn command_lines() {
        assert_eq!(parse(args("")).unwrap(), Mode::Monitor { seconds: 5 });
        assert_eq!(
            parse(args("--seconds 2")).unwrap(),
            Mode::Monitor { seconds: 2 }
        );
        assert_eq!(
            parse(args("--role motor")).unwrap(),
            Mode::Child(Role::Motor)
        );
        assert_eq!(
            parse(args("--observe sensors,python --seconds 3")).unwrap(),
            Mode::Observe {
                seconds: 3,
                schedulers: vec!["sensors".into(), "python".into()]
            }
        );
        assert!(parse(args("--observe sensors --role motor")).is_err());
        assert!(parse(args("--observe ,")).is_err());
        assert!(parse(args("--seconds 0")).is_err());
        assert!(parse(args("--role wheel")).is_err());
        assert!(parse(args("--frobnicate")).is_err());
    }
}
