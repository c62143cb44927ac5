#!/usr/bin/env bash
# What a run leaves in /dev/shm.
#
#   shm-guard.sh snapshot FILE     record the names in /dev/shm now
#   shm-guard.sh clean-peers FILE  remove files that peer middlewares (Zenoh's
#                                  `*.zenoh`, iceoryx2's `iox2_*`) created since
#                                  the snapshot: their libraries leave some
#                                  behind when a benchmark process exits
#   shm-guard.sh check FILE        list every file created since the snapshot
#                                  and fail if there is one
set -euo pipefail
cmd=${1:?usage}; file=${2:?usage}
now() { ls -1A /dev/shm 2>/dev/null | sort; }
if [ "$cmd" != snapshot ] && [ ! -f "$file" ]; then
  echo "shm-guard.sh: the snapshot $file taken at the start of the run is gone" \
       "(something removed it during the run); cannot tell what the run left in /dev/shm" >&2
  exit 2
fi
case "$cmd" in
  snapshot) now > "$file" ;;
  clean-peers)
    # `|| true`: grep finds nothing when no peer left anything (pipefail would fail).
    { comm -13 "$file" <(now) | grep -E '(\.zenoh$|^iox2_)' || true; } | while read -r f; do
      rm -f -- "/dev/shm/$f"
    done ;;
  check)
    new=$(comm -13 "$file" <(now))
    if [ -n "$new" ]; then
      printf 'left behind in /dev/shm:\n%s\n' "$new" >&2
      exit 1
    fi ;;
  *) echo "shm-guard.sh: unknown command $cmd" >&2; exit 2 ;;
esac
