"""``horus.tf``: transform broadcasters and the host's shared transform buffer (see
``horus._tf``)."""

from ._tf import *  # noqa: F401,F403
from ._tf import __all__  # noqa: F401
