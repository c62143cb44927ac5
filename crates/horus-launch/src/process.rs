//! One `processes:` entry to a [`ProcessSpec`]: name, command line (`command`, `module`,
//! `script` or `shell`), environment, namespace, start conditions, restart policy.

use std::time::Duration;

use crate::load::{key, namespace, Inherited, Source};
use crate::locate::{child, Step};
use crate::model::{RawProcess, RestartKind};
use crate::restart::{Backoff, Policy};
use crate::spec::{LoadError, ProcessSpec};

const DEFAULT_BACKOFF: Duration = Duration::from_millis(100);
const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(5);
const DEFAULT_MAX_RESTARTS: u32 = 5;

/// Sets `k` to `v` in `env`, replacing an earlier value.
pub(super) fn set(env: &mut Vec<(String, String)>, k: &str, v: String) {
    env.retain(|(key, _)| key != k);
    env.push((k.to_owned(), v));
}

/// Whether `name` is a valid process name.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

pub(super) fn process(
    src: &Source<'_>,
    p: &RawProcess,
    at: &[Step],
    here: &Inherited,
) -> Result<ProcessSpec, LoadError> {
    let at_key = |k: &str| child(at, key(k));
    let name = src.sub(&p.name, &at_key("name"))?;
    if !valid_name(&name) {
        return Err(src.error(
            &at_key("name"),
            format!("process name {name:?}: use 1 to 64 of A-Z a-z 0-9 _ - ."),
        ));
    }
    let argv = command(src, p, &name, at)?;
    let mut env = here.env.clone();
    for (k, v) in &p.env {
        let value = src.sub(&v.0, &child(&at_key("env"), key(k)))?;
        set(&mut env, k, value);
    }
    let ns = match &p.namespace {
        Some(ns) => Some(namespace(src, ns, &at_key("namespace"))?),
        None => here.namespace.clone(),
    };
    let cwd = match &p.cwd {
        Some(c) => Some(src.relative(&src.sub(c, &at_key("cwd"))?)),
        None => None,
    };
    let mut after = Vec::new();
    for (j, a) in p.after.0.iter().enumerate() {
        // For `after: x` (a scalar, not a list) the nearest node is the key's value.
        let path = child(&at_key("after"), Step::Index(j));
        after.push((src.sub(&a.0, &path)?, src.origin(&path)));
    }
    let mut after_topic = Vec::new();
    for t in &p.after_topic.0 {
        let topic = src.sub(&t.0, &at_key("after_topic"))?;
        horus_shm::name::validate(&topic)
            .map_err(|e| src.error(&at_key("after_topic"), format!("after_topic: {e}")))?;
        after_topic.push(topic);
    }
    let restart = policy(src, p, at)?;
    Ok(ProcessSpec {
        name,
        argv,
        env,
        namespace: ns,
        cwd,
        after,
        after_topic,
        after_topic_timeout: src
            .seconds(p.after_topic_timeout, &at_key("after_topic_timeout"))?
            .unwrap_or(here.after_topic_timeout),
        restart,
        stop_grace: src
            .seconds(p.stop_grace, &at_key("stop_grace"))?
            .unwrap_or(here.stop_grace),
        required: p.required,
        origin: src.origin(at),
        name_origin: src.origin(&at_key("name")),
    })
}

/// The program and arguments of exactly one of `command`, `module`, `script`, `shell`.
fn command(
    src: &Source<'_>,
    p: &RawProcess,
    name: &str,
    at: &[Step],
) -> Result<Vec<String>, LoadError> {
    let at_key = |k: &str| child(at, key(k));
    let given: Vec<&str> = [
        ("command", p.command.is_some()),
        ("module", p.module.is_some()),
        ("script", p.script.is_some()),
        ("shell", p.shell.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    match given.as_slice() {
        [] => {
            return Err(src.error(
                at,
                format!(
                    "process `{name}`: missing command: give one of `command`, `module`, `script` or `shell`"
                ),
            ))
        }
        [_] => {}
        [first, second, ..] => {
            return Err(src.error(
                &at_key(second),
                format!("`{second}` and `{first}`: give only one command"),
            ))
        }
    }
    if p.python.is_some() && p.module.is_none() && p.script.is_none() {
        return Err(src.error(
            &at_key("python"),
            "`python` only goes with `module` or `script`",
        ));
    }
    let python = || -> Result<String, LoadError> {
        match &p.python {
            Some(py) => src.sub(py, &at_key("python")),
            None => Ok(std::env::var("HORUS_PYTHON")
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "python3".to_owned())),
        }
    };
    let mut argv = Vec::new();
    if let Some(cmd) = &p.command {
        if cmd.0.is_empty() {
            return Err(src.error(&at_key("command"), "`command` is an empty list"));
        }
        for (j, part) in cmd.0.iter().enumerate() {
            let s = src.sub(&part.0, &child(&at_key("command"), Step::Index(j)))?;
            // A program given as a relative path is relative to the launch file.
            argv.push(if j == 0 && s.contains('/') {
                src.relative(&s).display().to_string()
            } else {
                s
            });
        }
    } else if let Some(module) = &p.module {
        let module = src.sub(module, &at_key("module"))?;
        argv.extend([python()?, "-u".into(), "-m".into(), module]);
    } else if let Some(script) = &p.script {
        let script = src.relative(&src.sub(script, &at_key("script"))?);
        argv.extend([python()?, "-u".into(), script.display().to_string()]);
    } else if let Some(line) = &p.shell {
        let line = src.sub(line, &at_key("shell"))?;
        argv.extend(["sh".into(), "-c".into(), line, name.to_owned()]);
    }
    for (j, a) in p.args.iter().enumerate() {
        argv.push(src.sub(&a.0, &child(&at_key("args"), Step::Index(j)))?);
    }
    Ok(argv)
}

fn policy(src: &Source<'_>, p: &RawProcess, at: &[Step]) -> Result<Policy, LoadError> {
    let at_key = |k: &str| child(at, key(k));
    let backoff = Backoff {
        initial: src
            .seconds(p.backoff, &at_key("backoff"))?
            .unwrap_or(DEFAULT_BACKOFF),
        max: src
            .seconds(p.backoff_max, &at_key("backoff_max"))?
            .unwrap_or(DEFAULT_BACKOFF_MAX),
    };
    Ok(match p.restart {
        RestartKind::Never => {
            for (k, set) in [
                ("max_restarts", p.max_restarts.is_some()),
                ("backoff", p.backoff.is_some()),
                ("backoff_max", p.backoff_max.is_some()),
            ] {
                if set {
                    return Err(src.error(
                        &at_key(k),
                        format!("`{k}` needs `restart: on-failure` or `restart: always`"),
                    ));
                }
            }
            Policy::Never
        }
        RestartKind::OnFailure => Policy::OnFailure {
            max: p.max_restarts.unwrap_or(DEFAULT_MAX_RESTARTS),
            backoff,
        },
        RestartKind::Always => Policy::Always {
            max: p.max_restarts,
            backoff,
        },
    })
}
