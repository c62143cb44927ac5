//! `horus-demo --replay FILE`: deterministic re-execution of the controller from a recording.
//!
//! The live controller publishes, each tick, a [`ControlTrace`]: the tick's time and the
//! stamps of the scan, IMU reading and stop flag it decided from. Replaying runs the same
//! [`Controller`] node in a scheduler on its simulated clock (deterministic mode), in a
//! private namespace, preceded by a feeder node that, before tick k, publishes exactly the
//! recorded inputs trace k names and sets the tick's time and tuning. A collector node after
//! it keeps every command. This is done twice; the two runs' commands must be identical,
//! byte for byte, and each must equal the command the live controller published at that tick
//! (where the recording has it).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use horus::prelude::*;
use horus_record::replay::RecordedInputs;

use crate::control::{Controller, ReplayTick, TickSource};
use crate::topics::{self, ControlTrace};

/// The recorded messages replay needs, by topic.
struct Recording {
    scans: HashMap<u64, LaserScan>,
    imus: HashMap<u64, Imu>,
    flags: HashMap<u64, EmergencyStop>,
    traces: Vec<ControlTrace>,
    /// The live controller's commands, by stamp.
    commands: HashMap<u64, CmdVel>,
}

fn decode<T: Message>(topic: &str, bytes: &[u8]) -> anyhow::Result<T> {
    if bytes.len() != std::mem::size_of::<T>() {
        bail!(
            "{topic}: a message of {} bytes, {} needs {}",
            bytes.len(),
            T::SCHEMA.name(),
            std::mem::size_of::<T>()
        );
    }
    Ok(bytemuck::pod_read_unaligned(bytes))
}

fn load(path: &Path) -> anyhow::Result<Recording> {
    let topics = [
        topics::SCAN,
        topics::IMU,
        topics::STOP,
        topics::CONTROL_TRACE,
        topics::CMD_VEL,
    ];
    let inputs = RecordedInputs::load(path, &topics)
        .with_context(|| format!("loading {}", path.display()))?;
    let mut r = Recording {
        scans: HashMap::new(),
        imus: HashMap::new(),
        flags: HashMap::new(),
        traces: Vec::new(),
        commands: HashMap::new(),
    };
    for (_, topic, bytes) in inputs.messages() {
        match topic {
            topics::SCAN => {
                let m: LaserScan = decode(topic, bytes)?;
                r.scans.insert(m.stamp_ns, m);
            }
            topics::IMU => {
                let m: Imu = decode(topic, bytes)?;
                r.imus.insert(m.stamp_ns, m);
            }
            topics::STOP => {
                let m: EmergencyStop = decode(topic, bytes)?;
                r.flags.insert(m.stamp_ns, m);
            }
            topics::CONTROL_TRACE => r.traces.push(decode(topic, bytes)?),
            _ => {
                let m: CmdVel = decode(topic, bytes)?;
                r.commands.insert(m.stamp_ns, m);
            }
        }
    }
    if r.traces.is_empty() {
        bail!(
            "{}: no {} messages (record the demo with the controller running)",
            path.display(),
            topics::CONTROL_TRACE
        );
    }
    Ok(r)
}

/// Publishes, before each controller tick, the inputs its trace names.
struct Feeder {
    traces: Vec<ControlTrace>,
    scans: HashMap<u64, LaserScan>,
    imus: HashMap<u64, Imu>,
    flags: HashMap<u64, EmergencyStop>,
    next: usize,
    tick: Arc<ReplayTick>,
    scan_out: Publisher<LaserScan>,
    imu_out: Publisher<Imu>,
    flag_out: Publisher<EmergencyStop>,
    /// Stamps last published (the controller keeps the newest it saw).
    last: (u64, u64, u64),
    /// Per tick: whether every input its trace names was in the recording (the recorder, an
    /// observer, may have missed some: counted in the file's losses).
    complete: Arc<Mutex<Vec<bool>>>,
}

impl Node for Feeder {
    fn name(&self) -> &str {
        "replay-feeder"
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let Some(t) = self.traces.get(self.next).copied() else {
            return Ok(());
        };
        self.next += 1;
        self.tick.set(&t);
        let mut missing = 0u32;
        if t.scan_stamp_ns != 0 && t.scan_stamp_ns != self.last.0 {
            match self.scans.get(&t.scan_stamp_ns) {
                Some(m) => drop(self.scan_out.send_ref(m)),
                None => missing += 1,
            }
            self.last.0 = t.scan_stamp_ns;
        }
        if t.imu_stamp_ns != 0 && t.imu_stamp_ns != self.last.1 {
            match self.imus.get(&t.imu_stamp_ns) {
                Some(m) => drop(self.imu_out.send_ref(m)),
                None => missing += 1,
            }
            self.last.1 = t.imu_stamp_ns;
        }
        if t.flag_stamp_ns != 0 && t.flag_stamp_ns != self.last.2 {
            match self.flags.get(&t.flag_stamp_ns) {
                Some(m) => drop(self.flag_out.send_ref(m)),
                None => missing += 1,
            }
            self.last.2 = t.flag_stamp_ns;
        }
        self.complete
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(missing == 0);
        Ok(())
    }
}

/// Keeps every command the controller sends.
struct Collector {
    commands: Subscriber<CmdVel>,
    out: Arc<Mutex<Vec<CmdVel>>>,
}

impl Node for Collector {
    fn name(&self) -> &str {
        "replay-collector"
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(c) = self.commands.try_recv() {
            out.push(*c);
        }
        Ok(())
    }
}

/// One deterministic run: the commands the controller produced, and per tick whether the
/// recording held every input its trace names.
fn run_once(rec: &Recording, ns: &str) -> anyhow::Result<(Vec<CmdVel>, Vec<bool>)> {
    let tick = Arc::new(ReplayTick::default());
    let complete = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::new(Mutex::new(Vec::new()));
    let cmd_topic = Topic::<CmdVel>::builder(topics::CMD_VEL)
        .namespace(ns)
        .depth(64)
        .open()?;
    {
        let scan = topics::scan(ns)?;
        let imu = topics::imu(ns)?;
        let flag = topics::stop_flag(ns)?;
        let feeder = Feeder {
            traces: rec.traces.clone(),
            scans: rec.scans.clone(),
            imus: rec.imus.clone(),
            flags: rec.flags.clone(),
            next: 0,
            tick: Arc::clone(&tick),
            scan_out: scan.publisher()?,
            imu_out: imu.publisher()?,
            flag_out: flag.publisher()?,
            last: (0, 0, 0),
            complete: Arc::clone(&complete),
        };
        let controller = Controller::new(
            scan.subscriber_with(WaitMode::BusyPoll)?,
            imu.subscriber_with(WaitMode::BusyPoll)?,
            cmd_topic.publisher()?,
            flag.subscriber_with(WaitMode::BusyPoll)?,
            topics::control_trace(ns)?.publisher()?,
            TickSource::Replay(Arc::clone(&tick)),
        );
        let collector = Collector {
            commands: cmd_topic.subscriber_with(WaitMode::BusyPoll)?,
            out: Arc::clone(&out),
        };
        let mut sched = Scheduler::new().deterministic(true).publish_stats(false);
        sched.add(feeder, NodeConfig::new().rate(100.hz()).order(0))?;
        sched.add(controller, NodeConfig::new().rate(100.hz()).order(1))?;
        sched.add(collector, NodeConfig::new().rate(100.hz()).order(2))?;
        sched.run_for(Duration::from_millis(10 * rec.traces.len() as u64))?;
    }
    let mut commands = std::mem::take(&mut *out.lock().unwrap_or_else(|e| e.into_inner()));
    commands.truncate(rec.traces.len());
    let complete = std::mem::take(&mut *complete.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((commands, complete))
}

/// Replays the controller twice from `path` and compares; an error when anything differs.
pub(crate) fn run(path: &Path) -> anyhow::Result<()> {
    let rec = load(path)?;
    let pid = std::process::id();
    let (first, complete) = run_once(&rec, &format!("replay-{pid}-a"))?;
    let (second, _) = run_once(&rec, &format!("replay-{pid}-b"))?;
    if first.len() != rec.traces.len() {
        bail!(
            "the replayed controller produced {} commands for {} recorded ticks",
            first.len(),
            rec.traces.len()
        );
    }
    let differ = first
        .iter()
        .zip(&second)
        .filter(|(a, b)| bytemuck::bytes_of(*a) != bytemuck::bytes_of(*b))
        .count();
    let (mut compared, mut equal, mut incomplete) = (0usize, 0usize, 0usize);
    for (c, &whole) in first.iter().zip(&complete) {
        if !whole {
            // An input the live controller used is not in the recording: this tick cannot
            // be reproduced (nor, until newer inputs arrive, necessarily equal).
            incomplete += 1;
            continue;
        }
        if let Some(live) = rec.commands.get(&c.stamp_ns) {
            compared += 1;
            if bytemuck::bytes_of(live) == bytemuck::bytes_of(c) {
                equal += 1;
            }
        }
    }
    println!(
        "replay of {}: {} controller ticks re-executed twice on the simulated clock; \
         run 1 vs run 2: {} of {} commands differ; vs the recorded commands: {equal} of \
         {compared} identical ({incomplete} ticks used an input the recorder missed, {} \
         ticks' commands were not recorded: not compared)",
        path.display(),
        rec.traces.len(),
        differ,
        first.len(),
        first.len() - compared - incomplete,
    );
    // Some ticks must be comparable, and a recorder that missed most inputs proves nothing.
    if differ != 0 || equal != compared || compared == 0 || incomplete * 10 > first.len() {
        bail!("the re-execution is not identical to the recording");
    }
    Ok(())
}
