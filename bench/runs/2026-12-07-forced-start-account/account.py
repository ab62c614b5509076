#!/usr/bin/env python3
"""The disk and memory a lean build of 3-seed Oware's forced bounds needs
(levels 0-34 and 36 with the default mode's planner, then level 36 in the
lean mode within --max-memory 16384), from measured figures:

- info-even-3seed.txt: `info` of the 3-seed run's even tables (levels 0-34);
- info-forced-0-20.txt: `info` of oware levels 0-20 built with
  `--cycles forced` (the forced tables' bits a position against the even
  tables' at the same levels);
- the planner's own figure for level 36 (`build --cycles forced --stones 36
  --top-only --memory lean --max-memory 16384` prints "level 36 takes about
  12714 MiB to solve");
- the even level 36's exit lists, measured in its lean directory once its
  forward pass was over (EXITS below; forced exit lists are at least as
  large: they are the same exits).

usage: account.py [EXIT_BYTES]
"""

import sys
from math import comb

PITS = 6
TOP = 36
BUDGET_MIB = 16384
# The planner's figure for level 36 of forced bounds in the lean mode.
LEVEL_36_SOLVING_MIB = 12714
# Bytes a position of a forced level decoded (two bounds, a byte each).
FORCED_WIDTH = 2
# The lean forced state: the opponent's plane (four bits, written by the
# forward pass as the starts file) and the mover's (two bits).
STARTS_BYTES_PER_POSITION = 0.5


def positions(n):
    return comb(n + 2 * PITS - 1, 2 * PITS - 1)


def table_rows(path, rules):
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) > 4 and f[0] == rules and f[1].isdigit():
            rows[int(f[1])] = (int(f[2]), int(f[3]))
    return rows


def main():
    exits = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    even = table_rows("info-even-3seed.txt", "oware-6")
    forced = table_rows("info-forced-0-20.txt", "oware-6-forced")
    # Forced bytes against even bytes, level by level, where both exist
    # and the levels are large enough for the ratio to have settled.
    ratios = [forced[n][1] / even[n][1] for n in range(15, 21) if n in forced]
    ratio = sorted(ratios)[len(ratios) // 2]
    print(f"forced/even table bytes, levels 15-20: {', '.join(f'{r:.3f}' for r in ratios)}; median {ratio:.3f}")

    levels = [n for n in range(TOP + 1) if n != TOP - 1]
    even_bits_34 = 8 * even[34][1] / even[34][0]
    forced_bytes = {}
    for n in levels:
        even_bytes = even[n][1] if n in even else positions(n) * even_bits_34 / 8
        forced_bytes[n] = even_bytes * ratio
    below = sum(forced_bytes[n] for n in levels if n < TOP)
    print(f"forced tables, levels 0-34: {below / 1e9:.1f} GB; with level 36: {sum(forced_bytes.values()) / 1e9:.1f} GB")

    # Level 36 in the lean mode: lower levels held in memory smallest
    # first in what the budget leaves, the rest as flipped scratch files.
    room = (BUDGET_MIB - LEVEL_36_SOLVING_MIB) * 2**20
    in_memory, scratch = 0, 0
    for n in levels:
        if n >= TOP:
            continue
        size = positions(n) * FORCED_WIDTH
        if in_memory + size <= room:
            in_memory += size
        else:
            scratch += size
    starts = positions(TOP) * STARTS_BYTES_PER_POSITION
    print(f"level 36: {positions(TOP):,} positions; {LEVEL_36_SOLVING_MIB} MiB to solve, "
          f"{in_memory / 2**30:.1f} GiB of lower levels in memory")
    print(f"level 36's forward pass on disk: lower levels flipped {scratch / 1e9:.1f} GB, "
          f"starts {starts / 1e9:.1f} GB, exit lists {exits / 1e9:.1f} GB")
    peak = below + scratch + starts + exits
    print(f"disk at level 36's forward pass: {peak / 1e9:.1f} GB "
          f"(forced tables 0-34 + scratch + starts + exits)")
    # At the level's end the scratch files are gone; its symbols are
    # assembled into a mapped file (two bytes a position) and the table is
    # written from it, beside the exit lists.
    symbols = positions(TOP) * FORCED_WIDTH
    end = below + exits + symbols + forced_bytes[TOP]
    print(f"disk at level 36's end: {end / 1e9:.1f} GB (forced tables 0-34 + exits + "
          f"symbols {symbols / 1e9:.1f} GB + level 36's table {forced_bytes[TOP] / 1e9:.1f} GB)")
    print(f"with the even tables kept beside them (levels 0-34): "
          f"{(peak + sum(b for _, b in even.values())) / 1e9:.1f} GB")


main()
