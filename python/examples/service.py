"""A Python client and server of one service (docs/services.md, "From Python"): one call,
one call left unanswered until its timeout. Run: ``.venv/bin/python python/examples/service.py``.
"""

import threading
import horus

svc = horus.Service(horus.CmdVel, horus.Vector3, "base/scale")
server, client = svc.server(), svc.client()

def serve() -> None:
    req = server.recv(timeout=5.0)          # a Request: .msg, .reply(resp) exactly once
    req.reply(horus.Vector3(x=2 * req.msg.linear, y=2 * req.msg.angular, z=0.0))

threading.Thread(target=serve).start()
v = client.call(horus.CmdVel(linear=0.5, angular=0.1), timeout=1.0)   # Vector3(x=1.0, ...)
pending = client.call_async(horus.CmdVel(linear=1.0), timeout=1.0)    # .try_result() / .wait()
try:
    pending.wait()
except horus.CallTimeoutError:              # nobody answered this one within 1 s
    pass
print(client.stats())                       # {'calls': 2, 'responses': 1, 'timed_out': 1, ...}
