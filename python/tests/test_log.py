"""Python's logging into horus's log ring: records written through HorusHandler are read
back by `horus log` (the Rust reader) with level, logger name, file, line and message; a
clean exit removes the segment, a killed process leaves its last records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any, Dict, List

from conftest import horus_bin

CHILD = textwrap.dedent(
    """
    import logging, sys
    import horus
    log = logging.getLogger("py.node")
    log.setLevel(logging.DEBUG)
    log.addHandler(horus.HorusHandler())
    log.debug("debug %d", 1)
    log.info("speed %.1f m/s", 0.5)
    log.warning("obstacle")
    try:
        1 / 0
    except ZeroDivisionError:
        log.exception("failed")
    print(horus.log_segment_name(), flush=True)
    sys.stdin.readline()
    """
)


def read_log(pid: int) -> List[Dict[str, Any]]:
    out = subprocess.run(
        [horus_bin(), "--json", "log", "--pid", str(pid)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def shm_files(ns: str) -> List[str]:
    return [f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}.")]


def spawn() -> "subprocess.Popen[str]":
    env = dict(os.environ, HORUS_LOG_CONSOLE="0", HORUS_LOG="debug")
    return subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_python_records_reach_horus_log_and_exit_removes_the_segment(ns: str) -> None:
    p = spawn()
    try:
        check_and_exit(p, ns)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for f in (p.stdin, p.stdout):
            if f is not None:
                f.close()


def check_and_exit(p: "subprocess.Popen[str]", ns: str) -> None:
    assert p.stdout is not None and p.stdin is not None
    name = p.stdout.readline().strip()
    assert name == f"/horus.{ns}.log.{p.pid}"
    docs = read_log(p.pid)
    records = [d for d in docs if "message" in d]
    assert [r["level"] for r in records] == ["DEBUG", "INFO", "WARN", "ERROR"]
    assert records[1]["message"] == "speed 0.5 m/s"
    assert records[1]["target"] == "py.node"
    assert records[1]["pid"] == p.pid
    assert records[1]["line"] > 0
    assert "ZeroDivisionError" in records[3]["message"]
    status = [d["status"] for d in docs if "status" in d]
    assert status[0]["state"] == "running" and status[0]["dropped"] == 0
    p.stdin.write("\n")
    p.stdin.flush()
    assert p.wait(timeout=30) == 0
    assert shm_files(ns) == []


def test_killed_python_process_leaves_its_last_records(ns: str) -> None:
    p = spawn()
    assert p.stdout is not None and p.stdin is not None
    p.stdout.readline()
    p.kill()
    p.wait()
    p.stdout.close()
    p.stdin.close()
    docs = read_log(p.pid)
    assert [d["message"] for d in docs if "message" in d][-2] == "obstacle"
    assert [d["status"]["state"] for d in docs if "status" in d] == ["dead (last records kept)"]
    subprocess.run([horus_bin(), "log", "--clean"], check=True, capture_output=True)
    assert shm_files(ns) == []


FORKING_PARENT = textwrap.dedent(
    """
    import logging, multiprocessing, os, signal, sys
    import horus
    log = logging.getLogger("py.parent")
    log.setLevel(logging.INFO)
    log.addHandler(horus.HorusHandler())
    log.info("parent starts")

    def child(ready):
        # Inherits the parent's handler: logs in a loop until killed.
        i = 0
        while True:
            log.info("child %d", i)
            if i == 10:
                ready.set()
            i += 1

    ctx = multiprocessing.get_context("fork")
    kids = []
    for _ in range(30):
        ready = ctx.Event()
        p = ctx.Process(target=child, args=(ready,))
        p.start()
        assert ready.wait(30), "child never logged"
        os.kill(p.pid, signal.SIGKILL)
        p.join()
        kids.append(p.pid)
    for i in range(200):
        log.info("after %d", i)
    print(" ".join(str(k) for k in kids), flush=True)
    sys.stdin.readline()
    """
)


def test_forked_children_killed_while_logging_do_not_freeze_the_parents_log(ns: str) -> None:
    """multiprocessing forks: each child killed mid-log used to write into the parent's
    ring, and one killed between reserving and committing a record froze the parent's
    logging for good. A forked child now logs into a segment of its own."""
    env = dict(os.environ, HORUS_LOG_CONSOLE="0")
    p = subprocess.Popen(
        [sys.executable, "-c", FORKING_PARENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert p.stdout is not None and p.stdin is not None
    try:
        kids = [int(k) for k in p.stdout.readline().split()]
        assert len(kids) == 30
        docs = read_log(p.pid)
        messages = [d["message"] for d in docs if "message" in d]
        # Every record of the parent, in order; none of its children's.
        assert [m for m in messages if m.startswith("after ")] == [
            f"after {i}" for i in range(200)
        ]
        assert not [m for m in messages if m.startswith("child ")]
        status = [d["status"] for d in docs if "status" in d]
        assert status[0]["state"] == "running" and status[0]["dropped"] == 0
        # Each child's records are in its own segment, kept after its death.
        child_docs = read_log(kids[0])
        child_messages = [d["message"] for d in child_docs if "message" in d]
        assert child_messages[:11] == [f"child {i}" for i in range(11)]
        assert all(d["pid"] == kids[0] for d in child_docs if "message" in d)
        p.stdin.write("\n")
        p.stdin.flush()
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stdin.close()
        subprocess.run([horus_bin(), "log", "--clean"], check=True, capture_output=True)
    assert shm_files(ns) == []


SURROGATE_CHILD = textwrap.dedent(
    """
    import logging, sys
    import horus
    log = logging.getLogger("py.node")
    log.addHandler(horus.HorusHandler())
    log.warning("file %s", "caf\\udce9.txt")  # os.fsdecode of undecodable bytes gives this
    log.warning("after")
    print(horus.log_segment_name(), flush=True)
    sys.stdin.readline()
    """
)


def test_a_record_that_is_not_valid_utf8_is_written_escaped(ns: str) -> None:
    # Found by probing misuse: a lone surrogate in a message (what
    # os.fsdecode makes of an undecodable file name) made log_record raise
    # UnicodeEncodeError; the record was lost (a "--- Logging error ---" on
    # stderr instead).
    env = dict(os.environ, HORUS_LOG_CONSOLE="0")
    with subprocess.Popen(
        [sys.executable, "-c", SURROGATE_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as p:  # closes the pipes and waits, whatever the asserts do
        try:
            assert p.stdout is not None and p.stdin is not None
            p.stdout.readline()
            messages = [d["message"] for d in read_log(p.pid) if "message" in d]
            assert messages == ["file caf\\udce9.txt", "after"]
            _, err = p.communicate("\n", timeout=30)
            assert p.returncode == 0 and "Logging error" not in err, err
        finally:
            if p.poll() is None:
                p.kill()
