//! Command line of the `pingpong` binary (hand-rolled; a handful of flags).

use crate::harness::Config;
use crate::payload::{Touch, MIN_SIZE};
use anyhow::{bail, Context};
use std::path::PathBuf;

/// Default message sizes: a command, an IMU sample, a full Ethernet frame, a page,
/// and three image-like payloads.
pub const DEFAULT_SIZES: &[usize] = &[16, 304, 1480, 4096, 65536, 262144, 1048576];
/// Message sizes of `--quick`.
pub const QUICK_SIZES: &[usize] = &[16, 4096, 1048576];
/// Sizes of the one-way throughput pass.
pub const ONE_WAY_SIZES: &[usize] = &[16, 1048576];
/// Groups `--only` accepts.
pub const GROUPS: &[&str] = &["ref", "uds", "iceoryx2", "horus"];

/// Usage text for `--help`.
pub const USAGE: &str = "\
pingpong — round-trip latency of horus against the hardware floor, references and peer transports

USAGE: pingpong [OPTIONS]

  --quick            warm-up 100, 1000 iterations, 1000 one-way messages, sizes 16,4096,1Mi
  --iters N          measured round trips per row (default 10000)
  --warmup N         untimed round trips before measuring (default 1000)
  --one-way N        messages per one-way throughput burst (default 20000)
  --sizes A,B,...    message sizes in bytes, >= 16 (default 16,304,1480,4096,65536,262144,1048576)
  --touch            write/read only the first and last 8 bytes of each payload
                     (default: every byte is written by the sender and read by the receiver)
  --no-pin           only the unpinned pass (default: pinned pass, then unpinned pass)
  --pinned-only      only the pinned pass
  --cpus A,B         CPUs for side A and side B in the pinned pass (default 0,1)
  --only G[,G...]    run only these groups: ref, uds, iceoryx2, horus (repeatable)
  --json FILE        also write machine info, method and all rows as JSON
  -h, --help         this text
";

/// Parsed command line.
#[derive(Debug, Clone)]
pub struct Options {
    /// Measurement parameters.
    pub config: Config,
    /// Round-trip message sizes.
    pub sizes: Vec<usize>,
    /// One-way throughput message sizes.
    pub one_way_sizes: Vec<usize>,
    /// Run the pinned pass.
    pub pinned_pass: bool,
    /// Run the unpinned pass.
    pub unpinned_pass: bool,
    /// Groups to run (all if empty).
    pub only: Vec<String>,
    /// Where to write JSON.
    pub json: Option<PathBuf>,
}

impl Options {
    /// Whether group `g` (one of [`GROUPS`]) is selected.
    pub fn runs(&self, group: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|g| g == group)
    }
}

/// Parses the arguments after the program name; `Ok(None)` means "help was asked".
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> anyhow::Result<Option<Options>> {
    let mut quick = false;
    let (mut iters, mut warmup, mut one_way, mut sizes) = (None, None, None, None);
    let mut touch = Touch::Full;
    let (mut pinned_pass, mut unpinned_pass) = (true, true);
    let mut cpus = [0, 1];
    let mut only = Vec::new();
    let mut json = None;

    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().with_context(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--quick" => quick = true,
            "--iters" => iters = Some(number(&value("--iters")?)?),
            "--warmup" => warmup = Some(number(&value("--warmup")?)?),
            "--one-way" => one_way = Some(number(&value("--one-way")?)?),
            "--sizes" => sizes = Some(list(&value("--sizes")?)?),
            "--touch" => touch = Touch::Ends,
            "--no-pin" => pinned_pass = false,
            "--pinned-only" => unpinned_pass = false,
            "--cpus" => {
                let v: Vec<usize> = list(&value("--cpus")?)?;
                match v[..] {
                    [a, b] if a != b => cpus = [a, b],
                    _ => bail!("--cpus needs two distinct CPUs, e.g. 0,1"),
                }
            }
            "--only" => {
                for g in value("--only")?.split(',') {
                    if !GROUPS.contains(&g) {
                        bail!("--only: unknown group {g:?} (one of {})", GROUPS.join(", "));
                    }
                    only.push(g.to_owned());
                }
            }
            "--json" => json = Some(PathBuf::from(value("--json")?)),
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    if !pinned_pass && !unpinned_pass {
        bail!("--no-pin and --pinned-only together leave nothing to run");
    }
    let sizes = sizes.unwrap_or_else(|| if quick { QUICK_SIZES } else { DEFAULT_SIZES }.to_vec());
    if let Some(bad) = sizes.iter().find(|&&s| s < MIN_SIZE) {
        bail!("message size {bad} is below the minimum of {MIN_SIZE} bytes");
    }
    let config = Config {
        warmup: warmup.unwrap_or(if quick { 100 } else { 1000 }),
        iterations: iters.unwrap_or(if quick { 1000 } else { 10_000 }),
        touch,
        one_way_messages: one_way.unwrap_or(if quick { 1000 } else { 20_000 }),
        cpus,
    };
    Ok(Some(Options {
        config,
        sizes,
        one_way_sizes: ONE_WAY_SIZES.to_vec(),
        pinned_pass,
        unpinned_pass,
        only,
        json,
    }))
}

fn number<T: std::str::FromStr>(s: &str) -> anyhow::Result<T> {
    s.trim()
        .replace('_', "")
        .parse()
        .map_err(|_| anyhow::anyhow!("not a number: {s:?}"))
}

fn list<T: std::str::FromStr>(s: &str) -> anyhow::Result<Vec<T>> {
    s.split(',').map(number).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> anyhow::Result<Option<Options>> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn defaults_and_quick() {
        let d = parse_str("").unwrap().unwrap();
        assert_eq!(d.sizes, DEFAULT_SIZES);
        assert_eq!((d.config.warmup, d.config.iterations), (1000, 10_000));
        assert!(d.pinned_pass && d.unpinned_pass && d.runs("horus"));
        let q = parse_str("--quick --iters 50 --sizes 16,1_024")
            .unwrap()
            .unwrap();
        assert_eq!((q.config.warmup, q.config.iterations), (100, 50));
        assert_eq!(q.sizes, [16, 1024]);
    }

    #[test]
    fn flags() {
        let o = parse_str("--touch --no-pin --only ref,uds --cpus 2,3 --json /tmp/x.json")
            .unwrap()
            .unwrap();
        assert_eq!(o.config.touch, Touch::Ends);
        assert!(!o.pinned_pass && o.unpinned_pass);
        assert!(o.runs("uds") && !o.runs("iceoryx2"));
        assert_eq!(o.config.cpus, [2, 3]);
        assert!(parse_str("--help").unwrap().is_none());
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "--sizes 8",
            "--only zenoh",
            "--cpus 1,1",
            "--iters",
            "--frobnicate",
        ] {
            assert!(parse_str(bad).is_err(), "{bad} was accepted");
        }
    }
}
