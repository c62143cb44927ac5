//! `horus launch FILE.yaml [NAME:=VALUE ...]`: start a system of processes, supervise it,
//! stop it in order on Ctrl-C or SIGTERM, print how each process ended.
//!
//! Exit status: 0 when every process ended cleanly, 1 when one did not (or could not be
//! started), 2 when the launch file is rejected (nothing is started then).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use horus_launch::LoadError;

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
    let values = match horus_launch::parse_values(&args.args) {
        Ok(values) => values,
        Err(e) => return Ok(rejected(&e, out)),
    };
    let Ok(grace) = args.stop_grace.map(Duration::try_from_secs_f64).transpose() else {
        let e = LoadError::Plain("--stop-grace: a number of seconds ≥ 0".into());
        return Ok(rejected(&e, out));
    };
    let plan = match horus_launch::load(&args.file, &values, grace) {
        Ok(plan) => plan,
        Err(e) => return Ok(rejected(&e, out)),
    };
    if args.check {
        if out.is_json() {
            out.json_line(&plan.check_json());
        } else {
            println!("{}", plan.check_text());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let summary = horus_launch::run(plan, out.is_json())?;
    if out.is_json() {
        out.json_line(&summary.json(&args.file.display().to_string()));
    } else {
        println!("{}", summary.text());
    }
    Ok(ExitCode::from(summary.exit_code()))
}

/// Reports a refused file or argument; exit status 2 (nothing was started).
fn rejected(e: &LoadError, out: &Output) -> ExitCode {
    if out.is_json() {
        out.json_line(&e.json());
    } else {
        eprintln!("horus launch: {e}");
        eprintln!("horus launch: nothing was started");
    }
    ExitCode::from(2)
}
