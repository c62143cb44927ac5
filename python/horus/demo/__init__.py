"""Python nodes of the horus demo robot (``make demo``).

``python -m horus.demo.obstacle_detector`` is the demo's Python process: it
is started by the Rust monitor (``horus-demo``) and meets the Rust nodes on
the same shared-memory topics.
"""
