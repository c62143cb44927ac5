//! `horus launch FILE.yaml [NAME:=VALUE ...]`: start a system of processes, supervise it,
//! stop it in order on Ctrl-C or SIGTERM, print how each process ended.
//!
//! Exit status: 0 when every process ended cleanly, 1 when one did not (or could not be
//! started), 2 when the launch file is rejected (nothing is started then).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use crate::launch;
use crate::output::Output;

/// Start the processes of a launch file (see docs/launch.md).
#[derive(Debug, Args)]
pub(crate) struct Launch {
    /// The launch file.
    file: PathBuf,
    /// Values of the file's arguments, as NAME:=VALUE.
    #[arg(value_name = "NAME:=VALUE")]
    args: Vec<String>,
    /// Seconds between SIGTERM and SIGKILL at shutdown, for processes and files that set
    /// no `stop_grace` of their own (default 5).
    #[arg(long, value_name = "SECONDS")]
    stop_grace: Option<f64>,
    /// Only check the file and list what would run; start nothing.
    #[arg(long)]
    check: bool,
}

pub(crate) fn run(args: Launch, out: &Output) -> anyhow::Result<ExitCode> {
    let mut values = BTreeMap::new();
    for a in &args.args {
        let Some((name, value)) = a.split_once(":=") else {
            let e = launch::LoadError::Plain(format!("argument {a:?}: expected NAME:=VALUE"));
            rejected(&e, out);
            return Ok(ExitCode::from(2));
        };
        values.insert(name.to_owned(), value.to_owned());
    }
    let Ok(grace) = args.stop_grace.map(Duration::try_from_secs_f64).transpose() else {
        let e = launch::LoadError::Plain("--stop-grace: a number of seconds ≥ 0".into());
        rejected(&e, out);
        return Ok(ExitCode::from(2));
    };
    let plan = match launch::load(&args.file, &values, grace) {
        Ok(plan) => plan,
        Err(e) => {
            rejected(&e, out);
            return Ok(ExitCode::from(2));
        }
    };
    if args.check {
        check_report(&plan, out);
        return Ok(ExitCode::SUCCESS);
    }
    let summary = launch::run(plan, out.is_json())?;
    if out.is_json() {
        out.json_line(&summary.json(&args.file.display().to_string()));
    } else {
        println!("{}", summary.text());
    }
    Ok(ExitCode::from(summary.exit_code()))
}

fn rejected(e: &launch::LoadError, out: &Output) {
    if out.is_json() {
        let mut doc = json!({ "error": e.to_string() });
        if let launch::LoadError::At { origin, message } = e {
            doc["file"] = json!(origin.file.display().to_string());
            doc["line"] = json!(origin.line);
            doc["column"] = json!(origin.column);
            doc["message"] = json!(message);
        }
        out.json_line(&doc);
    } else {
        eprintln!("horus launch: {e}");
        eprintln!("horus launch: nothing was started");
    }
}

fn check_report(plan: &launch::Plan, out: &Output) {
    if out.is_json() {
        let procs: Vec<_> = plan
            .processes
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "defined_at": p.origin.to_string(),
                    "argv": p.argv,
                    "namespace": p.namespace,
                    "after": p.after.iter().map(|(a, _)| a).collect::<Vec<_>>(),
                    "after_topic": p.after_topic,
                    "restart": p.restart.describe(),
                    "required": p.required,
                })
            })
            .collect();
        out.json_line(&json!({ "file": plan.file.display().to_string(), "processes": procs }));
    } else {
        for p in &plan.processes {
            let mut line = format!("{}: {}", p.name, p.argv.join(" "));
            if let Some(ns) = &p.namespace {
                line += &format!("  [namespace {ns}]");
            }
            if !p.after.is_empty() {
                let after: Vec<&str> = p.after.iter().map(|(a, _)| a.as_str()).collect();
                line += &format!("  [after {}]", after.join(", "));
            }
            if !p.after_topic.is_empty() {
                line += &format!("  [after topic {}]", p.after_topic.join(", "));
            }
            line += &format!("  [restart {}]", p.restart.describe());
            println!("{line}");
        }
        println!(
            "{}: ok, {} processes",
            plan.file.display(),
            plan.processes.len()
        );
    }
}
