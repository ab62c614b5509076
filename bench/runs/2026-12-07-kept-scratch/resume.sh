#!/usr/bin/env bash
# A verification of one level interrupted (SIGINT) as soon as its check
# begins, then run again: the second maps the lower levels the first kept
# in SCRATCH instead of decoding their tables again. Prints how long the
# first took to load, and the second's line (its "read in").
#
# usage: resume.sh TABLES LEVEL BINARY SCRATCH
set -euo pipefail
tables=${1:?usage: resume.sh TABLES LEVEL BINARY SCRATCH} level=$2 bin=$3 scratch=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
began=$(date +%s.%N)
"$bin" verify --dir "$tables" --rules oware --from "$level" --to "$level" \
    --scratch "$scratch" --progress-every 1 > "$out" 2>&1 &
pid=$!
until grep -q "level *$level (" "$out"; do sleep 0.2; done
checked=$(date +%s.%N)
kill -INT "$pid"
wait "$pid" || true
echo "first: $(echo "$checked - $began" | bc) s until its check began"
"$bin" verify --dir "$tables" --rules oware --from "$level" --to "$level" \
    --scratch "$scratch" | grep "level *$level:"
