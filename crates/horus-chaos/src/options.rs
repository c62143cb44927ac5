//! Command line of the orchestrator.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};

/// What `chaos` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    /// Length of the chaos phase (kills), before the orderly stop.
    pub(crate) seconds: u64,
    /// Publisher processes per topic.
    pub(crate) publishers: usize,
    /// Subscriber processes per topic.
    pub(crate) subscribers: usize,
    /// Of those, how many per topic are Python processes.
    pub(crate) python: usize,
    pub(crate) seed: u64,
    pub(crate) json: Option<PathBuf>,
    pub(crate) kill_min: Duration,
    pub(crate) kill_max: Duration,
    pub(crate) block_timeout: Duration,
    /// Scheduling slack allowed on top of the Block timeout before a call
    /// counts as a stall (the machine is shared and overloaded on purpose).
    pub(crate) stall_grace: Duration,
    pub(crate) python_exe: PathBuf,
    pub(crate) python_child: PathBuf,
    /// Keep the run directory (reports, logs) even when every check passed.
    pub(crate) keep: bool,
}

pub(crate) const USAGE: &str = "\
usage: chaos [--seconds S] [--publishers N] [--subscribers M] [--python K] [--seed X]
             [--json FILE] [--kill-min-ms A] [--kill-max-ms B] [--block-timeout-ms T]
             [--stall-grace-ms G] [--python-exe PATH] [--python-child PATH] [--keep]

N publisher and M subscriber processes on each of two topics (Block and DropOldest),
K of each topic's processes in Python; every A..B ms a random one is SIGKILLed (some
reaped late, leaving zombies) and replaced. Then an orderly stop and the checks; exits
non-zero if any check fails. Defaults: 60 s, N=2, M=2, K=2, A=200, B=1500, T=500, G=250,
.venv/bin/python, python/tests/chaos_child.py.";

impl Default for Options {
    fn default() -> Self {
        Options {
            seconds: 60,
            publishers: 2,
            subscribers: 2,
            python: 2,
            seed: seed_from_clock(),
            json: None,
            kill_min: Duration::from_millis(200),
            kill_max: Duration::from_millis(1500),
            block_timeout: Duration::from_millis(500),
            stall_grace: Duration::from_millis(250),
            python_exe: PathBuf::from(".venv/bin/python"),
            python_child: PathBuf::from("python/tests/chaos_child.py"),
            keep: false,
        }
    }
}

fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

impl Options {
    pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> anyhow::Result<Options> {
        let mut o = Options::default();
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--keep" {
                o.keep = true;
                continue;
            }
            let v = args
                .next()
                .with_context(|| format!("{flag} needs a value"))?;
            let num = |v: &str| -> anyhow::Result<u64> {
                v.parse()
                    .with_context(|| format!("{flag}: not a number: {v:?}"))
            };
            match flag.as_str() {
                "--seconds" => o.seconds = num(&v)?,
                "--publishers" => o.publishers = num(&v)? as usize,
                "--subscribers" => o.subscribers = num(&v)? as usize,
                "--python" => o.python = num(&v)? as usize,
                "--seed" => o.seed = num(&v)?,
                "--json" => o.json = Some(PathBuf::from(v)),
                "--kill-min-ms" => o.kill_min = Duration::from_millis(num(&v)?),
                "--kill-max-ms" => o.kill_max = Duration::from_millis(num(&v)?),
                "--block-timeout-ms" => o.block_timeout = Duration::from_millis(num(&v)?),
                "--stall-grace-ms" => o.stall_grace = Duration::from_millis(num(&v)?),
                "--python-exe" => o.python_exe = PathBuf::from(v),
                "--python-child" => o.python_child = PathBuf::from(v),
                _ => bail!("unknown argument {flag:?}\n{USAGE}"),
            }
        }
        if o.publishers == 0 || o.subscribers == 0 {
            bail!("--publishers and --subscribers must be at least 1");
        }
        if o.publishers > crate::wire::MAX_PUBLISHERS as usize / 2
            || o.subscribers > crate::wire::MAX_SUBSCRIBERS as usize / 2
        {
            bail!(
                "at most {} publishers and {} subscribers per topic (half the places: killed ones hold theirs until noticed)",
                crate::wire::MAX_PUBLISHERS / 2,
                crate::wire::MAX_SUBSCRIBERS / 2
            );
        }
        if o.python > o.publishers + o.subscribers {
            bail!("--python cannot exceed --publishers + --subscribers");
        }
        if o.kill_min.is_zero() || o.kill_min > o.kill_max {
            bail!("need 0 < --kill-min-ms <= --kill-max-ms");
        }
        if o.block_timeout.is_zero() {
            bail!("--block-timeout-ms must be positive");
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> anyhow::Result<Options> {
        Options::parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn flags_set_their_fields() {
        let o = parse("--seconds 15 --publishers 1 --subscribers 3 --python 1 --seed 7 --keep")
            .unwrap();
        assert_eq!(
            (
                o.seconds,
                o.publishers,
                o.subscribers,
                o.python,
                o.seed,
                o.keep
            ),
            (15, 1, 3, 1, 7, true)
        );
    }

    #[test]
    fn nonsense_is_refused() {
        assert!(parse("--publishers 0").is_err());
        assert!(parse("--python 9").is_err());
        assert!(parse("--kill-min-ms 900 --kill-max-ms 100").is_err());
        assert!(parse("--frobnicate 1").is_err());
        assert!(parse("--seconds").is_err());
    }
}
