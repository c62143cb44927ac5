#!/usr/bin/env python3
"""Accuracy of `horus topic hz` / `bw` against publishers of known rate, and the CPU that a
running `hz` and `echo` cost.

    python3 crates/horus-cli/scripts/tool_accuracy.py [--seconds 10] [--json out.json]

Needs the release builds: `cargo build --release -p horus-cli --bins --examples`.
Each case starts `rate_source` (an absolute-schedule publisher, examples/rate_source.rs), runs
`horus --json topic hz` (1 s windows) and `bw` against it, and compares each window with the
rate the publisher itself achieved (its message count over its own clock). CPU is the tool
process's user+system time (from wait4) over its wall time. Unpinned; other load on the
machine shows up in the figures.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/horus-target"))
HORUS = os.path.join(TARGET, "release", "horus")
SOURCE = os.path.join(TARGET, "release", "examples", "rate_source")

CASES = [
    ("imu", 1000.0, "Imu at 1 kHz"),
    ("cloud", 30.0, "PointCloud with a 1 MiB tail at 30 Hz"),
    ("cmdvel", 10000.0, "CmdVel (16 B) at 10 kHz"),
]


def run_tool(args, env, seconds):
    """Runs a tool for `seconds`, then SIGINT; returns (stdout lines, stderr, cpu s, wall s)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        p = subprocess.Popen(args, env=env, stdout=out, stderr=err, text=True)
        time.sleep(seconds)
        p.send_signal(signal.SIGINT)
        _, _, usage = os.wait4(p.pid, 0)
        p.returncode = 0  # reaped above
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return out.read().splitlines(), err.read(), usage.ru_utime + usage.ru_stime, wall


def measure(kind, rate, label, seconds):
    ns = f"toolacc-{os.getpid()}-{kind}"
    env = dict(os.environ, HORUS_NAMESPACE=ns)
    topic = f"bench/{kind}"
    src = subprocess.Popen([SOURCE, kind, str(rate), str(seconds + 8), topic], env=env,
                           stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    hz_lines, _, hz_cpu, hz_wall = run_tool(
        [HORUS, "--json", "topic", "hz", topic, "--window", "1"], env, seconds)
    bw_lines, _, _, _ = run_tool(
        [HORUS, "--json", "topic", "bw", topic, "--window", "1"], env, 3)
    echo_lines, echo_err, echo_cpu, echo_wall = run_tool(
        [HORUS, "--json", "topic", "echo", topic], env, 3)
    src_out, _ = src.communicate(timeout=60)
    achieved = json.loads(src_out.strip().splitlines()[-1])["rate_hz"]
    rates = [json.loads(l)["rate_hz"] for l in hz_lines if json.loads(l)["rate_hz"]]
    bws = [json.loads(l)["bytes_per_s"] for l in bw_lines if json.loads(l)["bytes_per_s"]]
    mean_sizes = [json.loads(l)["mean_message_bytes"] for l in bw_lines
                  if json.loads(l)["mean_message_bytes"]]
    errors = [(r - achieved) / achieved * 100.0 for r in rates]
    return {
        "case": label,
        "nominal_hz": rate,
        "publisher_achieved_hz": achieved,
        "hz_windows": rates,
        "hz_error_pct_median": statistics.median(errors) if errors else None,
        "hz_error_pct_max_abs": max(abs(e) for e in errors) if errors else None,
        "bw_bytes_per_s_median": statistics.median(bws) if bws else None,
        "bw_mean_message_bytes": statistics.median(mean_sizes) if mean_sizes else None,
        "hz_cpu_pct": hz_cpu / hz_wall * 100.0,
        "echo_cpu_pct": echo_cpu / echo_wall * 100.0,
        "echo_messages_printed": len(echo_lines),
        "echo_report": echo_err.strip(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="seconds of hz per case")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    for exe in (HORUS, SOURCE):
        if not os.path.exists(exe):
            sys.exit(f"missing {exe}: cargo build --release -p horus-cli --bins --examples")
    results = [measure(k, r, l, a.seconds) for k, r, l in CASES]
    print("method: publisher on an absolute schedule (sleep + spin), unpinned; hz/bw poll the")
    print("publishers' counters every 1 ms, 1 s windows; error vs the publisher's own achieved")
    print("rate; CPU = tool's user+sys time / wall time; echo prints JSON to a pipe.\n")
    print(f"{'case':40} {'achieved Hz':>12} {'hz median err':>14} {'max |err|':>10} "
          f"{'hz CPU':>7} {'echo CPU':>9}")
    for r in results:
        print(f"{r['case']:40} {r['publisher_achieved_hz']:12.3f} "
              f"{r['hz_error_pct_median']:13.4f}% {r['hz_error_pct_max_abs']:9.4f}% "
              f"{r['hz_cpu_pct']:6.2f}% {r['echo_cpu_pct']:8.2f}%")
        if r["bw_bytes_per_s_median"]:
            print(f"{'':40} bw median {r['bw_bytes_per_s_median'] / 1e6:.3f} MB/s, "
                  f"mean message {r['bw_mean_message_bytes']:.0f} B")
        if r["echo_report"]:
            print(f"{'':40} echo: {r['echo_report']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
