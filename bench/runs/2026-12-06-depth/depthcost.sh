#!/bin/bash
# Side by side: oware 0-18 built with and without depth tables, twice each.
B=${1:?usage: depthcost.sh BINARY}
for r in 1 2 3 4; do
  for mode in plain depth; do
    rm -rf /tmp/dc-$mode
    flag=""; [ $mode = depth ] && flag="--depth"
    /usr/bin/time -f "$mode round $r: %e s wall, %M KiB" $B build --stones 18 $flag --dir /tmp/dc-$mode > /tmp/dc-$mode.out 2>> /tmp/depthcost.log
    tail -1 /tmp/dc-$mode.out >> /tmp/depthcost.log
  done
done
