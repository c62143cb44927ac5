"""Parameters from Python: declarations, checked sets, change tracking and
callbacks, YAML load/dump, and the parameter service across languages (Rust
client → Python node, Python client → Rust node) with its failure cases:
wrong type, out of range, unknown name, no node, YAML errors.

The Rust side is `horus-py-peer param-serve|param-call` (crates/horus-py/
src/bin/peer/params.rs); `declare` below declares the same parameters.
"""

from __future__ import annotations

import pathlib
import threading
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import horus
from shm_check import leftovers, rest

T = 10.0


@pytest.fixture(autouse=True)
def nothing_left(ns: str, procs: List[Any]) -> Iterator[None]:
    yield
    for p in procs:
        p.kill()
    assert leftovers(ns) == []


def declare(p: horus.Parameters) -> None:
    p.declare("max_speed", 1.0, description="top speed, m/s", range=(0.0, 2.0))
    p.declare("enabled", True)
    p.declare("label", "base")
    p.declare("gains", [1.0, 2.0])
    p.declare("retries", 3, range=(0, 10))


def params() -> horus.Parameters:
    p = horus.Parameters()
    declare(p)
    return p


class Node:
    """A Python node serving its parameters from a thread (its tick)."""

    def __init__(self, name: str = "base") -> None:
        self.params = params()
        self.server = horus.ParamServer(name)
        self.changes: List[Tuple[str, Any]] = []
        self.params.on_change(lambda n, v: self.changes.append((n, v)))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.wait(0.001):
            self.server.serve_pending(self.params)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        # pytest keeps fixture values until after every teardown: let go of
        # the service's segments now.
        self.server.close()


@pytest.fixture
def node() -> Iterator[Node]:
    n = Node()
    yield n
    n.close()


# --- local ------------------------------------------------------------------


def test_declare_get_set_and_describe() -> None:
    p = params()
    assert p.names() == ["max_speed", "enabled", "label", "gains", "retries"] and len(p) == 5
    assert [p.get(n) for n in p.names()] == [1.0, True, "base", [1.0, 2.0], 3]
    info = p.describe("max_speed")
    assert info == horus.ParamInfo("max_speed", "f64", 1.0, "top speed, m/s", (0.0, 2.0))
    assert p.describe("retries").range == (0, 10) and p.describe("label").range is None
    p.set("max_speed", 1.5)
    p["gains"] = []
    p["label"] = "dock"
    assert (p["max_speed"], p["gains"], p["label"]) == (1.5, [], "dock")
    assert p.take_changed() == ["max_speed", "label", "gains"]
    assert p.take_changed() == []
    p.declare("names", [], kind="string[]")
    assert p.describe("names").kind == "string[]"


def test_wrong_type_and_out_of_range_leave_the_value() -> None:
    p = params()
    with pytest.raises(horus.ParamRangeError) as r:
        p.set("max_speed", 5.0)
    assert (r.value.name, r.value.value, r.value.min, r.value.max) == ("max_speed", "5.0", "0.0", "2.0")
    with pytest.raises(horus.ParamRangeError):
        p.set("max_speed", float("nan"))
    with pytest.raises(horus.ParamTypeError) as t:
        p.set("max_speed", 2)  # an int is not an f64, as in Rust
    assert (t.value.expected, t.value.got) == ("f64", "i64")
    with pytest.raises(horus.ParamTypeError):
        p.set("retries", True)  # a bool is not an int here
    with pytest.raises(horus.ParamRangeError):
        p.set("retries", 11)
    with pytest.raises(horus.ParamNotFoundError):
        p.set("nope", 1)
    with pytest.raises(TypeError):
        p.set("gains", [1.0, "x"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        p.set("label", {"a": 1})  # type: ignore[arg-type]
    assert (p["max_speed"], p["retries"], p["gains"]) == (1.0, 3, [1.0, 2.0])
    assert p.take_changed() == []
    for e in (horus.ParamRangeError, horus.ParamTypeError, horus.ParamNotFoundError):
        assert issubclass(e, horus.ParamError) and issubclass(e, horus.HorusError)


def test_invalid_declarations() -> None:
    p = params()
    bad: List[Tuple[Tuple[Any, ...], Dict[str, Any]]] = [
        (("max_speed", 1.0), {}),  # twice
        (("", 1), {}),
        (("x" * 65, 1), {}),
        (("a", 5.0), {"range": (0.0, 2.0)}),  # default outside
        (("b", "s"), {"range": (0, 1)}),  # range on a string
        (("c", 1), {"range": (0.0, 1.0)}),  # float bounds for an int
    ]
    for args, kw in bad:
        with pytest.raises((horus.ParamDeclarationError, TypeError)):
            p.declare(*args, **kw)
    with pytest.raises(TypeError, match="empty list"):
        p.declare("d", [])
    with pytest.raises(horus.ParamTooLargeError):
        p.set("label", "x" * 100_000)
    assert len(p) == 5


def test_callbacks_see_every_change_and_may_read() -> None:
    p = params()
    seen: List[Tuple[str, Any, Any]] = []
    p.on_change(lambda n, v: seen.append((n, v, p.get(n))))
    p.set("max_speed", 0.5)
    with pytest.raises(horus.ParamRangeError):
        p.set("max_speed", 3.0)
    p.load_yaml("retries: 4\n")
    assert seen == [("max_speed", 0.5, 0.5), ("retries", 4, 4)]

    def boom(n: str, v: Any) -> None:
        raise RuntimeError("from the callback")

    p.on_change(boom)
    with pytest.raises(RuntimeError, match="from the callback"):
        p.set("enabled", False)
    assert p["enabled"] is False  # the set itself happened


def test_yaml_load_dump_and_errors(tmp_path: pathlib.Path) -> None:
    p = params()
    assert p.load_yaml("max_speed: 1.25\ngains: [0.5]\nlabel: dock\n") == ["max_speed", "gains", "label"]
    text = p.dump_yaml()
    assert "# top speed, m/s (f64, 0.0..=2.0)" in text and "max_speed: 1.25" in text
    q = params()
    q.load_yaml(text)
    assert [q.get(n) for n in q.names()] == [p.get(n) for n in p.names()]
    path = tmp_path / "p.yaml"
    p.dump_yaml_file(path)
    assert params().load_yaml_file(path) == p.names()
    # Errors: line and column, nothing applied.
    for bad, line, col in [
        ("retries: 1\nmax_speed: 9.0\n", 2, 12),  # out of range
        ("retries: 1\nlabel: [1, 2]\n", 2, 8),  # wrong type
        ("retries: 1\nunknown: 1\n", 2, 10),  # undeclared (horus_params points after the key)
        ("retries: 1\nmax_speed: [\n", None, None),  # malformed
    ]:
        with pytest.raises(horus.ParamYamlError) as e:
            q.load_yaml(bad)
        if line is not None:
            assert (e.value.line, e.value.column) == (line, col), str(e.value)
        assert f"line {e.value.line}" in str(e.value) or e.value.line is None
        assert q["retries"] == 3
    with pytest.raises(horus.ParamYamlError):
        q.load_yaml_file(tmp_path / "missing.yaml")


# --- Python client ↔ Python node --------------------------------------------


def test_python_client_python_node(node: Node) -> None:
    c = horus.ParamClient("base", timeout=T)
    assert [i.name for i in c.list()] == node.params.names()
    assert c.describe("max_speed") == node.params.describe("max_speed")
    assert c.get("gains") == [1.0, 2.0]
    assert c.set("max_speed", 1.5) == 1.5
    assert c.set("gains", []) == []  # the empty list takes the node's kind
    with pytest.raises(horus.ParamRangeError):
        c.set("max_speed", 5.0)
    with pytest.raises(horus.ParamTypeError):
        c.set("max_speed", "fast")
    with pytest.raises(horus.ParamNotFoundError):
        c.get("nope")
    assert c.get("max_speed") == 1.5
    assert node.changes == [("max_speed", 1.5), ("gains", [])]


def test_no_node() -> None:
    with pytest.raises(horus.NoServerError):
        horus.ParamClient("nobody", timeout=30).get("x")


# --- across languages -------------------------------------------------------


def test_rust_client_python_node(rust: Any, node: Node) -> None:
    out = rest(rust("param-call", "base"))
    assert out == [
        {"list": ["max_speed:f64", "enabled:bool", "label:string", "gains:f64[]", "retries:i64"]},
        {"ok": "1.0"},
        {"ok": "1.5"},
        {"err": "OutOfRange"},
        {"err": "WrongType"},
        {"ok": "7"},
        {"ok": "'dock'"},
        {"ok": "[3.0]"},
        {"err": "NotFound"},
        {"ok": "1.5"},
    ]
    assert (node.params["max_speed"], node.params["retries"], node.params["gains"]) == (1.5, 7, [3.0])
    assert node.params.take_changed() == ["max_speed", "label", "gains", "retries"]


def test_python_client_rust_node(rust: Any) -> None:
    peer = rust("param-serve", "base", "30")
    c = horus.ParamClient("base", timeout=T)
    assert [(i.name, i.kind) for i in c.list()] == [
        ("max_speed", "f64"),
        ("enabled", "bool"),
        ("label", "string"),
        ("gains", "f64[]"),
        ("retries", "i64"),
    ]
    assert c.describe("max_speed").range == (0.0, 2.0)
    assert c.set("max_speed", 0.75) == 0.75
    with pytest.raises(horus.ParamRangeError) as e:
        c.set("max_speed", -1.0)
    assert e.value.min == "0.0"
    with pytest.raises(horus.ParamTypeError):
        c.set("retries", 1.5)
    assert c.set("label", "dock") == "dock"
    assert c.get("max_speed") == 0.75
    assert peer.line() == {"changed": ["max_speed=0.75"]}
    assert peer.line() == {"changed": ["label='dock'"]}
    peer.kill()
    c.close()


def test_rust_client_no_node(rust: Any) -> None:
    assert rest(rust("param-call", "nobody")) == [{"err": "NoServer"}]


def test_module_level_node_with_a_callback_leaves_nothing_at_exit(ns: str) -> None:
    """Regression: a change callback over module globals that hold the
    registry is a reference cycle; unseen by the garbage collector it kept
    the parameter service's segments alive at exit."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import horus
        params = horus.Parameters()
        params.declare("x", 1)
        params.on_change(lambda name, value: print(params, name, value))
        server = horus.ParamServer("leak")
        params.set("x", 2)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30, capture_output=True)
    assert leftovers(ns, wait=0.5) == []
