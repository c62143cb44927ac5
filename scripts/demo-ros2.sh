#!/usr/bin/env bash
# `make demo-ros2`: the demo robot with ROS 2 nodes beside it (launch/demo_ros2.yaml):
# `horus ros2`, an rclpy teleop publishing geometry_msgs/Twist and an rclpy listener of the
# horus lidar's sensor_msgs/LaserScan (docs/ros2-bridge.md, "make demo-ros2").
#
#   scripts/demo-ros2.sh BIN_DIR PYTHON [SECONDS]
#
# BIN_DIR holds `horus` (built with the `ros2` feature) and `horus-demo`; PYTHON is a
# Python with the horus package (make py-build's .venv); the rclpy nodes run in the ROS 2
# venv through scripts/ros2-python (make setup-ros2). DDS stays on this host: as root the
# whole launch runs in a network namespace of its own with only `lo` up; otherwise the
# bridge runs --localhost-only and the rclpy nodes with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# (scripts/ros2-python), in ROS_DOMAIN_ID (default 0). The rclpy nodes run with the
# repository's Fast DDS profile for large messages (FASTDDS_DEFAULT_PROFILES_FILE=
# ros2/fastdds-large-messages.xml: a 4 MiB UDP receive buffer, so messages of hundreds of KiB
# from the bridge are not lost and repaired slowly; docs/ros2-bridge.md) unless
# FASTDDS_DEFAULT_PROFILES_FILE is set already. Exits with horus launch's status, or 1 if
# anything of the run's horus namespace is left in /dev/shm.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BIN_DIR PYTHON [SECONDS]" >&2
  exit 2
fi
bin=$1 python=$2 seconds=${3:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
ns=demo-ros2-$$
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

launch=("$bin/horus" launch "$repo/launch/demo_ros2.yaml"
        demo:="$bin/horus-demo" horus:="$bin/horus" seconds:="$seconds"
        namespace:="$ns" recording:="$scratch/demo.mcap"
        ros2_python:="$repo/scripts/ros2-python")
export HORUS_PYTHON=$python
export FASTDDS_DEFAULT_PROFILES_FILE=${FASTDDS_DEFAULT_PROFILES_FILE:-$repo/ros2/fastdds-large-messages.xml}
status=0
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  echo "demo-ros2: in a network namespace of its own (only lo), ROS_DOMAIN_ID ${ROS_DOMAIN_ID:-0}, Fast DDS profile $FASTDDS_DEFAULT_PROFILES_FILE"
  unshare --net bash -c 'ip link set lo up && exec "$@"' demo-ros2 "${launch[@]}" || status=$?
else
  echo "demo-ros2: DDS on 127.0.0.1 only (not root: no network namespace), ROS_DOMAIN_ID ${ROS_DOMAIN_ID:-0}, Fast DDS profile $FASTDDS_DEFAULT_PROFILES_FILE"
  "${launch[@]}" || status=$?
fi

left=$(ls -1A /dev/shm | grep -F -- "$ns" || true)
if [ -n "$left" ]; then
  echo "demo-ros2: left in /dev/shm:" $left >&2
  exit 1
fi
echo "demo-ros2: /dev/shm: nothing of namespace \"$ns\" left behind"
exit $status
