"""The string-coded kinds of the topic API are ``enum.Enum``s: ``OverflowKind``
(``Overflow.kind``), ``DurabilityKind`` (``Durability.kind``) and ``Start``
(``start=`` of ``subscriber``/``observer``). Each is a ``str`` enum, so the
strings the API took and returned before still work and still compare equal."""

from __future__ import annotations

import enum

import pytest

import horus


def test_overflow_kinds_are_an_enum_equal_to_the_old_strings() -> None:
    assert issubclass(horus.OverflowKind, enum.Enum)
    assert horus.Overflow.DROP_OLDEST.kind is horus.OverflowKind.DROP_OLDEST
    assert horus.Overflow.REJECT.kind is horus.OverflowKind.REJECT
    block = horus.Overflow.block(0.25)
    assert block.kind is horus.OverflowKind.BLOCK and block.timeout == 0.25
    assert [k.value for k in horus.OverflowKind] == ["drop_oldest", "reject", "block"]
    assert horus.OverflowKind.REJECT == "reject"


def test_an_overflow_made_from_the_old_string_is_the_enum_one() -> None:
    assert horus.Overflow("reject") == horus.Overflow.REJECT
    assert horus.Overflow("reject").kind is horus.OverflowKind.REJECT
    with pytest.raises(ValueError, match="drop_oldest"):
        horus.Overflow("sometimes")


def test_a_topics_overflow_reads_back_as_the_enum() -> None:
    with horus.Topic(horus.CmdVel, "q/reject", overflow=horus.Overflow.REJECT) as t:
        assert t.overflow.kind is horus.OverflowKind.REJECT
    with horus.Topic(horus.CmdVel, "q/block", overflow=horus.Overflow.block(0.5)) as t:
        assert t.overflow == horus.Overflow.block(0.5)
    with horus.Topic(horus.CmdVel, "q/default") as t:
        assert t.overflow.kind is horus.OverflowKind.DROP_OLDEST


def test_durability_kinds_are_an_enum_equal_to_the_old_strings() -> None:
    assert horus.Durability.VOLATILE.kind is horus.DurabilityKind.VOLATILE
    latched = horus.Durability.transient_local(3)
    assert latched.kind is horus.DurabilityKind.TRANSIENT_LOCAL
    assert latched.kind == "transient_local"
    with horus.Topic(horus.CmdVel, "q/latched", durability=latched) as t:
        assert t.durability.kind is horus.DurabilityKind.TRANSIENT_LOCAL


def test_start_takes_the_enum_and_the_old_strings() -> None:
    with horus.Topic(horus.CmdVel, "q/start", durability=horus.Durability.transient_local(1)) as t:
        with t.publisher() as p:
            p.send(horus.CmdVel(stamp_ns=1))
            with t.subscriber(start=horus.Start.NEXT) as skip, t.subscriber(start="next") as skip_str:
                assert skip.try_recv() is None and skip_str.try_recv() is None
            with t.subscriber(start=horus.Start.DURABILITY) as latched:
                m = latched.try_recv()
                assert m is not None and m.stamp_ns == 1
            with t.observer(start=horus.Start.OLDEST) as oldest:
                m = oldest.try_recv()
                assert m is not None and m.stamp_ns == 1
        with pytest.raises(ValueError, match="oldest"):
            t.subscriber(start="yesterday")
