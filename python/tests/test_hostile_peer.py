"""A hostile live peer scribbles into a topic's segment while Python endpoints
run: they must not crash or hang, must only hand out validated messages, and
must count what failed validation as ``malformed``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import horus

# The scribbler: a separate process writing seeded patterns into the ring
# region of the segment (offsets from the header: see
# crates/horus-shm/src/layout.rs, RawHeader).
SCRIBBLER = textwrap.dedent(
    """
    import mmap, random, struct, sys
    path, seed, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        depth, slot_payload, max_pub = struct.unpack_from("<III", m, 24)
        rings = struct.unpack_from("<Q", m, 56)[0]
        slot = (16 + slot_payload + 127) // 128 * 128
        end = rings + slot * depth * max_pub
        for i in range(rounds):
            s = rings + slot * rng.randrange(depth * max_pub)
            kind = rng.randrange(5)
            if kind == 0:
                struct.pack_into("<Q", m, s + 8 * rng.randrange(slot // 8), rng.getrandbits(64))
            elif kind == 1:
                struct.pack_into("<Q", m, s + 8 * rng.randrange(2), 2**64 - 1)
            elif kind == 2:
                struct.pack_into("<Q", m, s, 2 * (rng.getrandbits(40) + 10**9))
            elif kind == 3:
                struct.pack_into("<Q", m, s + 8, slot + 8 * rng.randrange(64))
            else:
                m[s:s + 16] = bytes(rng.getrandbits(8) for _ in range(16))
        m.close()
    print("done", flush=True)
    """
)


def test_hostile_peer_scribbling_a_live_segment_crashes_and_hangs_nothing(ns: str) -> None:
    t = horus.Topic(horus.CmdVel, "hostile", depth=16)
    sub = t.subscriber(busy_poll=True)
    pub = t.publisher()
    pub.send(horus.CmdVel(stamp_ns=0))
    assert sub.try_recv() is not None
    path = f"/dev/shm/horus.{ns}.t.hostile"
    assert os.path.exists(path)
    scribbler = subprocess.Popen(
        [sys.executable, "-c", SCRIBBLER, path, "20261122", "20000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    received = sent = 0
    deadline = time.monotonic() + 120  # only turns a hang into a failure
    while scribbler.poll() is None and time.monotonic() < deadline:
        sent += 1
        try:
            pub.send(horus.CmdVel(stamp_ns=sent, linear=0.5))
        except horus.SendError:
            pass  # a typed refusal is allowed; a crash is not
        for _ in range(4):
            m = sub.try_recv()
            if m is None:
                break
            received += 1
            assert isinstance(m.stamp_ns, int)
        sub.stats()
    out, _ = scribbler.communicate(timeout=120)
    assert scribbler.returncode == 0 and "done" in out
    # Still working after the scribbling stopped: what the publisher sends
    # from now on arrives (a scribble never mutes the topic for good).
    got = None
    for i in range(10_000):
        pub.send(horus.CmdVel(stamp_ns=10**9 + i))
        m = sub.try_recv()
        if m is not None and m.stamp_ns >= 10**9:
            got = m
            break
    assert got is not None, "the subscriber never received again"
    stats = sub.stats()
    assert stats.malformed > 0, stats
    print(f"hostile peer (Python): sent {sent}, received {received}, {stats}")
