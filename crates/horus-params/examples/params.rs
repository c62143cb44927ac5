//! A node declares parameters, loads a YAML file, serves them from its tick;
//! another thread (could be another process) lists, gets and sets them.

use std::time::Duration;

use horus_params::{ParamClient, ParamDecl, ParamServer, Parameters, Range};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    std::env::set_var(
        "HORUS_NAMESPACE",
        format!("example-params-{}", std::process::id()),
    );

    // The node declares its parameters: default, description, optional range.
    let mut params = Parameters::new();
    params.declare(
        ParamDecl::new("max_speed", 1.0)
            .description("top speed, m/s")
            .range(Range::F64 { min: 0.0, max: 2.0 }),
    )?;
    let wheels = vec!["left".to_string(), "right".to_string()];
    params.declare(ParamDecl::new("wheels", wheels).description("driven wheel joints"))?;
    params.declare(
        ParamDecl::new("rate_hz", 50_i64)
            .description("control loop rate")
            .range(Range::I64 { min: 1, max: 1000 }),
    )?;

    // Values from a YAML file; a bad file is a typed error with its position.
    params.load_yaml_str("max_speed: 0.8\n")?;
    if let Err(e) = params.load_yaml_str("max_speed: 0.5\nrate_hz: 5000\n") {
        println!("bad file: {e}");
    }
    params.take_changed();

    let mut server = ParamServer::new("base")?;

    // Another process: list, get, set (ok, out of range, wrong type).
    let tool = std::thread::spawn(|| -> Result<Vec<String>, horus_params::ParamClientError> {
        let mut out = Vec::new();
        let mut client = ParamClient::open("base")?;
        for p in client.list()? {
            out.push(format!(
                "{} ({}) = default {} | {}",
                p.name, p.kind, p.default, p.description
            ));
        }
        out.push(format!("get max_speed -> {}", client.get("max_speed")?));
        out.push(format!(
            "set max_speed 1.5 -> {}",
            client.set("max_speed", &1.5.into())?
        ));
        if let Err(e) = client.set("max_speed", &3.0.into()) {
            out.push(format!("set max_speed 3.0 -> {e}"));
        }
        if let Err(e) = client.set("rate_hz", &"fast".into()) {
            out.push(format!("set rate_hz \"fast\" -> {e}"));
        }
        Ok(out)
    });

    // The node's tick: serve requests, then react to what changed.
    let mut seen = Vec::new();
    while !tool.is_finished() {
        server.serve_pending(&mut params);
        for name in params.take_changed() {
            seen.push(format!("node: {name} is now {}", params.get(&name)?));
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    for line in tool.join().expect("tool thread")? {
        println!("{line}");
    }
    for line in seen {
        println!("{line}");
    }
    print!("{}", params.dump_yaml());
    Ok(())
}
