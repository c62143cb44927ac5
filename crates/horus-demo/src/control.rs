//! The `control` process: turns the newest scan and IMU reading into a
//! velocity command, 100 times a second. It reads the ROS messages in place
//! (zero-copy views: the scan's ranges are a `&[f32]` into shared memory) and
//! publishes a `geometry_msgs/msg/Twist`.

use horus::prelude::*;
use horus::ros::Ros;
use horus_params::{ParamDecl, ParamServer, Parameters, Range};
use horus_ros_msgs::geometry_msgs::msg::{Twist, Vector3};
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan, LaserScanView};

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::topics::{now_ns, stamp_ns, ControlTrace, Failed};

/// Cruise speed with a clear path, m/s (default of the `cruise_speed` parameter).
const CRUISE: f32 = 0.5;
/// Closer than this ahead: stop and turn in place, m (default of `stop_distance`).
const STOP_AT: f32 = 0.6;
/// Closer than this ahead: slow down proportionally, m.
const SLOW_AT: f32 = 1.5;
/// Half-width of the sector watched ahead, rad (±30°).
const AHEAD: f32 = 0.52;
/// Turn rate used to avoid an obstacle, rad/s.
const TURN: f32 = 0.8;
/// Gain damping the measured yaw rate.
const YAW_DAMPING: f32 = 0.5;
/// A stop flag older than this is ignored (its publisher stopped), ns.
const FLAG_TIMEOUT_NS: u64 = 300_000_000;

/// What the controller decided from one scan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Decision {
    /// Nearest return in the sector ahead, m (infinite when clear).
    pub(crate) nearest_ahead: f32,
    /// The command.
    pub(crate) linear: f32,
    /// The turn rate before yaw damping.
    pub(crate) angular: f32,
}

/// The controller's live-tunable settings (parameters `cruise_speed` and
/// `stop_distance`, set with `horus param set controller …`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tuning {
    /// Speed with a clear path, m/s.
    pub(crate) cruise: f32,
    /// Closer than this ahead: stop and turn, m.
    pub(crate) stop_at: f32,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            cruise: CRUISE,
            stop_at: STOP_AT,
        }
    }
}

/// What the controller reads of a scan: a zero-copy view of one in shared memory, or an
/// owned `LaserScan` (tests, the monitor).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scan<'a> {
    angle_min: f32,
    angle_increment: f32,
    range_min: f32,
    range_max: f32,
    ranges: &'a [f32],
}

impl<'a> From<LaserScanView<'a>> for Scan<'a> {
    fn from(v: LaserScanView<'a>) -> Self {
        Scan {
            angle_min: v.angle_min(),
            angle_increment: v.angle_increment(),
            range_min: v.range_min(),
            range_max: v.range_max(),
            ranges: v.ranges(),
        }
    }
}

impl<'a> From<&'a LaserScan> for Scan<'a> {
    fn from(m: &'a LaserScan) -> Self {
        Scan {
            angle_min: m.angle_min,
            angle_increment: m.angle_increment,
            range_min: m.range_min,
            range_max: m.range_max,
            ranges: &m.ranges,
        }
    }
}

impl Scan<'_> {
    /// Angle of beam `i`, rad.
    fn angle_of(&self, i: usize) -> f32 {
        self.angle_min + i as f32 * self.angle_increment
    }

    /// Whether `range` is a return within the scanner's limits (NaN and ±∞ are not).
    fn is_valid_range(&self, range: f32) -> bool {
        range >= self.range_min && range <= self.range_max
    }
}

/// Slow down as the nearest obstacle ahead gets closer; stop and turn
/// towards the side with more room when it is too close.
pub(crate) fn decide<'a>(scan: impl Into<Scan<'a>>) -> Decision {
    decide_with(scan.into(), Tuning::default())
}

/// [`decide`] with the given tuning.
pub(crate) fn decide_with(scan: Scan<'_>, t: Tuning) -> Decision {
    let (cruise, stop_at) = (t.cruise, t.stop_at.min(SLOW_AT - 0.1));
    let mut nearest = f32::INFINITY;
    let (mut left, mut right) = (0.0_f32, 0.0_f32);
    for (i, &r) in scan.ranges.iter().enumerate() {
        if !scan.is_valid_range(r) {
            continue;
        }
        let a = scan.angle_of(i);
        if a.abs() <= AHEAD {
            nearest = nearest.min(r);
        }
        // Room on each side: sum of ranges over the front quarter-circles.
        if (0.0..=1.57).contains(&a) {
            left += r;
        } else if (-1.57..0.0).contains(&a) {
            right += r;
        }
    }
    let away = if left >= right { TURN } else { -TURN };
    let (linear, angular) = if nearest <= stop_at {
        (0.0, away)
    } else if nearest < SLOW_AT {
        let k = (nearest - stop_at) / (SLOW_AT - stop_at);
        (cruise * k, away * (1.0 - k))
    } else {
        (cruise, 0.0)
    };
    Decision {
        nearest_ahead: nearest,
        linear,
        angular,
    }
}

/// Where a tick's time and tuning come from.
pub(crate) enum TickSource {
    /// Live: the wall clock, and the node's parameters.
    Live {
        params: Box<Parameters>,
        server: Box<ParamServer>,
    },
    /// Re-execution from a recording: set by the replay before each tick.
    Replay(Arc<ReplayTick>),
}

/// The time and tuning of the next replayed tick (written by the replay's feeder node, read
/// by the controller in the same thread: Relaxed).
#[derive(Debug, Default)]
pub(crate) struct ReplayTick {
    pub(crate) tick_ns: AtomicU64,
    pub(crate) cruise: AtomicU32,
    pub(crate) stop_at: AtomicU32,
}

impl ReplayTick {
    /// Sets the next tick from a trace record.
    pub(crate) fn set(&self, t: &ControlTrace) {
        self.tick_ns.store(t.tick_ns, Ordering::Relaxed);
        self.cruise.store(t.cruise.to_bits(), Ordering::Relaxed);
        self.stop_at.store(t.stop_at.to_bits(), Ordering::Relaxed);
    }
}

/// The controller node.
pub(crate) struct Controller {
    scans: Subscriber<Ros<LaserScan>>,
    imu: Subscriber<Ros<Imu>>,
    commands: Publisher<Ros<Twist>>,
    /// The Python obstacle detector's stop flag (`demo/stop`).
    flags: Subscriber<EmergencyStop>,
    /// The newest scan, kept in shared memory (the sample pins its chunk) and read in
    /// place every tick.
    scan: Option<Sample<Ros<LaserScan>>>,
    flag: Option<EmergencyStop>,
    yaw_rate: f32,
    sent: u64,
    stops: u64,
    flag_stops: u64,
    /// Time and tuning: live (wall clock, parameters served on `controller/params`) or
    /// replayed.
    source: TickSource,
    tuning: Tuning,
    /// One [`ControlTrace`] per tick.
    traces: Publisher<ControlTrace>,
    /// Whether the last tick stopped on the detector's flag (logged on the change).
    flag_stopping: bool,
    /// Stamps of the inputs held (0: none yet).
    scan_stamp: u64,
    imu_stamp: u64,
    /// Scans and IMU readings that did not decode (a protocol-breaking publisher), skipped.
    undecodable: u64,
    /// Commands not sent (publish failed).
    failed: Failed,
}

/// The controller's parameters (defaults [`CRUISE`] and [`STOP_AT`], as f64 literals so they
/// print as written).
fn declare() -> Result<Parameters, horus_params::ParamError> {
    let mut p = Parameters::new();
    p.declare(
        ParamDecl::new("cruise_speed", 0.5)
            .description("speed with a clear path, m/s")
            .range(Range::F64 { min: 0.0, max: 1.0 }),
    )?;
    p.declare(
        ParamDecl::new("stop_distance", 0.6)
            .description("closer than this ahead: stop and turn in place, m")
            .range(Range::F64 { min: 0.2, max: 1.4 }),
    )?;
    Ok(p)
}

/// The controller's parameters served live on `controller/params`.
pub(crate) fn live_source() -> anyhow::Result<TickSource> {
    Ok(TickSource::Live {
        params: Box::new(declare()?),
        server: Box::new(ParamServer::new("controller")?),
    })
}

impl Controller {
    pub(crate) fn new(
        scans: Subscriber<Ros<LaserScan>>,
        imu: Subscriber<Ros<Imu>>,
        commands: Publisher<Ros<Twist>>,
        flags: Subscriber<EmergencyStop>,
        traces: Publisher<ControlTrace>,
        source: TickSource,
    ) -> Controller {
        Controller {
            scans,
            imu,
            commands,
            flags,
            scan: None,
            flag: None,
            yaw_rate: 0.0,
            sent: 0,
            stops: 0,
            flag_stops: 0,
            source,
            tuning: Tuning::default(),
            traces,
            flag_stopping: false,
            scan_stamp: 0,
            imu_stamp: 0,
            undecodable: 0,
            failed: Failed::default(),
        }
    }

    /// Takes the newest scan and IMU reading, if new ones arrived; one that does not decode
    /// is counted and skipped (the previous one stays in use).
    fn read_inputs(&mut self) {
        // `latest` skips to the newest message: older ones are counted as
        // skipped (on purpose), not lost.
        if let Some(sample) = self.scans.latest() {
            match sample.view() {
                Ok(v) => {
                    let t = v.header().stamp();
                    self.scan_stamp = stamp_ns(t.sec(), t.nanosec());
                    self.scan = Some(sample);
                }
                Err(e) => self.undecodable("scan", &e),
            }
        }
        if let Some(sample) = self.imu.latest() {
            match sample.view() {
                Ok(v) => {
                    let t = v.header().stamp();
                    self.imu_stamp = stamp_ns(t.sec(), t.nanosec());
                    self.yaw_rate = v.angular_velocity().z() as f32;
                }
                Err(e) => self.undecodable("IMU reading", &e),
            }
        }
    }

    fn undecodable(&mut self, what: &str, e: &horus::cdr::DecodeError) {
        if self.undecodable == 0 {
            horus_log::warn!("skipping an undecodable {}: {}", what, e.to_string(); node = "controller");
        }
        self.undecodable += 1;
    }

    /// The held scan, read in place (it decoded when it arrived: a view of it cannot fail
    /// unless its publisher rewrote the chunk since, which then counts as no scan).
    fn held_scan(&self) -> Option<LaserScanView<'_>> {
        self.scan.as_ref().and_then(|s| s.view().ok())
    }

    /// This tick's time; applies changed parameters (live) or the replayed tuning.
    fn begin_tick(&mut self) -> u64 {
        match &mut self.source {
            TickSource::Live { params, server } => {
                server.serve_pending(params);
                if !params.take_changed().is_empty() {
                    let f = |name: &str, default: f32| {
                        params
                            .get(name)
                            .ok()
                            .and_then(|v| v.as_f64())
                            .map_or(default, |v| v as f32)
                    };
                    self.tuning = Tuning {
                        cruise: f("cruise_speed", CRUISE),
                        stop_at: f("stop_distance", STOP_AT),
                    };
                    horus_log::info!(
                        "new tuning: cruise_speed {} m/s, stop_distance {} m",
                        self.tuning.cruise, self.tuning.stop_at;
                        node = "controller"
                    );
                }
                now_ns()
            }
            TickSource::Replay(tick) => {
                self.tuning = Tuning {
                    cruise: f32::from_bits(tick.cruise.load(Ordering::Relaxed)),
                    stop_at: f32::from_bits(tick.stop_at.load(Ordering::Relaxed)),
                };
                tick.tick_ns.load(Ordering::Relaxed)
            }
        }
    }
}

/// The command for `linear` m/s forward and `angular` rad/s counter-clockwise (a planar
/// robot: the other components are zero).
pub(crate) fn twist(linear: f32, angular: f32) -> Twist {
    Twist {
        linear: Vector3 {
            x: f64::from(linear),
            y: 0.0,
            z: 0.0,
        },
        angular: Vector3 {
            x: 0.0,
            y: 0.0,
            z: f64::from(angular),
        },
    }
}

/// Whether `flag` asks to stop at time `now` (ns): engaged, and recent
/// enough that its publisher is still deciding.
pub(crate) fn flag_says_stop(flag: Option<&EmergencyStop>, now: u64) -> bool {
    flag.is_some_and(|f| f.is_engaged() && now.saturating_sub(f.stamp_ns) <= FLAG_TIMEOUT_NS)
}

impl Node for Controller {
    fn name(&self) -> &str {
        "controller"
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        // The tick's time is taken before the inputs are read: every input it uses was
        // published before it.
        let now = self.begin_tick();
        self.read_inputs();
        if let Some(flag) = self.flags.latest() {
            self.flag = Some(*flag);
        }
        // No scan yet: nothing is known about the surroundings; stand still.
        let (mut linear, angular) = match self.held_scan() {
            Some(scan) => {
                let d = decide_with(scan.into(), self.tuning);
                if d.linear == 0.0 {
                    self.stops += 1;
                }
                (d.linear, d.angular - YAW_DAMPING * self.yaw_rate)
            }
            None => (0.0, 0.0),
        };
        // The detector's stop flag overrides the forward speed (turning in
        // place is still allowed: it is how the robot gets clear).
        if linear != 0.0 && flag_says_stop(self.flag.as_ref(), now) {
            linear = 0.0;
            self.flag_stops += 1;
            if !self.flag_stopping {
                let nearest = self.held_scan().map_or(f32::INFINITY, |s| {
                    decide_with(s.into(), self.tuning).nearest_ahead
                });
                horus_log::warn!(
                    "stopping on the detector's flag, obstacle {:.2} m ahead", nearest;
                    node = "controller", reason = self.flag.map_or(0, |f| f.reason)
                );
            }
            self.flag_stopping = true;
        } else {
            self.flag_stopping = false;
        }
        if let Err(e) = self.commands.publish(&twist(linear, angular)) {
            self.failed.record("controller", &e);
        }
        let _ = self.traces.send(ControlTrace {
            tick_ns: now,
            scan_stamp_ns: self.scan_stamp,
            imu_stamp_ns: self.imu_stamp,
            flag_stamp_ns: self.flag.map_or(0, |f| f.stamp_ns),
            cruise: self.tuning.cruise,
            stop_at: self.tuning.stop_at,
            linear,
            angular,
        });
        self.sent += 1;
        Ok(())
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        println!(
            "controller: shut down after {} commands ({} of them stopped for an obstacle, \
             {} more on the detector's stop flag){}{}",
            self.sent,
            self.stops,
            self.flag_stops,
            self.failed.summary(),
            if self.undecodable == 0 {
                String::new()
            } else {
                format!(", {} undecodable inputs skipped", self.undecodable)
            }
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world;

    #[test]
    fn slows_down_and_turns_for_a_close_obstacle() {
        let mut scan = LaserScan::default();
        // t = 3.75 s: the obstacle is at its closest (0.4 m centre).
        world::fill_scan(&mut scan, 3.75, 0.1);
        let d = decide(&scan);
        assert!(d.nearest_ahead < STOP_AT, "{d:?}");
        assert_eq!(d.linear, 0.0);
        assert_ne!(d.angular, 0.0);
        // t = 1.25 s: it is far (3.6 m): cruise.
        world::fill_scan(&mut scan, 1.25, 0.1);
        let d = decide(&scan);
        assert_eq!(d.linear, CRUISE);
    }

    #[test]
    fn decides_the_same_from_a_shared_memory_view_as_from_the_owned_scan() {
        let ns = format!("test-demo-control-{}", std::process::id());
        let topic = crate::topics::scan(&ns).unwrap();
        let mut publisher = topic.publisher().unwrap();
        let mut subscriber = topic.subscriber().unwrap();
        let mut scan = LaserScan::default();
        for t in [0.0, 1.25, 3.75] {
            world::fill_scan(&mut scan, t, 0.1);
            publisher.publish(&scan).unwrap();
            let sample = subscriber.try_recv().unwrap();
            let view = sample.view().unwrap();
            // The ranges are read in place: a slice of the shared-memory chunk.
            assert_eq!(view.ranges(), scan.ranges.as_slice());
            assert_eq!(decide(view), decide(&scan));
        }
    }

    #[test]
    fn honours_only_a_fresh_engaged_flag() {
        let now = 10_000_000_000;
        let engaged = EmergencyStop::engage(now - 1_000_000, 4, "py").unwrap();
        assert!(flag_says_stop(Some(&engaged), now));
        assert!(!flag_says_stop(None, now));
        let released = EmergencyStop::release(now, "py").unwrap();
        assert!(!flag_says_stop(Some(&released), now));
        let stale = EmergencyStop::engage(now - 2 * FLAG_TIMEOUT_NS, 4, "py").unwrap();
        assert!(!flag_says_stop(Some(&stale), now));
    }
}
