"""Log records in recordings: `horus record` writes the namespace's log records into a
`/log` channel as `foxglove.Log` (JSON messages, `jsonschema` schema). A Python child logs
through HorusHandler while the recorder runs; the `mcap` library reads the channel back
and every message has the foxglove.Log fields (timestamp, level, message, name, file,
line) with the values logged."""

from __future__ import annotations

import json
import os
import pathlib
import queue
import signal
import subprocess
import sys
import textwrap
import threading
from typing import Any, Dict, List

from mcap.reader import make_reader

from conftest import horus_bin

PATIENCE = 60.0

CHILD = textwrap.dedent(
    """
    import logging, sys
    import horus
    log = logging.getLogger("py.rec")
    log.setLevel(logging.DEBUG)
    log.addHandler(horus.HorusHandler())
    log.debug("debug %d", 1)
    log.info("speed %.1f m/s", 0.5)
    log.warning("obstacle")
    log.error("motor fault")
    print("ready", flush=True)
    sys.stdin.readline()
    """
)


def shm_files(ns: str) -> List[str]:
    return [f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}.")]


def start_recorder(out: pathlib.Path) -> "subprocess.Popen[str]":
    p = subprocess.Popen(
        [horus_bin(), "--json", "record", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: "queue.Queue[str]" = queue.Queue()

    def pump() -> None:
        assert p.stderr is not None
        for line in p.stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=PATIENCE)
        if line.startswith("horus record: recording /log (foxglove.Log)"):
            return p


def test_log_records_are_recorded_as_foxglove_log(tmp_path: pathlib.Path, ns: str) -> None:
    out = tmp_path / "run.mcap"
    rec = start_recorder(out)
    env = dict(os.environ, HORUS_LOG_CONSOLE="0", HORUS_LOG="debug")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        rec.send_signal(signal.SIGINT)
        report_text, _ = rec.communicate(timeout=PATIENCE)
        assert rec.returncode == 0, report_text
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=PATIENCE)
        assert child.stdout is not None
        child.stdout.close()
    report: Dict[str, Any] = json.loads(report_text)
    log_totals = [t for t in report["topics"] if t["topic"] == "/log"]
    assert log_totals and log_totals[0]["messages"] == 4 and log_totals[0]["missed"] == 0, report

    msgs: List[Dict[str, Any]] = []
    with open(out, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        for schema, channel, message in reader.iter_messages(topics=["/log"]):
            assert schema is not None
            assert schema.name == "foxglove.Log"
            assert schema.encoding == "jsonschema"
            assert channel.message_encoding == "json"
            props = json.loads(schema.data)["properties"]
            assert set(props) == {"timestamp", "level", "message", "name", "file", "line"}
            m = json.loads(message.data)
            assert set(m) == set(props)
            ts = m["timestamp"]
            assert 0 <= ts["nsec"] < 1_000_000_000
            # Log time is the record's own time.
            assert message.log_time == ts["sec"] * 1_000_000_000 + ts["nsec"]
            msgs.append(m)
    assert [m["message"] for m in msgs] == ["debug 1", "speed 0.5 m/s", "obstacle", "motor fault"]
    # foxglove.LogLevel: DEBUG 1, INFO 2, WARNING 3, ERROR 4.
    assert [m["level"] for m in msgs] == [1, 2, 3, 4]
    for m in msgs:
        assert m["name"].startswith("py.rec (") and m["name"].endswith(f"[{child.pid}])"), m
        assert m["file"] == "<string>"
        assert isinstance(m["line"], int) and m["line"] > 0
    assert shm_files(ns) == []
