"""Topics seen from outside, without their types: the description every topic's segment
carries (the same one ``horus topic echo`` decodes with; see docs/cli.md)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from . import _horus

__all__ = ["describe_topic", "list_topics"]


def list_topics(namespace: Optional[str] = None) -> List[str]:
    """Names of every topic with a segment in the namespace (default: this process's), sorted."""
    return _horus.list_topics(namespace)


def describe_topic(topic: str, namespace: Optional[str] = None) -> Dict[str, Any]:
    """The description of ``topic``'s message, read from its segment and validated (every
    offset and size checked, fields re-hashed to the layout hash in the segment's header).

    ``{"types": [root, nested...]}``, each type ``{"name", "version", "size", "align",
    "has_tail", "layout_hash", "fields": [{"name", "ty", "offset", "size", "kind"}]}`` where
    ``kind`` is ``{"scalar": "f64"}``, ``{"array": {"of": kind, "len": n}}`` or
    ``{"message": "horus/Pose"}``. Raises ``SegmentError`` for a missing topic or a segment
    whose description is absent or inconsistent."""
    result: Dict[str, Any] = json.loads(_horus.topic_description(topic, namespace))
    return result
