//! The monitor of a robot started by `horus launch` (`make demo`, `launch/demo.yaml`):
//! `horus-demo --observe sensors,control,motor,python`. It starts nothing itself. It
//! subscribes, waits for the named schedulers to run, reports for the given time, then
//! sends SIGTERM to `horus launch` (`HORUS_LAUNCH_PID`), which stops the robot's
//! processes in reverse start order and this monitor, started first, last. Once stopped,
//! it checks what only it can: no emergency stop was seen, and nothing of the robot is
//! left in /dev/shm. `horus launch` checks and reports every exit status.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use horus::sched::{read_stats, stats_path, stats_writer_alive, StopHandle};

use super::{
    namespace, print_python_note, report, report_loop, start_probes, Check, STARTUP_TIMEOUT,
};

/// How long, after asking `horus launch` to stop, the monitor waits for its own SIGTERM
/// (it comes after every robot process has stopped, each within its grace period).
const STOP_WAIT: Duration = Duration::from_secs(120);

/// Environment variable `horus launch` sets to its pid.
const LAUNCH_PID_ENV: &str = "HORUS_LAUNCH_PID";

/// Observes the robot whose processes run `schedulers` for `seconds`; returns the exit
/// code.
pub(crate) fn run(seconds: u64, schedulers: Vec<String>) -> anyhow::Result<i32> {
    let launch_pid: i32 = std::env::var(LAUNCH_PID_ENV)
        .ok()
        .and_then(|p| p.parse().ok())
        .with_context(|| {
            format!(
                "{LAUNCH_PID_ENV} is not set: --observe is for a robot started by \
                 `horus launch launch/demo.yaml`"
            )
        })?;
    let ns = namespace();
    let (stop, sched_thread, watch) = start_probes(&ns)?;
    let with_python = schedulers.iter().any(|s| s == super::children::PYTHON);

    // Set when a robot scheduler is found gone: `horus launch` is already stopping the
    // robot (Ctrl-C, or a required process ended), and a second signal would make it
    // SIGKILL everything.
    let robot_stopping = std::cell::Cell::new(false);
    let outcome = wait_for(&ns, &schedulers, &stop).and_then(|pids| {
        let Some(pids) = pids else {
            println!("interrupted during start-up");
            return Ok(());
        };
        println!("{}", report::header(&ns, seconds, &pids));
        if with_python {
            print_python_note();
        }
        // A scheduler that is gone means the robot is being stopped (or a process died:
        // `horus launch` reports its exit status and stops the rest).
        // Checked every 100 ms, not at every 10 ms step of the report loop: each check
        // opens the statistics files.
        let mut last_check = Instant::now();
        let mut check = |_: &StopHandle| -> anyhow::Result<bool> {
            if last_check.elapsed() < Duration::from_millis(100) {
                return Ok(false);
            }
            last_check = Instant::now();
            for s in &schedulers {
                if !stats_writer_alive(&stats_path(&ns, s)).unwrap_or(false) {
                    println!("the {s} scheduler is gone: the robot is stopping");
                    robot_stopping.set(true);
                    return Ok(true);
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
            &mut check as &mut Check<'_>,
        )
    });

    let mut ok = true;
    if !stop.is_stopped() && !robot_stopping.get() {
        println!(
            "stopping: SIGTERM to horus launch (pid {launch_pid}): it stops the robot's \
             processes in reverse start order, then this monitor"
        );
        // SAFETY: kill takes no pointers; a stale pid would at worst get a SIGTERM meant
        // for the launch that started us, which is alive while we are (we die with it).
        unsafe { libc::kill(launch_pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + STOP_WAIT;
    while !stop.is_stopped() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !stop.is_stopped() && !robot_stopping.get() {
        println!("horus launch did not stop this monitor within {STOP_WAIT:?}");
        ok = false;
        stop.request_stop();
    }
    let estops = watch.estop.window.last();
    drop(watch);
    sched_thread
        .join()
        .map_err(|_| anyhow!("the monitor's scheduler panicked"))??;

    super::finish(&ns, &schedulers, estops, ok, outcome)
}

/// Waits until every scheduler of `schedulers` publishes statistics; returns their
/// processes' pids (`None`: stopped meanwhile).
fn wait_for(
    ns: &str,
    schedulers: &[String],
    stop: &StopHandle,
) -> anyhow::Result<Option<Vec<(String, u32)>>> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if stop.is_stopped() {
            return Ok(None);
        }
        let stats: Vec<_> = schedulers
            .iter()
            .map(|s| {
                read_stats(stats_path(ns, s))
                    .ok()
                    .map(|st| (s.clone(), st.pid))
            })
            .collect();
        if stats.iter().all(Option::is_some) {
            return Ok(Some(stats.into_iter().flatten().collect()));
        }
        if Instant::now() >= deadline {
            bail!("the robot's schedulers did not all start within {STARTUP_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
