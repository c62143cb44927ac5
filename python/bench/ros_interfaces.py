"""Timings of the ROS 2 classes (horus.interfaces): to_cdr / from_cdr of PointCloud2
(1 MiB), LaserScan, Image, PoseStamped, and publish + receive in one process.

    .venv/bin/python python/bench/ros_interfaces.py
"""

import time, numpy as np, horus, os
from horus.interfaces.sensor_msgs.msg import PointCloud2, PointField, LaserScan, Image
from horus.interfaces.geometry_msgs.msg import PoseStamped
def t(f, n):
    f()
    best = 1e9
    for _ in range(5):
        s = time.perf_counter()
        for _ in range(n): f()
        best = min(best, (time.perf_counter() - s) / n)
    return best * 1e6
n = 65536
pts = np.random.rand(n, 4).astype(np.float32)
pc = PointCloud2(height=1, width=n, point_step=16, row_step=16*n, fields=[PointField(name=c, offset=4*k, datatype=7, count=1) for k,c in enumerate("xyzi")], data=pts)
b = pc.to_cdr()
print(f"PointCloud2 {len(b)} B: to_cdr {t(pc.to_cdr, 200):.1f} us, from_cdr {t(lambda: PointCloud2.from_cdr(b), 2000):.1f} us, np 1 MiB copy {t(lambda: pts.copy(), 200):.1f} us, bytes(1MiB) {t(lambda: pts.tobytes(), 200):.1f} us")
sc = LaserScan(ranges=np.ones(360, np.float32), intensities=np.ones(360, np.float32)); bs = sc.to_cdr()
print(f"LaserScan {len(bs)} B: to_cdr {t(sc.to_cdr, 20000):.2f} us, from_cdr {t(lambda: LaserScan.from_cdr(bs), 20000):.2f} us, construct {t(lambda: LaserScan(ranges=sc.ranges, intensities=sc.intensities), 20000):.2f} us")
im = Image(height=480, width=640, encoding="rgb8", step=1920, data=np.zeros((480,640,3), np.uint8)); bi = im.to_cdr()
print(f"Image 640x480 rgb8 {len(bi)} B: to_cdr {t(im.to_cdr, 500):.1f} us, from_cdr {t(lambda: Image.from_cdr(bi), 20000):.2f} us")
ps = PoseStamped(); bp = ps.to_cdr()
print(f"PoseStamped {len(bp)} B: to_cdr {t(ps.to_cdr, 50000):.2f} us, from_cdr {t(lambda: PoseStamped.from_cdr(bp), 50000):.2f} us")
os.environ["HORUS_NAMESPACE"] = f"hpy-bench-{os.getpid()}"
topic = horus.RosTopic(PointCloud2, "b/pc", max_tail_bytes=2 << 20)
sub = topic.subscriber(); pub = topic.publisher()
def rt():
    pub.send(pc); m = sub.recv(timeout=1)
print(f"PointCloud2 1 MiB send+recv in one process: {t(rt, 200):.1f} us")
t2 = horus.RosTopic(LaserScan, "b/scan"); s2 = t2.subscriber(); p2 = t2.publisher()
def rt2():
    p2.send(sc); m = s2.recv(timeout=1)
print(f"LaserScan send+recv in one process: {t(rt2, 5000):.2f} us")
for f in os.listdir("/dev/shm"):
    if os.environ["HORUS_NAMESPACE"] in f:
        os.unlink(os.path.join("/dev/shm", f))
