//! `horus`: the command line of a running horus robot.
//!
//! One binary, one file per verb under `verbs/`. Every verb takes `--json` (one JSON document,
//! or JSON Lines for streams) and exits 0 on success, 1 on a failure the verb reports, 2 on a
//! usage error (clap's convention).

mod output;
mod table;
mod verbs;

use clap::Parser;
use std::process::ExitCode;

/// See, poke and start a running horus robot.
#[derive(Debug, Parser)]
#[command(name = "horus", version, about)]
struct Cli {
    /// Print JSON (one document, or JSON Lines for streams) instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    verb: verbs::Verb,
}

fn main() -> ExitCode {
    // `horus topic echo | head`: die quietly on a closed pipe, as command-line tools do,
    // instead of panicking in println!.
    // SAFETY: signal() with SIG_DFL installs no handler code; called before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    let out = output::Output::new(cli.json);
    match verbs::run(cli.verb, &out) {
        Ok(code) => code,
        Err(e) => {
            out.error(&e);
            ExitCode::from(1)
        }
    }
}
