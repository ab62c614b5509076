"""Speed of the Python package against the Rust library, in one run.

    python python/examples/benchmark.py [--dir TABLES] [--stones 20] [--count 1000000]

Builds Oware tables 0..=STONES under TABLES if they are not there (about a
minute for 20) and draws COUNT random positions two ways: uniformly from
every position the tables cover (most then lie in the top levels), and
level by level (a uniform level, then a uniform board of it). With the page
cache warm it measures, for each:

- ``tb.values(array)`` on the whole batch, first on a tablebase just
  opened (its block cache empty: every block the batch needs is decoded);
- then the median of 5 runs after one unmeasured pass: the second pass
  keeps the blocks it decodes in the block cache, which holds the whole of
  oware 0-20 at the default 256 MiB, so the runs read decoded blocks, as
  the batches of a long labelling job do;
- the Rust batch, ``Tablebase::values`` on the same positions, by the
  ``batch_values`` example of mancala-probe (``cargo run --release``);

and single ``tb.value`` calls on 200,000 of the uniform positions, the block
cache warm (two passes first, as a long labelling job runs): the median over
runs of 1,000 calls of each call's share, for Position objects and for
notation strings.
"""

import argparse
import math
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List, Sequence, Union

import numpy as np

import mancala_tb

ROOT = Path(__file__).resolve().parents[2]


def random_positions(rng: random.Random, stones: int, count: int, by_level: bool) -> np.ndarray:
    """``count`` positions drawn uniformly from all of levels 0..=stones, or
    from a uniformly drawn level each (``by_level``)."""
    sizes = [1 if by_level else math.comb(n + 11, 11) for n in range(stones + 1)]
    levels = rng.choices(range(stones + 1), weights=sizes, k=count)
    rows = np.zeros((count, 12), dtype=np.uint8)
    for i, n in enumerate(levels):
        bars = sorted(rng.sample(range(n + 11), 11))
        edges = [-1, *bars, n + 11]
        rows[i] = [edges[j + 1] - edges[j] - 1 for j in range(12)]
    return rows


def median_seconds(call: Callable[[], object], repeats: int) -> float:
    times: List[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=str(ROOT / "tables"))
    parser.add_argument("--stones", type=int, default=20)
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()

    mancala_tb.build(args.dir, stones=args.stones)
    rng = random.Random(20261201)
    with mancala_tb.open_tablebase(args.dir) as tb:
        for by_level in (False, True):
            kind = "level by level" if by_level else "uniform over all positions"
            print(f"drawing {args.count:,} random positions of oware 0-{args.stones}, {kind} ...",
                  file=sys.stderr)
            rows = random_positions(rng, args.stones, args.count, by_level)
            if not by_level:
                uniform = rows
            with mancala_tb.open_tablebase(args.dir) as cold:
                cold.values(rows[:1000])
                start = time.perf_counter()
                cold.values(rows)
                first = time.perf_counter() - start
            tb.values(rows)
            batch = median_seconds(lambda: tb.values(rows), 5)
            python_rate = len(rows) / batch
            file = Path(args.dir) / "benchmark-positions.u8"
            file.write_bytes(rows.tobytes())
            rust = subprocess.run(
                ["cargo", "run", "--release", "--quiet", "-p", "mancala-probe", "--example",
                 "batch_values", "--", args.dir, str(file)],
                cwd=ROOT, capture_output=True, text=True, check=True,
            ).stdout.strip()
            file.unlink()
            rust_rate = float(rust.split(", ")[-1].split()[0])
            print(f"{kind}: tb.values first batch {first:.3f} s ({len(rows) / first / 1e6:.2f} M/s), "
                  f"then median {batch:.3f} s, {python_rate / 1e6:.2f} M positions/s; "
                  f"Rust Tablebase::values {rust_rate / 1e6:.2f} M positions/s; "
                  f"ratio Python/Rust {python_rate / rust_rate:.2f}")

        singles = [mancala_tb.Position(list(map(int, r))) for r in uniform[:200_000]]
        texts = [p.notation for p in singles]
        for _ in range(2):
            for p in singles:
                tb.value(p)

        def per_call(items: Sequence[Union[str, mancala_tb.Position]]) -> float:
            shares = []
            for start in range(0, len(items), 1000):
                chunk = items[start:start + 1000]
                begin = time.perf_counter_ns()
                for item in chunk:
                    tb.value(item)
                shares.append((time.perf_counter_ns() - begin) / len(chunk) / 1000)
            return statistics.median(shares)

        print(f"tb.value(Position): median {per_call(singles):.2f} us a call; "
              f"tb.value(notation): median {per_call(texts):.2f} us a call")


if __name__ == "__main__":
    main()
