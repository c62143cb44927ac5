//! `after_topic:`: whether a topic has a live publisher, read from its segment
//! (`/dev/shm/horus.<ns>.t.<topic>`) without joining it: the segment is mapped, its
//! publisher places are read (`Channel::snapshot`) and each owner's pid is checked.

use horus_shm::{Channel, OpenError, ProcessId, SegmentError};

/// Whether `topic` of namespace `ns` has a publisher whose process is alive; `Err` says
/// why the segment could not be read (kept to explain a timeout).
pub(crate) fn has_live_publisher(ns: &str, topic: &str) -> Result<bool, String> {
    let name = horus_shm::name::segment_name(ns, "t", topic).map_err(|e| e.to_string())?;
    match Channel::open_existing(&name, None) {
        Ok(chan) => Ok(chan.snapshot().publishers.iter().any(|p| {
            // The snapshot carries the pid only: decided by pid (a zombie is dead).
            ProcessId {
                pid: p.pid,
                start_time: 0,
            }
            .is_alive()
        })),
        Err(OpenError::Segment(SegmentError::NotFound(_))) | Err(OpenError::NotInitialized(_)) => {
            Ok(false)
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::prelude::*;

    #[test]
    fn a_topic_has_a_publisher_only_while_one_is_open() {
        let ns = format!("test-launch-topic-{}", std::process::id());
        assert_eq!(has_live_publisher(&ns, "a/b"), Ok(false));
        let topic = Topic::<CmdVel>::builder("a/b")
            .namespace(&ns)
            .open()
            .unwrap();
        let sub = topic.subscriber().unwrap();
        assert_eq!(has_live_publisher(&ns, "a/b"), Ok(false));
        let publisher = topic.publisher().unwrap();
        assert_eq!(has_live_publisher(&ns, "a/b"), Ok(true));
        drop(publisher);
        assert_eq!(has_live_publisher(&ns, "a/b"), Ok(false));
        drop(sub);
        drop(topic);
        assert_eq!(has_live_publisher(&ns, "a/b"), Ok(false));
    }
}
