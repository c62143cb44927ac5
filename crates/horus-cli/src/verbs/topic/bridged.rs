//! What the namespace's network bridge (`horus bridge`) says about a topic: the hosts it
//! crosses to and from, its wire counters, and any schema mismatch with another host. Read
//! from the status file the bridge keeps beside the namespace's segments (JSON; this verb does
//! not need the bridge compiled in to read it).

use serde_json::Value;

/// The bridge's entry for `topic`, if a live bridge serves `namespace` and has one.
pub(super) fn bridge_entry(namespace: &str, topic: &str) -> Option<Value> {
    let path = format!("/dev/shm/horus.{namespace}.bridge");
    let status: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let pid = status.get("pid")?.as_u64()?;
    if !super::process_alive(u32::try_from(pid).ok()?) {
        return None;
    }
    let entry = status
        .get("topics")?
        .as_array()?
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(topic))?
        .clone();
    let mut entry = entry;
    if let Some(obj) = entry.as_object_mut() {
        obj.insert(
            "host".into(),
            status.get("host").cloned().unwrap_or(Value::Null),
        );
        obj.insert("bridge_pid".into(), Value::from(pid));
    }
    Some(entry)
}

/// The entry for people: one line of hosts and counters, one per issue.
pub(super) fn print(entry: &Value) {
    let list = |k: &str| {
        entry
            .get(k)
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let c = entry.get("counters").cloned().unwrap_or(Value::Null);
    let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    println!(
        "bridge   host {} (pid {}): sending to [{}], receiving from [{}]",
        entry.get("host").and_then(Value::as_str).unwrap_or("?"),
        entry.get("bridge_pid").and_then(Value::as_u64).unwrap_or(0),
        list("sending_to"),
        list("receiving_from")
    );
    println!(
        "         out: read {} sent {} failed {}; in: received {} wire-lost {} source-lost {} malformed {} other-schema {} published {} refused {}",
        n("read"),
        n("sent"),
        n("send_failed"),
        n("received"),
        n("wire_lost"),
        n("source_lost"),
        n("malformed"),
        n("schema_refused"),
        n("published"),
        n("publish_failed")
    );
    if n("unknown_sender") + n("oversize") + n("suspect") + n("stalls") + n("slow_puts") > 0 {
        println!(
            "         refused: unknown-sender {} oversize {}; suspect sequence jumps {}; slow puts {}, stalls {} (stall-dropped {})",
            n("unknown_sender"),
            n("oversize"),
            n("suspect"),
            n("slow_puts"),
            n("stalls"),
            n("stall_dropped")
        );
    }
    let cut_off = entry.get("cut_off_ms").and_then(Value::as_u64).unwrap_or(0);
    if cut_off > 0 {
        println!("         cut off: sent without waiting for remote readers for {cut_off} ms more (they stalled it)");
    }
    for r in entry
        .get("refused")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let host = r.get("host").and_then(Value::as_str).unwrap_or("?");
        match r.get("direction").and_then(Value::as_str) {
            Some("enter") => {
                println!("         REFUSED host {host} may not publish into it here (policy.enter)")
            }
            _ => println!("         REFUSED host {host} may not receive it (policy.leave)"),
        }
    }
    for issue in entry
        .get("issues")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = issue.get("kind").and_then(Value::as_str).unwrap_or("?");
        match kind {
            "schema_mismatch" => println!(
                "         ERROR schema mismatch: host {} has it as {}, this host as {}",
                issue.get("host").and_then(Value::as_str).unwrap_or("?"),
                issue.get("remote").and_then(Value::as_str).unwrap_or("?"),
                issue.get("local").and_then(Value::as_str).unwrap_or("?"),
            ),
            _ => println!(
                "         ERROR {}",
                issue.get("reason").and_then(Value::as_str).unwrap_or(kind)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_bridges_entry_is_found_a_dead_ones_is_not() {
        let ns = format!("cli-bridged-{}", std::process::id());
        let path = format!("/dev/shm/horus.{ns}.bridge");
        let status = |pid: u32| {
            serde_json::json!({
                "host": "robot-b", "pid": pid,
                "topics": [{
                    "name": "base/cmd_vel", "sending_to": [], "receiving_from": ["robot-a"],
                    "counters": {"received": 5, "wire_lost": 1, "suspect": 1},
                    "refused": [{"host": "evil", "direction": "enter"}],
                    "issues": [{"kind": "schema_mismatch", "topic": "base/cmd_vel",
                                "host": "robot-c", "local": "x", "remote": "y"}]
                }]
            })
        };
        std::fs::write(&path, status(std::process::id()).to_string()).unwrap();
        let e = bridge_entry(&ns, "base/cmd_vel").expect("entry");
        assert_eq!(e["host"], "robot-b");
        assert_eq!(e["counters"]["wire_lost"], 1);
        assert_eq!(e["issues"][0]["kind"], "schema_mismatch");
        assert_eq!(e["refused"][0]["host"], "evil");
        assert!(bridge_entry(&ns, "other").is_none());
        print(&e);
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let dead = c.id();
        c.wait().unwrap();
        std::fs::write(&path, status(dead).to_string()).unwrap();
        assert!(
            bridge_entry(&ns, "base/cmd_vel").is_none(),
            "a dead bridge says nothing"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
