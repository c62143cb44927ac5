//! Rescanning a namespace's topics from outside, as the bridges do every scan (`horus ros2`,
//! `horus bridge`): every readable topic segment, kept mapped between scans, with whether it
//! has a live publisher and a live subscriber other than the scanning process (records and
//! counters only, never a message).

use std::collections::HashMap;

use super::topic_view::{list_topics, TopicView};

/// Whether process `pid` exists (a signal-0 probe; `EPERM` means it exists but is another
/// user's).
pub fn process_alive(pid: u32) -> bool {
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

/// One topic as the last [`TopicScan::scan`] found it.
pub struct ScannedTopic<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its mapped segment (kept between scans).
    pub view: &'a TopicView,
    /// A live publisher other than the scanning process.
    pub has_publisher: bool,
    /// A live subscriber (not an observer) other than the scanning process.
    pub has_subscriber: bool,
}

/// A namespace's topics, rescanned on demand; segments stay mapped between scans and are
/// let go when their topic is removed or its segment lost.
pub struct TopicScan {
    namespace: String,
    me: u32,
    views: HashMap<String, TopicView>,
}

impl TopicScan {
    /// Scans `namespace`, leaving this process's own endpoints out of the endpoint checks.
    pub fn new(namespace: &str) -> TopicScan {
        TopicScan {
            namespace: namespace.to_owned(),
            me: std::process::id(),
            views: HashMap::new(),
        }
    }

    /// The mapped view of `topic` (from the last scan).
    pub fn view(&self, topic: &str) -> Option<&TopicView> {
        self.views.get(topic)
    }

    /// Every readable topic of the namespace, sorted by name. A segment that cannot be
    /// opened (being created, corrupt, another layout version) is left out until it can.
    pub fn scan(&mut self) -> Vec<ScannedTopic<'_>> {
        let mut names = list_topics(&self.namespace).unwrap_or_default();
        names.sort();
        self.views
            .retain(|name, view| names.contains(name) && !view.is_lost());
        for name in &names {
            if !self.views.contains_key(name) {
                if let Ok(v) = TopicView::open(&self.namespace, name) {
                    self.views.insert(name.clone(), v);
                }
            }
        }
        let me = self.me;
        names
            .iter()
            .filter_map(|name| {
                let (name, view) = self.views.get_key_value(name)?;
                let snap = view.snapshot();
                Some(ScannedTopic {
                    name,
                    view,
                    has_publisher: snap
                        .publishers
                        .iter()
                        .any(|p| p.pid != me && process_alive(p.pid)),
                    has_subscriber: snap
                        .subscribers
                        .iter()
                        .any(|s| !s.observer && s.pid != me && process_alive(s.pid)),
                })
            })
            .collect()
    }
}
