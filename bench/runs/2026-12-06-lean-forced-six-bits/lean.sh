#!/usr/bin/env bash
# The lean mode's top level solved again and again over the same lower
# levels, by two binaries (before and after a change), alternately: oware
# level 22 of even values and level 20 of forced bounds. Prints, a run a
# line: round, kind, binary, the level's solving seconds and anonymous
# peak (its summary row), the whole command's wall time and peak RSS, and
# the level's checksum (every run must write the same bytes).
#
# usage: lean.sh BEFORE_BIN AFTER_BIN WORKDIR [ROUNDS]
# Builds the lower levels once with AFTER_BIN in WORKDIR (reused after).
set -euo pipefail
before=$1 after=$2 work=$3 rounds=${4:-2}
mkdir -p "$work"
"$after" build --stones 21 --dir "$work" > "$work/even-0-21.log" 2>&1
"$after" build --stones 19 --cycles forced --dir "$work" > "$work/forced-0-19.log" 2>&1
for round in $(seq 1 "$rounds"); do
    for kind in even forced; do
        for name in before after; do
            bin=$before; [ "$name" = after ] && bin=$after
            if [ "$kind" = even ]; then
                n=22 dir=$work/oware-6 args=()
            else
                n=20 dir=$work/oware-6-forced args=(--cycles forced)
            fi
            level=$dir/level-0$n.mtb
            rm -f "$level"
            log=$work/$name-$kind-$round.log
            /usr/bin/time -f "%e s wall, %M KiB max RSS" "$bin" build --stones "$n" \
                "${args[@]}" --memory lean --dir "$work" > "$log" 2>&1
            row=$(awk -v n="$n" '$1 == n && $2 ~ /^[0-9]+$/ { print $3 " s, anon " $(NF-5) " MiB" }' "$log" | tail -n 1)
            sum=$(sha256sum "$level" | cut -c1-16)
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$kind" "$name" "$row" \
                "$(tail -n 1 "$log")" "$sum"
        done
    done
done
