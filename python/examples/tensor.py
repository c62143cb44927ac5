"""An image handed to a subscriber by descriptor, without copying its pixels (docs/tensors.md).

Run: ``.venv/bin/python python/examples/tensor.py``.
"""

import numpy as np

import horus

pool = horus.TensorPool(9, slots=2, slot_bytes=1 << 20)  # 2 slots of 1 MiB in shared memory
topic = horus.Topic(horus.TensorRef, "camera/image")
publisher, subscriber = topic.publisher(), topic.subscriber()

image, ref = pool.alloc_numpy((120, 160, 3), np.uint8, kind=horus.Image.RGB8, frame_id="cam0")
image[:] = 200  # written in place, in the pool's shared memory
publisher.send(ref)  # only the descriptor (a small TensorRef message) travels

got = subscriber.recv(timeout=1.0)
view = horus.TensorPool.numpy_from_descriptor(got)  # the same pages, in this or any process
print(f"{view.shape} {view.dtype} frame={got.frame_id_str} mean={view.mean():.0f}")
print(f"same memory: {np.shares_memory(view, image)}; free slots: {pool.free_slots} of {pool.slots}")
del image, view  # the last references: the slot returns to the pool
print(f"free slots: {pool.free_slots} of {pool.slots}")
