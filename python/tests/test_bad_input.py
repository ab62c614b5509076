"""The package under bad input: every mistake a caller can make is a typed
exception (``NotationError``, ``MissingTableError``, ``TypeError``,
``ValueError``, ``OverflowError``), never a crash, a wrong answer or an
exhausted memory; the Python part of the fault-injection suite of
``tests/integration/faults.rs``."""

import resource
import shutil
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

import mancala_tb
from conftest import Tables

# A level-8 position, with moves, well inside the session's oware tables.
ROW = [1, 0, 3, 0, 2, 0, 0, 2, 0, 0, 0, 0]


@pytest.mark.parametrize(
    "dtype", [np.float64, np.float32, np.float16, np.bool_, np.complex64, object, np.str_]
)
def test_arrays_of_no_integer_dtype_are_type_errors(tables: Tables, dtype: Any) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        rows = np.array([ROW, ROW], dtype=dtype)
        with pytest.raises(TypeError, match="numpy array of integers"):
            tb.values(rows)
        with pytest.raises(TypeError, match="numpy array of integers"):
            tb.move_values_many(rows)


@pytest.mark.parametrize("shape", [(), (12,), (1, 1, 12), (2, 3, 4, 12)])
def test_arrays_of_another_dimension_are_type_errors(tables: Tables, shape: Any) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        with pytest.raises(TypeError, match="2-dimensional"):
            tb.values(np.zeros(shape, dtype=np.int64))
        with pytest.raises(TypeError, match="2-dimensional"):
            tb.move_values_many(np.zeros(shape, dtype=np.int64))


@pytest.mark.parametrize("columns", [0, 1, 10, 11, 13, 24])
def test_rows_of_another_width_are_notation_errors(tables: Tables, columns: int) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        with pytest.raises(mancala_tb.NotationError, match=f"rows of 12 counts, not {columns}"):
            tb.values(np.zeros((3, columns), dtype=np.uint8))


def test_counts_out_of_range_are_notation_errors_naming_the_row(tables: Tables) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        for dtype, count in [(np.int8, -1), (np.int64, -(2**40)), (np.int64, 2**40), (np.uint64, 2**63)]:
            rows = np.array([ROW] * 4, dtype=dtype)
            rows[2, 5] = count
            with pytest.raises(mancala_tb.NotationError, match=f"row 2: a pit holds {count} stones"):
                tb.values(rows)
        rows = np.array([ROW] * 4, dtype=np.uint8)
        rows[1, 0] = 255
        with pytest.raises(mancala_tb.NotationError, match="row 1"):
            tb.values(rows)


def test_an_empty_batch_answers_nothing(tables: Tables) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        assert tb.values(np.zeros((0, 12), dtype=np.int32)).shape == (0,)
        assert tb.move_values_many(np.zeros((0, 12), dtype=np.int32)).shape == (0, 6)


def test_non_contiguous_arrays_answer_as_contiguous_ones(tables: Tables) -> None:
    rng = np.random.default_rng(46)
    rows = np.zeros((200, 12), dtype=np.int64)
    for row in rows:
        row[rng.choice(12, size=3)] += 1
    rows[:, 0] += 1
    with mancala_tb.open_tablebase(tables.root) as tb:
        values = tb.values(rows)
        moves = tb.move_values_many(rows)
        wide = np.zeros((200, 36), dtype=np.int64)
        wide[:, 1::3] = rows
        views = [
            ("every third column", wide[:, 1::3], values),
            ("Fortran order", np.asfortranarray(rows), values),
            ("every other row", rows[::2], values[::2]),
            ("rows reversed", rows[::-1], values[::-1]),
        ]
        for name, view, expected in views:
            assert not view.flags["C_CONTIGUOUS"], name
            assert tb.values(view).tolist() == expected.tolist(), name
        assert tb.move_values_many(wide[:, 1::3]).tolist() == moves.tolist()
        readonly = rows.copy()
        readonly.setflags(write=False)
        assert tb.values(readonly).tolist() == values.tolist()


def peak_rss_bytes() -> int:
    # Linux reports the peak resident set size in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_an_array_of_ten_to_the_eight_elements_is_answered_in_bounded_memory(tables: Tables) -> None:
    # 10^8 elements without allocating them: one row repeated by a zero
    # stride. The API promises no size limit, so the batch must be
    # answered, in memory linear in its rows, not in their elements'
    # storage or worse.
    rows = (10**8 + 11) // 12
    big = np.broadcast_to(np.array(ROW, dtype=np.uint8), (rows, 12))
    assert big.size >= 10**8
    with mancala_tb.open_tablebase(tables.root) as tb:
        value = tb.value(ROW)
        before = peak_rss_bytes()
        values = tb.values(big)
        grown = peak_rss_bytes() - before
        assert values.shape == (rows,)
        assert values.dtype == np.int8
        assert (values == value).all()
        assert grown < 100 * rows, f"{grown / 2**20:.0f} MiB for {rows} rows"
        one = tb.move_values_many(np.array([ROW]))
        moves = tb.move_values_many(np.broadcast_to(np.array(ROW, dtype=np.int16), (10**6, 12)))
        assert moves.shape == (10**6, 6)
        assert (moves == one).all()


BAD_NOTATIONS: List[Any] = [
    "",
    " ",
    "1,2",
    "1,0,0,0,0,0",
    "1,0,0,0,0,0/0,0,0,0,0",
    "1,0,0,0,0,0/0,0,0,0,0,0,0",
    "a,b,c,d,e,f/0,0,0,0,0,0",
    "1;0;0;0;0;0/0;0;0;0;0;1",
    "-1,0,0,0,0,0/0,0,0,0,0,1",
    "99999999999999999999,0,0,0,0,0/0,0,0,0,0,1",
    "1.5,0,0,0,0,0/0,0,0,0,0,1",
    "\u0661,\u0660,\u0660,\u0660,\u0660,\u0660/\u0660,\u0660,\u0660,\u0660,\u0660,\u0661",
    "1,0,0,0,0,0/0,0,0,0,0,1/1",
    "1,0,0,0,0,0/0,0,0,0,0,1\n2,0,0,0,0,0/0,0,0,0,0,1",
    "\x00",
    "/",
    [1, 2, 3],
    [-1] + [0] * 11,
    [2**70] + [0] * 11,
    [1.5] * 12,
    None,
    object(),
    {"a": 1},
]


@pytest.mark.parametrize("bad", BAD_NOTATIONS, ids=lambda b: repr(b)[:30])
def test_bad_notation_is_a_notation_error(tables: Tables, bad: Any) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        with pytest.raises(mancala_tb.NotationError):
            tb.value(bad)
        with pytest.raises(mancala_tb.NotationError):
            tb.move_values(bad)
        with pytest.raises(mancala_tb.NotationError):
            mancala_tb.Position(bad)


def test_a_huge_notation_comes_back_short(tables: Tables) -> None:
    with mancala_tb.open_tablebase(tables.root) as tb:
        for huge in ["1," * 10**6, "\u00e9" * 10**6, "1,0,0,0,0,0/" + "0," * 10**6]:
            with pytest.raises(mancala_tb.NotationError) as raised:
                tb.value(huge)
            assert len(str(raised.value)) < 400, str(raised.value)[:500]


def test_bad_rules_and_options_are_value_errors(tables: Tables) -> None:
    for variant in ["chess", "", "OWARE"]:
        with pytest.raises(ValueError):
            mancala_tb.Rules(variant)  # type: ignore[arg-type]
    for pits in [0, 9, -1]:
        with pytest.raises((ValueError, OverflowError)):
            mancala_tb.Rules("oware", pits)
    with pytest.raises(OverflowError):
        mancala_tb.Rules("oware", 2**70)
    for name in ["", "bad", "oware-x", "oware-6-x", "oware-99"]:
        with pytest.raises(ValueError):
            mancala_tb.Rules.from_id(name)
    with pytest.raises(ValueError):
        mancala_tb.open_tablebase(tables.root, cycles="odd")  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        mancala_tb.open_tablebase(tables.root, cache_mib=-1)
    with pytest.raises(ValueError, match="more than any machine has"):
        mancala_tb.open_tablebase(tables.root, cache_mib=2**50)


def test_a_table_directory_removed_under_an_open_tablebase(tables: Tables, tmp_path: Path) -> None:
    copy = tmp_path / "tables"
    shutil.copytree(tables.root / "oware-6", copy / "oware-6")
    boards = [ROW, "4,4,2,0,0,0/0,0,0,0,0,2", "2,2,2,2,2,2/0,0,0,0,0,0", "1,0,1,0,0,0/0,0,0,0,0,1"]
    with mancala_tb.open_tablebase(tables.root) as intact, mancala_tb.open_tablebase(copy) as tb:
        read_before = "1,0,1,0,0,0/0,0,0,0,0,1"
        assert tb.value(read_before) == intact.value(read_before)
        shutil.rmtree(copy)
        failed = 0
        for board in boards:
            # A level already read answers from what was opened; any other
            # is missing: an exception, never a wrong value or a crash.
            try:
                assert tb.value(board) == intact.value(board)
                assert tb.move_values(board) == intact.move_values(board)
            except mancala_tb.MissingTableError as e:
                assert "table file missing" in str(e)
                failed += 1
        assert failed > 0, "every level was answered from a removed directory"
        with pytest.raises(mancala_tb.MissingTableError):
            tb.values(np.array([ROW] * 3))
        with pytest.raises(mancala_tb.MissingTableError):
            tb.move_values_many(np.array([ROW] * 3))
        assert tb.levels == intact.levels
