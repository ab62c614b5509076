#!/bin/bash
# Side by side: oware 0-20 built without and with depth tables, round after
# round, then each level's depth-table size and longest depth (info).
# usage: depthcost.sh BINARY [ROUNDS]
set -euo pipefail
B=${1:?usage: depthcost.sh BINARY [ROUNDS]}
rounds=${2:-2}
work=${TMPDIR:-/tmp}/depthcost
for r in $(seq "$rounds"); do
  for mode in plain depth; do
    rm -rf "$work-$mode"
    flag=""; [ $mode = depth ] && flag="--depth"
    /usr/bin/time -f "$mode round $r: %e s wall, %M KiB max RSS" \
      "$B" build --stones 20 $flag --dir "$work-$mode" > "$work-$mode.out" 2> "$work-$mode.err"
    tail -n 1 "$work-$mode.err"
    tail -n 1 "$work-$mode.out"
  done
done
"$B" info --dir "$work-depth" | grep depths
