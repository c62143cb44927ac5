"""Shared fixtures: an isolated namespace per test, and process helpers."""

from __future__ import annotations

import itertools
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
from typing import Any, Dict, Iterator, List

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
