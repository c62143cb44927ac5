//! `report`: turns the JSON of a benchmark run into `docs/benchmarks.md` and its
//! PNG figures ([`horus_bench_report::page`]). It measures nothing itself; `make bench`
//! runs the suite first.
//!
//! ```text
//! report --results bench-results --out docs/benchmarks.md --img docs/img
//! ```

use std::process::ExitCode;

use anyhow::{bail, Context};
use horus_bench_report::page::{self, Options};

const USAGE: &str = "\
report — write docs/benchmarks.md and its figures from a benchmark run's JSON

USAGE: report [--results DIR] [--out FILE] [--img DIR] [--machines DIR] [--allow-missing]

  --results DIR      where the suite wrote its JSON (default bench-results)
  --out FILE         the page to write (default docs/benchmarks.md)
  --img DIR          where the PNGs go (default docs/img; the page links img/<name>.png)
  --machines DIR     other machines' kept results, one folder each (default
                     docs/bench-machines; a missing folder shows none)
  --allow-missing    render a placeholder for a missing result file instead of failing
";

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)).and_then(|a| match a {
        Some(a) => {
            for path in page::write(&a)? {
                println!("wrote {}", path.display());
            }
            Ok(())
        }
        None => {
            print!("{USAGE}");
            Ok(())
        }
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn parse(argv: impl Iterator<Item = String>) -> anyhow::Result<Option<Options>> {
    let mut a = Options {
        results: "bench-results".into(),
        out: "docs/benchmarks.md".into(),
        img: "docs/img".into(),
        allow_missing: false,
        machines: Some("docs/bench-machines".into()),
    };
    let mut argv = argv.peekable();
    while let Some(arg) = argv.next() {
        let mut value = || argv.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--results" => a.results = value()?.into(),
            "--out" => a.out = value()?.into(),
            "--img" => a.img = value()?.into(),
            "--machines" => a.machines = Some(value()?.into()),
            "--allow-missing" => a.allow_missing = true,
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    Ok(Some(a))
}
