"""Whole games by the rules the tables obey, the engine, and builds from Python."""

import random
from pathlib import Path

import numpy as np
import pytest

import mancala_tb
from conftest import Tables


def play_out(game: mancala_tb.Game, south, north) -> mancala_tb.GameEnd:
    while not game.is_over():
        game.play((south if game.to_move == "south" else north)(game))
    end = game.end()
    assert end is not None and game.legal_moves() == []
    return end


@pytest.mark.parametrize("variant,pits,seeds,stones", [("kalah", 4, 2, 16), ("oware", 4, 2, 16)])
def test_the_engine_plays_whole_games_for_the_predicted_margin(
    tmp_path: Path, variant: str, pits: int, seeds: int, stones: int
) -> None:
    mancala_tb.build(tmp_path, stones=stones, rules=variant, pits=pits, progress=False)
    rules = mancala_tb.Rules(variant, pits)
    with mancala_tb.open_tablebase(tmp_path, rules) as tb:
        engine = mancala_tb.Engine(tb)
        start = mancala_tb.Game(rules, seeds=seeds)
        analysis = engine.analyze(start)
        assert analysis.exact and analysis.source == "tables"
        assert analysis.best == [m.pit for m in analysis.moves if m.value == analysis.value]
        assert analysis.final_margin == analysis.value
        best = lambda game: engine.best_move(game)  # noqa: E731
        # Perfect play by both ends with exactly the predicted margin.
        end = play_out(start.copy(), best, best)
        assert end.margin_for("south") == analysis.final_margin
        # A random opponent can only do worse for himself.
        rng = random.Random(7)
        for _ in range(5):
            end = play_out(start.copy(), best, lambda game: rng.choice(game.legal_moves()))
            assert end.margin_for("south") >= analysis.final_margin
            # A majority ends the game with stones left on the board.
            stored = sum(end.stores)
            assert stored == start.total_stones or (end.reason == "majority" and stored < start.total_stones)
            assert end.winner in ("south", "north", None)


def test_a_game_records_its_history_and_refuses_illegal_moves() -> None:
    game = mancala_tb.Game(mancala_tb.Rules("kalah", 6))
    game.play("c")
    assert game.to_move == "south" and game.stores == (1, 0)
    game.play(0)
    assert game.to_move == "north"
    assert [side for side, _ in game.history] == ["south", "south"]
    assert game.history[0][1] == mancala_tb.Rules("kalah").start(4)
    with pytest.raises(ValueError):
        game.play(9)
    copy = game.copy()
    copy.play(copy.legal_moves()[0])
    assert len(copy.history) == len(game.history) + 1


def test_builds_from_python_write_the_command_lines_files(tables: Tables, tmp_path: Path) -> None:
    seen = []
    reports = mancala_tb.build(
        tmp_path, stones=10, rules="kalah", pits=4, empty_capture=False,
        progress=lambda done, total, level: seen.append((done, total, level)),
    )
    assert [r.level for r in reports] == list(range(11)) and not any(r.reused for r in reports)
    assert all(r.resumed == 0.0 for r in reports)
    assert seen and seen[-1][0] == seen[-1][1]
    ours = tmp_path / "kalah-4-noempty"
    theirs = tables.root / "kalah-4-noempty"
    for n in range(11):
        name = f"level-{n:03}.mtb"
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    again = mancala_tb.build(tmp_path, stones=10, rules="kalah", pits=4, empty_capture=False, progress=False)
    assert all(r.reused for r in again)
    with pytest.raises(ValueError):
        mancala_tb.build(tmp_path, stones=10, encoding="tiny")


def test_forced_tables_build_and_answer(tmp_path: Path) -> None:
    mancala_tb.build(tmp_path, stones=8, cycles="forced", progress=False)
    with mancala_tb.open_tablebase(tmp_path, cycles="forced") as tb:
        mover, opponent = tb.bounds("1,0,3,0,2,0/0,0,0,0,0,0")
        assert mover + opponent <= 6
        with pytest.raises(ValueError):
            mancala_tb.Engine(tb)


def test_a_top_only_build_skips_the_level_below_its_top(tables: Tables, tmp_path: Path) -> None:
    reports = mancala_tb.build(tmp_path, stones=10, top_only=True, progress=False)
    assert [r.level for r in reports] == [*range(9), 10]
    with mancala_tb.open_tablebase(tmp_path) as tb, mancala_tb.open_tablebase(tables.root) as full:
        assert tb.levels == [*range(9), 10] and tb.max_level == 10
        position = "1,0,3,0,2,0/0,2,0,1,0,1"
        assert tb.move_values(position) == full.move_values(position)
        with pytest.raises(mancala_tb.MissingTableError, match="lack level 9"):
            tb.value("1,0,3,0,2,0/0,2,0,1,0,0")


def test_an_interrupted_build_leaves_no_partial_level(tmp_path: Path) -> None:
    """The progress callback raising stops the build the way Ctrl-C does."""

    class Stop(Exception):
        pass

    def stop_at_level_11(done: int, total: int, level: int) -> None:
        if level >= 11:
            raise Stop

    with pytest.raises(Stop):
        mancala_tb.build(tmp_path, stones=13, progress=stop_at_level_11)
    files = sorted(p.name for p in (tmp_path / "oware-6").glob("level-*"))
    assert files and all(f.endswith(".mtb") for f in files)
    with mancala_tb.open_tablebase(tmp_path) as tb:
        top = tb.max_level
        assert top is not None and top < 13
        assert tb.values(np.zeros((1, 12), dtype=np.uint8)).tolist() == [0]
    reports = mancala_tb.build(tmp_path, stones=13, progress=False)
    assert [r.reused for r in reports] == [n <= top for n in range(14)]


def test_ctrl_c_stops_a_build_promptly_and_cleanly(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    # The child raises KeyboardInterrupt on SIGINT even where the test run
    # inherited an ignored SIGINT (a background job of a shell does).
    script = (
        "import signal, mancala_tb; "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"mancala_tb.build({str(tmp_path)!r}, stones=24, progress=False)"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    level_dir = tmp_path / "oware-6"
    deadline = time.monotonic() + 60
    while not (level_dir / "level-012.mtb").exists():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = child.communicate(timeout=30)
    assert time.monotonic() - sent < 10, "the build did not stop promptly"
    assert child.returncode != 0 and "KeyboardInterrupt" in err
    files = sorted(p.name for p in level_dir.glob("level-*"))
    assert all(f.endswith(".mtb") for f in files), files
    with mancala_tb.open_tablebase(tmp_path) as tb:
        top = tb.max_level
        assert top is not None and 12 <= top < 24
        tb.value([top] + [0] * 11)
