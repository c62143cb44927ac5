//! `horus topic pub` of a ROS 2 type: the topic and type from `TYPE` (the compiled-in
//! standard set, or `--package-dir` packages), created when missing with the settings a
//! typed `Topic<Ros<M>>` uses; or, without `TYPE`, from an existing ROS 2-typed topic's own
//! definition. Messages are read from YAML/JSON with ROS 2 defaults for fields left out.

use horus::inspect::{open_or_create_ros_topic, ros_qos, TopicView};
use horus::msgs::Ros2Type;
use horus_idl::{Resolved, TypeName};

use super::ros_json::from_json;
use super::TopicArg;
use crate::verbs::msg::{Catalog, PackageDirs};

/// The largest CDR body of a topic `pub` creates: a typed `Topic<Ros<M>>`'s default, so
/// that both meet.
const MAX_TAIL_BYTES: usize = 1 << 20;

/// A ROS 2-typed topic to publish on, with the types to encode its messages.
pub(super) struct RosTarget {
    pub(super) view: TopicView,
    resolved: Resolved,
    root: TypeName,
}

impl RosTarget {
    /// The topic for `type_arg` (created if missing; an existing topic must carry that
    /// type), or, without a type, the existing ROS 2-typed topic `existing`.
    pub(super) fn open(
        topic: &TopicArg,
        type_arg: Option<&str>,
        packages: &PackageDirs,
        existing: Option<TopicView>,
    ) -> anyhow::Result<Self> {
        let Some(type_arg) = type_arg else {
            let view = existing.ok_or_else(|| anyhow::anyhow!("no topic {}", topic.topic))?;
            let ty = view.ros2()?;
            let (resolved, root) =
                horus_idl::resolve_ros2msg(&ty.type_name, ty.definition.as_bytes()).map_err(
                    |e| {
                        anyhow::anyhow!(
                            "topic {} ({}): its ros2msg definition cannot be read: {e}",
                            view.name(),
                            ty.type_name
                        )
                    },
                )?;
            return Ok(Self {
                view,
                resolved,
                root,
            });
        };
        let catalog = Catalog::load(packages)?;
        let root = catalog.find(type_arg)?;
        let name = root.to_string();
        anyhow::ensure!(
            catalog.resolved.get_struct(&root).is_some(),
            "{name} is a service or action, not a message type (its messages are, e.g. \
             {name}_Request, {name}_Goal)"
        );
        let hash = catalog
            .resolved
            .type_hash(&name)
            .ok_or_else(|| anyhow::anyhow!("{name} has no type hash"))?;
        let definition = catalog
            .resolved
            .ros2msg_definition(&name)
            .ok_or_else(|| anyhow::anyhow!("{name} has no definition"))?;
        let ty = Ros2Type::new(&name, &hash.to_string(), &definition);
        if let Ok(view) = TopicView::open(&topic.namespace(), &topic.topic) {
            if let Ok(d) = view.description() {
                match d.ros2 {
                    Some(t) if t.type_name == ty.type_name && t.type_hash == ty.type_hash => {}
                    Some(t) => anyhow::bail!(
                        "topic {} carries {} ({}), not {name} ({hash})",
                        view.name(),
                        t.type_name,
                        t.type_hash
                    ),
                    None => anyhow::bail!(
                        "topic {} carries the horus type {}, not the ROS 2 type {name}",
                        view.name(),
                        view.schema_text()
                    ),
                }
            }
        }
        let view = open_or_create_ros_topic(
            &topic.namespace(),
            &topic.topic,
            &ty,
            &ros_qos(MAX_TAIL_BYTES),
        )?;
        Ok(Self {
            view,
            resolved: catalog.resolved,
            root,
        })
    }

    /// One message's ROS 2 wire bytes from its YAML/JSON value.
    pub(super) fn encode(&self, v: &serde_json::Value) -> anyhow::Result<Vec<u8>> {
        let value = from_json(&self.resolved, &self.root, v)?;
        Ok(horus_idl::cdr::encode(&self.resolved, &self.root, &value)?)
    }

    /// The message type's name.
    pub(super) fn type_name(&self) -> String {
        self.root.to_string()
    }
}
