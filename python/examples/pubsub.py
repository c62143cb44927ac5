"""A publisher and a subscriber of one topic (the README's Python example).

Endpoints meet by topic name, in this process or in any other one (Rust or Python).
Run: ``.venv/bin/python python/examples/pubsub.py``.
"""

import horus

topic = horus.Topic(horus.CmdVel, "base/cmd_vel", depth=8)
subscriber = topic.subscriber()
publisher = topic.publisher()

for i in range(1, 4):
    publisher.send(horus.CmdVel(stamp_ns=i, linear=0.5 * i, angular=0.25))

for _ in range(3):
    cmd = subscriber.recv(timeout=1.0)  # a read-only view of the message in shared memory
    print(f"stamp={cmd.stamp_ns} linear={cmd.linear} angular={cmd.angular}")
print(f"publisher: sent={publisher.stats().sent}  subscriber: received={subscriber.stats().received}")
