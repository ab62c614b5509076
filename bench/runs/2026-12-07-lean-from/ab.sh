#!/usr/bin/env bash
# One oware level solved over the levels below it already built (linked
# from TABLES), in each memory mode in turn, ROUNDS rounds: which mode is
# faster where both fit. Prints a run a line: round, mode, the level's
# summary row, the whole command's wall time and peak RSS, and the level's
# checksum (the two modes must write the same bytes).
#
# usage: ab.sh TABLES WORKDIR LEVEL ROUNDS BIN
# TABLES/oware-6 must hold levels 0..LEVEL-1.
set -euo pipefail
tables=$1 work=$2 level=$3 rounds=$4 bin=$5
mkdir -p "$work/oware-6"
for n in $(seq 0 $((level - 1))); do
    ln -sf "$tables/oware-6/$(printf 'level-%03d.mtb' "$n")" "$work/oware-6/"
done
file=$work/oware-6/$(printf 'level-%03d.mtb' "$level")
for round in $(seq 1 "$rounds"); do
    for mode in fast lean; do
        rm -f "$file"
        log=$work/$mode-$level-$round.log
        /usr/bin/time -f "%e s wall, %M KiB max RSS" "$bin" build --stones "$level" \
            --memory "$mode" --dir "$work" --scratch "$work/scratch" > "$log" 2>&1
        row=$(awk -v n="$level" '$1 == n && $2 ~ /^[0-9]+$/' "$log" | tail -n 1 | tr -s ' ')
        printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$mode" "$row" "$(tail -n 1 "$log")" \
            "$(sha256sum "$file" | cut -c1-16)"
    done
done
