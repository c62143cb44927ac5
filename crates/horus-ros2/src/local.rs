//! What this host's horus side has: the namespace's ROS 2-typed topics with their
//! endpoints, found by scanning `/dev/shm` (records and counters only, never a message).

use std::collections::{BTreeMap, HashMap};

use horus::inspect::{list_topics, QosInfo, TopicView};
use horus::Durability;
use horus_msgs::Ros2Type;

/// Whether process `pid` exists (a signal-0 probe; EPERM means it exists but is not ours).
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if p <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(p, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// One ROS 2-typed horus topic.
#[derive(Clone, Debug)]
pub(crate) struct LocalTopic {
    /// Its ROS 2 type.
    pub(crate) ty: Ros2Type,
    /// Its delivery settings.
    pub(crate) qos: QosInfo,
    /// Latched or not.
    pub(crate) durability: Durability,
    /// A live publisher other than this bridge.
    pub(crate) has_publisher: bool,
    /// A live subscriber (not an observer) other than this bridge.
    pub(crate) has_subscriber: bool,
}

/// Scans the namespace, keeping segments mapped between scans.
pub(crate) struct LocalScan {
    namespace: String,
    me: u32,
    views: HashMap<String, TopicView>,
}

impl LocalScan {
    pub(crate) fn new(namespace: &str) -> LocalScan {
        LocalScan {
            namespace: namespace.to_owned(),
            me: std::process::id(),
            views: HashMap::new(),
        }
    }

    /// The mapped view of `topic` (from the last scan).
    pub(crate) fn view(&self, topic: &str) -> Option<&TopicView> {
        self.views.get(topic)
    }

    /// Every ROS 2-typed topic of the namespace. A segment that cannot be opened (being
    /// created, corrupt, another layout version) or carries a horus fixed-layout type is
    /// left out.
    pub(crate) fn topics(&mut self) -> BTreeMap<String, LocalTopic> {
        let names = list_topics(&self.namespace).unwrap_or_default();
        self.views
            .retain(|name, view| names.contains(name) && !view.is_lost());
        let mut out = BTreeMap::new();
        for name in names {
            if !self.views.contains_key(&name) {
                match TopicView::open(&self.namespace, &name) {
                    Ok(v) => {
                        self.views.insert(name.clone(), v);
                    }
                    Err(_) => continue,
                }
            }
            let Some(view) = self.views.get(&name) else {
                continue;
            };
            let Ok(ty) = view.ros2() else {
                continue;
            };
            let snap = view.snapshot();
            let me = self.me;
            out.insert(
                name,
                LocalTopic {
                    ty,
                    qos: view.qos(),
                    durability: view.durability(),
                    has_publisher: snap.publishers.iter().any(|p| p.pid != me && alive(p.pid)),
                    has_subscriber: snap
                        .subscribers
                        .iter()
                        .any(|s| !s.observer && s.pid != me && alive(s.pid)),
                },
            );
        }
        out
    }
}
