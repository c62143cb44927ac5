"""Shared fixtures: an isolated namespace per test, and process helpers."""

from __future__ import annotations

import itertools
import json
import os
import pathlib
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import IO, Any, Callable, Dict, Iterator, List, Optional

import pytest

import horus

_counter = itertools.count()

# A shell without job control (a script running `make test &`, some CI runners) starts
# background commands with SIGINT ignored, and Python then installs no KeyboardInterrupt
# handler: the Ctrl-C tests would test the shell, not horus. Ctrl-C behaves as in a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    # Tests run against the installed package (make py-build), never the
    # source tree next to them.
    src = pathlib.Path(__file__).resolve().parent.parent / "horus"
    if pathlib.Path(horus.__file__).resolve().parent == src:
        raise pytest.UsageError("horus was imported from the source tree; run `make py-test`")


@pytest.fixture(autouse=True)
def ns(monkeypatch: pytest.MonkeyPatch) -> str:
    """A namespace of its own for every test (inherited by child processes)."""
    name = f"pytest-{os.getpid()}-{next(_counter)}"
    monkeypatch.setenv("HORUS_NAMESPACE", name)
    return name


def horus_bin() -> str:
    """The `horus` binary the tests run (HORUS_BIN, else the build dir's debug one)."""
    path = os.environ.get("HORUS_BIN")
    if not path:
        target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/horus-target"))
        path = os.path.join(target, "debug", "horus")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} not built: run `cargo build -p horus-cli --bin horus` (or set HORUS_BIN)")
    return path


def ip(*args: str) -> "subprocess.CompletedProcess[str]":
    """Runs `ip ARGS...` (iproute2), its output captured as text."""
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def peer_path() -> str:
    path = os.environ.get("HORUS_PY_PEER")
    if not path:
        target = os.environ.get("CARGO_TARGET_DIR", "/root/.cache/horus-target")
        path = os.path.join(target, "release", "horus-py-peer")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"Rust peer {path} not built: run `make py-peer` (or set HORUS_PY_PEER)")
    return path


class Proc:
    """A child process speaking the peers' line protocol: `ready`, then one
    JSON object per line."""

    def __init__(self, args: List[str]) -> None:
        self.args = args
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline() if self.p.stdout else ""
        if line.strip() != "ready":
            self.p.kill()
            out, err = self.p.communicate()
            raise RuntimeError(f"{args} did not get ready: {line!r} {out!r} {err!r}")

    def line(self) -> Dict[str, Any]:
        assert self.p.stdout is not None
        text = self.p.stdout.readline()
        if not text:
            _, err = self.p.communicate(timeout=10)
            raise RuntimeError(f"{self.args} ended: {err}")
        value: Dict[str, Any] = json.loads(text)
        return value

    def finish(self, timeout: float = 30) -> List[Dict[str, Any]]:
        out, err = self.p.communicate(timeout=timeout)
        if self.p.returncode != 0:
            raise RuntimeError(f"{self.args} exited {self.p.returncode}: {err}")
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.communicate()


@pytest.fixture
def procs() -> Iterator[List[Proc]]:
    """Children started by the test; killed if still running at the end."""
    started: List[Proc] = []
    yield started
    for p in started:
        p.kill()


@pytest.fixture
def rust(procs: List[Proc]) -> Any:
    def start(*args: str) -> Proc:
        p = Proc([peer_path(), *args])
        procs.append(p)
        return p

    return start


@pytest.fixture
def python(procs: List[Proc]) -> Any:
    """Starts `code` in a fresh interpreter; it must print `ready` first."""

    def start(code: str) -> Proc:
        p = Proc([sys.executable, "-c", textwrap.dedent(code)])
        procs.append(p)
        return p

    return start


class LineChild:
    """A long-running child process (a bridge, an rclpy node) whose stdout a thread reads
    line by line, stderr going to the file `log`: `wait_line` takes the lines as they
    come, `stop` ends it. Unlike `Proc`, a wait never blocks past `patience` seconds."""

    def __init__(
        self,
        args: List[str],
        log: pathlib.Path,
        *,
        name: str,
        env: Optional[Dict[str, str]] = None,
        stdin: bool = False,
        stop_signal: Optional[signal.Signals] = signal.SIGTERM,
        patience: float = 60.0,
    ) -> None:
        self.name = name
        self.stop_signal = stop_signal
        self.patience = patience
        self.log_path = log
        self.log: IO[str] = open(log, "w")
        self.p = subprocess.Popen(
            args,
            stdin=subprocess.PIPE if stdin else None,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.seen: List[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def stderr(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text()

    def wait_line(self, what: str, pred: Callable[[str], bool]) -> str:
        """The next line for which `pred` holds (the lines before it are kept in `seen`);
        an AssertionError naming `what` if the child ends or `patience` passes first."""
        deadline = time.monotonic() + self.patience
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"{self.name} ended before {what}: {self.seen} {self.stderr()}")
            self.seen.append(line)
            if pred(line):
                return line
        raise AssertionError(f"{self.name}: no {what} within {self.patience} s: {self.seen} {self.stderr()}")

    def stop(self) -> int:
        """Closes its stdin and sends `stop_signal` (if any), then its exit status
        (SIGKILL if it has not stopped within `patience`). Idempotent."""
        if self.p.stdin is not None and not self.p.stdin.closed:
            self.p.stdin.close()
        if self.stop_signal is not None and self.p.poll() is None:
            self.p.send_signal(self.stop_signal)
        try:
            code = self.p.wait(timeout=self.patience)
        except subprocess.TimeoutExpired:
            self.p.kill()
            code = self.p.wait()
        self.reader.join(timeout=10)
        if self.p.stdout is not None:
            self.p.stdout.close()
        self.log.close()
        return code
