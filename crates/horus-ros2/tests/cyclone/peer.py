"""A Cyclone DDS participant speaking ROS 2's DDS conventions, for horus-ros2's tests (run
through scripts/ros2-python; the `cyclonedds` wheel: Eclipse Cyclone DDS's Python binding
with its C library bundled, installed by `make setup-ros2`).

It is what rmw_cyclonedds_cpp puts on the wire, without ROS 2: topic `rt/<name>`, DDS type
`<pkg>::msg::dds_::<Type>_`, plain CDR (XCDR1, little-endian: encapsulation 0x0001, as
ROS 2 uses), `typehash=RIHS01_<hex>;` in each endpoint's USER_DATA and `enclave=/;` in the
participant's (rmw_dds_common's conventions), reliable, KEEP_LAST 10 (latched:
transient-local, KEEP_LAST 1).

    peer.py pub  SPEC ...   once each writer is matched, write one built message
                            (build()) per topic; print `sent TOPIC HEX` (the serialized
                            message, encapsulation header included, without RTPS padding)
    peer.py sub  SPEC ...   print `got TOPIC HEX` for every sample received, raw as it came
                            (the DDS payload: header, message, any padding)
    peer.py hold SPEC ...   create the writers and never write (an endpoint to be judged)
    peer.py bad  SPEC COUNT once matched, write COUNT samples whose payload is not the type's
                            CDR (a std_msgs/String whose length field says 4 GiB and nothing
                            after it); print `sent_bad COUNT`
    peer.py burst SPEC COUNT once matched, write COUNT std_msgs/String samples back to back
                            (`0`, `1`, ...); print `sent_burst COUNT`

SPEC is `TOPIC:TYPE:HASH[:latched]`: the ROS 2 topic (`/demo/x`), the ROS 2 type
(`std_msgs/msg/String`, `std_msgs/msg/Int32`, `std_msgs/msg/UInt8MultiArray`) and the RIHS01
hash to announce. Every mode prints `ready` once its endpoints exist and runs until stdin
closes or its parent is gone.

DDS stays on loopback: CYCLONEDDS_URI must be set (the tests give it
tests/cyclone/localhost.xml: only `lo`, no multicast, SPDP to 127.0.0.1's ports); without
it this script refuses to start rather than multicast on a real interface.
"""
import os
import sys
import threading
import time
from dataclasses import dataclass

if not os.environ.get('CYCLONEDDS_URI'):
    sys.exit('peer.py: CYCLONEDDS_URI unset: refusing to run Cyclone DDS with its defaults')

try:
    import cyclonedds  # noqa: F401
except ImportError:
    sys.exit('peer.py: no cyclonedds module in this venv: run `make setup-ros2`')
from cyclonedds.core import Policy, Qos, SampleState, ViewState, InstanceState
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
import cyclonedds.idl.types as t
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration
from cyclonedds._clayer import ddspy_take


@dataclass
class String_(IdlStruct, typename='std_msgs::msg::dds_::String_'):
    data: str


@dataclass
class Int32_(IdlStruct, typename='std_msgs::msg::dds_::Int32_'):
    data: t.int32


@dataclass
class MultiArrayDimension_(IdlStruct, typename='std_msgs::msg::dds_::MultiArrayDimension_'):
    label: str
    size: t.uint32
    stride: t.uint32


@dataclass
class MultiArrayLayout_(IdlStruct, typename='std_msgs::msg::dds_::MultiArrayLayout_'):
    dim: t.sequence[MultiArrayDimension_]
    data_offset: t.uint32


@dataclass
class UInt8MultiArray_(IdlStruct, typename='std_msgs::msg::dds_::UInt8MultiArray_'):
    layout: MultiArrayLayout_
    data: t.sequence[t.uint8]


@dataclass
class NotAString_(IdlStruct, typename='std_msgs::msg::dds_::String_'):
    """Bytes under String's type name that are no String: a bare u32 (the string's length)."""
    length: t.uint32


TYPES = {
    'std_msgs/msg/String': String_,
    'std_msgs/msg/Int32': Int32_,
    'std_msgs/msg/UInt8MultiArray': UInt8MultiArray_,
}

# Data bytes of the built UInt8MultiArray: 256 KiB, far over one datagram (Cyclone DDS
# sends it as DATA_FRAGs of 1344 bytes in 14720-byte messages by default).
BLOB = 256 << 10


def build(type_name):
    cls = TYPES[type_name]
    if cls is String_:
        return String_(data='hello from Cyclone DDS')
    if cls is Int32_:
        return Int32_(data=-7)
    data = bytes(((i * 31 + 5) & 0xFF) for i in range(BLOB))
    layout = MultiArrayLayout_(dim=[MultiArrayDimension_(label='bytes', size=BLOB, stride=BLOB)],
                               data_offset=0)
    return UInt8MultiArray_(layout=layout, data=data)


def qos(type_hash, latched):
    durability = Policy.Durability.TransientLocal if latched else Policy.Durability.Volatile
    return Qos(
        Policy.Reliability.Reliable(duration(seconds=1)),
        Policy.History.KeepLast(1 if latched else 10),
        durability,
        Policy.DataRepresentation(use_cdrv0_representation=True),
        Policy.Userdata(data=f'typehash={type_hash};'.encode()),
    )


def specs(args):
    out = []
    for a in args:
        parts = a.split(':')
        out.append((parts[0], parts[1], parts[2], len(parts) > 3 and parts[3] == 'latched'))
    return out


def dds_topic(name):
    return 'rt' + name


def say(*words):
    print(*words, flush=True)


def watch_stdin(done):
    def read():
        for _ in sys.stdin:
            pass
        done.set()
    threading.Thread(target=read, daemon=True).start()

    def parent():
        p = os.getppid()
        while not done.wait(0.5):
            if os.getppid() != p:
                done.set()
    threading.Thread(target=parent, daemon=True).start()


def wait_matched(writers, done):
    while not done.is_set() and any(not w.get_matched_subscriptions() for w in writers):
        time.sleep(0.02)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    done = threading.Event()
    watch_stdin(done)
    dp = DomainParticipant(int(os.environ.get('ROS_DOMAIN_ID', '0')),
                           qos=Qos(Policy.Userdata(data=b'enclave=/;')))
    if mode in ('pub', 'hold'):
        writers = []
        for name, ty, h, latched in specs(args):
            topic = Topic(dp, dds_topic(name), TYPES[ty])
            writers.append((name, ty, DataWriter(dp, topic, qos(h, latched))))
        say('ready')
        if mode == 'pub':
            wait_matched([w for _, _, w in writers], done)
            for name, ty, w in writers:
                m = build(ty)
                w.write(m)
                say('sent', name, m.serialize(use_version_2=False).hex())
    elif mode == 'bad':
        (name, _, h, latched), count = specs(args[:1])[0], int(args[1])
        topic = Topic(dp, dds_topic(name), NotAString_)
        w = DataWriter(dp, topic, qos(h, latched))
        say('ready')
        wait_matched([w], done)
        for _ in range(count):
            w.write(NotAString_(length=0xFFFFFFF0))
        say('sent_bad', count)
    elif mode == 'burst':
        (name, ty, h, latched), count = specs(args[:1])[0], int(args[1])
        topic = Topic(dp, dds_topic(name), TYPES[ty])
        w = DataWriter(dp, topic, qos(h, latched))
        say('ready')
        wait_matched([w], done)
        for i in range(count):
            w.write(String_(data=str(i)))
        say('sent_burst', count)
    elif mode == 'sub':
        readers = []
        for name, ty, h, latched in specs(args):
            topic = Topic(dp, dds_topic(name), TYPES[ty])
            readers.append((name, DataReader(dp, topic, qos(h, latched))))
        say('ready')
        mask = SampleState.Any | ViewState.Any | InstanceState.Any
        while not done.is_set():
            idle = True
            for name, r in readers:
                got = ddspy_take(r._ref, mask, 16)
                if isinstance(got, int):
                    sys.exit(f'peer.py: take on {name} failed: {got}')
                for data, info in got:
                    idle = False
                    if info.valid_data:
                        say('got', name, bytes(data).hex())
            if idle:
                time.sleep(0.01)
    else:
        sys.exit(f'peer.py: unknown mode {mode}')
    while not done.is_set():
        time.sleep(0.05)


if __name__ == '__main__':
    main()
