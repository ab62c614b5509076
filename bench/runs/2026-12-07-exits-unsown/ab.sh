#!/usr/bin/env bash
# A level built by BEFORE_BIN (every move of the forward pass played)
# and AFTER_BIN (only its exits played; the other moves told apart by
# where their last stone lands, and counted), alternately, over the same
# lower levels: oware level 22 of even values in the lean and the fast
# mode, and level 20 of forced bounds in the lean mode. Prints, a run a
# line: round, kind, mode, binary, the level's solving seconds and
# anonymous peak (its summary row), the whole command's wall time and
# peak RSS, and the level's checksum (every run must write the same
# bytes).
#
# usage: ab.sh BEFORE_BIN AFTER_BIN WORKDIR [ROUNDS]
# Builds the lower levels once with AFTER_BIN in WORKDIR (kept if there).
set -euo pipefail
before=$1 after=$2 work=$3 rounds=${4:-2}
mkdir -p "$work"
[ -f "$work/oware-6/level-021.mtb" ] ||
    "$after" build --stones 21 --dir "$work" > "$work/even-0-21.log" 2>&1
[ -f "$work/oware-6-forced/level-019.mtb" ] ||
    "$after" build --stones 19 --cycles forced --dir "$work" > "$work/forced-0-19.log" 2>&1
for round in $(seq 1 "$rounds"); do
    for run in "even lean" "even fast" "forced lean"; do
        read -r kind mode <<< "$run"
        for name in before after; do
            bin=$before; [ "$name" = after ] && bin=$after
            if [ "$kind" = even ]; then
                n=22 dir=$work/oware-6 args=()
            else
                n=20 dir=$work/oware-6-forced args=(--cycles forced)
            fi
            level=$dir/level-0$n.mtb
            rm -f "$level"
            log=$work/$name-$kind-$mode-$round.log
            /usr/bin/time -f "%e s wall, %M KiB max RSS" "$bin" build --stones "$n" \
                "${args[@]}" --memory "$mode" --dir "$work" > "$log" 2>&1
            row=$(awk -v n="$n" '$1 == n && $2 ~ /^[0-9]+$/ { print $3 " s, anon " $(NF-5) " MiB" }' "$log" | tail -n 1)
            sum=$(sha256sum "$level" | cut -c1-16)
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$kind" "$mode" "$name" "$row" \
                "$(tail -n 1 "$log")" "$sum"
        done
    done
done
