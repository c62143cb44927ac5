//! The orchestrator: starts the children, kills one at random every
//! `kill_min..kill_max` (leaving some as zombies for a while), replaces it,
//! then stops the survivors in order (publishers, then subscribers, who
//! drain), checks /dev/shm and hands everything to [`crate::summary`].

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::child::{ChildArgs, Role, TopicKind};
use crate::options::Options;
use crate::summary::{self, Fate, Lang, Record, Run};

/// A zombie is left unreaped this long (uniformly), on this share of kills.
const ZOMBIE_MIN: Duration = Duration::from_millis(1000);
const ZOMBIE_MAX: Duration = Duration::from_millis(2000);
const ZOMBIE_SHARE: f64 = 0.35;
/// How long survivors get to stop cleanly.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// splitmix64: small, seedable, good enough to pick victims.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        lo + (hi - lo).mul_f64(self.unit())
    }
}

/// A running child.
struct Live {
    index: usize,
    proc: std::process::Child,
}

struct Orchestrator<'a> {
    opts: &'a Options,
    ns: String,
    dir: PathBuf,
    python: bool,
    rng: Rng,
    records: Vec<Record>,
    live: Vec<Live>,
    zombies: Vec<(Live, Instant)>,
    /// Children that exited by themselves so far (only the first few are
    /// printed as they happen; the summary lists them all).
    unexpected: usize,
}

/// Unexpected exits printed as they happen.
const PRINT_EXITS: usize = 5;

/// Runs the soak; returns the exit code (0: every check passed).
pub(crate) fn run(opts: &Options) -> anyhow::Result<i32> {
    let ns = format!("chaos-{}", std::process::id());
    let dir = std::env::temp_dir().join(&ns);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let python = python_status(opts);
    if let Err(why) = &python {
        eprintln!();
        eprintln!("################################################################");
        eprintln!("## chaos: PYTHON CHILDREN DISABLED: {why}");
        eprintln!("## running Rust-only (build the module: make py-build)");
        eprintln!("################################################################");
        eprintln!();
    }
    let mut o = Orchestrator {
        opts,
        ns: ns.clone(),
        dir: dir.clone(),
        python: python.is_ok(),
        rng: Rng(opts.seed),
        records: Vec::new(),
        live: Vec::new(),
        zombies: Vec::new(),
        unexpected: 0,
    };
    println!(
        "chaos: namespace {ns}, run dir {}, seed {}, {} s; per topic {} publishers + {} subscribers ({} Python)",
        dir.display(),
        opts.seed,
        opts.seconds,
        opts.publishers,
        opts.subscribers,
        if o.python { opts.python } else { 0 }
    );
    let started = Instant::now();
    let outcome = o.soak();
    // Whatever happened, no child outlives us.
    o.kill_everything();
    outcome?;
    let elapsed = started.elapsed();
    let leftovers = shm_leftovers(&ns)?;
    let run = Run {
        opts,
        namespace: &ns,
        dir: &dir,
        python: python.err(),
        records: &o.records,
        elapsed,
        shm_leftovers: leftovers,
    };
    let passed = summary::report(&run)?;
    // The check has been made; whatever a failed run left is ours to remove
    // (every child is gone), so the machine is left clean either way.
    for name in &run.shm_leftovers {
        std::fs::remove_file(Path::new("/dev/shm").join(name)).ok();
    }
    if passed && !opts.keep {
        std::fs::remove_dir_all(&dir).ok();
    } else {
        println!("chaos: reports and send logs kept in {}", dir.display());
    }
    Ok(if passed { 0 } else { 1 })
}

/// Whether Python children can run: the interpreter, the script and the
/// installed module must all be there.
fn python_status(opts: &Options) -> Result<(), String> {
    if opts.python == 0 {
        return Err("--python 0".into());
    }
    if !opts.python_child.exists() {
        return Err(format!("{} not found", opts.python_child.display()));
    }
    match Command::new(&opts.python_exe)
        .args(["-c", "import horus"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => Err(format!("{} cannot import horus", opts.python_exe.display())),
        Err(e) => Err(format!("{}: {e}", opts.python_exe.display())),
    }
}

impl Orchestrator<'_> {
    fn soak(&mut self) -> anyhow::Result<()> {
        // Slots: per topic, subscribers first (so the first messages have
        // readers), Python taking alternately a publisher and a subscriber
        // slot.
        for topic in TopicKind::ALL {
            let py = if self.python { self.opts.python } else { 0 };
            let (mut py_pub, mut py_sub) = (0, 0);
            for k in 0..py {
                if (k % 2 == 0 && py_pub < self.opts.publishers) || py_sub >= self.opts.subscribers
                {
                    py_pub += 1;
                } else {
                    py_sub += 1;
                }
            }
            for i in 0..self.opts.subscribers {
                let lang = if i < py_sub { Lang::Python } else { Lang::Rust };
                self.spawn(Role::Sub, topic, lang)?;
            }
            for i in 0..self.opts.publishers {
                let lang = if i < py_pub { Lang::Python } else { Lang::Rust };
                self.spawn(Role::Pub, topic, lang)?;
            }
        }
        let end = Instant::now() + Duration::from_secs(self.opts.seconds);
        let mut next_kill =
            Instant::now() + self.rng.between(self.opts.kill_min, self.opts.kill_max);
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
            self.notice_exits()?;
            self.reap_due_zombies(false)?;
            if Instant::now() >= next_kill {
                self.kill_one()?;
                next_kill =
                    Instant::now() + self.rng.between(self.opts.kill_min, self.opts.kill_max);
            }
        }
        self.reap_due_zombies(true)?;
        self.notice_exits()?;
        println!("chaos: chaos phase over; stopping publishers, then subscribers");
        self.stop(Role::Pub)?;
        self.stop(Role::Sub)?;
        Ok(())
    }

    fn spawn(&mut self, role: Role, topic: TopicKind, lang: Lang) -> anyhow::Result<()> {
        let index = self.records.len();
        let id = index as u64 + 1;
        let args = ChildArgs {
            role,
            topic,
            id,
            dir: self.dir.clone(),
            block_timeout: self.opts.block_timeout,
        }
        .to_args();
        let mut cmd = match lang {
            Lang::Rust => {
                let mut c = Command::new(std::env::current_exe()?);
                c.arg("__child");
                c
            }
            Lang::Python => {
                let mut c = Command::new(&self.opts.python_exe);
                c.arg(&self.opts.python_child);
                c
            }
        };
        let stderr = File::create(self.dir.join(format!("{id}.err")))?;
        let proc = cmd
            .args(args)
            .env("HORUS_NAMESPACE", &self.ns)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("starting {lang:?} {} child", role.name()))?;
        self.records.push(Record {
            id,
            role,
            topic,
            lang,
            pid: proc.id(),
            fate: Fate::Running,
        });
        self.live.push(Live { index, proc });
        Ok(())
    }

    /// Children that exited on their own during the chaos phase: a failure
    /// (recorded), and replaced so the population stays the same.
    fn notice_exits(&mut self) -> anyhow::Result<()> {
        let mut i = 0;
        while i < self.live.len() {
            if let Some(status) = self.live[i].proc.try_wait()? {
                let l = self.live.swap_remove(i);
                let r = &mut self.records[l.index];
                r.fate = Fate::ExitedUnexpectedly(describe(status));
                let (role, topic, lang) = (r.role, r.topic, r.lang);
                self.unexpected += 1;
                if self.unexpected <= PRINT_EXITS {
                    eprintln!(
                        "chaos: child {} ({lang:?} {} on {}) exited by itself: {}; stderr: {}",
                        r.id,
                        role.name(),
                        topic.name(),
                        describe(status),
                        stderr_tail(&self.dir, r.id)
                    );
                }
                if self.unexpected == PRINT_EXITS {
                    eprintln!("chaos: (further unexpected exits are only listed at the end)");
                }
                self.spawn(role, topic, lang)?;
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    fn kill_one(&mut self) -> anyhow::Result<()> {
        if self.live.is_empty() {
            return Ok(());
        }
        let victim = (self.rng.next() % self.live.len() as u64) as usize;
        let mut l = self.live.swap_remove(victim);
        // SAFETY: kill(2) on the pid of a child we have not reaped (so the
        // pid cannot have been reused) has no memory effects.
        if unsafe { libc::kill(l.proc.id() as libc::pid_t, libc::SIGKILL) } != 0 {
            anyhow::bail!("kill {}: {}", l.proc.id(), std::io::Error::last_os_error());
        }
        let late = self.rng.unit() < ZOMBIE_SHARE;
        let r = &mut self.records[l.index];
        r.fate = Fate::Killed {
            reaped_late: late,
            seen_as_zombie: false,
        };
        let (role, topic, lang) = (r.role, r.topic, r.lang);
        if late {
            let at = Instant::now() + self.rng.between(ZOMBIE_MIN, ZOMBIE_MAX);
            self.zombies.push((l, at));
        } else {
            l.proc.wait()?;
        }
        // The replacement starts while the zombie (if any) is still there.
        self.spawn(role, topic, lang)
    }

    fn reap_due_zombies(&mut self, all: bool) -> anyhow::Result<()> {
        let now = Instant::now();
        let mut i = 0;
        while i < self.zombies.len() {
            if all || self.zombies[i].1 <= now {
                let (mut l, _) = self.zombies.swap_remove(i);
                let zombie = is_zombie(l.proc.id());
                l.proc.wait()?;
                self.records[l.index].fate = Fate::Killed {
                    reaped_late: true,
                    seen_as_zombie: zombie,
                };
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    /// Asks every live child of `role` to stop and waits for them.
    fn stop(&mut self, role: Role) -> anyhow::Result<()> {
        File::create(self.dir.join(format!("stop.{}", role.name())))?;
        let deadline = Instant::now() + STOP_GRACE + self.opts.block_timeout;
        let mut i = 0;
        while i < self.live.len() {
            if self.records[self.live[i].index].role != role {
                i += 1;
                continue;
            }
            match self.live[i].proc.try_wait()? {
                Some(status) => {
                    let l = self.live.swap_remove(i);
                    let r = &mut self.records[l.index];
                    r.fate = if status.success() {
                        Fate::Stopped
                    } else {
                        eprintln!(
                            "chaos: child {} failed while stopping: {}; stderr: {}",
                            r.id,
                            describe(status),
                            stderr_tail(&self.dir, r.id)
                        );
                        Fate::ExitedUnexpectedly(describe(status))
                    };
                }
                None if Instant::now() >= deadline => {
                    let mut l = self.live.swap_remove(i);
                    l.proc.kill().ok();
                    l.proc.wait()?;
                    self.records[l.index].fate = Fate::DidNotStop;
                }
                None => {
                    std::thread::sleep(Duration::from_millis(10));
                    i = 0;
                }
            }
        }
        Ok(())
    }

    fn kill_everything(&mut self) {
        for (mut l, _) in self.zombies.drain(..) {
            l.proc.wait().ok();
        }
        for mut l in self.live.drain(..) {
            l.proc.kill().ok();
            l.proc.wait().ok();
            self.records[l.index].fate = Fate::DidNotStop;
        }
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown status".into(),
    }
}

/// Whether `pid` is in state Z (exited, not yet reaped).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // The state follows the command name, which is in parentheses.
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|st| st == "Z")
        })
        .unwrap_or(false)
}

/// The last lines a child wrote to stderr.
fn stderr_tail(dir: &Path, id: u64) -> String {
    let text = std::fs::read_to_string(dir.join(format!("{id}.err"))).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        "(empty)".into()
    } else {
        tail
    }
}

/// Entries of /dev/shm that belong to namespace `ns`.
fn shm_leftovers(ns: &str) -> anyhow::Result<Vec<String>> {
    let prefix = format!("horus.{ns}.");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/dev/shm").context("listing /dev/shm")? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) {
            found.push(name);
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exited_unreaped_child_is_seen_as_a_zombie_until_reaped() {
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        // Bounded wait for the exit (not a timing assertion: the loop only
        // gives the child time to run).
        let mut seen = false;
        for _ in 0..5000 {
            if is_zombie(pid) {
                seen = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(seen, "pid {pid} never showed state Z");
        child.wait().expect("reap");
        assert!(!is_zombie(pid));
    }

    #[test]
    fn a_running_process_is_not_a_zombie() {
        assert!(!is_zombie(std::process::id()));
    }

    #[test]
    fn the_same_seed_picks_the_same_victims() {
        let (mut a, mut b) = (Rng(42), Rng(42));
        let xs: Vec<u64> = (0..8).map(|_| a.next()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next()).collect();
        assert_eq!(xs, ys);
        let d = Rng(7).between(Duration::from_millis(200), Duration::from_millis(1500));
        assert!(d >= Duration::from_millis(200) && d <= Duration::from_millis(1500));
    }
}
