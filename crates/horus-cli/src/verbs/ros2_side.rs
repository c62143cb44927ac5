//! The ROS 2 side of a namespace for `horus topic list` and `horus service list`: the ROS 2
//! topics and services the namespace's running ROS 2 bridge (`horus ros2`) discovers, read
//! from the status file it keeps beside the namespace's segments (`/dev/shm/horus.<ns>.ros2`,
//! JSON: this does not need the bridge compiled in). Each entry says whether it crosses into
//! horus now, and which way.
//!
//! No bridge (no file, or its process gone), or a file that is not a bridge status: no ROS 2
//! side (the listing shows horus's own alone); the reason is kept for `--json`.

use std::io::Read;

use serde_json::{json, Value};

/// Largest status file read (as `horus ros2 --status`).
const MAX_STATUS_BYTES: u64 = 16 << 20;

/// What the bridge reports of the ROS 2 side.
pub(crate) struct Ros2Side {
    /// The bridge's process.
    pub(crate) pid: u64,
    /// Its ROS 2 domain.
    pub(crate) domain_id: u64,
    status: Value,
}

/// Which kind of entry.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// ROS 2 topics (`ros_graph.topics`, routes in `topics`).
    Topics,
    /// ROS 2 services (`ros_graph.services`, routes in `services`).
    Services,
}

impl Kind {
    fn route_name_key(self) -> &'static str {
        match self {
            Kind::Topics => "ros_topic",
            Kind::Services => "ros_service",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Kind::Topics => "topics",
            Kind::Services => "services",
        }
    }
}

/// The namespace's live bridge's view of the ROS 2 side: `Ok(None)` when no bridge runs,
/// `Err(why)` when its file cannot be read as a bridge status.
pub(crate) fn read(namespace: &str) -> Result<Option<Ros2Side>, String> {
    let path = format!("/dev/shm/horus.{namespace}.ros2");
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{path}: {e}")),
    };
    let mut text = Vec::new();
    file.take(MAX_STATUS_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("{path}: {e}"))?;
    if text.len() as u64 > MAX_STATUS_BYTES {
        return Err(format!("{path}: larger than 16 MiB"));
    }
    let status: Value =
        serde_json::from_slice(&text).map_err(|e| format!("{path}: not a bridge status: {e}"))?;
    let pid = status
        .get("pid")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{path}: not a bridge status: no pid"))?;
    let alive = u32::try_from(pid).is_ok_and(horus_monitor::text::process_alive);
    if !alive {
        return Ok(None);
    }
    Ok(Some(Ros2Side {
        pid,
        domain_id: status.get("domain_id").and_then(Value::as_u64).unwrap_or(0),
        status,
    }))
}

impl Ros2Side {
    /// The ROS 2 entries of `kind`, each with `crossing`: the directions (`to_ros`,
    /// `from_ros`) in which the bridge carries it now.
    pub(crate) fn entries(&self, kind: Kind) -> Vec<Value> {
        let routes: Vec<&Value> = self
            .status
            .get(kind.key())
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("active").and_then(Value::as_bool) == Some(true))
            .collect();
        self.status
            .get("ros_graph")
            .and_then(|g| g.get(kind.key()))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let name = e.get("name")?.as_str()?;
                let crossing: Vec<Value> = routes
                    .iter()
                    .filter(|r| r.get(kind.route_name_key()).and_then(Value::as_str) == Some(name))
                    .filter_map(|r| r.get("direction").cloned())
                    .collect();
                let mut e = e.clone();
                e.as_object_mut()?
                    .insert("crossing".into(), json!(crossing));
                Some(e)
            })
            .collect()
    }

    /// The bridge's routes of horus topic `topic` (one per direction it ever crossed),
    /// with their counters (`lost`, `refused`, `malformed`, …), each with `bridge_pid`.
    pub(crate) fn routes_of_topic(&self, topic: &str) -> Vec<Value> {
        self.status
            .get("topics")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("horus_topic").and_then(Value::as_str) == Some(topic))
            .map(|r| {
                let mut r = r.clone();
                if let Some(o) = r.as_object_mut() {
                    o.insert("bridge_pid".into(), json!(self.pid));
                }
                r
            })
            .collect()
    }

    /// Topics and services the bridge discovered but did not list (past its bound).
    pub(crate) fn left_out(&self) -> u64 {
        self.status
            .get("ros_graph")
            .and_then(|g| g.get("left_out"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }

    /// The `ros2` member of a `--json` listing: the bridge and the entries of `kind`.
    pub(crate) fn json(&self, kind: Kind) -> Value {
        json!({
            "bridge_pid": self.pid,
            "domain_id": self.domain_id,
            kind.key(): self.entries(kind),
            "left_out": self.left_out(),
        })
    }
}

/// One route of the ROS 2 bridge for people (`horus topic info`).
pub(crate) fn print_route(r: &Value) {
    let c = r.get("counters").cloned().unwrap_or(Value::Null);
    let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (arrow, side) = match r.get("direction").and_then(Value::as_str) {
        Some("to_ros") => ("->", "to ROS 2"),
        _ => ("<-", "from ROS 2"),
    };
    println!(
        "ros2     bridge pid {} {arrow} {} [{}] {side}, {}: {} msgs, {} bytes, lost {}, replayed {}, refused {}, malformed {}, oversize {}",
        r.get("bridge_pid").and_then(Value::as_u64).unwrap_or(0),
        text(r, "ros_topic"),
        text(r, "type_name"),
        if r.get("active").and_then(Value::as_bool) == Some(true) { "active" } else { "idle" },
        n("messages"),
        n("bytes"),
        n("lost"),
        n("replayed"),
        n("refused"),
        n("malformed"),
        n("oversize"),
    );
    if n("held_back") > 0 {
        // Back-pressure on the ROS 2 writer, not a loss.
        println!(
            "         DDS samples held back (ack window; requested again, not lost): {}",
            n("held_back")
        );
    }
    if let Some(why) = r.get("refused").and_then(Value::as_str) {
        println!("         REFUSED {why}");
    }
}

/// A string member of an entry (`""` if absent).
pub(crate) fn text(e: &Value, key: &str) -> String {
    e.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

/// A count member of an entry as text.
pub(crate) fn count(e: &Value, key: &str) -> String {
    e.get(key).and_then(Value::as_u64).unwrap_or(0).to_string()
}

/// The text lines of the ROS 2 side for people: a heading and a table of the entries of
/// `kind` (`columns`: the table's title row, `row`: one entry's cells).
pub(crate) fn print(
    side: &Ros2Side,
    kind: Kind,
    columns: &[&str],
    row: impl Fn(&Value) -> Vec<String>,
) {
    let entries = side.entries(kind);
    println!(
        "\nROS 2 side (bridge pid {}, domain {}): {} {}",
        side.pid,
        side.domain_id,
        entries.len(),
        kind.key()
    );
    if !entries.is_empty() {
        let mut t = crate::table::Table::new(columns);
        for e in &entries {
            t.row(row(e));
        }
        print!("{}", t.render());
    }
    let left = side.left_out();
    if left > 0 {
        println!("({left} more topics and services discovered, not listed)");
    }
}

/// The ROS 2 side after a listing of `kind`: its table (nothing without a bridge), or a
/// line saying why the bridge's status cannot be read.
pub(crate) fn print_listing(ros2: &Result<Option<Ros2Side>, String>, kind: Kind) {
    let (columns, counts): (&[&str], [&str; 2]) = match kind {
        Kind::Topics => (
            &[
                "ros2 topic",
                "type",
                ">pub",
                ">sub",
                "horus name",
                "crossing",
            ],
            ["publishers", "subscribers"],
        ),
        Kind::Services => (
            &[
                "ros2 service",
                "type",
                ">servers",
                ">clients",
                "horus name",
                "crossing",
            ],
            ["servers", "clients"],
        ),
    };
    match ros2 {
        Ok(Some(side)) => print(side, kind, columns, |e| {
            vec![
                text(e, "name"),
                types(e),
                count(e, counts[0]),
                count(e, counts[1]),
                text(e, "horus_name"),
                crossing(e),
            ]
        }),
        Ok(None) => {}
        Err(e) => println!("ROS 2 side unreadable: {e}"),
    }
}

/// The `ros2` and `ros2_error` members of a `--json` listing of `kind`.
pub(crate) fn json_members(ros2: &Result<Option<Ros2Side>, String>, kind: Kind) -> (Value, Value) {
    match ros2 {
        Ok(side) => (
            side.as_ref().map_or(Value::Null, |s| s.json(kind)),
            Value::Null,
        ),
        Err(e) => (Value::Null, json!(e)),
    }
}

/// The types of an entry, `, `-separated.
pub(crate) fn types(e: &Value) -> String {
    e.get("types")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// `-> horus`, `<- horus`, both, or `-` for an entry's `crossing`: how it meets horus now.
pub(crate) fn crossing(e: &Value) -> String {
    let dirs: Vec<&str> = e
        .get("crossing")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let to = dirs.contains(&"to_ros");
    let from = dirs.contains(&"from_ros");
    match (from, to) {
        (true, true) => "both ways".into(),
        (true, false) => "into horus".into(),
        (false, true) => "from horus".into(),
        (false, false) => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_bridges_ros2_side_is_read_and_marked_crossing_a_dead_ones_is_not() {
        let ns = format!("cli-ros2-side-{}", std::process::id());
        let path = format!("/dev/shm/horus.{ns}.ros2");
        let status = |pid: u32| {
            json!({
                "namespace": ns, "domain_id": 7, "pid": pid,
                "topics": [{"direction": "from_ros", "horus_topic": "chatter",
                            "ros_topic": "/chatter", "type_name": "std_msgs/msg/String",
                            "active": true, "refused": null, "refusals": 0, "counters": {}}],
                "services": [],
                "ros_graph": {
                    "topics": [
                        {"name": "/chatter", "horus_name": "chatter",
                         "types": ["std_msgs/msg/String"], "publishers": 1, "subscribers": 0},
                        {"name": "/rosout", "horus_name": "rosout",
                         "types": ["rcl_interfaces/msg/Log"], "publishers": 1, "subscribers": 0}],
                    "services": [{"name": "/add", "horus_name": "add",
                                  "types": ["example_interfaces/srv/AddTwoInts"],
                                  "servers": 1, "clients": 0}],
                    "left_out": 3
                }
            })
        };
        std::fs::write(&path, status(std::process::id()).to_string()).unwrap();
        let side = read(&ns).unwrap().expect("a live bridge");
        assert_eq!(side.domain_id, 7);
        let topics = side.entries(Kind::Topics);
        assert_eq!(topics.len(), 2);
        assert_eq!(crossing(&topics[0]), "into horus");
        assert_eq!(crossing(&topics[1]), "-");
        assert_eq!(types(&topics[0]), "std_msgs/msg/String");
        let services = side.entries(Kind::Services);
        assert_eq!(count(&services[0], "servers"), "1");
        assert_eq!(side.json(Kind::Services)["left_out"], 3);

        let mut c = std::process::Command::new("true").spawn().unwrap();
        let dead = c.id();
        c.wait().unwrap();
        std::fs::write(&path, status(dead).to_string()).unwrap();
        assert!(read(&ns).unwrap().is_none(), "a dead bridge says nothing");
        std::fs::write(&path, b"{not json").unwrap();
        assert!(read(&ns).is_err());
        std::fs::remove_file(&path).unwrap();
        assert!(read(&ns).unwrap().is_none());
    }
}
