"""Probes from Python against the command line's answers on the same files."""

import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import mancala_tb
from conftest import FORCED, RULE_SETS, RuleSet, Tables, find_cli, notation, random_positions


def pit(letter: str) -> int:
    return ord(letter) - ord("a")


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.variant}-{r.pits}-{r.empty_capture}")
def test_values_and_move_values_equal_the_command_lines(tables: Tables, rules: RuleSet) -> None:
    boards = list(random_positions(1, rules.pits, rules.stones, 300))
    texts = [notation(b, rules.pits) for b in boards]
    answers = tables.query(rules, texts)
    with mancala_tb.open_tablebase(tables.root, **rules.kwargs) as tb:
        for board, text, answer in zip(boards, texts, answers):
            assert tb.value(text) == answer["value"], text
            assert tb.value(board) == answer["value"], text
            expected = [(pit(m["move"]), m["value"]) for m in answer["moves"]]
            assert tb.move_values(text) == expected, text
            position = mancala_tb.Position(text, tb.rules)
            assert position.legal_moves() == [p for p, _ in expected]
            assert position.is_terminal() == answer["terminal"]
            if answer["terminal"]:
                assert position.terminal_value() == answer["value"]


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.variant}-{r.pits}-{r.empty_capture}")
def test_batches_equal_single_probes(tables: Tables, rules: RuleSet) -> None:
    boards = np.array(list(random_positions(2, rules.pits, rules.stones, 3000)), dtype=np.int64)
    with mancala_tb.open_tablebase(tables.root, **rules.kwargs) as tb:
        values = tb.values(boards)
        assert values.dtype == np.int8 and values.shape == (len(boards),)
        assert values.tolist() == [tb.value(list(b)) for b in boards]
        moves = tb.move_values_many(boards)
        assert moves.dtype == np.int8 and moves.shape == (len(boards), rules.pits)
        for row, board in zip(moves, boards):
            expected = [mancala_tb.ILLEGAL] * rules.pits
            for p, v in tb.move_values(list(board)):
                expected[p] = v
            assert row.tolist() == expected
        # Any integer type, and views that are not contiguous.
        for dtype in (np.uint8, np.int16, np.int32, np.uint64):
            assert tb.values(boards.astype(dtype)).tolist() == values.tolist()
        assert tb.values(boards[::2]).tolist() == values[::2].tolist()
        assert tb.values(np.zeros((0, 2 * rules.pits), dtype=np.int64)).shape == (0,)


def test_forced_bounds_and_verdicts_equal_the_command_lines(tables: Tables) -> None:
    boards = [notation(b, 6) for b in random_positions(3, 6, FORCED.stones, 300)]
    answers = tables.query(FORCED, boards, "--cycles", "forced", "--captured", "20,18")
    with mancala_tb.open_tablebase(tables.root, cycles="forced") as tb:
        assert tb.cycles == "forced"
        for board, answer in zip(boards, answers):
            assert tb.bounds(board) == (answer["forced_mover"], answer["forced_opponent"])
            assert tb.verdict(board, captured=(20, 18)) == answer["verdict"]
        with pytest.raises(TypeError, match="forced"):
            tb.value(boards[0])


def test_bad_positions_raise_notation_errors(tables: Tables) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        for bad in ["4,4,4/4,4,4", "1,2,x,0,0,0/0,0,0,0,0,0", "", "1,0,0,0,0,0"]:
            with pytest.raises(mancala_tb.NotationError):
                tb.value(bad)
        with pytest.raises(ValueError):
            tb.value([1, 2, 3])
        with pytest.raises(mancala_tb.NotationError, match="-1 stones"):
            tb.value([-1] + [0] * 11)
        with pytest.raises(mancala_tb.NotationError):
            tb.value(object())
        rows = np.zeros((5, 12), dtype=np.int32)
        rows[3, 0] = -2
        with pytest.raises(mancala_tb.NotationError, match="row 3"):
            tb.values(rows)
        with pytest.raises(mancala_tb.NotationError, match="rows of 12 counts"):
            tb.values(np.zeros((5, 10), dtype=np.int64))
        with pytest.raises(TypeError):
            tb.values(np.zeros((5, 12), dtype=np.float64))
        with pytest.raises(ValueError, match="kalah-6"):
            tb.value(mancala_tb.Position("1,0,0,0,0,0/1,0,0,0,0,0", mancala_tb.Rules("kalah")))


def test_missing_levels_raise_missing_table_errors(tables: Tables) -> None:
    beyond = "4,4,4,4,4,4/4,4,4,4,4,4"
    with mancala_tb.open_tablebase(tables.root) as tb:
        assert tb.max_level == 12
        assert tb.levels == list(range(13))
        with pytest.raises(mancala_tb.MissingTableError, match="mancala_tb.build") as raised:
            tb.value(beyond)
        assert isinstance(raised.value, KeyError)
        assert tb.get(beyond) is None
        assert tb.get(beyond, -99) == -99
        assert tb.get("1,0,0,0,0,0/1,0,0,0,0,0") == tb.value("1,0,0,0,0,0/1,0,0,0,0,0")
        with pytest.raises(mancala_tb.MissingTableError):
            tb.values(np.array([[4] * 12]))
    with mancala_tb.open_tablebase(tables.root / "nothing-here") as tb:
        assert tb.max_level is None
        assert tb.levels == []
        with pytest.raises(KeyError):
            tb.value("0,0,0,0,0,0/0,0,0,0,0,0")


def test_damaged_files_raise_corrupted_table_errors(tables: Tables, tmp_path: Path) -> None:
    copy = tmp_path / "tables"
    shutil.copytree(tables.root / "oware-6", copy / "oware-6")
    level = copy / "oware-6" / "level-010.mtb"
    data = bytearray(level.read_bytes())
    for i in range(64, len(data)):
        data[i] ^= 0x5A
    level.write_bytes(bytes(data))
    truncated = copy / "oware-6" / "level-009.mtb"
    truncated.write_bytes(truncated.read_bytes()[:100])
    with mancala_tb.open_tablebase(copy) as tb:
        with pytest.raises(mancala_tb.CorruptedTableError):
            tb.values(np.array(list(random_positions(4, 6, 0, 1)) + [[1] * 10 + [0, 0]]))
        with pytest.raises(mancala_tb.CorruptedTableError, match="level-009"):
            tb.value([1] * 9 + [0, 0, 0])


def test_threads_share_one_tablebase(tables: Tables) -> None:
    boards = [list(b) for b in random_positions(5, 6, 12, 4000)]
    with mancala_tb.open_tablebase(tables.root) as tb:
        expected = [tb.value(b) for b in boards]
        barrier = threading.Barrier(4)

        def probe(offset: int) -> list:
            barrier.wait()
            order = boards[offset:] + boards[:offset]
            return [tb.value(b) for b in order]

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(probe, [0, 1000, 2000, 3000]))
        for offset, result in zip([0, 1000, 2000, 3000], results):
            assert result == expected[offset:] + expected[:offset]
        with ThreadPoolExecutor(2) as pool:
            batches = list(pool.map(lambda _: tb.values(np.array(boards)).tolist(), range(4)))
        assert all(b == expected for b in batches)


def test_a_closed_tablebase_answers_nothing(tables: Tables) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        assert isinstance(tb.value("1,0,0,0,0,0/0,0,0,0,0,0"), int)
    with pytest.raises(ValueError, match="closed"):
        tb.value("1,0,0,0,0,0/0,0,0,0,0,0")
    assert "oware" in repr(tb)


def assert_depths_as_the_command_line(root: Path, cycles: str, seed: int, batch: int) -> None:
    """Depths and best moves of the oware tables to 8 stones of `cycles`
    under `root`, with their depth tables, as `query --json` gives them;
    batched depths as single ones."""
    boards = [notation(b, 6) for b in random_positions(seed, 6, 8, 300)]
    tables = Tables(find_cli(), root)
    answers = tables.query(RuleSet("oware", 6, True, 8), boards, "--cycles", cycles)
    with mancala_tb.open_tablebase(root, cycles=cycles) as tb:
        assert tb.has_depths
        for text, answer in zip(boards, answers):
            assert tb.depth(text) == answer["depth"], text
            best = tb.best_move(text)
            if answer["best"]:
                assert best == pit(answer["best"][0]), text
            else:
                assert best is None, text
        array = np.array(list(random_positions(seed + 1, 6, 8, batch)), dtype=np.int64)
        depths = tb.depths(array)
        assert depths.dtype == np.int16
        assert depths.tolist() == [
            -1 if tb.depth(list(b)) is None else tb.depth(list(b)) for b in array
        ]


def test_depths_equal_the_command_lines(tmp_path: Path) -> None:
    """Depth tables built from Python: depths and the best moves, ordered
    by them, as the command line gives them; none without depth tables."""
    mancala_tb.build(tmp_path, 8, depth=True)
    assert_depths_as_the_command_line(tmp_path, "even", 4, 500)
    with mancala_tb.open_tablebase(tmp_path / "nowhere") as empty:
        assert not empty.has_depths
        with pytest.raises(mancala_tb.MissingTableError):
            empty.depth("1,0,0,0,0,0/0,0,0,0,0,1")


def test_forced_depths_equal_the_command_lines(tmp_path: Path) -> None:
    """Forced depth tables: the mover's depth and the best move as `query
    --json --cycles forced` gives them."""
    mancala_tb.build(tmp_path, 8, cycles="forced", depth=True)
    assert_depths_as_the_command_line(tmp_path, "forced", 6, 200)
