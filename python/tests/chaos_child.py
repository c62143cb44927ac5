"""A Python child of the chaos soak (``chaos`` in crates/horus-chaos).

Same command line, same topics, same message layout, same reports and send
log as the Rust child (crates/horus-chaos/src/child*.rs, report.rs,
wire.rs); the orchestrator cannot tell them apart except by language::

    chaos_child.py --role pub|sub --topic block|drop --id N --dir D
                   --block-timeout-ms T

Not a pytest module: the orchestrator starts it with the venv's python.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import struct
import sys
import threading
import time
from typing import Any, Dict, Optional

import horus

# wire.rs
TOPICS = {"block": "chaos/block", "drop": "chaos/drop"}
DEPTH = 16
MAX_PUBLISHERS = 16
MAX_SUBSCRIBERS = 32
MASK = (1 << 64) - 1
MIX = 0x9E3779B97F4A7C15
TAG = 0x6368616F73  # "chaos"
HEADER = struct.Struct("<QII8sQ16x")  # stamp_ns, seq, _pad, frame_id[0..8], frame_id[8..16]
assert HEADER.size == horus.Header.SCHEMA.size

# report.rs
REPORT_EVERY = 0.05
# child_pub.rs
BURST, LONG_BURST, LONG_EVERY, PAUSE = 8, 3 * DEPTH, 16, 0.001
# child_sub.rs
RECV_TIMEOUT = 0.05


def checksum(publisher: int, seq: int, stamp: int) -> int:
    return (((stamp ^ (publisher << 32) ^ seq) * MIX) & MASK) ^ TAG


assert checksum(3, 5, 1_000_000) == 0x92138B0FA02AB4DA  # same vector as wire.rs


def encode(publisher: int, seq: int, stamp: int) -> Any:
    chk = checksum(publisher, seq, stamp).to_bytes(8, "little")
    return horus.Header.from_bytes(HEADER.pack(stamp, seq, 0, chk, publisher))


def write_atomic(path: str, value: Dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() == 1:
        sys.exit("parent already gone")


def stop_requested(directory: str, role: str) -> bool:
    return os.path.exists(os.path.join(directory, f"stop.{role}"))


class ReportWriter:
    """report_writer.rs: a subscriber's reports are written, and its stop file
    looked for, by a thread of their own, so the receiving loop never waits on
    the file system (a rename on ext4 under writeback can take a second, and
    a Block publisher waits for the slowest reader)."""

    def __init__(self, path: str, directory: str, role: str) -> None:
        self._path, self._dir, self._role = path, directory, role
        self._cond = threading.Condition()
        self._pending: Optional[Dict[str, Any]] = None
        self._closed = False
        self._error: Optional[BaseException] = None
        self.stop_seen = threading.Event()
        self._thread = threading.Thread(target=self._run, name="report-writer", daemon=True)
        self._thread.start()

    def offer(self, snapshot: Dict[str, Any]) -> None:
        """Hands over the newest snapshot, replacing one not yet written."""
        if self._error is not None:
            raise RuntimeError("the report writer failed") from self._error
        with self._cond:
            self._pending = snapshot
            self._cond.notify()

    def finish(self, last: Dict[str, Any]) -> None:
        """Stops the writer and writes ``last`` here, after anything older."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        if self._error is not None:
            raise RuntimeError("the report writer failed") from self._error
        write_atomic(self._path, last)

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    if self._pending is None and not self._closed:
                        self._cond.wait(REPORT_EVERY)
                    if self._closed:
                        return
                    snapshot, self._pending = self._pending, None
                if snapshot is not None:
                    write_atomic(self._path, snapshot)
                if stop_requested(self._dir, self._role):
                    self.stop_seen.set()
        except BaseException as e:  # reported by offer()/finish()
            self._error = e


def join(make: Any) -> Any:
    """Makes an endpoint, retrying while every place is taken (5 s)."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            return make()
        except horus.TopicFullError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def run_pub(args: argparse.Namespace, topic: Any, opening: int) -> int:
    log = os.open(os.path.join(args.dir, f"{args.id}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    report_path = os.path.join(args.dir, f"{args.id}.json")
    publisher = join(topic.publisher)
    rep: Dict[str, Any] = {
        "id": args.id, "pid": os.getpid(), "sent": 0, "horus_sent": 0, "timed_out": 0,
        "rejected": 0, "pool_exhausted": 0, "undelivered": 0, "max_call_ns": 0,
        "join_ns": time.monotonic_ns() - opening, "final": False, "error": None,
    }
    seq = 0
    next_report = time.monotonic()
    burst = 0
    pack = struct.Struct("<Q").pack
    while True:
        n = LONG_BURST if burst % LONG_EVERY == LONG_EVERY - 1 else BURST
        burst += 1
        for _ in range(n):
            stamp = time.monotonic_ns()
            os.pwrite(log, pack(stamp), 8 * (1 + seq))
            msg = encode(args.id, seq, stamp)
            t0 = time.monotonic_ns()
            try:
                publisher.send(msg)
                ok = True
            except horus.SendError:
                ok = False  # retried with the same number
            rep["max_call_ns"] = max(rep["max_call_ns"], time.monotonic_ns() - t0)
            if ok:
                seq += 1
                os.pwrite(log, pack(seq), 0)
        time.sleep(PAUSE)
        if time.monotonic() >= next_report:
            stop = stop_requested(args.dir, "pub")
            s = publisher.stats()
            rep.update(
                sent=seq, horus_sent=s.sent, timed_out=s.timed_out, rejected=s.rejected,
                pool_exhausted=s.pool_exhausted, undelivered=s.undelivered, final=stop,
            )
            write_atomic(report_path, rep)
            if stop:
                return 0
            next_report = time.monotonic() + REPORT_EVERY


class Pair:
    """report.rs PairCounts."""

    __slots__ = ("first", "last", "received", "gaps", "out_of_order", "before_start",
                 "max_seq_before_start", "after_done")

    def __init__(self) -> None:
        self.first = self.last = self.received = self.gaps = self.out_of_order = 0
        self.before_start = self.after_done = 0
        self.max_seq_before_start: Optional[int] = None

    def observe(self, seq: int, stamp: int, join_start: int, join_done: int) -> None:
        if self.received == 0:
            self.first = self.last = seq
        elif seq <= self.last:
            self.out_of_order += 1
        else:
            self.gaps += seq - self.last - 1
            self.last = seq
        self.received += 1
        if stamp < join_start:
            self.before_start += 1
            if self.max_seq_before_start is None or seq > self.max_seq_before_start:
                self.max_seq_before_start = seq
        if stamp >= join_done:
            self.after_done += 1

    def as_dict(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def run_sub(args: argparse.Namespace, topic: Any, opening: int) -> int:
    report_path = os.path.join(args.dir, f"{args.id}.json")
    join_start = time.monotonic_ns()
    sub = join(topic.subscriber)
    join_done = time.monotonic_ns()
    join_ns = join_done - opening
    pairs: Dict[int, Pair] = {}
    counts = {"received": 0, "corrupt": 0, "max_call_ns": 0, "max_pause_ns": 0,
              "max_pause_end_ns": 0}

    def snapshot(is_final: bool) -> Dict[str, Any]:
        s = sub.stats()
        return {
            "id": args.id, "pid": os.getpid(), "join_start_ns": join_start,
            "join_done_ns": join_done, "written_ns": time.monotonic_ns(),
            "received": counts["received"], "corrupt": counts["corrupt"],
            "horus_received": s.received, "overrun": s.overrun, "malformed": s.malformed,
            "max_call_ns": counts["max_call_ns"], "max_pause_ns": counts["max_pause_ns"],
            "max_pause_end_ns": counts["max_pause_end_ns"], "join_ns": join_ns, "final": is_final,
            "error": None,
            "pairs": {str(k): p.as_dict() for k, p in pairs.items()},
        }

    def observe(msg: Any) -> None:
        stamp, seq, _pad, chk, publisher = HEADER.unpack(msg.to_bytes())
        if int.from_bytes(chk, "little") != checksum(publisher, seq, stamp):
            counts["corrupt"] += 1
            return
        counts["received"] += 1
        p = pairs.get(publisher)
        if p is None:
            p = pairs[publisher] = Pair()
        p.observe(seq, stamp, join_start, join_done)

    writer = ReportWriter(report_path, args.dir, "sub")
    writer.offer(snapshot(False))
    timeout_ns = int(RECV_TIMEOUT * 1e9)
    next_report = time.monotonic() + REPORT_EVERY
    last_call_end = time.monotonic_ns()
    while True:
        t0 = time.monotonic_ns()
        if t0 - last_call_end > counts["max_pause_ns"]:
            counts["max_pause_ns"] = t0 - last_call_end
            counts["max_pause_end_ns"] = t0
        try:
            msg = sub.recv(timeout=RECV_TIMEOUT)
            last_call_end = time.monotonic_ns()
            spent = last_call_end - t0
        except horus.RecvTimeoutError:
            msg = None
            last_call_end = time.monotonic_ns()
            spent = max(0, last_call_end - t0 - timeout_ns)
        counts["max_call_ns"] = max(counts["max_call_ns"], spent)
        if msg is not None:
            observe(msg)
        if time.monotonic() >= next_report:
            if writer.stop_seen.is_set():
                while (m := sub.try_recv()) is not None:
                    observe(m)
                writer.finish(snapshot(True))
                return 0
            writer.offer(snapshot(False))
            next_report = time.monotonic() + REPORT_EVERY


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--role", choices=["pub", "sub"], required=True)
    ap.add_argument("--topic", choices=sorted(TOPICS), required=True)
    ap.add_argument("--id", type=int, required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--block-timeout-ms", type=int, required=True)
    args = ap.parse_args()
    die_with_parent()
    opening = time.monotonic_ns()
    overflow = (
        horus.Overflow.block(args.block_timeout_ms / 1000.0)
        if args.topic == "block"
        else horus.Overflow.DROP_OLDEST
    )
    topic = horus.Topic(
        horus.Header, TOPICS[args.topic], depth=DEPTH, overflow=overflow,
        max_publishers=MAX_PUBLISHERS, max_subscribers=MAX_SUBSCRIBERS,
    )
    return run_pub(args, topic, opening) if args.role == "pub" else run_sub(args, topic, opening)


if __name__ == "__main__":
    sys.exit(main())
