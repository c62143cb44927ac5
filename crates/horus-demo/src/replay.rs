//! `horus-demo --replay FILE`: deterministic re-execution of the controller from a recording.
//!
//! The live controller publishes, each tick, a [`ControlTrace`]: the tick's time and the
//! stamps of the scan, IMU reading and stop flag it decided from. Replaying runs the same
//! [`Controller`] node in a scheduler on its simulated clock (deterministic mode), in a
//! private namespace, preceded by a feeder node that, before tick k, publishes exactly the
//! recorded inputs trace k names and sets the tick's time and tuning. A collector node after
//! it keeps every command. This is done twice; the two runs' commands must be identical,
//! byte for byte, and each must equal the command the live controller published at that tick
//! (the trace holds it: a `Twist` has no stamp to find it by on `demo/cmd_vel`; the Twist
//! messages recorded there must be those commands, in order). The ROS-typed inputs are
//! decoded from their recorded CDR with the generated types and published as such.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use horus::cdr::{decode_message, RosMessage};
use horus::prelude::*;
use horus::ros::Ros;
use horus_record::replay::RecordedInputs;
use horus_ros_msgs::geometry_msgs::msg::Twist;
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};

use crate::control::{twist, Controller, ReplayTick, TickSource};
use crate::topics::{self, stamp_ns, ControlTrace};

/// The recorded messages replay needs, by topic.
struct Recording {
    /// Scans and IMU readings by `header.stamp` (ns), decoded from their CDR with the
    /// generated types.
    scans: HashMap<u64, LaserScan>,
    imus: HashMap<u64, Imu>,
    flags: HashMap<u64, EmergencyStop>,
    traces: Vec<ControlTrace>,
    /// The live controller's commands on `demo/cmd_vel`, in the order recorded.
    commands: Vec<Twist>,
}

/// A fixed-layout horus message from its recorded bytes.
fn decode_fixed<T: Message>(topic: &str, bytes: &[u8]) -> anyhow::Result<T> {
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

/// A ROS message from its recorded wire bytes (encapsulation header + CDR body).
fn decode_ros<M: RosMessage>(topic: &str, bytes: &[u8]) -> anyhow::Result<M> {
    decode_message(bytes).with_context(|| format!("{topic}: decoding a {}", M::TYPE_NAME))
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
        commands: Vec::new(),
    };
    for (_, topic, bytes) in inputs.messages() {
        match topic {
            topics::SCAN => {
                let m: LaserScan = decode_ros(topic, bytes)?;
                r.scans
                    .insert(stamp_ns(m.header.stamp.sec, m.header.stamp.nanosec), m);
            }
            topics::IMU => {
                let m: Imu = decode_ros(topic, bytes)?;
                r.imus
                    .insert(stamp_ns(m.header.stamp.sec, m.header.stamp.nanosec), m);
            }
            topics::STOP => {
                let m: EmergencyStop = decode_fixed(topic, bytes)?;
                r.flags.insert(m.stamp_ns, m);
            }
            topics::CONTROL_TRACE => r.traces.push(decode_fixed(topic, bytes)?),
            _ => r.commands.push(decode_ros(topic, bytes)?),
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
    scan_out: Publisher<Ros<LaserScan>>,
    imu_out: Publisher<Ros<Imu>>,
    flag_out: Publisher<EmergencyStop>,
    /// Stamps last published (the controller keeps the newest it saw).
    last: (u64, u64, u64),
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
        // An input the recording lacks is not published: the controller keeps what it held
        // (those ticks are marked by `Reproducible`, not compared).
        if t.scan_stamp_ns != 0 && t.scan_stamp_ns != self.last.0 {
            if let Some(m) = self.scans.get(&t.scan_stamp_ns) {
                self.scan_out
                    .publish(m)
                    .map_err(|e| NodeError::msg(format!("replay: a scan: {e}")))?;
            }
            self.last.0 = t.scan_stamp_ns;
        }
        if t.imu_stamp_ns != 0 && t.imu_stamp_ns != self.last.1 {
            if let Some(m) = self.imus.get(&t.imu_stamp_ns) {
                self.imu_out
                    .publish(m)
                    .map_err(|e| NodeError::msg(format!("replay: an IMU reading: {e}")))?;
            }
            self.last.1 = t.imu_stamp_ns;
        }
        if t.flag_stamp_ns != 0 && t.flag_stamp_ns != self.last.2 {
            if let Some(m) = self.flags.get(&t.flag_stamp_ns) {
                drop(self.flag_out.send_ref(m));
            }
            self.last.2 = t.flag_stamp_ns;
        }
        Ok(())
    }
}

/// Which recorded ticks a re-execution can reproduce. The controller keeps the newest scan,
/// IMU reading and stop flag it received and decides from them every tick, so tick k can be
/// reproduced only if every input its trace names (new this tick or held from before) is in
/// the recording. The recorder, an observer, may have missed some (counted in the file's
/// losses, or published before it attached): every tick that held such an input is not
/// comparable, not just the first. Once each missed input is replaced by a recorded one, the
/// controller's state is the live one again.
#[derive(Debug, Default, PartialEq)]
struct Reproducible {
    /// Per tick: every input the trace names is in the recording.
    ticks: Vec<bool>,
    /// Distinct inputs named by traces but absent from the recording: scans, IMU readings,
    /// stop flags.
    missed: [usize; 3],
    /// Of those, the ones stamped before the first recorded message of their topic: published
    /// before the recorder attached and overwritten in the ring by then. The others were
    /// missed while it was recording (its file counts those as lost).
    before_first: [usize; 3],
}

impl Reproducible {
    fn of(rec: &Recording) -> Reproducible {
        let mut r = Reproducible::default();
        let mut last = [0u64; 3];
        let mut held_missing = [false; 3];
        let first = [
            rec.scans.keys().min().copied(),
            rec.imus.keys().min().copied(),
            rec.flags.keys().min().copied(),
        ];
        for t in &rec.traces {
            let named = [t.scan_stamp_ns, t.imu_stamp_ns, t.flag_stamp_ns];
            let present = [
                rec.scans.contains_key(&named[0]),
                rec.imus.contains_key(&named[1]),
                rec.flags.contains_key(&named[2]),
            ];
            for i in 0..3 {
                if named[i] != last[i] {
                    last[i] = named[i];
                    held_missing[i] = named[i] != 0 && !present[i];
                    if held_missing[i] {
                        r.missed[i] += 1;
                        r.before_first[i] += usize::from(first[i].is_none_or(|f| named[i] < f));
                    }
                }
            }
            r.ticks.push(!held_missing.iter().any(|&m| m));
        }
        r
    }

    /// Ticks that cannot be compared.
    fn incomplete(&self) -> usize {
        self.ticks.iter().filter(|&&whole| !whole).count()
    }

    /// What was left out of the comparison, and why.
    fn summary(&self) -> String {
        let incomplete = self.incomplete();
        if incomplete == 0 {
            return "the recording holds every input the controller decided from".to_owned();
        }
        let [scans, imus, flags] = self.missed;
        format!(
            "{incomplete} ticks not compared: they held an input the recorder missed \
             ({scans} scans, {imus} IMU readings, {flags} stop flags; {} of them published \
             before its first message of their topic)",
            self.before_first.iter().sum::<usize>()
        )
    }
}

/// Keeps every command the controller sends, as its wire bytes.
struct Collector {
    commands: Subscriber<Ros<Twist>>,
    out: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Node for Collector {
    fn name(&self) -> &str {
        "replay-collector"
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(c) = self.commands.try_recv() {
            out.push(c.cdr().to_vec());
        }
        Ok(())
    }
}

/// One deterministic run: the commands the controller produced (wire bytes).
fn run_once(rec: &Recording, ns: &str) -> anyhow::Result<Vec<Vec<u8>>> {
    let tick = Arc::new(ReplayTick::default());
    let out = Arc::new(Mutex::new(Vec::new()));
    let cmd_topic = Topic::<Ros<Twist>>::builder(topics::CMD_VEL)
        .namespace(ns)
        .depth(64)
        .max_tail_bytes(1024)
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
    Ok(commands)
}

/// Replays the controller twice from `path` and compares; an error when anything differs.
pub(crate) fn run(path: &Path) -> anyhow::Result<()> {
    let rec = load(path)?;
    let pid = std::process::id();
    let first = run_once(&rec, &format!("replay-{pid}-a"))?;
    let second = run_once(&rec, &format!("replay-{pid}-b"))?;
    let reproducible = Reproducible::of(&rec);
    if first.len() != rec.traces.len() {
        bail!(
            "the replayed controller produced {} commands for {} recorded ticks",
            first.len(),
            rec.traces.len()
        );
    }
    let differ = first.iter().zip(&second).filter(|(a, b)| a != b).count();
    // Each tick's live command is in its trace (a Twist has no stamp to find it by).
    let (mut compared, mut equal) = (0usize, 0usize);
    for ((bytes, &whole), trace) in first.iter().zip(&reproducible.ticks).zip(&rec.traces) {
        if !whole {
            // An input the live controller held is not in the recording.
            continue;
        }
        compared += 1;
        let replayed: Twist = decode_message(bytes).context("a replayed command")?;
        if replayed == twist(trace.linear, trace.angular) {
            equal += 1;
        }
    }
    let incomplete = reproducible.incomplete();
    let on_topic = commands_on_topic(&rec.commands, &rec.traces);
    println!(
        "replay of {}: {} controller ticks re-executed twice on the simulated clock; \
         run 1 vs run 2: {} of {} commands differ; vs the live commands: {equal} of \
         {compared} identical ({}); {}",
        path.display(),
        rec.traces.len(),
        differ,
        first.len(),
        reproducible.summary(),
        on_topic.as_ref().unwrap_or_else(|e| e),
    );
    if differ != 0 || equal != compared || on_topic.is_err() {
        bail!("the re-execution is not identical to the recording");
    }
    // Most ticks must be comparable: a recorder that missed most inputs proves nothing. A
    // recorder stalled for a while on a loaded machine misses IMU readings (64 ms of ring at
    // 1 kHz), each leaving a tick out: counted losses of an observer, not a divergence, so
    // the bar is half the ticks, not all.
    if compared == 0 || incomplete * 2 > first.len() {
        bail!(
            "only {compared} of {} ticks could be compared: the recording misses too many \
             of the controller's inputs",
            first.len()
        );
    }
    Ok(())
}

/// Checks that the commands recorded on `demo/cmd_vel` are the ones the traces name, in
/// order: all of them when the recorder missed none of either topic, else (one topic lost
/// some) the shorter list found in order in the longer one. A sentence saying what was
/// checked; `Err` when they differ.
fn commands_on_topic(recorded: &[Twist], traces: &[ControlTrace]) -> Result<String, String> {
    let traced: Vec<Twist> = traces.iter().map(|t| twist(t.linear, t.angular)).collect();
    let topic = topics::CMD_VEL;
    if recorded.len() == traced.len() {
        let differ = recorded.iter().zip(&traced).filter(|(a, b)| a != b).count();
        return if differ == 0 {
            Ok(format!(
                "the {} Twist messages recorded on {topic} are the traced commands, in order",
                recorded.len()
            ))
        } else {
            Err(format!(
                "{differ} of the {} Twist messages recorded on {topic} differ from the \
                 traced commands",
                recorded.len()
            ))
        };
    }
    let (short, long) = if recorded.len() < traced.len() {
        (recorded, traced.as_slice())
    } else {
        (traced.as_slice(), recorded)
    };
    let mut rest = long.iter();
    let found = short.iter().take_while(|c| rest.any(|l| l == *c)).count();
    let what = format!(
        "{} Twist messages recorded on {topic} for {} traced ticks (the recorder missed some)",
        recorded.len(),
        traced.len()
    );
    if found == short.len() {
        Ok(format!("{what}: found in order"))
    } else {
        Err(format!("{what}: only {found} found in order"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(linear: f32, angular: f32) -> ControlTrace {
        ControlTrace {
            tick_ns: 1,
            scan_stamp_ns: 0,
            imu_stamp_ns: 0,
            flag_stamp_ns: 0,
            cruise: 0.5,
            stop_at: 0.6,
            linear,
            angular,
        }
    }

    /// A recording holding the given stamps of each input, with one trace per
    /// `(scan, imu, flag)` stamp triple.
    fn recording(named: &[(u64, u64, u64)], held: [&[u64]; 3]) -> Recording {
        Recording {
            scans: held[0].iter().map(|&s| (s, LaserScan::default())).collect(),
            imus: held[1].iter().map(|&s| (s, Imu::default())).collect(),
            flags: held[2]
                .iter()
                .map(|&s| (s, EmergencyStop::release(s, "test").unwrap()))
                .collect(),
            traces: named
                .iter()
                .map(|&(scan, imu, flag)| ControlTrace {
                    scan_stamp_ns: scan,
                    imu_stamp_ns: imu,
                    flag_stamp_ns: flag,
                    ..trace(0.0, 0.0)
                })
                .collect(),
            commands: Vec::new(),
        }
    }

    #[test]
    fn every_tick_holding_a_missed_input_is_not_reproducible() {
        // Scan 1 and flag 5 were missed by the recorder; each is held over several ticks.
        let named = [
            (1, 10, 0),
            (1, 11, 0),
            (1, 12, 5),
            (2, 13, 5),
            (2, 14, 6),
            (2, 15, 6),
        ];
        let rec = recording(&named, [&[2], &[10, 11, 12, 13, 14, 15], &[6]]);
        let r = Reproducible::of(&rec);
        // Not only the tick where each missed input arrived: every tick that held one.
        assert_eq!(r.ticks, [false, false, false, false, true, true]);
        assert_eq!(r.missed, [1, 0, 1]);
        // Scan 1 is older than the first recorded scan (published before the recorder
        // attached); flag 5 too (the only recorded flag is 6).
        assert_eq!(r.before_first, [1, 0, 1]);
        assert_eq!(r.incomplete(), 4);
    }

    #[test]
    fn a_complete_recording_reproduces_every_tick() {
        // Stamp 0: no such input yet (no scan before the first), nothing to miss.
        let named = [(0, 10, 0), (1, 11, 0), (1, 12, 5)];
        let rec = recording(&named, [&[1], &[10, 11, 12], &[5]]);
        let r = Reproducible::of(&rec);
        assert_eq!(r.ticks, [true, true, true]);
        assert_eq!(r.missed, [0, 0, 0]);
    }

    #[test]
    fn an_input_missed_once_is_counted_once() {
        // The IMU reading 11 is missed and held for three ticks: one missed input.
        let named = [(1, 10, 0), (1, 11, 0), (1, 11, 0), (1, 11, 0), (1, 12, 0)];
        let rec = recording(&named, [&[1], &[10, 12], &[]]);
        let r = Reproducible::of(&rec);
        assert_eq!(r.ticks, [true, false, false, false, true]);
        assert_eq!(r.missed, [0, 1, 0]);
        // Recorded readings on both sides of it: missed while recording.
        assert_eq!(r.before_first, [0, 0, 0]);
    }

    #[test]
    fn recorded_twists_must_be_the_traced_commands_in_order() {
        let traces: Vec<ControlTrace> = (0..5).map(|i| trace(0.1 * i as f32, 0.0)).collect();
        let all: Vec<Twist> = traces.iter().map(|t| twist(t.linear, t.angular)).collect();
        assert!(commands_on_topic(&all, &traces).is_ok());
        // One command changed: refused.
        let mut changed = all.clone();
        changed[3].angular.z = 0.25;
        assert!(commands_on_topic(&changed, &traces).is_err());
        // The recorder missed one command (or one trace): the rest must be found in order.
        let missed: Vec<Twist> = all
            .iter()
            .cloned()
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(_, t)| t)
            .collect();
        assert!(commands_on_topic(&missed, &traces).is_ok());
        assert!(commands_on_topic(&all, &traces[1..]).is_ok());
        // Out of order: refused.
        let mut swapped = missed.clone();
        swapped.swap(0, 3);
        assert!(commands_on_topic(&swapped, &traces).is_err());
    }
}
