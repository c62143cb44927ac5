//! Advertising: which topics of the namespace are channels, found by listing the namespace
//! again and again (new topics are advertised, topics whose segment is gone are unadvertised).
//!
//! A topic is one channel of the same name, except an `Odometry` topic, which also gets a
//! derived channel `<topic>/tf` carrying the same messages as `foxglove.FrameTransform`
//! (so Foxglove's 3-D panel can place the robot's frame).

use std::collections::{BTreeMap, BTreeSet};

use horus::inspect::{list_topics, InspectError, TopicView};
use serde_json::Value;

use crate::protocol::channel_json;
use crate::schemas::{ChannelSchema, Mapping};

/// One advertised topic.
pub struct Channel {
    /// The channel id clients subscribe to (never reused while the bridge runs).
    pub id: u32,
    /// The channel's topic as advertised (the horus topic, or `<topic>/tf` for a derived one).
    pub topic: String,
    /// The horus topic its messages come from.
    pub source: String,
    /// The topic's segment.
    pub view: TopicView,
    /// How its messages are encoded.
    pub mapping: Mapping,
    /// What the advertisement says.
    pub schema: ChannelSchema,
}

impl Channel {
    /// The channel as `advertise` lists it.
    pub fn advertisement(&self) -> Value {
        channel_json(self.id, &self.topic, &self.schema)
    }
}

/// What one look at the namespace changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// Channels advertised now.
    pub added: Vec<u32>,
    /// Channels gone (their topic's segment was removed).
    pub removed: Vec<u32>,
    /// Topics skipped, with why (reported once per topic).
    pub skipped: Vec<(String, String)>,
}

/// The advertised channels of one namespace.
pub struct Discovery {
    namespace: String,
    only: Option<BTreeSet<String>>,
    next_id: u32,
    channels: BTreeMap<u32, Channel>,
    skipped: BTreeSet<String>,
}

impl Discovery {
    /// Channels for every topic of `namespace`, or only those named in `only`.
    pub fn new(namespace: &str, only: Option<BTreeSet<String>>) -> Discovery {
        Discovery {
            namespace: namespace.to_owned(),
            only,
            next_id: 1,
            channels: BTreeMap::new(),
            skipped: BTreeSet::new(),
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The channel with id `id`.
    pub fn get(&self, id: u32) -> Option<&Channel> {
        self.channels.get(&id)
    }

    /// Every channel, by id.
    pub fn channels(&self) -> impl Iterator<Item = &Channel> {
        self.channels.values()
    }

    /// Lists the namespace and advertises or removes channels accordingly.
    pub fn poll(&mut self) -> Result<Change, InspectError> {
        let mut change = Change::default();
        let names: BTreeSet<String> = list_topics(&self.namespace)?
            .into_iter()
            .filter(|n| self.only.as_ref().is_none_or(|o| o.contains(n)))
            .collect();
        // Gone: no segment of that name any more, or the segment was truncated under us.
        self.channels.retain(|id, c| {
            let keep = names.contains(&c.source) && !c.view.is_lost();
            if !keep {
                change.removed.push(*id);
            }
            keep
        });
        let known: BTreeSet<&str> = self.channels.values().map(|c| c.source.as_str()).collect();
        let new: Vec<String> = names
            .iter()
            .filter(|n| !known.contains(n.as_str()))
            .cloned()
            .collect();
        for topic in new {
            let opened = TopicView::open(&self.namespace, &topic)
                .map_err(|e| e.to_string())
                .and_then(|view| match view.description() {
                    Ok(d) => Ok((view, d)),
                    Err(e) => Err(e.to_string()),
                });
            match opened {
                Ok((view, d)) => {
                    let mapping = Mapping::for_description(&d);
                    self.skipped.remove(&topic);
                    if matches!(mapping, Mapping::Odometry) {
                        // Its own view: each channel observes on its own.
                        if let Ok(tf_view) = TopicView::open(&self.namespace, &topic) {
                            let tf = Mapping::OdometryTransform;
                            let id = self.add(format!("{topic}/tf"), &topic, tf_view, tf, &d);
                            change.added.push(id);
                        }
                    }
                    let id = self.add(topic.clone(), &topic, view, mapping, &d);
                    change.added.push(id);
                }
                Err(why) => {
                    if self.skipped.insert(topic.clone()) {
                        change.skipped.push((topic, why));
                    }
                }
            }
        }
        change.added.sort_unstable();
        Ok(change)
    }

    fn add(
        &mut self,
        topic: String,
        source: &str,
        view: TopicView,
        mapping: Mapping,
        d: &horus::msgs::MessageDescription,
    ) -> u32 {
        let schema = mapping.schema(d);
        let id = self.next_id;
        self.next_id += 1;
        self.channels.insert(
            id,
            Channel {
                id,
                topic,
                source: source.to_owned(),
                view,
                mapping,
                schema,
            },
        );
        id
    }
}
