#!/usr/bin/env bash
# Oware level 27 (1,203,322,288 positions) solved in the lean mode over
# levels 0-26 already built (linked from TABLES), by each binary in turn,
# ROUNDS rounds: large enough that a delivery's buckets of parents no
# longer fit a core's cache. Prints a run a line: round, binary, the
# level's summary row, the whole command's wall time and peak RSS, and the
# level's checksum.
#
# usage: level27.sh TABLES WORKDIR ROUNDS BIN...
# TABLES/oware-6 must hold levels 0-26.
set -euo pipefail
tables=$1 work=$2 rounds=$3
shift 3
mkdir -p "$work/oware-6"
for n in $(seq 0 26); do
    ln -sf "$tables/oware-6/$(printf 'level-%03d.mtb' "$n")" "$work/oware-6/"
done
level=$work/oware-6/level-027.mtb
for round in $(seq 1 "$rounds"); do
    for bin in "$@"; do
        name=$(basename "$bin")
        rm -f "$level"
        log=$work/$name-$round.log
        /usr/bin/time -f "%e s wall, %M KiB max RSS" "$bin" build --stones 27 --memory lean \
            --dir "$work" --scratch "$work/scratch" > "$log" 2>&1
        row=$(awk '$1 == 27 && $2 ~ /^[0-9]+$/' "$log" | tail -n 1 | tr -s ' ')
        printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$row" "$(tail -n 1 "$log")" \
            "$(sha256sum "$level" | cut -c1-16)"
    done
done
