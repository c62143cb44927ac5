//! The monitor: the parent process. It creates the topics, subscribes to
//! each as an extra subscriber, starts the robot's processes, prints what it
//! measures once a second, then stops everything with SIGTERM and checks
//! that every process exited cleanly and that nothing was left in /dev/shm.

mod children;
mod observe;
mod probe;
mod report;

pub(crate) use observe::run as observe;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use horus::prelude::*;
use horus::sched::{read_stats, stats_path, StopHandle};

use crate::control::decide;
use crate::topics;
use children::{ChildSpec, Ended, Running};
use horus::ros::Ros;
use horus_ros_msgs::geometry_msgs::msg::Twist;
use horus_ros_msgs::nav_msgs::msg::Odometry;
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};
use probe::{Probe, Shared, Watchable};
use report::TopicRow;

/// How long the robot's processes get to start before the monitor gives up.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a process gets to exit after SIGTERM before it is SIGKILLed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// The monitor's own scheduler (its probes); it publishes no statistics.
const MONITOR: &str = "monitor";

/// A topic under observation.
struct Watched<T: Watchable> {
    topic: Topic<T>,
    window: Shared<T::Last>,
}

impl<T: Watchable> Watched<T> {
    /// Subscribes to `topic` and adds the probe draining it to `sched`.
    fn add(topic: Topic<T>, sched: &mut Scheduler) -> anyhow::Result<Watched<T>> {
        let sub = topic.subscriber()?;
        let ready = sub.readiness();
        let (probe, window) = Probe::new(&format!("probe-{}", topic.name().replace('/', "-")), sub);
        sched.add(probe, NodeConfig::new().event(ready))?;
        Ok(Watched { topic, window })
    }

    fn row(&self, ty: &'static str, elapsed: Duration) -> TopicRow {
        let (received, latencies_ns) = self.window.take();
        let stats = self.topic.stats();
        TopicRow {
            topic: topic_name(self.topic.name()),
            ty,
            rate: received as f64 / elapsed.as_secs_f64(),
            latencies_ns,
            lost: stats.lost() + stats.refused(),
        }
    }
}

fn topic_name(name: &str) -> &'static str {
    [
        topics::SCAN,
        topics::IMU,
        topics::CMD_VEL,
        topics::ODOM,
        topics::ESTOP,
        topics::STOP,
    ]
    .into_iter()
    .find(|t| *t == name)
    .unwrap_or("?")
}

/// Everything the monitor watches.
struct Watch {
    scan: Watched<Ros<LaserScan>>,
    imu: Watched<Ros<Imu>>,
    cmd: Watched<Ros<Twist>>,
    odom: Watched<Ros<Odometry>>,
    estop: Watched<EmergencyStop>,
    /// The Python detector's stop flag.
    stop: Watched<EmergencyStop>,
}

/// The namespace of this run: `HORUS_NAMESPACE` if set, else one unique to
/// this run, so that parallel runs never share a segment.
fn namespace() -> String {
    match std::env::var("HORUS_NAMESPACE") {
        Ok(ns) if !ns.is_empty() => ns,
        _ => format!("demo-{}", std::process::id()),
    }
}

/// Runs the demo for `seconds`; returns the exit code.
pub(crate) fn run(seconds: u64) -> anyhow::Result<i32> {
    let ns = namespace();
    // The monitor creates the topics (with the demo's QoS) and subscribes
    // before any robot process starts, so it sees every message.
    let (stop, sched_thread, watch) = start_probes(&ns)?;
    let exe = std::env::current_exe().context("finding this executable")?;
    let mut specs: Vec<ChildSpec> = children::robot(&exe);
    // The Python obstacle detector, if a python with `horus` is at hand;
    // the robot runs without it otherwise (the controller then has no
    // stop flag to honour).
    let with_python = match children::python() {
        Ok(spec) => {
            specs.push(spec);
            true
        }
        Err(why) => {
            println!("note: running without the Python node: {why}");
            false
        }
    };
    let mut running = Vec::new();
    for spec in specs {
        running.push(Running::spawn(spec, &ns)?);
    }
    let pids: Vec<(String, u32)> = running.iter().map(|r| (r.name.clone(), r.pid())).collect();
    println!("{}", report::header(&ns, seconds, &pids));
    if with_python {
        print_python_note();
    }

    let schedulers: Vec<String> = running.iter().filter_map(|r| r.scheduler.clone()).collect();
    let outcome = wait_until_running(&ns, &mut running).and_then(|()| {
        // A robot process that exits is an error, unless it is Ctrl-C (which the robot's
        // processes get too, and may act on before our own scheduler notices it).
        let mut check = |stop: &StopHandle| -> anyhow::Result<bool> {
            for r in running.iter_mut() {
                if let Some(status) = r.exited() {
                    if stopped_soon(stop) {
                        return Ok(true);
                    }
                    bail!("the {} process exited unexpectedly ({status})", r.name);
                }
            }
            Ok(false)
        };
        report_loop(
            &ns,
            seconds,
            &watch,
            with_python,
            &stop,
            &schedulers,
            &mut check,
        )
    });

    // Stop the robot: SIGTERM to every process, then reap them all.
    let names: Vec<String> = running
        .iter()
        .map(|r| format!("{} (pid {})", r.name, r.pid()))
        .collect();
    println!("stopping: SIGTERM to {}", names.join(", "));
    for r in &mut running {
        r.terminate();
    }
    let mut ended = Vec::new();
    for r in running {
        ended.push(r.wait(STOP_GRACE)?);
    }
    stop.request_stop();
    let estops = watch.estop.window.last();
    drop(watch);
    sched_thread
        .join()
        .map_err(|_| anyhow!("the monitor's scheduler panicked"))??;

    let ok = summarize(&ended);
    finish(&ns, &schedulers, estops, ok, outcome)
}

/// The monitor's last checks, shared by both modes: no emergency stop was engaged and nothing
/// of the namespace is left in /dev/shm; the exit status (0 only if those and `ok` hold and
/// the run itself succeeded).
pub(crate) fn finish(
    ns: &str,
    schedulers: &[String],
    estop: Option<EmergencyStop>,
    mut ok: bool,
    outcome: anyhow::Result<()>,
) -> anyhow::Result<i32> {
    if let Some(e) = estop.filter(|e| e.is_engaged()) {
        println!(
            "emergency stop seen on {}: from {:?}",
            topics::ESTOP,
            e.source_str().unwrap_or("?")
        );
        ok = false;
    }
    let left = leftovers(ns, schedulers);
    if left.is_empty() {
        println!("/dev/shm: nothing of namespace {ns:?} left behind");
    } else {
        println!("/dev/shm: left behind: {}", left.join(", "));
        ok = false;
    }
    match outcome {
        Ok(()) if ok => Ok(0),
        Ok(()) => Ok(1),
        Err(e) => {
            eprintln!("horus-demo: {e:#}");
            Ok(1)
        }
    }
}

/// What the Python node does (printed after the header).
fn print_python_note() {
    println!(
        "python    the obstacle detector is a Python node (horus.Scheduler, python -m\n\
         \x20         horus.demo.obstacle_detector): it reads the newest LaserScan on {} (a\n\
         \x20         horus.interfaces class, ranges a NumPy view of the shared memory) and\n\
         \x20         publishes a stop flag on {} (EmergencyStop, engaged while an obstacle is\n\
         \x20         < 1 m ahead) for every scan; the controller commands no forward speed\n\
         \x20         while it is engaged.\n",
        topics::SCAN,
        topics::STOP
    );
}

type SchedThread = std::thread::JoinHandle<anyhow::Result<()>>;

/// Opens the topics, subscribes, and runs the monitor's scheduler (one
/// event-driven probe per topic) on a thread of its own.
fn start_probes(ns: &str) -> anyhow::Result<(StopHandle, SchedThread, Watch)> {
    let (tx, rx) = mpsc::channel();
    let ns_owned = ns.to_owned();
    let thread = std::thread::spawn(move || -> anyhow::Result<()> {
        let ns = ns_owned;
        // It handles SIGINT/SIGTERM: Ctrl-C (which the robot's processes get
        // too) ends the run early, cleanly.
        let mut sched = Scheduler::new()
            .name(MONITOR)
            .namespace(&ns)
            .publish_stats(false);
        let watch = (|| {
            Ok::<_, anyhow::Error>(Watch {
                scan: Watched::add(topics::scan(&ns)?, &mut sched)?,
                imu: Watched::add(topics::imu(&ns)?, &mut sched)?,
                cmd: Watched::add(topics::cmd_vel(&ns)?, &mut sched)?,
                odom: Watched::add(topics::odom(&ns)?, &mut sched)?,
                estop: Watched::add(topics::estop(&ns)?, &mut sched)?,
                stop: Watched::add(topics::stop_flag(&ns)?, &mut sched)?,
            })
        })();
        let watch = match watch {
            Ok(w) => w,
            Err(e) => {
                let _ = tx.send(Err(anyhow!("{e:#}")));
                return Ok(());
            }
        };
        let _ = tx.send(Ok((sched.stop_handle(), watch)));
        sched.run().context("running the monitor's scheduler")?;
        Ok(())
    });
    match rx.recv() {
        Ok(Ok((stop, watch))) => Ok((stop, thread, watch)),
        Ok(Err(e)) => Err(e.context("setting up the monitor")),
        Err(_) => match thread.join() {
            Ok(Err(e)) => Err(e),
            _ => bail!("the monitor's scheduler thread ended early"),
        },
    }
}

/// Waits until every robot process's scheduler publishes statistics (it is
/// running), or one of them exits.
fn wait_until_running(ns: &str, running: &mut [Running]) -> anyhow::Result<()> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        let mut all = true;
        for r in running.iter_mut() {
            if let Some(status) = r.exited() {
                bail!("the {} process exited during start-up ({status})", r.name);
            }
            if let Some(s) = &r.scheduler {
                all &= read_stats(stats_path(ns, s)).is_ok();
            }
        }
        if all {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("the robot's processes did not start within {STARTUP_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Checks on the robot's processes between reports: `Ok(true)` ends the reports early
/// (the robot is being stopped), `Err` fails the run.
pub(crate) type Check<'a> = dyn FnMut(&StopHandle) -> anyhow::Result<bool> + 'a;

/// Prints one block a second for `seconds` (fewer if interrupted), with the nodes of
/// `schedulers`.
fn report_loop(
    ns: &str,
    seconds: u64,
    watch: &Watch,
    with_python: bool,
    stop: &StopHandle,
    schedulers: &[String],
    check: &mut Check<'_>,
) -> anyhow::Result<()> {
    // Start the first window now: what arrived during start-up is dropped.
    watch.scan.window.take();
    watch.imu.window.take();
    watch.cmd.window.take();
    watch.odom.window.take();
    watch.stop.window.take();
    let t0 = Instant::now();
    let mut last = t0;
    for second in 1..=seconds {
        let due = t0 + Duration::from_secs(second);
        while Instant::now() < due {
            if stop.is_stopped() {
                println!("interrupted after {} s", second - 1);
                return Ok(());
            }
            if check(stop)? {
                println!("interrupted after {} s", second - 1);
                return Ok(());
            }
            std::thread::sleep(
                Duration::from_millis(10).min(due.saturating_duration_since(Instant::now())),
            );
        }
        let now = Instant::now();
        let elapsed = now - last;
        last = now;
        let mut rows = vec![
            watch.scan.row("LaserScan", elapsed),
            watch.imu.row("Imu", elapsed),
            watch.cmd.row("Twist", elapsed),
            watch.odom.row("Odometry", elapsed),
        ];
        if with_python {
            rows.push(watch.stop.row("EmergencyStop", elapsed));
        }
        let nodes: Vec<_> = schedulers
            .iter()
            .cloned()
            .map(|s| {
                let stats = read_stats(stats_path(ns, &s)).map_err(|e| e.to_string());
                (s, stats)
            })
            .collect();
        println!(
            "{}",
            report::block(second, &mut rows, &nodes, &robot_line(watch))
        );
    }
    Ok(())
}

/// Whether the monitor's scheduler stops (a signal) within half a second.
fn stopped_soon(stop: &StopHandle) -> bool {
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if stop.is_stopped() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.is_stopped()
}

/// What the robot is doing, from the newest messages the monitor received.
fn robot_line(watch: &Watch) -> String {
    let cmd = watch.cmd.window.last();
    let nearest = watch.scan.window.last().map(|s| decide(&s).nearest_ahead);
    let mut s = String::from("robot:");
    match cmd {
        Some((linear, angular)) => {
            s += &format!(" commanded {linear:.2} m/s, {angular:+.2} rad/s;")
        }
        None => s += " no command yet;",
    }
    if let Some(p) = watch.odom.window.last() {
        s += &format!(" odometry x {:+.2} m, y {:+.2} m;", p.x, p.y);
    }
    match nearest {
        Some(d) if d.is_finite() => s += &format!(" nearest obstacle ahead {d:.2} m"),
        Some(_) => s += " nothing ahead",
        None => s += " no scan yet",
    }
    if crate::control::flag_says_stop(watch.stop.window.last().as_ref(), topics::now_ns()) {
        s += "; detector's stop flag engaged";
    }
    if let Some(e) = watch.estop.window.last().filter(|e| e.is_engaged()) {
        s += &format!("; EMERGENCY STOP from {:?}", e.source_str().unwrap_or("?"));
    }
    s
}

/// Prints how each process ended and what it reported; returns whether all
/// exited 0 on their own.
fn summarize(ended: &[Ended]) -> bool {
    let mut ok = true;
    for e in ended {
        let clean = e.status.success() && !e.killed;
        ok &= clean;
        let how = if e.killed {
            format!("did not stop within {STOP_GRACE:?}: killed ({})", e.status)
        } else {
            e.status.to_string()
        };
        println!("  {:<8} {how}", e.name);
        for line in e.output.lines() {
            println!("           {line}");
        }
    }
    ok
}

/// The demo's files still in /dev/shm: topic segments and statistics files
/// of namespace `ns` (only the demo's own names, so a shared namespace's
/// other users are not mistaken for leftovers).
fn leftovers(ns: &str, schedulers: &[String]) -> Vec<String> {
    let topic_prefix = format!("horus.{ns}.t.demo~");
    let stats: Vec<String> = schedulers
        .iter()
        .map(String::as_str)
        .chain([MONITOR])
        .map(|s| format!("horus.{ns}.sched.{s}"))
        .collect();
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    let mut left: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&topic_prefix) || stats.contains(n))
        .collect();
    left.sort();
    left
}
