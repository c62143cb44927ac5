//! Parameter roles of `horus-py-peer` for `python/tests/test_params.py`.
//! Both the Rust node here and the Python tests' node declare:
//! `max_speed` f64 1.0 in [0, 2], `enabled` bool true, `label` string
//! "base", `gains` f64[] [1.0, 2.0], `retries` i64 3 in [0, 10].
//!
//! ```text
//! horus-py-peer param-serve NODE SECONDS   serve NODE's parameters (print {"changed": [..]} per change) for SECONDS
//! horus-py-peer param-call NODE            list, get and set NODE's parameters; one JSON line per step
//! ```

use std::time::{Duration, Instant};

use anyhow::Result;
use horus_params::{
    ParamClient, ParamClientError, ParamDecl, ParamError, ParamServer, ParamValue, Parameters,
    Range,
};

use super::say;

pub(crate) fn declare(p: &mut Parameters) -> Result<()> {
    p.declare(
        ParamDecl::new("max_speed", 1.0)
            .description("top speed, m/s")
            .range(Range::F64 { min: 0.0, max: 2.0 }),
    )?;
    p.declare(ParamDecl::new("enabled", true))?;
    p.declare(ParamDecl::new("label", "base"))?;
    p.declare(ParamDecl::new("gains", vec![1.0, 2.0]))?;
    p.declare(ParamDecl::new("retries", 3i64).range(Range::I64 { min: 0, max: 10 }))?;
    Ok(())
}

pub(crate) fn serve(node: &str, seconds: u64) -> Result<()> {
    let mut params = Parameters::new();
    declare(&mut params)?;
    let mut server = ParamServer::new(node)?;
    say("ready");
    let end = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < end {
        server.serve_pending(&mut params);
        let changed = params.take_changed();
        if !changed.is_empty() {
            let vals: Vec<String> = changed
                .iter()
                .map(|n| {
                    format!(
                        "\"{n}={}\"",
                        params
                            .get(n)
                            .map(|v| v.to_string())
                            .unwrap_or_default()
                            .replace('"', "'")
                    )
                })
                .collect();
            say(&format!("{{\"changed\": [{}]}}", vals.join(", ")));
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    Ok(())
}

fn outcome(r: Result<ParamValue, ParamClientError>) -> String {
    match r {
        Ok(v) => format!("{{\"ok\": \"{}\"}}", v.to_string().replace('"', "'")),
        Err(ParamClientError::Rejected(ParamError::OutOfRange { .. })) => {
            "{\"err\": \"OutOfRange\"}".into()
        }
        Err(ParamClientError::Rejected(ParamError::WrongType { .. })) => {
            "{\"err\": \"WrongType\"}".into()
        }
        Err(ParamClientError::Rejected(ParamError::NotFound { .. })) => {
            "{\"err\": \"NotFound\"}".into()
        }
        Err(ParamClientError::Call(horus::CallError::NoServer(_))) => {
            "{\"err\": \"NoServer\"}".into()
        }
        Err(e) => format!("{{\"err\": \"{}\"}}", e.to_string().replace('"', "'")),
    }
}

pub(crate) fn call(node: &str) -> Result<()> {
    let mut c = ParamClient::open(node)?;
    c.set_timeout(Duration::from_secs(5));
    say("ready");
    match c.list() {
        Ok(infos) => {
            let items: Vec<String> = infos
                .iter()
                .map(|i| format!("\"{}:{}\"", i.name, i.kind))
                .collect();
            say(&format!("{{\"list\": [{}]}}", items.join(", ")));
        }
        Err(e) => {
            say(&outcome(Err(e)));
            return Ok(());
        }
    }
    say(&outcome(c.get("max_speed")));
    say(&outcome(c.set("max_speed", &1.5.into())));
    say(&outcome(c.set("max_speed", &5.0.into())));
    say(&outcome(c.set("max_speed", &"fast".into())));
    say(&outcome(c.set("retries", &7i64.into())));
    say(&outcome(c.set("label", &"dock".into())));
    say(&outcome(c.set("gains", &vec![3.0].into())));
    say(&outcome(c.set("nope", &true.into())));
    say(&outcome(c.get("max_speed")));
    Ok(())
}
