"""Parameters: typed, live-settable node settings, from Python.

Same registry, same parameter service ``<node>/params`` and wire as Rust's
``horus_params``: the Rust ``ParamClient`` and ``horus param`` reach a
Python node's parameters, and ``ParamClient`` here reaches a Rust node's.

Values are ``bool``, ``int`` (i64), ``float`` (f64), ``str`` or a list of
one of those. A parameter's kind is fixed by its default; a set of another
kind raises ``ParamTypeError`` (an ``int`` is not accepted for a float
parameter, as in Rust), a number outside the declared range
``ParamRangeError``; the value is unchanged on every error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple, Union

from . import _horus
from ._closing import Closable

__all__ = ["ParamValue", "ParamInfo", "Parameters", "ParamServer", "ParamClient"]

ParamValue = Union[bool, int, float, str, List[bool], List[int], List[float], List[str]]
"""A parameter value."""


@dataclass(frozen=True)
class ParamInfo:
    """A parameter's declaration: ``kind`` is one of ``bool``, ``i64``,
    ``f64``, ``string`` and those with ``[]``; ``range`` an inclusive
    ``(min, max)`` or None."""

    name: str
    kind: str
    default: Any
    description: str
    range: Optional[Tuple[Any, Any]]


class Parameters:
    """A node's parameters: declarations, current values, change tracking
    (``take_changed()`` in the tick, or ``on_change`` callbacks)."""

    def __init__(self) -> None:
        self._native = _horus.Parameters()

    def declare(
        self,
        name: str,
        default: ParamValue,
        *,
        description: str = "",
        range: Optional[Tuple[Any, Any]] = None,
        kind: Optional[str] = None,
    ) -> None:
        """Declares ``name`` with ``default`` (its type gives the kind;
        ``kind`` names it for an empty list, e.g. ``"f64[]"``), a
        description and an optional inclusive ``range=(min, max)`` for
        numbers and lists of numbers. ``ParamDeclarationError`` for a
        duplicate or invalid declaration."""
        self._native.declare(name, default, description=description, range=range, kind=kind)

    def get(self, name: str) -> Any:
        """The current value of ``name`` (``ParamNotFoundError`` if undeclared)."""
        return self._native.get(name)

    def set(self, name: str, value: ParamValue) -> None:
        """Sets ``name`` (checked; unchanged on error), marks it changed and
        runs the callbacks."""
        self._native.set(name, value)

    def describe(self, name: str) -> ParamInfo:
        """The declaration of ``name``."""
        return ParamInfo(**self._native.describe(name))

    def names(self) -> List[str]:
        """Every name, in declaration order."""
        return self._native.names()

    def __len__(self) -> int:
        return len(self._native)

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __setitem__(self, name: str, value: ParamValue) -> None:
        self.set(name, value)

    def take_changed(self) -> List[str]:
        """Names set since the last call (in declaration order); clears the flags."""
        return self._native.take_changed()

    def on_change(self, callback: Callable[[str, Any], None]) -> None:
        """Calls ``callback(name, value)`` after every successful set: local,
        from another process (run by ``ParamServer.serve_pending``) or from
        a YAML load. The callback may read and set parameters; an exception
        it raises propagates from the call that triggered it."""
        self._native.on_change(callback)

    def load_yaml(self, text: str) -> List[str]:
        """Loads ``name: value`` lines; returns the names set. Any error
        (``ParamYamlError`` with ``line`` and ``column``) applies nothing."""
        return self._native.load_yaml(text)

    def load_yaml_file(self, path: Union[str, "os.PathLike[str]"]) -> List[str]:
        """Loads the YAML file at ``path`` (see ``load_yaml``)."""
        return self._native.load_yaml_file(os.fspath(path))

    def dump_yaml(self) -> str:
        """Every parameter as YAML, with its description, kind and range in
        a comment. Loads back unchanged."""
        return self._native.dump_yaml()

    def dump_yaml_file(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes ``dump_yaml()`` to ``path``."""
        self._native.dump_yaml_file(os.fspath(path))

    def __repr__(self) -> str:
        return "Parameters({" + ", ".join(f"{n!r}: {self.get(n)!r}" for n in self.names()) + "})"


class ParamServer(Closable):
    """Serves a node's parameters on the service ``<node>/params``. Call
    ``serve_pending(params)`` from the node's tick: changes apply there, on
    the node's thread."""

    def __init__(self, node: str, *, namespace: Optional[str] = None) -> None:
        self._native = _horus.ParamServer(node, namespace=namespace)

    @property
    def node(self) -> str:
        """The node's name."""
        return self._native.node

    @property
    def has_pending(self) -> bool:
        """Whether requests are waiting."""
        return self._native.has_pending

    def serve_pending(self, params: Parameters) -> int:
        """Answers the requests waiting now (at most 64) against ``params``;
        returns how many. Never blocks."""
        return self._native.serve_pending(params._native)

    def counts(self) -> Tuple[int, int]:
        """(requests answered, requests whose client was gone)."""
        return self._native.counts()


class ParamClient(Closable):
    """Lists, describes, gets and sets a node's parameters from any process
    (the node may be Rust or Python). Every call has ``timeout`` seconds;
    a node that is not running raises ``NoServerError`` at once. The node's
    refusals raise the same ``ParamError`` subclasses as a local set."""

    def __init__(
        self, node: str, *, namespace: Optional[str] = None, timeout: float = 1.0
    ) -> None:
        self._native = _horus.ParamClient(node, namespace=namespace, timeout=timeout)

    @property
    def node(self) -> str:
        """The node's name."""
        return self._native.node

    def list(self) -> List[ParamInfo]:
        """Every declaration of the node, in its declaration order."""
        return [ParamInfo(**d) for d in self._native.list()]

    def describe(self, name: str) -> ParamInfo:
        """The declaration of ``name``."""
        return ParamInfo(**self._native.describe(name))

    def get(self, name: str) -> Any:
        """The current value of ``name``."""
        return self._native.get(name)

    def set(self, name: str, value: ParamValue) -> Any:
        """Sets ``name``; returns the value the node now holds."""
        return self._native.set(name, value)
