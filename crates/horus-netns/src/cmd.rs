//! Running `ip`, `tc` and `nft` and turning their failures into [`NetnsError`]s.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::error::NetnsError;

fn line(program: &str, args: &[&str]) -> String {
    std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `program args…`, optionally feeding `stdin`, and returns its output
/// whatever its exit status.
pub(crate) fn output(
    program: &str,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<Output, NetnsError> {
    let spawn_err = |source| NetnsError::Spawn {
        command: line(program, args),
        source,
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_err)?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).map_err(spawn_err)?;
        // `pipe` drops here: the program sees end of input.
    }
    child.wait_with_output().map_err(spawn_err)
}

/// Runs `program args…` and fails unless it exits with 0; returns its stdout.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<String, NetnsError> {
    run_with_input(program, args, None)
}

/// [`run`] with `stdin` fed to the program.
pub(crate) fn run_with_input(
    program: &str,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<String, NetnsError> {
    let out = output(program, args, stdin)?;
    if !out.status.success() {
        return Err(NetnsError::Command {
            command: line(program, args),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
