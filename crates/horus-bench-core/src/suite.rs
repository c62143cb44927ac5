//! What every suite binary (`robotics_messages`, `payload_sweep`, `all_paths`,
//! `scalability`, `peers`, `multi_host`, … in the benchmark crates) shares: the common
//! flags, the child-process dispatch, progress and error collection, and the `--json`
//! document. `horus_bench::suite` adds horus's own child roles to the dispatch.
//!
//! A failed measurement never aborts a run: it is printed, recorded in the
//! document's `errors`, and the binary exits non-zero at the end.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::child::{self, ChildArgs, CHILD_FLAG};
use crate::clock::Clock;
use crate::machine::Machine;
use crate::peer::ChildRole;

/// Flags every suite binary takes.
#[derive(Debug, Clone)]
pub struct Common {
    /// A run of a few seconds (the smoke test's mode).
    pub quick: bool,
    /// Where to write the JSON document.
    pub json: Option<PathBuf>,
    /// CPUs of the two sides of a pinned pair.
    pub cpus: [usize; 2],
    /// `--iters` override.
    pub iters: Option<u64>,
    /// `--warmup` override.
    pub warmup: Option<u64>,
}

/// Help text of the common flags.
pub const COMMON_USAGE: &str = "\
  --quick            a run of a few seconds (smaller counts, fewer points)
  --json FILE        also write machine, method and every row as JSON
  --cpus A,B         CPUs of the two sides of a pinned pair (default 0,1)
  --iters N          measured round trips per row (overrides the default)
  --warmup N         untimed round trips before measuring
  -h, --help         this text
";

impl Common {
    /// Parses the common flags and hands every other argument to `extra`
    /// (`extra(flag, next_value)` returns whether it knew the flag). `Ok(None)`
    /// means `--help` was asked.
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        mut extra: impl FnMut(&str, &mut dyn FnMut() -> anyhow::Result<String>) -> anyhow::Result<bool>,
    ) -> anyhow::Result<Option<Common>> {
        let mut c = Common {
            quick: false,
            json: None,
            cpus: [0, 1],
            iters: None,
            warmup: None,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
            match arg.as_str() {
                "-h" | "--help" => return Ok(None),
                "--quick" => c.quick = true,
                "--json" => c.json = Some(PathBuf::from(value()?)),
                "--iters" => c.iters = Some(number(&value()?)?),
                "--warmup" => c.warmup = Some(number(&value()?)?),
                "--cpus" => {
                    let v: Vec<usize> = list(&value()?)?;
                    match v[..] {
                        [a, b] if a != b => c.cpus = [a, b],
                        _ => bail!("--cpus needs two distinct CPUs, e.g. 0,1"),
                    }
                }
                other => {
                    if !extra(other, &mut value)? {
                        bail!("unknown argument {other:?}; try --help");
                    }
                }
            }
        }
        Ok(Some(c))
    }

    /// `--iters` or the mode's default.
    pub fn iters(&self, full: u64, quick: u64) -> u64 {
        self.iters.unwrap_or(if self.quick { quick } else { full })
    }

    /// `--warmup` or the mode's default.
    pub fn warmup(&self, full: u64, quick: u64) -> u64 {
        self.warmup.unwrap_or(if self.quick { quick } else { full })
    }
}

/// Parses a number, allowing `_` separators.
pub fn number<T: std::str::FromStr>(s: &str) -> anyhow::Result<T> {
    s.trim()
        .replace('_', "")
        .parse()
        .map_err(|_| anyhow::anyhow!("not a number: {s:?}"))
}

/// Parses a comma-separated list of numbers.
pub fn list<T: std::str::FromStr>(s: &str) -> anyhow::Result<Vec<T>> {
    s.split(',').map(number).collect()
}

/// The `--json` document of a suite binary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Doc<R> {
    /// Binary name.
    pub benchmark: String,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Where it ran.
    pub machine: Machine,
    /// How it was measured, one statement per line.
    pub method: Vec<String>,
    /// The measurements.
    pub rows: Vec<R>,
    /// Measurements that failed, with their error.
    pub errors: Vec<String>,
}

/// A run in progress: prints the header, collects rows and errors.
#[derive(Debug)]
pub struct Run<R> {
    doc: Doc<R>,
    json: Option<PathBuf>,
}

impl<R: Serialize> Run<R> {
    /// Calibrates the clock, detects the machine and prints both with `method`.
    pub fn start(benchmark: &str, common: &Common, method: Vec<String>) -> Self {
        Clock::calibrate();
        let machine = Machine::detect();
        println!(
            "{benchmark}{} | {} | {} CPUs ({} usable) | {}",
            if common.quick { " (quick)" } else { "" },
            machine.cpu_model,
            machine.cores,
            machine.usable_cpus,
            machine.kernel
        );
        for line in &method {
            println!("method: {line}");
        }
        println!();
        Self {
            doc: Doc {
                benchmark: benchmark.to_owned(),
                quick: common.quick,
                machine,
                method,
                rows: Vec::new(),
                errors: Vec::new(),
            },
            json: common.json.clone(),
        }
    }

    /// Runs one measurement; prints `what` and its outcome; a failure is recorded.
    pub fn measure<T>(&mut self, what: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Option<T> {
        let started = std::time::Instant::now();
        match f() {
            Ok(v) => {
                eprintln!("  {what}: ok ({:.1} s)", started.elapsed().as_secs_f64());
                Some(v)
            }
            Err(e) => {
                let msg = format!("{what}: {e:#}");
                eprintln!("  FAILED {msg}");
                self.doc.errors.push(msg);
                None
            }
        }
    }

    /// Adds a finished row.
    pub fn push(&mut self, row: R) {
        self.doc.rows.push(row);
    }

    /// The rows so far.
    pub fn rows(&self) -> &[R] {
        &self.doc.rows
    }

    /// The failed measurements so far (`what: error`).
    pub fn errors(&self) -> &[String] {
        &self.doc.errors
    }

    /// Prints `table`, writes the JSON, and fails if anything failed.
    pub fn finish(self, table: &str) -> anyhow::Result<ExitCode> {
        println!("{table}");
        if let Some(path) = &self.json {
            let json = serde_json::to_string_pretty(&self.doc)?;
            std::fs::write(path, json + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", path.display());
        }
        if self.doc.errors.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("{} measurement(s) failed:", self.doc.errors.len());
        for e in &self.doc.errors {
            eprintln!("  {e}");
        }
        Ok(ExitCode::FAILURE)
    }
}

/// `main` of a suite binary: dispatches `--child <role>` to the role's entry point among
/// `roles` (the child roles of the peers this binary links; see [`child_main`]), else
/// runs `run` and turns an error into exit 1.
pub fn main_with(
    roles: &[&[ChildRole]],
    run: fn(Vec<String>) -> anyhow::Result<ExitCode>,
) -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(CHILD_FLAG) {
        return child_main(&argv[1..], roles);
    }
    match run(argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The child side of a suite binary: runs the role `argv[0]` of `roles` with the rest
/// of `argv`.
pub fn child_main(argv: &[String], roles: &[&[ChildRole]]) -> ExitCode {
    let role = argv.first().cloned().unwrap_or_default();
    let result = child::init_child().and_then(|()| {
        let args = ChildArgs::new(&role, argv[1..].to_vec());
        match roles.iter().flat_map(|r| r.iter()).find(|c| c.role == role) {
            Some(child) => (child.run)(args),
            None => Err(anyhow::anyhow!("unknown child role {role:?}")),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("child {role}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The common method lines: round trip definition, timer, statistics.
pub fn method_common() -> Vec<String> {
    vec![
        format!("timer: {}", Clock::describe()),
        "percentiles nearest-rank over all samples, none discarded; every payload byte is \
         written by the sender and read by the receiver (checksum) unless a row says otherwise"
            .to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> anyhow::Result<Option<Common>> {
        let mut size = None;
        let c = Common::parse(s.split_whitespace().map(str::to_owned), |flag, value| {
            Ok(match flag {
                "--size" => {
                    size = Some(value()?);
                    true
                }
                _ => false,
            })
        })?;
        if let Some(s) = size {
            assert_eq!(s, "64");
        }
        Ok(c)
    }

    #[test]
    fn common_and_extra_flags() {
        let c = parse("--quick --json x.json --cpus 1,0 --iters 1_000 --size 64")
            .unwrap()
            .unwrap();
        assert!(c.quick);
        assert_eq!(c.cpus, [1, 0]);
        assert_eq!(c.iters(5, 6), 1000);
        assert_eq!(c.warmup(5, 6), 6);
        assert!(parse("--help").unwrap().is_none());
        for bad in ["--frob", "--cpus 1,1", "--json"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
