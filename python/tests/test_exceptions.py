"""Exceptions subclass the built-in a Python user catches: timeouts are
``TimeoutError``, a parameter name that is not declared a ``KeyError``, an
unknown goal a ``LookupError``, a closed endpoint a ``ValueError``; each is
declared once (``horus._errors``) and importable from ``horus``."""

from __future__ import annotations

import pytest

import horus
from horus import _errors


def test_every_exception_is_declared_once_and_exported_by_horus() -> None:
    for name in _errors.__all__:
        assert getattr(horus, name, None) is getattr(_errors, name) or name in (
            "TransformError", "FrameNotFoundError", "ConnectivityError", "ExtrapolationError",
            "TransformLoopError", "TransformTimeoutError", "InvalidTransformError",
        )
    import horus.tf as tf

    assert tf.FrameNotFoundError is _errors.FrameNotFoundError
    assert not any(n.endswith("Error") for n in dir(horus._horus))


def test_timeouts_are_timeout_errors() -> None:
    for cls in (horus.RecvTimeoutError, horus.SendTimeoutError, horus.CallTimeoutError,
                horus.ActionTimeoutError):
        assert issubclass(cls, TimeoutError) and issubclass(cls, horus.HorusError)
    topic = horus.Topic(horus.CmdVel, "exc/timeout")
    with topic.subscriber() as sub, pytest.raises(TimeoutError) as e:
        sub.recv(timeout=0)
    assert isinstance(e.value, horus.RecvTimeoutError)
    topic.close()


def test_a_call_timeout_is_caught_as_timeout_error() -> None:
    with horus.Service(horus.CmdVel, horus.Vector3, "exc/call") as service:
        with service.server() as _server, service.client() as client:
            with pytest.raises(TimeoutError) as e:
                client.call(horus.CmdVel(), timeout=0.05)
    assert isinstance(e.value, horus.CallTimeoutError)


def test_an_undeclared_parameter_is_a_key_error_with_a_readable_message() -> None:
    params = horus.Parameters()
    try:
        params.get("nope")
    except KeyError as e:
        assert isinstance(e, horus.ParamNotFoundError) and e.name == "nope"  # type: ignore[attr-defined]
        assert not str(e).startswith("'")  # not KeyError's repr quoting
        assert "nope" in str(e)
    else:
        raise AssertionError("no KeyError")


def test_an_unknown_goal_is_a_lookup_error() -> None:
    assert issubclass(horus.UnknownGoalError, LookupError)
    assert issubclass(horus.ParamNotFoundError, LookupError)


def test_a_closed_endpoint_is_a_value_error() -> None:
    topic = horus.Topic(horus.CmdVel, "exc/closed")
    topic.close()
    with pytest.raises(ValueError) as e:
        topic.publisher()
    assert isinstance(e.value, horus.ClosedError)
