//! `horus launch` against real processes (`sh -c` lines, Python): restart policies
//! counted, start order (`after:`, `after_topic:`), ordered shutdown on SIGINT/SIGTERM with
//! SIGKILL after the grace period, `required:`, `HORUS_LAUNCH_PID`, output prefixes. The
//! files themselves (includes, arguments, malformed files) are in `launch_files.rs`.

mod launch_support;

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use horus::prelude::*;
use launch_support::*;
use serde_json::Value;

#[test]
fn on_failure_restarts_up_to_the_maximum_and_counts_the_restarts() {
    let d = Dir::new("on-failure");
    let f = d.write(
        "l.yaml",
        r#"
processes:
  - name: crasher
    shell: 'echo crasher runs; exit 3'
    restart: on-failure
    max_restarts: 3
    backoff: 0.01
  - name: fine
    shell: 'echo fine runs; exit 0'
    restart: on-failure
"#,
    );
    let (status, doc, stderr) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(1), "{doc}\n{stderr}");
    let c = process(&doc, "crasher");
    assert_eq!(c["starts"], 4, "{doc}");
    assert_eq!(c["restarts"], 3, "{doc}");
    assert_eq!(c["exit_code"], 3, "{doc}");
    assert_eq!(c["clean"], false, "{doc}");
    assert_eq!(
        stderr.matches("crasher | crasher runs").count(),
        4,
        "{stderr}"
    );
    assert!(stderr.contains("all 3 restarts used"), "{stderr}");
    // A clean exit is not a failure: not restarted.
    let fine = process(&doc, "fine");
    assert_eq!(
        (fine["starts"].as_u64(), fine["clean"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(doc["reason"], "every process has ended", "{doc}");
}

#[test]
fn always_restarts_even_clean_exits_and_never_restarts_nothing() {
    let d = Dir::new("always-never");
    let f = d.write(
        "l.yaml",
        r#"
processes:
  - name: again
    shell: 'echo again runs'
    restart: always
    max_restarts: 2
    backoff: 0.01
  - name: once
    shell: 'echo once runs; exit 4'
    restart: never
"#,
    );
    let (status, doc, stderr) = launch_json(&f, &[]);
    let again = process(&doc, "again");
    assert_eq!(
        (again["starts"].as_u64(), again["restarts"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(again["clean"], true, "{doc}");
    assert_eq!(stderr.matches("again | again runs").count(), 3, "{stderr}");
    let once = process(&doc, "once");
    assert_eq!(
        (once["starts"].as_u64(), once["restarts"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(once["exit_code"], 4);
    assert_eq!(status.code(), Some(1), "`once` failed: {doc}");
}

#[test]
fn sigint_stops_in_reverse_start_order_and_kills_a_process_ignoring_sigterm() {
    let d = Dir::new("sigint");
    // Listed out of order: `after:` decides the start order (first, second, stubborn).
    let f = d.write(
        "l.yaml",
        &format!(
            r#"
stop_grace: 20
processes:
  - name: stubborn
    after: second
    shell: 'trap "" TERM; echo stubborn up; while :; do sleep 0.05; done'
    stop_grace: 0.3
  - name: second
    after: [first]
    shell: {}
  - name: first
    shell: {}
"#,
            polite("second"),
            polite("first")
        ),
    );
    let live = Live::spawn(horus().arg("launch").arg(&f));
    live.wait_for("every process up", |o, _| {
        ["first up", "second up", "stubborn up"]
            .iter()
            .all(|s| o.contains(s))
    });
    live.signal(libc::SIGINT);
    let out = live.finish();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "stubborn was SIGKILLed:\n{o}\n{e}"
    );
    // Started in `after:` order, stopped in reverse.
    assert!(pos(&e, "started first") < pos(&e, "started second"), "{e}");
    assert!(
        pos(&e, "started second") < pos(&e, "started stubborn"),
        "{e}"
    );
    assert!(
        pos(&e, "SIGTERM to stubborn") < pos(&e, "SIGTERM to second"),
        "{e}"
    );
    assert!(
        pos(&e, "SIGTERM to second") < pos(&e, "SIGTERM to first"),
        "{e}"
    );
    assert!(
        pos(&e, "stubborn did not stop within") < pos(&e, "SIGTERM to second"),
        "{e}"
    );
    // Each is waited for before the next gets its SIGTERM.
    let ended = |name: &str| {
        let at = e
            .lines()
            .position(|l| l.starts_with(&format!("launch: {name} (pid")) && l.contains("ended"))
            .unwrap_or_else(|| panic!("{name} never ended:\n{e}"));
        e.lines().take(at).map(|l| l.len() + 1).sum::<usize>()
    };
    assert!(ended("stubborn") < pos(&e, "SIGTERM to second"), "{e}");
    assert!(ended("second") < pos(&e, "SIGTERM to first"), "{e}");
    // Output is prefixed by process name; each polite one ran its handler. (The order of
    // lines of different processes is not asserted: each has its own pipe and reader.)
    assert!(o.contains("second   | second got TERM"), "{o}");
    assert!(o.contains("first    | first got TERM"), "{o}");
    assert!(o.contains("stubborn | stubborn up"), "{o}");
    // The summary.
    let summary = &o[pos(&o, "launch summary (SIGINT received)")..];
    let line = |name: &str| {
        summary
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line:\n{summary}"))
    };
    assert!(line("first").contains("exit 0 after SIGTERM"), "{summary}");
    assert!(line("second").contains("exit 0 after SIGTERM"), "{summary}");
    assert!(line("stubborn").contains("SIGKILL"), "{summary}");
    assert!(line("stubborn").contains("not clean"), "{summary}");
    assert!(summary.contains("exit status 1"), "{summary}");
}

#[test]
fn sigterm_stops_everything_cleanly_with_a_json_summary() {
    let d = Dir::new("sigterm");
    let f = d.write(
        "l.yaml",
        &format!(
            r#"
processes:
  - name: a
    shell: {}
  - name: b
    after: a
    command: [sleep, "1000"]
"#,
            polite("a")
        ),
    );
    let live = Live::spawn(horus().arg("launch").arg(&f).arg("--json"));
    live.wait_for("both started", |_, e| {
        e.contains("a up") && e.contains("started b")
    });
    live.signal(libc::SIGTERM);
    let out = live.finish();
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(out.status.code(), Some(0), "{doc}");
    assert_eq!(doc["reason"], "SIGTERM received");
    assert_eq!(doc["clean"], true);
    let a = process(&doc, "a");
    assert_eq!(
        (a["exit_code"].as_i64(), a["sigterm_sent"].as_bool()),
        (Some(0), Some(true))
    );
    // `sleep` has no handler: it dies of the SIGTERM it was sent, which is clean.
    let b = process(&doc, "b");
    assert_eq!(b["signal"], libc::SIGTERM, "{doc}");
    assert_eq!(b["clean"], true, "{doc}");
}

#[test]
fn after_topic_waits_for_a_live_publisher() {
    let d = Dir::new("after-topic");
    let ns = format!("test-launch-topic-{}", std::process::id());
    let f = d.write(
        "l.yaml",
        r#"
args:
  ns: null
namespace: $(arg ns)
processes:
  - name: sentinel
    shell: 'echo sentinel up; exec sleep 1000'
  - name: listener
    after_topic: robot/cmd
    shell: 'echo listener up in $HORUS_NAMESPACE; exec sleep 1000'
"#,
    );
    let live = Live::spawn(horus().arg("launch").arg(&f).arg(format!("ns:={ns}")));
    live.wait_for("the sentinel", |o, _| o.contains("sentinel up"));
    // Give a wrong implementation time to start the listener: it must not.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !live.text().1.contains("started listener"),
        "{:?}",
        live.text()
    );
    let topic = Topic::<CmdVel>::builder("robot/cmd")
        .namespace(&ns)
        .open()
        .unwrap();
    let publisher = topic.publisher().unwrap();
    live.wait_for("the listener", |o, _| {
        o.contains(&format!("listener up in {ns}"))
    });
    live.signal(libc::SIGINT);
    let out = live.finish();
    assert!(out.status.success(), "{:?}", out);
    drop(publisher);
    drop(topic);
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&ns))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn after_topic_timeout_fails_the_launch_and_stops_the_rest() {
    let d = Dir::new("after-topic-timeout");
    let ns = format!("test-launch-timeout-{}", std::process::id());
    let f = d.write(
        "l.yaml",
        &format!(
            r#"
namespace: {ns}
processes:
  - name: sentinel
    command: [sleep, "1000"]
  - name: listener
    after_topic: nobody/publishes
    after_topic_timeout: 0.2
    shell: 'echo listener up'
"#
        ),
    );
    let (status, doc, stderr) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(1), "{doc}");
    assert_eq!(doc["reason"], "listener could not start");
    let l = process(&doc, "listener");
    assert_eq!(l["starts"], 0);
    assert!(
        l["problem"]
            .as_str()
            .unwrap()
            .contains("no live publisher on nobody/publishes"),
        "{doc}"
    );
    assert!(!stderr.contains("listener up"), "{stderr}");
    assert_eq!(process(&doc, "sentinel")["clean"], true, "{doc}");
}

#[test]
fn a_process_can_stop_the_whole_launch_through_horus_launch_pid() {
    let d = Dir::new("launch-pid");
    let f = d.write(
        "l.yaml",
        &format!(
            r#"
processes:
  - name: worker
    shell: {}
  - name: stopper
    after: worker
    shell: 'echo stopper in $HORUS_LAUNCH_NAME; kill -TERM $HORUS_LAUNCH_PID; exec sleep 1000'
"#,
            polite("worker")
        ),
    );
    let (status, doc, stderr) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(0), "{doc}\n{stderr}");
    let reason = doc["reason"].as_str().unwrap();
    assert!(reason.starts_with("SIGTERM from stopper (pid "), "{doc}");
    assert!(stderr.contains("stopper | stopper in stopper"), "{stderr}");
    assert_eq!(process(&doc, "worker")["clean"], true, "{doc}");
}

#[test]
fn python_modules_and_scripts_run_in_their_directory_with_their_environment() {
    let d = Dir::new("python");
    d.write(
        "greeter.py",
        "import os, sys\nprint('module', sys.argv[1:], os.getcwd() == os.environ['WANT_CWD'], os.environ['HORUS_NAMESPACE'])\n",
    );
    d.write(
        "hello.py",
        "import os, sys\nprint('script', sys.argv[1:], os.environ['GREETING'])\n",
    );
    let cwd = d.0.canonicalize().unwrap();
    let f = d.write(
        "l.yaml",
        &format!(
            r#"
namespace: ns-py
env:
  GREETING: from-file
processes:
  - name: mod
    module: greeter
    python: python3
    cwd: .
    args: [a, "1"]
    env: {{ WANT_CWD: "{}" }}
  - name: script
    script: hello.py
    python: python3
    args: [--x]
"#,
            cwd.display()
        ),
    );
    let (status, doc, stderr) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(0), "{doc}\n{stderr}");
    assert!(
        stderr.contains("mod    | module ['a', '1'] True ns-py"),
        "{stderr}"
    );
    assert!(
        stderr.contains("script | script ['--x'] from-file"),
        "{stderr}"
    );
}

#[test]
fn a_required_process_that_ends_stops_the_launch() {
    let d = Dir::new("required");
    let f = d.write(
        "l.yaml",
        &format!(
            r#"
processes:
  - name: long
    shell: {}
  - name: short
    after: long
    shell: 'echo short done'
    required: true
"#,
            polite("long")
        ),
    );
    let (status, doc, stderr) = launch_json(&f, &[]);
    assert_eq!(status.code(), Some(0), "{doc}\n{stderr}");
    assert_eq!(doc["reason"], "required process short has ended", "{doc}");
    assert_eq!(process(&doc, "long")["sigterm_sent"], true, "{doc}");
    assert_eq!(process(&doc, "long")["clean"], true, "{doc}");
}

#[test]
fn prefixes_are_coloured_on_a_terminal_and_plain_otherwise() {
    use std::os::fd::FromRawFd;
    let d = Dir::new("colour");
    let f = d.write(
        "l.yaml",
        "processes:\n  - name: one\n    shell: 'echo to-out; echo to-err >&2'\n",
    );
    let (mut master, mut slave): (libc::c_int, libc::c_int) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the given integers; the name, termios
    // and window-size pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    let (mut master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    };
    let mut cmd = horus();
    cmd.arg("launch")
        .arg(&f)
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Our copy of the terminal's slave end must be closed for reads to end at exit.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        // Ends with EIO once every slave descriptor is closed.
        let _ = master.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let out = output_of(child);
    let tty = reader.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{tty}\n{stderr}");
    assert!(tty.contains("\x1b[36mone\x1b[0m | to-out"), "{tty:?}");
    assert!(stderr.contains("one | to-err"), "{stderr:?}");
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
}
