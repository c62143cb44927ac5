//! A robot process (`horus-demo --role <role>`): one horus scheduler running
//! that role's nodes until SIGTERM/SIGINT, then every node's `shutdown`, and
//! exit 0.

use std::time::Duration;

use anyhow::{bail, Context};
use horus::prelude::*;
use horus::sched::{SchedulerEvent, WatchdogAction};

use crate::control::Controller;
use crate::motor::Motor;
use crate::sensors::{ImuSensor, Lidar};
use crate::topics;

/// Environment variable carrying the monitor's pid to its children.
pub(crate) const PARENT_ENV: &str = "HORUS_DEMO_PARENT";

/// The robot's processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Lidar (10 Hz) and IMU (1 kHz).
    Sensors,
    /// Controller (100 Hz).
    Control,
    /// Motor (1 kHz).
    Motor,
}

impl Role {
    /// Every role, in start order.
    pub(crate) const ALL: [Role; 3] = [Role::Sensors, Role::Control, Role::Motor];

    /// The role's name: its `--role` argument and its scheduler's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Sensors => "sensors",
            Role::Control => "control",
            Role::Motor => "motor",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// Exit code after an emergency stop.
const EXIT_EMERGENCY: i32 = 3;

/// Runs `role` until stopped; returns the process exit code.
pub(crate) fn run(role: Role) -> anyhow::Result<i32> {
    die_with_parent()?;
    let ns = horus::sched::namespace();
    let estop = topics::estop(&ns)?;
    let name = role.name();
    let mut sched = Scheduler::new()
        .name(name)
        .namespace(&ns)
        // Deadline misses are counted and shown by the monitor's table;
        // printing them too would scramble it. Everything else is printed.
        .on_event(move |e: &SchedulerEvent| {
            if !matches!(e, SchedulerEvent::DeadlineMiss { .. }) {
                eprintln!("[{name}] {e}");
            }
        })
        .on_emergency_stop(TopicEmergencyStop::from_topic(&estop)?);
    // A node that stops ticking for this long is reported (not stopped: on
    // a shared 2-core machine a stall is a measurement, not a fault).
    // The sensors' static transforms: published once, kept (latched) while this lives.
    let mut _statics = None;
    let watchdog = |c: NodeConfig| c.watchdog(Duration::from_millis(250), WatchdogAction::Warn);
    match role {
        Role::Sensors => {
            let mut statics = horus_tf::StaticTransformBroadcaster::open(Some(&ns))?;
            statics.send_all(&crate::frames::static_transforms(topics::ros_time(
                topics::now_ns(),
            )))?;
            _statics = Some(statics);
            let imu = topics::imu(&ns)?.publisher()?;
            let scans = topics::scan(&ns)?.publisher()?;
            sched.add(
                ImuSensor::new(imu),
                watchdog(NodeConfig::new().rate(1000.hz()).order(0)),
            )?;
            sched.add(
                Lidar::new(scans),
                watchdog(NodeConfig::new().rate(10.hz()).order(1)),
            )?;
        }
        Role::Control => {
            // Periodic readers never block: busy-poll subscribers spare the
            // publishers the futex wake-up bookkeeping.
            let scans = topics::scan(&ns)?.subscriber_with(WaitMode::BusyPoll)?;
            let imu = topics::imu(&ns)?.subscriber_with(WaitMode::BusyPoll)?;
            let cmds = topics::cmd_vel(&ns)?.publisher()?;
            let flags = topics::stop_flag(&ns)?.subscriber_with(WaitMode::BusyPoll)?;
            let traces = topics::control_trace(&ns)?.publisher()?;
            let source = crate::control::live_source()?;
            sched.add(
                Controller::new(scans, imu, cmds, flags, traces, source),
                watchdog(NodeConfig::new().rate(100.hz())),
            )?;
        }
        Role::Motor => {
            let cmds = topics::cmd_vel(&ns)?.subscriber_with(WaitMode::BusyPoll)?;
            let stops = estop.subscriber_with(WaitMode::BusyPoll)?;
            let odom = topics::odom(&ns)?.publisher()?;
            sched.add(
                Motor::new(
                    cmds,
                    stops,
                    odom,
                    horus_tf::TransformBroadcaster::open(Some(&ns))?,
                ),
                watchdog(NodeConfig::new().rate(1000.hz())),
            )?;
        }
    }
    let reason = sched.run().context("running the scheduler")?;
    // Dropping the scheduler drops the nodes and their endpoints: the last
    // process out of a topic removes its segment.
    drop(sched);
    Ok(match reason {
        StopReason::EmergencyStop(why) => {
            eprintln!("[{name}] emergency stop: {why}");
            EXIT_EMERGENCY
        }
        _ => 0,
    })
}

/// Asks the kernel to send us SIGTERM when the monitor dies, so a killed
/// monitor never leaves the robot running; exits if it is already gone.
fn die_with_parent() -> anyhow::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and no pointers.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("prctl(PR_SET_PDEATHSIG)");
    }
    if let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
    {
        // SAFETY: getppid has no preconditions and cannot fail.
        if unsafe { libc::getppid() } != parent {
            bail!("the monitor (pid {parent}) is gone");
        }
    }
    Ok(())
}
