"""ROS 2 message, service and action types as Python classes.

Every type of the standard packages (``horus_idl``'s vendored set) is a class::

    from horus.interfaces.sensor_msgs.msg import Image, PointCloud2
    from horus.interfaces.std_srvs.srv import SetBool   # SetBool.Request, .Response

Classes have ``__slots__``, ROS defaults, constants as class attributes, ``__eq__`` and
``__repr__``; ``msg.to_cdr()`` gives the CDR bytes ROS 2 puts on the wire and
``Image.from_cdr(data)`` reads them back (primitive arrays as read-only NumPy views
into ``data``, strings as ``str``, nested messages as objects). Encoding and decoding
run in Rust, with no Python code per element.

A package of your own: ``load_package("my_msgs", "path/to/my_msgs")`` loads its
``msg/``, ``srv/``, ``action/`` files and makes ``horus.interfaces.my_msgs.msg`` (…)
importable.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Dict, List, Tuple, Union

from .. import _horus

__all__ = ["TYPES", "load_package", "generate_sources", "STANDARD_PACKAGES"]

TYPES: _horus.RosTypes = _horus.RosTypes.standard()
"""The definitions of this process (standard packages and loaded ones); every class
encodes and decodes through it."""

STANDARD_PACKAGES: Tuple[str, ...] = tuple(TYPES.packages())
"""The standard packages, importable as ``horus.interfaces.<package>``."""


def generate_sources(package: str) -> Dict[str, str]:
    """The Python modules of a loaded package's classes: {relative path: source}
    (``<package>/__init__.py``, ``<package>/msg.py``, ``srv.py``, ``action.py``)."""
    return dict(TYPES.generate(package))


def load_package(package: str, path: Union[str, Path]) -> types.ModuleType:
    """Loads the ROS 2 package ``package`` from ``path`` (its ``msg/*.msg``,
    ``srv/*.srv``, ``action/*.action``; types of the standard packages and of
    packages loaded before may be used) and makes its modules importable as
    ``horus.interfaces.<package>.msg`` (``.srv``, ``.action``). Returns the package
    module. Raises ``InterfaceError`` for a malformed file, an unknown type or a
    package loaded twice."""
    TYPES.load_package_dir(package, str(path))
    sources = generate_sources(package)
    name = f"{__name__}.{package}"
    pkg = types.ModuleType(name, f"ROS 2 interfaces of {package} (loaded from {path}).")
    pkg.__path__ = []
    sys.modules[name] = pkg
    setattr(sys.modules[__name__], package, pkg)
    for ns in ("msg", "srv", "action"):
        src = sources.get(f"{package}/{ns}.py")
        if src is None:
            continue
        mod = types.ModuleType(f"{name}.{ns}")
        mod.__file__ = f"<horus.interfaces: {package}/{ns}>"
        sys.modules[mod.__name__] = mod
        setattr(pkg, ns, mod)
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return pkg


def _standard_modules() -> List[str]:
    return [f"{__name__}.{p}" for p in STANDARD_PACKAGES]
