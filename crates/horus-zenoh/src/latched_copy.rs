//! Other hosts' latched topics, created on this host ahead of their subscribers.
//!
//! A subscriber that opens a topic without naming a durability adopts whatever the topic
//! already is, and creates it volatile when it does not exist yet. So that a subscriber here
//! that joins after another host started offering a topic latched gets the latched history
//! whatever it asks, this bridge creates the topic as the offering host has it — same type
//! description, QoS and latched depth, asked for once (`topic_shape`, a query off the loop) —
//! as soon as it sees the offer and the topic does not exist here. Nothing is published into
//! it until a subscriber opens it: then the topic crosses as any other (the history asked
//! for, then live).
//!
//! Bounded: only topics the filter and `policy.enter` let in; the descriptions asked for at
//! once are `limits.describes_in_flight`, each reply at most `limits.max_description_bytes`;
//! the copies together take at most `limits.max_latched_copy_bytes` of shared memory (by the
//! QoS's rings and pools: see [`TopicShape::segment_bytes`]) — beyond, the topic is not
//! created, counted as `over_limit` for the host and reported on the topic. A copy whose
//! offer goes is removed (its name unlinked unless an endpoint still uses it).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use horus::inspect::{open_or_create_topic_durable, TopicView};
use horus::Durability;
use zenoh::Session;

use crate::describer::Describer;
use crate::keys::{Keys, SchemaKey};
use crate::local::{topic_schema_key, LocalTopic};
use crate::refusals::{Refusals, Refused};
use crate::remote::HostSchema;
use crate::status::TopicIssue;
use crate::topic_shape::{self, TopicShape};

/// How long before a failed creation is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// One topic created here for another host's latched offer.
struct Copy {
    view: TopicView,
    /// The host whose shape it was created from.
    host: String,
    /// What it is charged against `limits.max_latched_copy_bytes`.
    bytes: u64,
}

impl Drop for Copy {
    fn drop(&mut self) {
        // Unlinked only if no endpoint uses it: a subscriber here keeps its topic.
        self.view.unlink_if_unused();
    }
}

/// What one round of [`LatchedCopies::update`] looks at.
pub(crate) struct Round<'a> {
    pub(crate) session: &'a Session,
    pub(crate) keys: &'a Keys,
    pub(crate) namespace: &'a str,
    /// Latched offers of other hosts that may enter this host (filter and policy applied).
    pub(crate) offers: BTreeMap<String, Vec<(HostSchema, u32)>>,
    /// This host's topics, as the loop scanned them.
    pub(crate) local: &'a BTreeMap<String, LocalTopic>,
    pub(crate) max_bytes: u64,
    pub(crate) refusals: &'a Refusals,
}

/// See the module's documentation.
pub(crate) struct LatchedCopies {
    describer: Describer<TopicShape>,
    copies: BTreeMap<String, Copy>,
    /// Creations that failed: when, and why (reported on the topic until retried).
    failed: HashMap<String, (Instant, TopicIssue)>,
}

impl LatchedCopies {
    pub(crate) fn new(describes_in_flight: usize, max_description_bytes: usize) -> LatchedCopies {
        LatchedCopies {
            describer: Describer::new(
                describes_in_flight,
                max_description_bytes,
                topic_shape::parse,
            ),
            copies: BTreeMap::new(),
            failed: HashMap::new(),
        }
    }

    /// Removes every copy (the bridge stops): names unlinked unless an endpoint uses them.
    pub(crate) fn clear(&mut self) {
        self.copies.clear();
    }

    /// The host whose shape `topic` was created from, if this bridge created it.
    pub(crate) fn created_from(&self, topic: &str) -> Option<&str> {
        self.copies.get(topic).map(|c| c.host.as_str())
    }

    /// Creates what is newly offered latched and missing here, forgets copies whose offer
    /// went (or whose segment is gone); returns the issues of topics that could not be
    /// created.
    pub(crate) fn update(&mut self, r: Round<'_>) -> Vec<TopicIssue> {
        self.copies.retain(|name, c| {
            r.offers.contains_key(name) && r.local.contains_key(name) && !c.view.is_lost()
        });
        self.failed.retain(|name, _| r.offers.contains_key(name));
        self.describer.retain(|(name, host)| {
            r.offers
                .get(name)
                .is_some_and(|hs| hs.iter().any(|(h, _)| h.host == *host))
        });
        let mut issues = Vec::new();
        for (name, hosts) in &r.offers {
            if r.local.contains_key(name) {
                // Here already: a copy, or a topic of this host's own endpoints (whose
                // durability `bridge` compares).
                continue;
            }
            if let Some((at, issue)) = self.failed.get(name) {
                if at.elapsed() < RETRY_AFTER {
                    issues.push(issue.clone());
                    continue;
                }
            }
            let Some((offer, depth)) = hosts.first() else {
                continue;
            };
            let id = (name.clone(), offer.host.clone());
            let key = r.keys.topic_describe(&offer.host, name);
            let Some(outcome) = self.describer.poll(r.session, &id, &key) else {
                continue;
            };
            let used: u64 = self.copies.values().map(|c| c.bytes).sum();
            match outcome.and_then(|shape| create(&r, name, offer, *depth, &shape, used)) {
                Ok(Some(copy)) => {
                    self.failed.remove(name);
                    self.copies.insert(name.clone(), copy);
                }
                Ok(None) => {}
                Err(reason) => {
                    let issue = TopicIssue::Local {
                        topic: name.clone(),
                        reason: format!("not created for {}'s latched offer: {reason}", offer.host),
                    };
                    issues.push(issue.clone());
                    self.failed.insert(name.clone(), (Instant::now(), issue));
                }
            }
        }
        issues
    }
}

/// Creates `name` from `shape` (`None`: an endpoint here created it first, as it wanted it).
fn create(
    r: &Round<'_>,
    name: &str,
    offer: &HostSchema,
    depth: u32,
    shape: &TopicShape,
    used: u64,
) -> Result<Option<Copy>, String> {
    if shape.latched != depth {
        return Err(format!(
            "its shape keeps {} messages, its offer {depth}",
            shape.latched
        ));
    }
    let bytes = shape.segment_bytes();
    if used.saturating_add(bytes) > r.max_bytes {
        r.refusals.add(&offer.host, Refused::OverLimit);
        return Err(format!(
            "{bytes} bytes of shared memory would exceed limits.max_latched_copy_bytes ({})",
            r.max_bytes
        ));
    }
    let durability = Durability::TransientLocal { depth };
    let view = open_or_create_topic_durable(
        r.namespace,
        name,
        &shape.description,
        &shape.qos,
        durability,
    )
    .map_err(|e| e.to_string())?;
    let schema: Option<SchemaKey> = topic_schema_key(&view).map(|(s, _)| s);
    if schema != Some(offer.schema) {
        view.unlink_if_unused();
        return Err(format!(
            "its description is of another type ({}) than its offer ({})",
            schema.map_or_else(|| "?".to_owned(), |s| s.to_string()),
            offer.schema
        ));
    }
    if view.durability() != durability {
        // An endpoint here opened it first with its own durability: not ours.
        return Ok(None);
    }
    Ok(Some(Copy {
        view,
        host: offer.host.clone(),
        bytes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_msgs::MessageDescription;
    use zenoh::Wait;

    /// A session of its own, reaching nothing else (`create` asks nothing of it).
    fn lone_session() -> Session {
        let mut config = zenoh::Config::default();
        for (k, v) in [
            ("mode", "\"peer\""),
            ("listen/endpoints", "[]"),
            ("connect/endpoints", "[]"),
            ("scouting/multicast/enabled", "false"),
        ] {
            config.insert_json5(k, v).unwrap();
        }
        zenoh::open(config).wait().unwrap()
    }

    /// A CmdVel shape, 8 deep, keeping the last `latched`.
    fn shape(latched: u32) -> TopicShape {
        let mut b = format!(
            "{{\"depth\":8,\"overflow\":\"DropOldest\",\"max_publishers\":2,\"max_subscribers\":4,\
             \"inline_bytes\":64,\"chunk_bytes\":0,\"chunks_per_publisher\":0,\"latched\":{latched}}}\n"
        )
        .into_bytes();
        b.extend(serde_json::to_vec(&MessageDescription::of::<horus::msgs::CmdVel>()).unwrap());
        topic_shape::parse(&b).unwrap()
    }

    #[test]
    fn a_shape_whose_depth_or_type_disagrees_with_its_offer_is_not_created() {
        let session = lone_session();
        let keys = Keys::new("t");
        let namespace = format!("lcopy-{}", std::process::id());
        let local = BTreeMap::new();
        let refusals = Refusals::default();
        let r = Round {
            session: &session,
            keys: &keys,
            namespace: &namespace,
            offers: BTreeMap::new(),
            local: &local,
            max_bytes: u64::MAX,
            refusals: &refusals,
        };
        let offer = HostSchema {
            host: "other".to_owned(),
            schema: SchemaKey { id: 1, layout: 2 },
        };
        // The shape keeps 3, the offer says 5: refused before anything is created.
        let err = create(&r, "map/a", &offer, 5, &shape(3), 0).err().unwrap();
        assert!(err.contains("keeps 3 messages, its offer 5"), "{err}");
        assert!(TopicView::open(&namespace, "map/a").is_err());
        // Depths agree, but the description is CmdVel and the offer another type: refused,
        // and the topic it made to learn the type is gone again.
        let err = create(&r, "map/a", &offer, 3, &shape(3), 0).err().unwrap();
        assert!(err.contains("another type"), "{err}");
        assert!(TopicView::open(&namespace, "map/a").is_err());
        // Nothing was charged to the host as over the limit.
        assert!(refusals.snapshot().iter().all(|h| h.over_limit == 0));
        // Over the limit: refused before anything is created, counted for the host.
        let small = Round { max_bytes: 1, ..r };
        let err = create(&small, "map/a", &offer, 3, &shape(3), 0)
            .err()
            .unwrap();
        assert!(err.contains("max_latched_copy_bytes"), "{err}");
        assert!(TopicView::open(&namespace, "map/a").is_err());
        let counted = refusals.snapshot();
        assert_eq!(counted.len(), 1);
        assert_eq!(
            (counted[0].host.as_str(), counted[0].over_limit),
            ("other", 1)
        );
    }
}
