#!/usr/bin/env bash
# Oware level 20 of forced bounds solved in the lean mode again and again
# over levels 0-19 (built by lean.sh of 2026-12-06-lean-forced-six-bits in
# WORKDIR), by each binary in turn, ROUNDS rounds. Prints a run a line:
# round, binary, the level's solving seconds, the level's checksum.
#
# usage: forced20.sh WORKDIR ROUNDS BIN...
set -euo pipefail
work=$1 rounds=$2
shift 2
level=$work/oware-6-forced/level-020.mtb
for round in $(seq 1 "$rounds"); do
    for bin in "$@"; do
        name=$(basename "$bin")
        log=$work/forced20-$name-$round.log
        rm -f "$level"
        "$bin" build --stones 20 --cycles forced --memory lean --dir "$work" > "$log" 2>&1
        printf '%s\t%s\t%s\t%s\n' "$round" "$name" \
            "$(awk '$1 == 20 && $2 ~ /^[0-9]+$/ { print $3 }' "$log")" \
            "$(sha256sum "$level" | cut -c1-16)"
    done
done
