#!/usr/bin/env bash
# Room on disk for a build, made before `make test` and `make demo` start (once per
# top-level make: `make test` sets HORUS_MAKE_TEST_RUNNING so that its phases, which
# re-enter `setup`, never remove the build dirs the run is using).
#
#   disk-guard.sh TARGET_DIR
#
# A cold `make test` writes about 10 GiB of build artefacts (debug, release, loom and fuzz
# target dirs). Cargo never removes stale artefacts from a target dir, so one that many
# builds have shared grows without bound (it reached 55 GiB here and filled the disk, and a
# CI run then died in rustc with "No space left on device"). This script removes only what
# horus's own build wrote, in three steps, stopping as soon as there is room:
#
#   1. incremental-compilation caches (`*/incremental`): useless to a CI build and the
#      largest part of a grown target dir; the Makefile builds with CARGO_INCREMENTAL=0;
#   2. a target dir grown past OVERGROWN_GIB (stale artefacts of old builds), or, when the
#      disk is still short of NEED_GIB free, every horus target dir: the next build is cold
#      (about 21 minutes for `make test` on 2 cores) but it fits;
#   3. still short of MIN_GIB: stop with a message saying what is free and what is needed,
#      rather than failing half-way through a build.
set -euo pipefail
target=${1:?usage: disk-guard.sh TARGET_DIR}
NEED_GIB=${HORUS_DISK_NEED_GIB:-12}
MIN_GIB=${HORUS_DISK_MIN_GIB:-4}
OVERGROWN_GIB=${HORUS_TARGET_MAX_GIB:-30}

mkdir -p "$target"
free_gib() { df -P -k "$target" | awk 'NR==2 { printf "%d", $4 / 1048576 }'; }
# The target dir and its siblings made by the Makefile (`-loom`, `-fuzz`, ...).
dirs() { for d in "$target" "$target"-*; do [ -d "$d" ] && printf '%s\n' "$d"; done; }
size_gib() { du -s -k "$1" 2>/dev/null | awk '{ printf "%d", $1 / 1048576 }'; }

while read -r d; do
  find "$d" -mindepth 2 -maxdepth 2 -type d -name incremental -prune -exec rm -rf {} +
done < <(dirs)

while read -r d; do
  s=$(size_gib "$d")
  if [ "$s" -gt "$OVERGROWN_GIB" ]; then
    echo "disk-guard: $d holds ${s} GiB (over ${OVERGROWN_GIB}: stale artefacts); removing it"
    rm -rf -- "$d"
  fi
done < <(dirs)
mkdir -p "$target"

free=$(free_gib)
if [ "$free" -lt "$NEED_GIB" ]; then
  echo "disk-guard: ${free} GiB free, a cold build needs about ${NEED_GIB}; removing horus's build dirs:"
  dirs | sed 's/^/  /'
  while read -r d; do rm -rf -- "$d"; done < <(dirs)
  mkdir -p "$target"
  free=$(free_gib)
fi

if [ "$free" -lt "$MIN_GIB" ]; then
  echo "disk-guard: only ${free} GiB free on the disk of $target after removing horus's build" \
       "artefacts; a build needs about ${NEED_GIB} GiB. Free some space and retry." >&2
  exit 1
fi
echo "disk-guard: ${free} GiB free for the build in $target"
