//! `horus param`: list, get, set, dump and load a running node's parameters through its
//! parameter service `<node>/params` (horus-params' `ParamClient`).
//!
//! The node validates every set (type, range, size); a rejected set is reported as the node's
//! typed error (exit 1) and the value is unchanged. Files are checked in full against the
//! node's declarations before anything is sent, so a file with an error applies nothing.

mod dump;
mod get;
mod list;
mod load;
mod mirror;
mod set;
mod value;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use horus_params::{ParamClient, ParamClientError, ParamError, ParamInfo, Range};
use serde_json::{json, Value};

use crate::output::Output;

/// A running node's parameters.
#[derive(Debug, Args)]
pub(crate) struct ParamCmd {
    #[command(subcommand)]
    verb: ParamVerb,
}

#[derive(Debug, Subcommand)]
enum ParamVerb {
    /// Every parameter of a node: kind, value, default, range, description.
    List(list::List),
    /// One parameter's value.
    Get(get::Get),
    /// Set one parameter (VALUE is YAML: `1.5`, `true`, `fast`, `[1, 2]`).
    Set(set::Set),
    /// Every parameter as a YAML file (that `load` accepts back).
    Dump(dump::Dump),
    /// Set parameters from a YAML file (all or nothing if the file has an error).
    Load(load::Load),
}

pub(crate) fn run(cmd: ParamCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        ParamVerb::List(args) => list::run(args, out),
        ParamVerb::Get(args) => get::run(args, out),
        ParamVerb::Set(args) => set::run(args, out),
        ParamVerb::Dump(args) => dump::run(args, out),
        ParamVerb::Load(args) => load::run(args, out),
    }
}

/// Which node, in which namespace, with what patience.
#[derive(Debug, Args)]
pub(super) struct Target {
    /// The node (its parameter service is `<NODE>/params`).
    node: String,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Seconds to wait for each answer from the node.
    #[arg(long, default_value_t = 2.0, value_parser = parse_seconds)]
    timeout: f64,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 3600.0 => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds in (0, 3600]")),
    }
}

impl Target {
    /// A client of the node's parameter service.
    fn client(&self) -> Result<ParamClient, ParamClientError> {
        let ns = self.namespace.clone().unwrap_or_else(horus::namespace);
        let mut c = ParamClient::open_in(&self.node, &ns)?;
        c.set_timeout(Duration::from_secs_f64(self.timeout));
        Ok(c)
    }
}

/// A short, stable name for each kind of failure (the `kind` of a JSON error).
fn error_kind(e: &ParamClientError) -> &'static str {
    match e {
        ParamClientError::Open(_) => "open",
        ParamClientError::Call(horus::CallError::NoServer(_)) => "no_server",
        ParamClientError::Call(horus::CallError::Timeout(_)) => "timeout",
        ParamClientError::Call(_) => "call",
        ParamClientError::Rejected(ParamError::NotFound { .. }) => "not_found",
        ParamClientError::Rejected(ParamError::WrongType { .. }) => "wrong_type",
        ParamClientError::Rejected(ParamError::OutOfRange { .. }) => "out_of_range",
        ParamClientError::Rejected(ParamError::TooLarge { .. }) => "too_large",
        ParamClientError::Rejected(ParamError::InvalidDeclaration { .. }) => "invalid",
        ParamClientError::Malformed(_) => "malformed",
    }
}

/// Reports a failed parameter operation on `node` (exit status 1).
fn failed(out: &Output, node: &str, e: &ParamClientError) -> ExitCode {
    let hint = match e {
        ParamClientError::Call(horus::CallError::NoServer(_)) => {
            " (is the node running, in this namespace?)"
        }
        _ => "",
    };
    if out.is_json() {
        out.json_line(
            &json!({ "node": node, "error": format!("{e}{hint}"), "kind": error_kind(e) }),
        );
    } else {
        eprintln!("horus: node {node}: {e}{hint}");
    }
    ExitCode::from(1)
}

/// A parameter's range as text (`0.0..=2.0`), if declared.
fn range_text(r: &Option<Range>) -> Option<String> {
    match r {
        Some(Range::I64 { min, max }) => Some(format!("{min}..={max}")),
        Some(Range::F64 { min, max }) => Some(format!("{min:?}..={max:?}")),
        None => None,
    }
}

fn range_json(r: &Option<Range>) -> Value {
    match r {
        Some(Range::I64 { min, max }) => json!({ "min": min, "max": max }),
        Some(Range::F64 { min, max }) => json!({ "min": min, "max": max }),
        None => Value::Null,
    }
}

/// A declaration with its current value as JSON.
fn param_json(info: &ParamInfo, current: &horus_params::ParamValue) -> Value {
    json!({
        "name": info.name,
        "kind": info.kind.to_string(),
        "value": value::to_json(current),
        "default": value::to_json(&info.default),
        "range": range_json(&info.range),
        "description": info.description,
    })
}
