"""Every topic describes itself: Python reads the description a segment carries, and it is
the same field table the message classes are built from."""

from __future__ import annotations

import pytest

import horus


def test_a_python_topic_carries_its_description() -> None:
    t = horus.Topic(horus.Odometry, "robot/odom")
    pub = t.publisher()
    assert "robot/odom" in horus.list_topics()
    d = horus.describe_topic("robot/odom")
    root = d["types"][0]
    assert root["name"] == "horus/Odometry"
    assert root["layout_hash"] == horus.layout_hash(horus.Odometry.SCHEMA)
    assert [f["name"] for f in root["fields"]] == [f.name for f in horus.Odometry.SCHEMA.fields]
    pose = next(f for f in root["fields"] if f["name"] == "pose")
    assert pose["kind"] == {"message": "horus/Pose"}
    assert any(ty["name"] == "horus/Vector3" for ty in d["types"])
    cov = next(f for f in root["fields"] if f["name"] == "pose_covariance")
    assert cov["kind"] == {"array": {"of": {"scalar": "f64"}, "len": 36}}
    pub.close()
    t.close()


def test_a_missing_topic_is_a_segment_error() -> None:
    with pytest.raises(horus.SegmentError, match="no topic"):
        horus.describe_topic("nope")
