#!/bin/bash
# Before/after: the same benchmark binaries of two builds of horus (folders BEFORE and
# AFTER, each holding the binaries below), run in alternating order, ROUNDS rounds, each
# binary's --quick pass, pinned to CPUS. Writes OUT/<version>-<binary>-<round>.json and
# .log; compare.py turns them into a table. Nothing else should run meanwhile.
#
#   run.sh BEFORE AFTER OUT [ROUNDS=5] [CPUS=0,1]
set -u
before=$1 after=$2 out=$3 rounds=${4:-5} cpus=${5:-0,1}
bins="pingpong robotics_messages payload_sweep all_paths rpc logging interleaved"
mkdir -p "$out"
# Zenoh and iceoryx2 leave files in /dev/shm when a benchmark process exits (make bench
# removes them the same way): snapshot now, remove what they left at the end.
guard="$(dirname "$0")/../../../../scripts/shm-guard.sh"
[ -x "$guard" ] && "$guard" snapshot "$out/shm-before"
for r in $(seq 1 "$rounds"); do
  # The order alternates between rounds, so drift (thermal, a neighbour) hits both.
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for b in $bins; do
    extra=""
    case $b in pingpong|rpc) extra=--pinned-only ;; esac
    for v in $order; do
      dir=$before; [ "$v" = after ] && dir=$after
      timeout 120 "$dir/$b" --quick $extra --cpus "$cpus" --json "$out/$v-$b-$r.json" \
        > "$out/$v-$b-$r.log" 2>&1 || echo "$v $b round $r: exit $?" >&2
    done
  done
  echo "round $r done"
done
[ -x "$guard" ] && "$guard" clean-peers "$out/shm-before"
exit 0
