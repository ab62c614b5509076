#!/usr/bin/env bash
# Forced bounds of oware levels 0-18 built without and with --depth,
# alternately, ROUNDS rounds; then the depth tables' size from `info`.
# usage: forcedcost.sh BINARY [ROUNDS]
set -euo pipefail
bin=${1:?usage: forcedcost.sh BINARY [ROUNDS]}
rounds=${2:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for round in $(seq "$rounds"); do
    for depth in "" "--depth"; do
        rm -rf "$dir/t"
        echo "round $round ${depth:-plain}:"
        /usr/bin/time -f "%e s wall, %M KiB max RSS" "$bin" build --stones 18 \
            --cycles forced $depth --dir "$dir/t" 2>&1 | tail -2
    done
done
"$bin" info --dir "$dir/t" | grep 'depths total'
