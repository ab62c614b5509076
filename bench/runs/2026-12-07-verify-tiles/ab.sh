#!/usr/bin/env bash
# verify of one level with several builds, alternately, ROUNDS times:
# one line a run to stdout (build, round, wall seconds, and the level's
# own line, which builds from this run on end with its check's seconds).
#
# usage: ab.sh TABLES LEVEL MEMORY_MIB ROUNDS BINARY...
set -euo pipefail
tables=${1:?usage: ab.sh TABLES LEVEL MEMORY_MIB ROUNDS BINARY...}
level=$2 memory=$3 rounds=$4
shift 4
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf 'build\tround\twall_s\tline\n'
for round in $(seq "$rounds"); do
    for bin in "$@"; do
        began=$(date +%s.%N)
        line=$("$bin" verify --dir "$tables" --rules oware --from "$level" --to "$level" \
            --max-memory "$memory" --scratch "$scratch" | grep "level *$level:")
        ended=$(date +%s.%N)
        printf '%s\t%s\t%.2f\t%s\n' "$(basename "$bin")" "$round" \
            "$(echo "$ended - $began" | bc)" "$line"
    done
done
