//! `horus service call`: call a service with a request given as YAML or JSON.
//!
//! The service's types come from the description its request channel carries, so any service
//! can be called without compiled types. A timeout is always in force.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use horus::inspect::{decode_message, encode_message};
use horus::RawClient;

use crate::output::Output;

/// Call a service once and print the response.
#[derive(Debug, Args)]
pub(crate) struct Call {
    /// Service name (e.g. `math/add`).
    service: String,
    /// The request as YAML or JSON (e.g. `{a: 2, b: 3}`); fields left out are zero.
    request: String,
    /// Seconds to wait for the response.
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(super) fn run(a: Call, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = a.namespace.unwrap_or_else(horus::namespace);
    let timeout = Duration::try_from_secs_f64(a.timeout)
        .map_err(|e| anyhow::anyhow!("--timeout {}: {e}", a.timeout))?;
    let mut client = RawClient::open(&ns, &a.service)?;
    let value: serde_json::Value = serde_yaml::from_str(&a.request)
        .map_err(|e| anyhow::anyhow!("the request is not YAML/JSON: {e}"))?;
    let desc = client.description().clone();
    let request = encode_message(&desc.request, &value)
        .map_err(|e| anyhow::anyhow!("request of {}: {e}", desc.request.root().name))?;
    let response = client
        .call(&request, timeout)
        .map_err(|e| anyhow::anyhow!("call to {} failed: {e}", a.service))?;
    let decoded = decode_message(&desc.response, &response)
        .map_err(|e| anyhow::anyhow!("response of {}: {e}", desc.response.root().name))?;
    if out.is_json() {
        out.json_line(&decoded);
    } else {
        print!("{}", serde_yaml::to_string(&decoded)?);
    }
    Ok(ExitCode::SUCCESS)
}
