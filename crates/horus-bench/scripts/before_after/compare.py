#!/usr/bin/env python3
"""Compares the before/after runs written by run.sh.

    compare.py DIR [--markdown]

For every row a benchmark measured (identified by its system, size, route, message, ...)
and every median it reports (round trip, one-way, per call), it pairs the before and after
figures of each round and prints: before's median and range over rounds, after's, the
median and range of the per-round ratio after/before, and a verdict. "regressed" means
after was slower than before's slowest round in every round; "improved" the mirror; else
"within range". Peers' rows (iceoryx2, Zenoh, a Unix socket, references) ran unchanged
code in both builds: their ratios show how far the machine itself drifted.
"""

import glob
import json
import os
import re
import statistics
import sys

IDENTITY = ["system", "kind", "message", "route", "placement", "pubs", "subs", "wait",
            "mode", "size", "payload", "in_flight", "touch", "sweep", "path", "row",
            "label", "pinned"]


def medians(row, prefix=""):
    """Yields (metric name, median ns) for every summary in a row."""
    for k, v in row.items():
        if isinstance(v, dict):
            if "median_ns" in v and isinstance(v["median_ns"], (int, float)):
                yield prefix + k, float(v["median_ns"])
            else:
                yield from medians(v, prefix + k + ".")
        elif k in ("median_ns", "batch_median_ns") and isinstance(v, (int, float)):
            yield prefix + k, float(v)


def identity(row):
    parts = []
    for k in IDENTITY:
        v = row.get(k)
        if v is None and isinstance(row.get("result"), dict):
            v = row["result"].get(k)
        if v is not None and not isinstance(v, (dict, list)):
            parts.append(f"{k}={v}")
    return " ".join(parts)


def load(dir_):
    data = {}  # (bench, identity, metric) -> {version: {round: [values]}}
    for path in glob.glob(os.path.join(dir_, "*.json")):
        m = re.match(r"(before|after)-(.+)-(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        version, bench, rnd = m.group(1), m.group(2), int(m.group(3))
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"skipping {path}: {e}", file=sys.stderr)
            continue
        for row in doc.get("rows") or []:
            ident = identity(row)
            for metric, value in medians(row):
                cell = data.setdefault((bench, ident, metric), {}).setdefault(version, {})
                cell.setdefault(rnd, []).append(value)
    return data


def fmt(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    data = load(sys.argv[1])
    md = "--markdown" in sys.argv
    header = ["benchmark", "row", "metric", "rounds", "before median (min–max)",
              "after median (min–max)", "after/before per round: median (min–max)", "verdict"]
    lines = []
    counts = {"regressed": 0, "improved": 0, "within range": 0}
    for (bench, ident, metric), by in sorted(data.items()):
        b, a = by.get("before", {}), by.get("after", {})
        rounds = sorted(set(b) & set(a))
        if not rounds:
            continue
        bv = [statistics.median(b[r]) for r in rounds]
        av = [statistics.median(a[r]) for r in rounds]
        ratios = [x / y for x, y in zip(av, bv) if y > 0]
        if not ratios:
            continue
        if min(av) > max(bv):
            verdict = "regressed"
        elif max(av) < min(bv):
            verdict = "improved"
        else:
            verdict = "within range"
        counts[verdict] += 1
        lines.append([bench, ident, metric, str(len(rounds)),
                      f"{fmt(statistics.median(bv))} ({fmt(min(bv))}–{fmt(max(bv))})",
                      f"{fmt(statistics.median(av))} ({fmt(min(av))}–{fmt(max(av))})",
                      f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})",
                      verdict])
    if md:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        for l in lines:
            print("  ".join(l))
    print(f"\n{len(lines)} rows: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
