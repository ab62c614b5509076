#!/usr/bin/env bash
# Level 22 of oware, solved again and again over the same levels 0-21,
# by two binaries (before and after a change) in both memory modes,
# alternately, two rounds: the wall time and peak RSS of each run, and
# the level's checksum (every run must write the same bytes).
#
# usage: level22.sh BEFORE_BIN AFTER_BIN WORKDIR [ROUNDS]
# Builds levels 0-21 once with BEFORE_BIN in WORKDIR/tables (reused after).
set -euo pipefail
before=$1 after=$2 work=$3 rounds=${4:-2}
tables=$work/tables
mkdir -p "$tables"
"$before" build --stones 21 --dir "$tables" > "$work/levels-0-21.log" 2>&1
level=$tables/oware-6/level-022.mtb
for round in $(seq 1 "$rounds"); do
    for memory in fast lean; do
        for name in before after; do
            bin=$before; [ "$name" = after ] && bin=$after
            rm -f "$level"
            log=$work/$name-$memory-$round.log
            /usr/bin/time -f "%e s wall, %M KiB max RSS" \
                "$bin" build --stones 22 --memory "$memory" --dir "$tables" > "$log" 2>&1
            sum=$(sha256sum "$level" | cut -c1-16)
            printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$memory" "$name" \
                "$(tail -n 1 "$log")" "$sum"
        done
    done
done
