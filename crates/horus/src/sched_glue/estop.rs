//! An [`EmergencyStopSink`] that publishes [`EmergencyStop`] on a topic, so
//! the rest of the robot — other processes, other machines through a bridge —
//! learns that a scheduler stopped.

use std::sync::Mutex;

use horus_msgs::{EmergencyStop, Time, ESTOP_SOURCE_LEN};
use horus_sched::{EmergencyStopEvent, EmergencyStopReason, EmergencyStopSink};

use crate::{Publisher, Topic, TopicError};

/// Publishes one engaged [`EmergencyStop`] when its scheduler performs an
/// emergency stop. Give it to
/// [`Scheduler::on_emergency_stop`](horus_sched::Scheduler::on_emergency_stop).
///
/// The publisher joins the topic when this is made, so subscribers that are
/// already listening (drivers, the safety monitor) receive the message.
/// The message: `stamp_ns` = wall-clock time of the stop (ns since the UNIX
/// epoch), `reason` from the scheduler's reason
/// ([`TopicEmergencyStop::message_for`]), `source` = the node responsible
/// (or the scheduler's name when the application asked), cut to
/// [`ESTOP_SOURCE_LEN`] bytes.
pub struct TopicEmergencyStop {
    publisher: Mutex<Publisher<EmergencyStop>>,
}

impl TopicEmergencyStop {
    /// Publishes on the topic `name` in the default namespace, opened with
    /// its existing settings (or the defaults if it does not exist yet).
    pub fn new(name: &str) -> Result<TopicEmergencyStop, TopicError> {
        TopicEmergencyStop::from_topic(&Topic::open(name)?)
    }

    /// Publishes on `topic` (any namespace and QoS).
    pub fn from_topic(topic: &Topic<EmergencyStop>) -> Result<TopicEmergencyStop, TopicError> {
        Ok(TopicEmergencyStop {
            publisher: Mutex::new(topic.publisher()?),
        })
    }

    /// The message published for `event`, stamped `stamp_ns`. Reasons map
    /// to codes as: a requested stop → `REASON_SOFTWARE`; a deadline miss
    /// or an expired watchdog → `REASON_WATCHDOG`; a failed node →
    /// `REASON_SOFTWARE`; anything else → `REASON_UNSPECIFIED`.
    pub fn message_for(event: &EmergencyStopEvent, stamp_ns: u64) -> EmergencyStop {
        let (reason, source) = match &event.reason {
            EmergencyStopReason::Requested { by, .. } if by == "application" => {
                (EmergencyStop::REASON_SOFTWARE, event.scheduler.as_str())
            }
            EmergencyStopReason::Requested { by, .. } => (EmergencyStop::REASON_SOFTWARE, &**by),
            EmergencyStopReason::DeadlineMiss { node }
            | EmergencyStopReason::Watchdog { node, .. } => {
                (EmergencyStop::REASON_WATCHDOG, node.as_str())
            }
            EmergencyStopReason::NodeFailed { node, .. } => {
                (EmergencyStop::REASON_SOFTWARE, node.as_str())
            }
            _ => (EmergencyStop::REASON_UNSPECIFIED, event.scheduler.as_str()),
        };
        let source = truncate(source, ESTOP_SOURCE_LEN);
        EmergencyStop::engage(stamp_ns, reason, source).unwrap_or_else(|_| {
            // Only an interior NUL can get here (the length is cut above);
            // node and scheduler names never contain one. Stop anyway.
            EmergencyStop::engage(stamp_ns, reason, "").expect("the empty source is valid")
        })
    }
}

/// The longest prefix of `s` of at most `max` bytes ending on a char boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl EmergencyStopSink for TopicEmergencyStop {
    fn emergency_stop(&self, event: &EmergencyStopEvent) {
        let msg = TopicEmergencyStop::message_for(event, Time::now().nanos);
        let mut publisher = self.publisher.lock().unwrap_or_else(|p| p.into_inner());
        match publisher.send(msg) {
            Ok(_) => {}
            // A full Reject/Block topic: the stop itself already happened
            // in this process; say loudly that others were not told (the
            // refusal is also counted in the topic's statistics).
            Err(e) => {
                eprintln!(
                    "horus: emergency stop of scheduler {:?} could not be published on {:?}: \
                     {}",
                    event.scheduler,
                    publisher.topic(),
                    e
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn event(reason: EmergencyStopReason) -> EmergencyStopEvent {
        EmergencyStopEvent {
            scheduler: "robot".to_owned(),
            reason,
            at: Duration::ZERO,
        }
    }

    #[test]
    fn reasons_map_to_codes_and_sources() {
        let m = TopicEmergencyStop::message_for(
            &event(EmergencyStopReason::Watchdog {
                node: "motor".into(),
                silent_for: Duration::from_millis(5),
            }),
            7,
        );
        assert!(m.is_engaged());
        assert_eq!(m.stamp_ns, 7);
        assert_eq!(m.reason, EmergencyStop::REASON_WATCHDOG);
        assert_eq!(m.source_str(), Ok("motor"));

        let m = TopicEmergencyStop::message_for(
            &event(EmergencyStopReason::Requested {
                by: "application".into(),
                reason: "button".into(),
            }),
            0,
        );
        assert_eq!(m.reason, EmergencyStop::REASON_SOFTWARE);
        assert_eq!(m.source_str(), Ok("robot"));
    }

    #[test]
    fn long_sources_are_cut_on_a_char_boundary() {
        let long = "é".repeat(40); // 80 bytes
        let m = TopicEmergencyStop::message_for(
            &event(EmergencyStopReason::NodeFailed {
                node: long,
                error: "x".into(),
            }),
            0,
        );
        assert_eq!(m.source_str().unwrap(), "é".repeat(16));
    }
}
