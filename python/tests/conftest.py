"""Fixtures: tables built by the command line, and its answers to compare with.

The tables are built once per test session by the ``mancala-tb`` binary
(``$MANCALA_TB_CLI``, else the workspace's ``target/release`` or
``target/debug`` build), so every value the package returns is checked
against what the command line says about the same files.
"""

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[2]


def find_cli() -> Path:
    given = os.environ.get("MANCALA_TB_CLI")
    if given:
        return Path(given)
    for profile in ("release", "debug"):
        path = ROOT / "target" / profile / "mancala-tb"
        if path.exists():
            return path
    pytest.exit(
        "no mancala-tb binary: run `cargo build --release` first or set MANCALA_TB_CLI",
        returncode=2,
    )
    raise AssertionError("unreachable")


class RuleSet(NamedTuple):
    """A rule set the session builds tables of, and its command-line flags."""

    variant: str
    pits: int
    empty_capture: bool
    stones: int

    @property
    def flags(self) -> List[str]:
        flags = ["--rules", self.variant, "--pits", str(self.pits)]
        if not self.empty_capture:
            flags += ["--empty-capture", "false"]
        return flags

    @property
    def kwargs(self) -> Dict[str, object]:
        return {"rules": self.variant, "pits": self.pits, "empty_capture": self.empty_capture}


RULE_SETS = [
    RuleSet("oware", 6, True, 12),
    RuleSet("awari", 6, True, 10),
    RuleSet("wari", 6, True, 10),
    RuleSet("kalah", 6, True, 12),
    RuleSet("kalah", 4, False, 10),
]
FORCED = RuleSet("oware", 6, True, 10)


class Tables(NamedTuple):
    cli: Path
    root: Path

    def run(self, *args: str, input: str = "") -> str:
        done = subprocess.run(
            [str(self.cli), *args], input=input, capture_output=True, text=True, check=True
        )
        return done.stdout

    def query(self, rules: RuleSet, positions: Sequence[str], *extra: str) -> List[dict]:
        out = self.run(
            "query", *rules.flags, "--dir", str(self.root), "--json", *extra, "-",
            input="".join(p + "\n" for p in positions),
        )
        return [json.loads(line) for line in out.splitlines()]


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Tables:
    tables = Tables(find_cli(), tmp_path_factory.mktemp("tables"))
    for rules in RULE_SETS:
        tables.run("build", *rules.flags, "--stones", str(rules.stones), "--dir", str(tables.root))
    tables.run(
        "build", *FORCED.flags, "--stones", str(FORCED.stones), "--cycles", "forced",
        "--dir", str(tables.root),
    )
    return tables


def random_counts(rng: random.Random, pits: int, stones: int) -> List[int]:
    """A uniformly random board of ``stones`` stones in ``2 * pits`` pits."""
    cells = 2 * pits
    bars = sorted(rng.sample(range(stones + cells - 1), cells - 1))
    edges = [-1, *bars, stones + cells - 1]
    return [edges[i + 1] - edges[i] - 1 for i in range(cells)]


def notation(counts: Sequence[int], pits: int) -> str:
    return ",".join(map(str, counts[:pits])) + "/" + ",".join(map(str, counts[pits:]))


def random_positions(seed: int, pits: int, max_stones: int, count: int) -> Iterator[List[int]]:
    rng = random.Random(seed)
    for _ in range(count):
        yield random_counts(rng, pits, rng.randint(0, max_stones))
