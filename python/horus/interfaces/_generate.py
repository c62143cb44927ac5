"""Writes the modules of the standard packages' classes (python/horus/interfaces/<pkg>/)
from the definitions embedded in the native module:

    python -m horus.interfaces._generate python/horus/interfaces

``python/tests/test_ros_interfaces.py`` checks the committed files are up to date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import STANDARD_PACKAGES, generate_sources


def main(out_dir: str) -> None:
    root = Path(out_dir)
    for package in STANDARD_PACKAGES:
        for rel, src in generate_sources(package).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(src, encoding="utf-8")
            print(path)


if __name__ == "__main__":
    main(sys.argv[1])
