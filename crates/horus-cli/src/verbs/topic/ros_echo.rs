//! `horus topic echo` on a ROS 2-typed topic: messages decoded from the type's `ros2msg`
//! definition in the topic's own description (no compiled or installed types needed),
//! printed as `ros2 topic echo` prints them, or as JSON with `--json`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use horus::inspect::TopicView;
use horus::msgs::Ros2Type;
use horus_idl::cdr::{decode, CdrValue};
use serde_json::{Map, Value};

use super::echo::{Echo, IDLE, KEEP};
use super::fields::{select, to_text};
use super::ros_json::to_json;
use super::ros_yaml::to_yaml;
use crate::output::Output;
use horus_launch::signals;

pub(super) fn run(
    a: Echo,
    view: TopicView,
    ty: Ros2Type,
    out: &Output,
) -> anyhow::Result<ExitCode> {
    let (resolved, root) = horus_idl::resolve_ros2msg(&ty.type_name, ty.definition.as_bytes())
        .map_err(|e| {
            anyhow::anyhow!(
                "topic {} ({}): its ros2msg definition cannot be read: {e}",
                view.name(),
                ty.type_name
            )
        })?;
    if let Some(h) = resolved.type_hash(&root.to_string()) {
        if h.to_string() != ty.type_hash {
            eprintln!(
                "horus: warning: topic {}'s definition of {} hashes to {h}, not to its type \
                 hash {}; decoding with the definition",
                view.name(),
                ty.type_name,
                ty.type_hash
            );
        }
    }
    let mut reader = view.ros_observer(false)?;
    let limit = if a.once { Some(1) } else { a.count };
    let timeout = a
        .timeout
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let cap = (!a.full).then_some(KEEP);
    let (mut printed, mut undecodable) = (0u64, 0u64);
    let mut last = Instant::now();
    while signals::count() == 0 && limit.is_none_or(|n| printed < n) {
        let Some(sample) = reader.try_recv() else {
            if let Some(t) = timeout.filter(|t| last.elapsed() >= *t) {
                anyhow::bail!(
                    "no message on {} within {:.3} s",
                    view.name(),
                    t.as_secs_f64()
                );
            }
            if view.is_lost() {
                anyhow::bail!("the topic's segment was truncated");
            }
            std::thread::sleep(IDLE);
            continue;
        };
        last = Instant::now();
        let decoded = decode(&resolved, &root, sample.cdr());
        drop(sample);
        let fields = match decoded {
            Ok(CdrValue::Struct(fields)) => fields,
            Ok(_) => unreachable!("a message decodes to a structure"),
            Err(e) => {
                undecodable += 1;
                eprintln!("horus: skipped a message that is not a valid {root}: {e}");
                continue;
            }
        };
        let value = CdrValue::Struct(fields);
        if !a.fields.is_empty() {
            let json = to_json(&value);
            let mut m = Map::new();
            for f in &a.fields {
                m.insert(f.clone(), select(&json, f).cloned().unwrap_or(Value::Null));
            }
            if out.is_json() {
                out.json_line(&Value::Object(m));
            } else {
                let mut text = String::new();
                to_text(&Value::Object(m), 0, &mut text);
                println!("{text}---");
            }
        } else if out.is_json() {
            out.json_line(&to_json(&value));
        } else if let CdrValue::Struct(fields) = &value {
            println!("{}---", to_yaml(fields, cap));
        }
        printed += 1;
    }
    let (received, missed, malformed) = reader.counts();
    if !out.is_json() && (missed > 0 || malformed > 0 || undecodable > 0) {
        eprintln!(
            "horus: {received} received, {missed} missed (overwritten before read), \
             {malformed} malformed, {undecodable} undecodable"
        );
    }
    Ok(ExitCode::SUCCESS)
}
