"""Label a training set: random positions of a level range and their exact values.

    python python/examples/label_dataset.py --dir TABLES --levels 10-20 --count 1000000 --out data.npz

Builds the Oware tables up to the top level if they are not there, draws
COUNT positions (a uniform level of the range, then a uniform board of it),
labels them with ``tb.values`` (every core, GIL released) and with every
move's value (``tb.move_values_many``, ``mancala_tb.ILLEGAL`` where a pit is
no legal move), and writes ``positions`` (uint8, ``(N, 12)``), ``values``
(int8, ``(N,)``) and ``move_values`` (int8, ``(N, 6)``) to an ``.npz`` file,
printing the throughput.
"""

import argparse
import time

import numpy as np

import mancala_tb


def random_boards(rng: np.random.Generator, low: int, high: int, count: int) -> np.ndarray:
    """Boards of 12 pits, each a uniform level in ``low..=high`` and then a
    uniform composition of it (stars and bars)."""
    levels = rng.integers(low, high + 1, size=count)
    boards = np.zeros((count, 12), dtype=np.uint8)
    for n in np.unique(levels):
        rows = np.flatnonzero(levels == n)
        # 11 bars among n + 11 slots: the gaps between them are the pits.
        keys = rng.random((len(rows), int(n) + 11))
        bars = np.sort(np.argsort(keys, axis=1)[:, :11], axis=1)
        edges = np.concatenate(
            [np.full((len(rows), 1), -1), bars, np.full((len(rows), 1), int(n) + 11)], axis=1
        )
        boards[rows] = np.diff(edges, axis=1) - 1
    return boards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="tables")
    parser.add_argument("--levels", default="10-20", help="LOW-HIGH stones on the board")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="oware-labels.npz")
    args = parser.parse_args()
    low, high = map(int, args.levels.split("-"))

    mancala_tb.build(args.dir, stones=high)
    boards = random_boards(np.random.default_rng(args.seed), low, high, args.count)
    with mancala_tb.open_tablebase(args.dir) as tb:
        start = time.perf_counter()
        values = tb.values(boards)
        labelled = time.perf_counter() - start
        start = time.perf_counter()
        move_values = tb.move_values_many(boards)
        moves_labelled = time.perf_counter() - start
    np.savez_compressed(args.out, positions=boards, values=values, move_values=move_values)
    print(f"{len(boards):,} positions of levels {low}-{high}: values in {labelled:.2f} s "
          f"({len(boards) / labelled / 1e6:.2f} M/s), move values in {moves_labelled:.2f} s "
          f"({len(boards) / moves_labelled / 1e6:.2f} M/s); written to {args.out}")
    wins = int((values > 0).sum())
    print(f"mover wins {wins:,}, draws {int((values == 0).sum()):,}, loses {len(values) - wins - int((values == 0).sum()):,}")


if __name__ == "__main__":
    main()
