//! `tf`: the cost of transform lookups and of keeping transforms up to date, horus's host-wide
//! shared buffer beside per-process buffers fed by their own subscriptions (tf2's way,
//! implemented with the same horus-tf code: `TfListener::per_process`), in interleaved
//! rounds.
//!
//! 1. Lookup cost: a 5-deep chain `map → f1 → … → f5`, each frame broadcast at 100 Hz,
//!    looked up at a time between two samples (interpolation on every hop), from Rust
//!    (this process) and from Python (`horus.tf.Buffer`, a child interpreter).
//! 2. Host CPU: 20 processes each doing 100 lookups/s of 5-deep chains while 200 frames
//!    change at 100 Hz; the CPU time of the 20 processes (each process's CPU clock,
//!    `clock_getcpuclockid`: nanoseconds, every thread) over a window, shared buffer vs
//!    per-process buffers, in the steady state: the window opens once every frame's ring
//!    has been written round once (the buffer's 10 s history), so that neither mode is
//!    measured paying its first touch of each ring page (a page fault per 4 KiB of ring in
//!    every process, ~400/s each, that ends after the first lap). The publisher is the same
//!    in both and is reported apart (and added in the whole-host figure). In the shared mode
//!    the feeding process is also reported apart from the other 19.
//!
//! ```text
//! cargo run --release -p horus-bench-ros --bin tf -- --quick            # ≤ 60 s
//! cargo run --release -p horus-bench-ros --bin tf -- --rounds 3 --json /tmp/tf.json
//! ```
//! tf2's own buffer is not measured: no tf2 Python or C++ package is on PyPI (checked with
//! `pip download ros-kilted-tf2-py`, `ros-kilted-tf2-ros-py`, `ros-tf2-py`: none exists).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use horus::ros::Ros;
use horus::Topic;
use horus_bench_ros::tf_rows::{
    cpu_ratios, median, CpuRow, LookupRow, TfDoc, BUFFERS, LOOKBACK_NS, LOOKUPS_HZ, RATE_HZ,
};
use horus_bench_ros::tf_tables;
use horus_ros_msgs::geometry_msgs::msg::TransformStamped;
use horus_ros_msgs::tf2_msgs::msg::TFMessage;
use horus_tf::{
    now_ns, time_of_ns, transform_stamped, TfListener, TransformBroadcaster, TF_STATIC_DURABILITY,
    TF_STATIC_TOPIC, TF_TOPIC,
};

const CHILD_FLAG: &str = "--tf-child";
/// Processes doing lookups in the CPU scene.
const PROCESSES: usize = 20;
/// Frames changing in the CPU scene (40 chains of 5).
const FRAMES: usize = 200;
/// How long the CPU scene runs before its window opens: past the first lap of every
/// frame's ring (1,024 samples at 100 Hz) and the lookups' look-back, into the steady state.
const STEADY_AFTER: Duration = Duration::from_millis(11_000);

fn chain_names(chain: usize) -> Vec<String> {
    let mut v = vec!["map".to_owned()];
    v.extend((1..=5).map(|k| format!("c{chain}_f{k}")));
    v
}

/// The transforms of `chains` 5-deep chains at `stamp_ns` (each frame a little rotation and
/// offset that change with time, so interpolation has work to do).
fn chain_transforms(chains: usize, stamp_ns: i64, out: &mut Vec<TransformStamped>) {
    out.clear();
    let t = stamp_ns as f64 * 1e-9;
    for c in 0..chains {
        let names = chain_names(c);
        for k in 0..5 {
            let a = 0.1 * (t + k as f64).sin();
            let (s, co) = (0.5 * a).sin_cos();
            out.push(transform_stamped(
                &names[k],
                &names[k + 1],
                time_of_ns(stamp_ns),
                [0.1 + a, 0.2, 0.05 * k as f64],
                [0.0, 0.0, s, co],
            ));
        }
    }
}

/// Publishes `chains` chains at 100 Hz until dropped.
struct Publisher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Publisher {
    fn start(ns: &str, chains: usize) -> anyhow::Result<Publisher> {
        let mut tf = TransformBroadcaster::open(Some(ns))?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let period = Duration::from_nanos(1_000_000_000 / RATE_HZ);
            let mut next = Instant::now();
            let mut msg = Vec::new();
            while !s.load(Ordering::Relaxed) {
                chain_transforms(chains, now_ns(), &mut msg);
                if let Err(e) = tf.send_all(&msg) {
                    eprintln!("tf bench: publish failed: {e}");
                }
                next += period;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
        });
        Ok(Publisher {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn wait_ready(l: &TfListener, target: &str, source: &str) -> anyhow::Result<()> {
    let end = Instant::now() + Duration::from_secs(20);
    while !l.can_transform(target, source, now_ns() - LOOKBACK_NS) {
        if Instant::now() > end {
            bail!("no {target} <- {source} after 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Times `n` lookups one by one (each between two clock reads).
fn time_lookups(l: &TfListener, n: u64) -> anyhow::Result<(f64, f64, f64)> {
    let mut samples = Vec::with_capacity(n as usize);
    let t = now_ns() - LOOKBACK_NS;
    let start = Instant::now();
    for _ in 0..n {
        let a = Instant::now();
        let r = l.lookup_transform("map", "c0_f5", t);
        let b = Instant::now();
        std::hint::black_box(r?);
        samples.push((b - a).as_nanos() as f64);
    }
    let mean = start.elapsed().as_nanos() as f64 / n as f64;
    samples.sort_by(f64::total_cmp);
    Ok((percentile(&samples, 0.5), percentile(&samples, 0.99), mean))
}

const PY_SCRIPT: &str = r#"
import json, sys, time
import horus.tf as tf
per_process = sys.argv[1] == "per-process"
n = int(sys.argv[2])
with tf.Buffer(per_process=per_process) as b:
    lb = 505_000_000
    end = time.monotonic() + 20
    while not b.can_transform("map", "c0_f5", time.time_ns() - lb):
        assert time.monotonic() < end, "no transform within 20 s"
        time.sleep(0.01)
    t = time.time_ns() - lb
    lookup = b.lookup
    for _ in range(1000):
        lookup("map", "c0_f5", t)
    samples = []
    pc = time.perf_counter_ns
    start = pc()
    for _ in range(n):
        a = pc()
        lookup("map", "c0_f5", t)
        samples.append(pc() - a)
    mean = (pc() - start) / n
    samples.sort()
    print(json.dumps({"median_ns": samples[len(samples) // 2], "p99_ns": samples[int(len(samples) * 0.99)], "mean_ns": mean}), flush=True)
"#;

/// Whether `python` runs and imports horus (the error: why not).
fn imports_horus(python: &str) -> anyhow::Result<()> {
    let out = Command::new(python)
        .args(["-c", "import horus.tf"])
        .output()
        .with_context(|| format!("running {python}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!(
            "cannot `import horus.tf`: {}",
            stderr.lines().last().unwrap_or("no message")
        );
    }
    Ok(())
}

/// The interpreter given: `--python`, else `$HORUS_PYTHON` unless empty (an exported but
/// empty variable is no interpreter given).
fn given_python(flag: Option<String>, env: Option<String>) -> Option<String> {
    flag.or_else(|| env.filter(|py| !py.is_empty()))
}

/// The interpreter of the Python rows: `given` ([`given_python`]), else
/// `default` (`.venv/bin/python` where it exists). `Ok(None)`: no Python rows, and no failed
/// measurement: none given, and the default is absent or cannot import horus (a `.venv`
/// made before the package was built into it, as in a fresh clone's `make test` before its
/// Python phase). `Err((python, why))`: the interpreter given cannot import horus, a failed
/// measurement.
fn choose_python(
    given: Option<String>,
    default: Option<String>,
    imports: impl Fn(&str) -> anyhow::Result<()>,
) -> Result<Option<String>, (String, anyhow::Error)> {
    if let Some(py) = given {
        return match imports(&py) {
            Ok(()) => Ok(Some(py)),
            Err(e) => Err((py, e)),
        };
    }
    Ok(default.and_then(|py| match imports(&py) {
        Ok(()) => Some(py),
        Err(e) => {
            eprintln!("tf: Python rows not run: {py}: {e:#} (make setup-python)");
            None
        }
    }))
}

fn python_lookups(python: &str, ns: &str, buffer: &str, n: u64) -> anyhow::Result<(f64, f64, f64)> {
    let out = Command::new(python)
        .args(["-c", PY_SCRIPT, buffer, &n.to_string()])
        .env("HORUS_NAMESPACE", ns)
        .output()
        .with_context(|| format!("running {python}"))?;
    if !out.status.success() {
        bail!("python: {}", String::from_utf8_lossy(&out.stderr));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let f = |k: &str| v[k].as_f64().context("python output");
    Ok((f("median_ns")?, f("p99_ns")?, f("mean_ns")?))
}

/// The CPU time of process `pid` (all its threads, exited ones included), seconds, to the
/// nanosecond: its process CPU clock. (utime + stime of `/proc/PID/stat` count in 10 ms
/// ticks: ±0.2 s over 20 processes, a tenth of the shared mode's whole figure.)
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid place for the result.
    let r = unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) };
    anyhow::ensure!(r == 0, "clock_getcpuclockid({pid}): error {r}");
    // SAFETY: all-zero is a valid timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a valid place for the result.
    let r = unsafe { libc::clock_gettime(clock, &mut ts) };
    anyhow::ensure!(r == 0, "clock_gettime(CPU clock of {pid}) failed");
    Ok(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// One lookup process of the CPU scene: a listener, then 100 lookups/s of the chains in
/// turn, until its stdin closes. A line on stdin asks whether it feeds the buffer now: it
/// answers `feeding` or `standby` (asked at the window's end, before any process exits
/// and a standby takes the claim over).
fn child(mode: &str, ns: &str) -> anyhow::Result<()> {
    let l = if mode == "shared" {
        TfListener::open(ns)?
    } else {
        TfListener::per_process(ns)?
    };
    let chains = FRAMES / 5;
    wait_ready(&l, "map", &format!("c{}_f5", chains - 1)).with_context(|| {
        format!(
            "{mode} lookup process: {:?}, {:?}",
            l.stats(),
            l.buffer().stats()
        )
    })?;
    println!("ready");
    std::io::stdout().flush()?;
    let stop = Arc::new(AtomicBool::new(false));
    let asked = Arc::new(AtomicBool::new(false));
    let (s, a) = (Arc::clone(&stop), Arc::clone(&asked));
    std::thread::spawn(move || {
        let mut line = String::new();
        while matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0) {
            a.store(true, Ordering::Relaxed);
            line.clear();
        }
        s.store(true, Ordering::Relaxed);
    });
    // The frame ids, made once: the loop's work is the lookups (and its sleeps).
    let sources: Vec<String> = (0..chains).map(|c| format!("c{c}_f5")).collect();
    let period = Duration::from_nanos(1_000_000_000 / LOOKUPS_HZ);
    let mut next = Instant::now();
    let mut k = 0;
    while !stop.load(Ordering::Relaxed) {
        std::hint::black_box(
            l.lookup_transform("map", &sources[k % chains], now_ns() - LOOKBACK_NS)
                .ok(),
        );
        k += 1;
        if asked.swap(false, Ordering::Relaxed) {
            let role = if l.stats().feeding {
                "feeding"
            } else {
                "standby"
            };
            println!("{role}");
            std::io::stdout().flush()?;
        }
        next += period;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    Ok(())
}

/// The lookup processes of a CPU scene. Each is killed and waited for when this is dropped,
/// so a scene that fails midway leaves none running into the next scene's window, nor a
/// zombie; on the normal path every one has already been waited for, and then this does
/// nothing (`Child::kill` of a reaped child sends no signal).
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Removes what dead processes left of a scene's namespace in `/dev/shm` when dropped: it
/// runs the cleanup calls `horus clean` uses for topics and tf buffers
/// ([`horus::clean::clean_stale`]: topic and service segments, scheduler tables, logs;
/// [`horus_tf::remove_stale`]: the host's tf buffer), and keeps what a live process holds
/// (`horus clean` also removes tensor pools, which tf does not use). Made first in a scene, it
/// is dropped last, after the scene's own handles and its [`Children`], killed and reaped. On
/// the normal path every process closed its handles and nothing is left; a scene that failed
/// killed its lookup processes (or a Python child died), and no one else unlinks what they
/// held. It says on stderr how many files it removed, when it removed any (a failure left
/// them), and each file it kept, with why (live, being created, or unreadable).
struct Cleanup(String);

impl Cleanup {
    /// Runs the cleanup; what it has to say, one line each (none on the normal path).
    fn run(&self) -> Vec<String> {
        use horus::clean::{SegmentFate, StatsFate};
        use horus_tf::StaleOutcome;
        let ns = &self.0;
        let (mut said, mut removed) = (Vec::new(), 0);
        match horus::clean::clean_stale(ns) {
            Ok(report) => {
                removed += report.removed();
                for s in report.topics.iter().chain(&report.services) {
                    let why = match &s.fate {
                        SegmentFate::Removed | SegmentFate::RemovedUninitialised => continue,
                        SegmentFate::Live {
                            publishers,
                            subscribers,
                        } => format!("live: {publishers} publishers, {subscribers} subscribers"),
                        SegmentFate::Initialising => "being created".to_owned(),
                        SegmentFate::Unreadable(e) => format!("unreadable: {e}"),
                    };
                    said.push(format!("kept {} ({why})", s.path.display()));
                }
                for (path, fate) in &report.schedulers {
                    let why = match fate {
                        StatsFate::Removed => continue,
                        StatsFate::Live { pid } => format!("live: pid {pid}"),
                        StatsFate::Error(e) => format!("unreadable: {e}"),
                    };
                    said.push(format!("kept {} ({why})", path.display()));
                }
            }
            Err(e) => said.push(format!("cleaning namespace {ns}: {e}")),
        }
        let buffer = horus_tf::segment_name(ns).map_or_else(
            |_| format!("the tf buffer of namespace {ns}"),
            |name| format!("/dev/shm{name}"),
        );
        match horus_tf::remove_stale(ns) {
            Ok(StaleOutcome::Absent) => {}
            Ok(StaleOutcome::Removed | StaleOutcome::RemovedUninitialised) => removed += 1,
            Ok(StaleOutcome::Live { participants }) => {
                said.push(format!("kept {buffer} (live: {participants} participants)"))
            }
            Ok(StaleOutcome::Initialising) => said.push(format!("kept {buffer} (being created)")),
            Ok(StaleOutcome::Unreadable(e)) => {
                said.push(format!("kept {buffer} (unreadable: {e})"))
            }
            Err(e) => said.push(format!("cleaning the tf buffer of namespace {ns}: {e}")),
        }
        if removed > 0 {
            let line =
                format!("namespace {ns}: removed {removed} file(s) that dead processes left");
            said.insert(0, line);
        }
        said
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for line in self.run() {
            eprintln!("tf: {line}");
        }
    }
}

fn cpu_scene(
    round: usize,
    mode: &'static str,
    settle: Duration,
    window: Duration,
) -> anyhow::Result<CpuRow> {
    let ns = format!("bench-tf-cpu-{}-{round}-{mode}", std::process::id());
    let _cleanup = Cleanup(ns.clone());
    // Room for 20 per-process subscribers (plus tools): created before anyone else opens it.
    // (16 by default: 20 per-process feeders need more; one shared feeder does not.)
    let _tf = Topic::<Ros<TFMessage>>::builder(TF_TOPIC)
        .namespace(&ns)
        .max_subscribers(32)
        .open()?;
    let _tf_static = Topic::<Ros<TFMessage>>::builder(TF_STATIC_TOPIC)
        .namespace(&ns)
        .max_subscribers(32)
        .durability(TF_STATIC_DURABILITY)
        .open()?;
    let publisher = Publisher::start(&ns, FRAMES / 5)?;
    let exe = std::env::current_exe()?;
    let mut children = Children(Vec::with_capacity(PROCESSES));
    for _ in 0..PROCESSES {
        children.0.push(
            Command::new(&exe)
                .args([CHILD_FLAG, mode, &ns])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()?,
        );
    }
    for c in &mut children.0 {
        let mut line = String::new();
        BufReader::new(c.stdout.as_mut().context("stdout")?).read_line(&mut line)?;
        anyhow::ensure!(line.trim() == "ready", "a lookup process failed to start");
    }
    // Settle into the steady state (feeders subscribed, every ring written round once),
    // then measure.
    std::thread::sleep(settle);
    let me = std::process::id();
    let each = |children: &[Child]| -> anyhow::Result<Vec<f64>> {
        children.iter().map(|c| cpu_seconds(c.id())).collect()
    };
    let (c0, p0, t0) = (each(&children.0)?, cpu_seconds(me)?, Instant::now());
    std::thread::sleep(window);
    let (c1, p1, wall) = (
        each(&children.0)?,
        cpu_seconds(me)?,
        t0.elapsed().as_secs_f64(),
    );
    // Who fed during the window: asked before any process exits (the claim then moves).
    let mut feeding = Vec::with_capacity(children.0.len());
    for c in &mut children.0 {
        writeln!(c.stdin.as_mut().context("stdin")?, "role?")?;
    }
    for c in &mut children.0 {
        let mut role = String::new();
        BufReader::new(c.stdout.as_mut().context("stdout")?).read_line(&mut role)?;
        feeding.push(role.trim() == "feeding");
    }
    for c in &mut children.0 {
        drop(c.stdin.take());
        anyhow::ensure!(c.wait()?.success(), "a lookup process failed");
    }
    drop(children);
    drop(publisher);
    let used: Vec<f64> = c0.iter().zip(&c1).map(|(a, b)| b - a).collect();
    let feeder: f64 = used
        .iter()
        .zip(&feeding)
        .filter(|(_, f)| **f)
        .map(|(u, _)| u)
        .sum();
    Ok(CpuRow {
        round,
        buffer: mode.to_owned(),
        processes: PROCESSES,
        frames: FRAMES,
        window_s: wall,
        cpu_cores: used.iter().sum::<f64>() / wall,
        feeder_cores: Some(feeder / wall),
        feeding_processes: Some(feeding.iter().filter(|f| **f).count()),
        publisher_cores: (p1 - p0) / wall,
    })
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tf: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(CHILD_FLAG) {
        child(&args[1], &args[2])?;
        return Ok(ExitCode::SUCCESS);
    }
    let (mut quick, mut rounds, mut json, mut python) = (false, None, None, None);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--rounds" => rounds = Some(it.next().context("--rounds N")?.parse::<usize>()?),
            "--json" => json = Some(it.next().context("--json FILE")?),
            "--python" => python = Some(it.next().context("--python PATH")?),
            "-h" | "--help" => {
                println!(
                    "tf — transform lookups and tf upkeep: shared buffer vs per-process buffers\n\n\
                     USAGE: tf [--quick] [--rounds N] [--json FILE] [--python PATH]\n\
                     --python: the interpreter with horus installed (default $HORUS_PYTHON if not\n\
                     empty, else .venv/bin/python where it exists). One given (--python or\n\
                     $HORUS_PYTHON) that cannot `import horus.tf` is a failed measurement; a\n\
                     .venv/bin/python that cannot, or none: the Python rows are skipped"
                );
                return Ok(ExitCode::SUCCESS);
            }
            other => bail!("unknown argument {other}"),
        }
    }
    let rounds = rounds.unwrap_or(if quick { 1 } else { 3 });
    let lookups: u64 = if quick { 20_000 } else { 200_000 };
    let window = Duration::from_secs(if quick { 3 } else { 10 });
    // `--quick` (a smoke run) does not wait for the steady state: its window falls in the
    // rings' first lap, when every process also pays a page fault per new ring page.
    let settle = if quick {
        Duration::from_millis(500)
    } else {
        STEADY_AFTER
    };
    let default_python = {
        let p = std::path::Path::new(".venv/bin/python");
        p.exists().then(|| p.display().to_string())
    };

    let mut lookup_rows = Vec::new();
    let mut cpu_rows = Vec::new();
    // Every failed measurement: recorded in the document (written all the same), and the
    // run exits non-zero; what can still be measured is.
    let mut errors: Vec<String> = Vec::new();
    let mut fail = |what: String, e: anyhow::Error| {
        eprintln!("tf: {what}: {e:#}");
        errors.push(format!("{what}: {e:#}"));
    };
    // The interpreter the document records, and the one the Python rows run with (none when
    // the one given cannot import horus: recorded once, not once per round and buffer).
    let (recorded_python, python) = match choose_python(
        given_python(python, std::env::var("HORUS_PYTHON").ok()),
        default_python,
        imports_horus,
    ) {
        Ok(py) => (py.clone(), py),
        Err((py, e)) => {
            fail(format!("Python lookups, {py}"), e);
            (Some(py), None)
        }
    };
    let modes = BUFFERS;
    for round in 0..rounds {
        let order: Vec<&'static str> = if round % 2 == 0 {
            modes.to_vec()
        } else {
            modes.iter().rev().copied().collect()
        };
        if let Err(e) = lookup_round(
            round,
            &order,
            lookups,
            python.as_deref(),
            &mut lookup_rows,
            &mut fail,
        ) {
            fail(format!("round {}: lookups", round + 1), e);
        }
        for mode in &order {
            match cpu_scene(round, mode, settle, window) {
                Ok(row) => cpu_rows.push(row),
                Err(e) => fail(format!("round {}: host CPU ({mode})", round + 1), e),
            }
        }
    }

    let doc = TfDoc {
        rounds,
        quick,
        lookups: lookup_rows,
        cpu: cpu_rows,
        python: recorded_python,
        errors,
    };
    println!(
        "## tf lookups: 5-deep chain, interpolated on every hop (median over the rounds measured, of {rounds})\n"
    );
    println!("{}", tf_tables::lookups(&doc).to_markdown());
    println!(
        "## host CPU: {PROCESSES} processes × {LOOKUPS_HZ} lookups/s, {FRAMES} frames at {RATE_HZ} Hz (median over the rounds measured, of {rounds}; {})\n",
        if quick {
            "--quick: start-up window, the rings' first lap"
        } else {
            "steady state: window after every ring's first lap"
        }
    );
    println!("{}", tf_tables::cpu(&doc).to_markdown());
    println!("{}", tf_tables::cpu_per_round(&doc).to_markdown());
    println!("## targets\n");
    println!("{}", tf_tables::targets(&doc).to_markdown());
    println!("## method\n");
    for line in tf_tables::method(&doc) {
        println!("- {line}");
    }
    if let Some(path) = json {
        // The rows, and the ratios drawn from them (the report draws them again).
        let ratios = cpu_ratios(&doc.cpu);
        let mut v = serde_json::to_value(&doc)?;
        v["benchmark"] = "tf".into();
        v["cpu_ratio_shared_over_per_process"] =
            median(ratios.iter().map(|r| r.lookups).collect()).into();
        v["cpu_ratio_per_round"] = ratios.iter().map(|r| r.lookups).collect::<Vec<_>>().into();
        v["cpu_ratio_whole_host"] = median(ratios.iter().map(|r| r.whole_host).collect()).into();
        std::fs::write(&path, serde_json::to_vec_pretty(&v)?)?;
    }
    if doc.errors.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("tf: {} measurement(s) failed:", doc.errors.len());
        for e in &doc.errors {
            eprintln!("  {e}");
        }
        Ok(ExitCode::FAILURE)
    }
}

/// One round's lookups: Rust on both buffers (the chain broadcast all along), then Python
/// where an interpreter is given (each buffer's failure recorded with `fail`, the other
/// still measured). An error: the round's Rust lookups could not be measured (the rows
/// already pushed stay).
fn lookup_round(
    round: usize,
    order: &[&'static str],
    lookups: u64,
    python: Option<&str>,
    rows: &mut Vec<LookupRow>,
    fail: &mut impl FnMut(String, anyhow::Error),
) -> anyhow::Result<()> {
    let ns = format!("bench-tf-lookup-{}-{round}", std::process::id());
    let _cleanup = Cleanup(ns.clone());
    let publisher = Publisher::start(&ns, 1)?;
    let shared = TfListener::open(&ns)?;
    let own = TfListener::per_process(&ns)?;
    wait_ready(&shared, "map", "c0_f5")?;
    wait_ready(&own, "map", "c0_f5")?;
    for mode in order {
        let l = if *mode == "shared" { &shared } else { &own };
        time_lookups(l, lookups / 10)?; // warm-up
        let (median_ns, p99_ns, mean_ns) = time_lookups(l, lookups)?;
        rows.push(LookupRow {
            round,
            language: "Rust".to_owned(),
            buffer: (*mode).to_owned(),
            lookups,
            median_ns,
            p99_ns,
            mean_ns,
        });
    }
    if let Some(py) = python {
        for mode in order {
            match python_lookups(py, &ns, mode, lookups) {
                Ok((median_ns, p99_ns, mean_ns)) => rows.push(LookupRow {
                    round,
                    language: "Python".to_owned(),
                    buffer: (*mode).to_owned(),
                    lookups,
                    median_ns,
                    p99_ns,
                    mean_ns,
                }),
                Err(e) => fail(
                    format!("round {}: Python lookups ({mode}), {py}", round + 1),
                    e,
                ),
            }
        }
    }
    drop((shared, own, publisher));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports(py: &str) -> anyhow::Result<()> {
        match py {
            "with-horus" => Ok(()),
            _ => bail!("cannot `import horus.tf`: ModuleNotFoundError"),
        }
    }

    #[test]
    fn only_the_default_interpreter_is_skipped_quietly() {
        let s = |v: &str| Some(v.to_owned());
        // The default `.venv` without horus: no Python rows, no error.
        assert!(matches!(
            choose_python(None, s("no-horus"), imports),
            Ok(None)
        ));
        assert!(matches!(choose_python(None, None, imports), Ok(None)));
        assert_eq!(
            choose_python(None, s("with-horus"), imports).unwrap(),
            s("with-horus")
        );
        // An interpreter given comes before the default, and one that cannot import horus
        // is an error, with the interpreter named.
        assert_eq!(
            choose_python(s("with-horus"), s("no-horus"), imports).unwrap(),
            s("with-horus")
        );
        let Err((py, e)) = choose_python(s("no-horus"), s("with-horus"), imports) else {
            panic!("an interpreter given that cannot import horus is an error");
        };
        assert_eq!(py, "no-horus");
        assert!(format!("{e:#}").contains("import horus.tf"));
    }

    #[test]
    fn an_empty_horus_python_is_no_interpreter_given() {
        let s = |v: &str| Some(v.to_owned());
        assert_eq!(given_python(None, s("")), None);
        assert_eq!(given_python(None, None), None);
        assert_eq!(given_python(None, s("py")), s("py"));
        assert_eq!(given_python(s("flag"), s("py")), s("flag"));
        assert_eq!(given_python(s("flag"), s("")), s("flag"));
    }

    /// The files of namespace `ns` in `/dev/shm`.
    fn files_of(ns: &str) -> Vec<String> {
        let prefix = format!("horus.{ns}.");
        let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with(&prefix))
            .collect();
        v.sort();
        v
    }

    /// Run by the test below as a child process (`TF_TEST_CHILD_NS` set): opens what a
    /// shared-buffer lookup process opens, says `ready`, and waits to be killed; it ends at
    /// the end of its stdin, as [`child`] does (so it does not outlive a killed test).
    #[test]
    #[ignore = "a child process of what_killed_lookup_processes_left_is_cleaned_up"]
    fn killed_lookup_process() {
        let Ok(ns) = std::env::var("TF_TEST_CHILD_NS") else {
            return;
        };
        let _tf = Topic::<Ros<TFMessage>>::builder(TF_TOPIC)
            .namespace(&ns)
            .open()
            .unwrap();
        let _l = TfListener::open(&ns).unwrap();
        println!("ready");
        std::io::stdout().flush().unwrap();
        let mut line = String::new();
        while matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0) {
            line.clear();
        }
    }

    #[test]
    fn what_killed_lookup_processes_left_is_cleaned_up() {
        // A scene's order: its cleanup made first, its lookup processes killed and reaped
        // (dropped) before the cleanup is dropped; on a panic, unwinding does the same.
        let ns = format!("bench-tf-cleanup-test-{}", std::process::id());
        let cleanup = Cleanup(ns.clone());
        let mut children = Children(vec![Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::killed_lookup_process",
                "--ignored",
                "--nocapture",
            ])
            .env("TF_TEST_CHILD_NS", &ns)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()]);
        let mut out = BufReader::new(children.0[0].stdout.as_mut().unwrap());
        let mut line = String::new();
        while line.trim() != "ready" {
            line.clear();
            assert_ne!(
                out.read_line(&mut line).unwrap(),
                0,
                "the child ended first"
            );
        }
        drop(children);
        let left = files_of(&ns);
        assert!(
            left.iter().any(|f| f.contains(".t.")) && left.iter().any(|f| f.contains(".tf.")),
            "the killed process left its topic and its tf buffer: {left:?}"
        );
        assert_eq!(
            cleanup.run(),
            [format!(
                "namespace {ns}: removed {} file(s) that dead processes left",
                left.len()
            )]
        );
        assert_eq!(files_of(&ns), Vec::<String>::new());
    }

    #[test]
    fn what_a_live_process_holds_is_kept_and_said() {
        let ns = format!("bench-tf-cleanup-live-test-{}", std::process::id());
        let cleanup = Cleanup(ns.clone());
        let tf = Topic::<Ros<TFMessage>>::builder(TF_TOPIC)
            .namespace(&ns)
            .open()
            .unwrap();
        // A topic's participants are its publishers and subscribers (a handle alone is none).
        let sub = tf.subscriber().unwrap();
        let listener = TfListener::open(&ns).unwrap();
        let said = cleanup.run();
        let kept = |what: &str| {
            said.iter()
                .any(|l| l.contains(what) && l.contains("(live: "))
        };
        assert!(kept(&format!("kept /dev/shm/horus.{ns}.t.")), "{said:?}");
        let buffer = horus_tf::segment_name(&ns).unwrap();
        assert!(kept(&format!("kept /dev/shm{buffer} ")), "{said:?}");
        assert!(!said.iter().any(|l| l.contains("removed")), "{said:?}");
        drop((listener, sub, tf));
        assert_eq!(cleanup.run(), Vec::<String>::new());
        assert_eq!(files_of(&ns), Vec::<String>::new());
    }

    #[test]
    fn dropped_children_are_killed_and_reaped() {
        let spawn = || Command::new("sleep").arg("60").spawn().unwrap();
        let mut done = spawn();
        done.kill().unwrap();
        done.wait().unwrap();
        let running = spawn();
        let pid = running.id() as libc::pid_t;
        drop(Children(vec![done, running]));
        // Reaped: the pid no longer names a process (nor a zombie).
        // SAFETY: signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        assert_eq!(
            (r, std::io::Error::last_os_error().raw_os_error()),
            (-1, Some(libc::ESRCH))
        );
    }
}
