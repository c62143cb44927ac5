//! The monitor's probes: one event-driven node per topic, ticking when its
//! subscriber has data (through `Subscriber::readiness`, i.e. a futex wait
//! on the topic), that drains the subscriber and records each message's
//! one-way latency.

use std::sync::{Arc, Mutex, MutexGuard};

use horus::prelude::*;
use horus::ros::Ros;
use horus_ros_msgs::geometry_msgs::msg::Twist;
use horus_ros_msgs::nav_msgs::msg::Odometry;
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};

use crate::motor::Pose;
use crate::topics::{now_ns, stamp_ns};

/// A message type the monitor watches: its send time, and what it keeps of the newest one.
pub(crate) trait Watchable: Message {
    /// What the monitor keeps of the newest message (`()`: nothing).
    type Last: Clone + Send + 'static;

    /// The send time the publisher stamped, ns since the epoch (`stamp_ns` of horus
    /// messages, `header.stamp` of ROS ones); `None` when the message has none (a
    /// `Twist`) or a ROS message does not decode.
    fn stamp(sample: &Sample<Self>) -> Option<u64>;

    /// What is kept of the newest message (`None`: it does not decode).
    fn keep(sample: &Sample<Self>) -> Option<Self::Last>;
}

impl Watchable for EmergencyStop {
    type Last = EmergencyStop;
    fn stamp(sample: &Sample<Self>) -> Option<u64> {
        Some(sample.stamp_ns)
    }
    fn keep(sample: &Sample<Self>) -> Option<EmergencyStop> {
        Some(**sample)
    }
}

/// `header.stamp` of a ROS message's view.
macro_rules! header_stamp {
    ($sample:expr) => {
        $sample.view().ok().map(|v| {
            let t = v.header().stamp();
            stamp_ns(t.sec(), t.nanosec())
        })
    };
}

impl Watchable for Ros<LaserScan> {
    /// The scan (the robot line shows the nearest obstacle ahead).
    type Last = LaserScan;
    fn stamp(sample: &Sample<Self>) -> Option<u64> {
        header_stamp!(sample)
    }
    fn keep(sample: &Sample<Self>) -> Option<LaserScan> {
        sample.decode().ok()
    }
}

impl Watchable for Ros<Imu> {
    type Last = ();
    fn stamp(sample: &Sample<Self>) -> Option<u64> {
        header_stamp!(sample)
    }
    fn keep(_: &Sample<Self>) -> Option<()> {
        Some(())
    }
}

impl Watchable for Ros<Twist> {
    /// Linear and angular speed commanded.
    type Last = (f64, f64);
    fn stamp(_: &Sample<Self>) -> Option<u64> {
        // A Twist has no header.
        None
    }
    fn keep(sample: &Sample<Self>) -> Option<(f64, f64)> {
        let v = sample.view().ok()?;
        Some((v.linear().x(), v.angular().z()))
    }
}

impl Watchable for Ros<Odometry> {
    /// The pose.
    type Last = Pose;
    fn stamp(sample: &Sample<Self>) -> Option<u64> {
        header_stamp!(sample)
    }
    fn keep(sample: &Sample<Self>) -> Option<Pose> {
        let v = sample.view().ok()?;
        let p = v.pose().pose();
        let q = p.orientation();
        Some(Pose {
            x: p.position().x(),
            y: p.position().y(),
            theta: 2.0 * q.z().atan2(q.w()),
        })
    }
}

/// What a probe saw since the window was last taken.
pub(crate) struct Window<L> {
    /// Messages received.
    pub(crate) received: u64,
    /// One-way latency of each message received that carries a stamp, ns.
    pub(crate) latencies_ns: Vec<u64>,
    /// What is kept of the newest message received (ever, not only in this window).
    pub(crate) last: Option<L>,
}

impl<L> Default for Window<L> {
    fn default() -> Self {
        Window {
            received: 0,
            latencies_ns: Vec::with_capacity(2048),
            last: None,
        }
    }
}

/// The probe's window, shared with the reporter.
pub(crate) struct Shared<T>(Arc<Mutex<Window<T>>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<L: Clone> Shared<L> {
    fn lock(&self) -> MutexGuard<'_, Window<L>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the count and latencies recorded so far, leaving an empty window.
    pub(crate) fn take(&self) -> (u64, Vec<u64>) {
        let mut w = self.lock();
        (
            std::mem::take(&mut w.received),
            std::mem::take(&mut w.latencies_ns),
        )
    }

    /// What is kept of the newest message received.
    pub(crate) fn last(&self) -> Option<L> {
        self.lock().last.clone()
    }
}

/// An event-driven node draining one subscriber.
pub(crate) struct Probe<T: Watchable> {
    name: String,
    sub: Subscriber<T>,
    window: Shared<T::Last>,
    batch: Vec<u64>,
}

impl<T: Watchable> Probe<T> {
    /// A probe on `sub`, plus the handle its window is read through.
    pub(crate) fn new(name: &str, sub: Subscriber<T>) -> (Probe<T>, Shared<T::Last>) {
        let window = Shared(Arc::new(Mutex::new(Window::default())));
        let probe = Probe {
            name: name.to_owned(),
            sub,
            window: window.clone(),
            batch: Vec::with_capacity(64),
        };
        (probe, window)
    }
}

impl<T: Watchable> Node for Probe<T> {
    fn name(&self) -> &str {
        &self.name
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let mut last = None;
        let mut received = 0;
        while let Some(msg) = self.sub.try_recv() {
            // The clock is read per message, right at its receive: a message
            // that waited behind another one shows that wait.
            let now = now_ns();
            if let Some(stamp) = T::stamp(&msg) {
                self.batch.push(now.saturating_sub(stamp));
            }
            received += 1;
            last = Some(msg);
        }
        if let Some(last) = last {
            // Decoded only for the newest message of the batch.
            let kept = T::keep(&last);
            drop(last);
            let mut w = self.window.lock();
            w.received += received;
            w.latencies_ns.append(&mut self.batch);
            if kept.is_some() {
                w.last = kept;
            }
        }
        Ok(())
    }
}
