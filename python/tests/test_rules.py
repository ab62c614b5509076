"""The rules without tables: positions, moves and their children."""

import pytest

import mancala_tb
from conftest import RULE_SETS, RuleSet, Tables, notation, random_positions


def test_positions_read_and_write_the_notation() -> None:
    text = "4,4,4,0,0,0/0,0,0,0,0,1"
    position = mancala_tb.Position(text)
    assert position.notation == str(position) == text
    assert position.cells == [4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert (position.stones, position.mover_stones, position.opponent_stones) == (13, 12, 1)
    assert position == mancala_tb.Position(position.cells)
    assert position != mancala_tb.Position(text, mancala_tb.Rules("wari"))
    assert mancala_tb.Position(text, "wari") == mancala_tb.Position(text, mancala_tb.Rules("wari"))
    assert mancala_tb.Game("kalah").rules == mancala_tb.Rules("kalah")
    with pytest.raises(TypeError):
        mancala_tb.Position(text, 6)
    assert hash(position) == hash(mancala_tb.Position(text))
    assert position.flipped().notation == "0,0,0,0,0,1/4,4,4,0,0,0"
    assert len(position) == 12
    assert "opponent" in position.picture()
    assert eval(repr(position), vars(mancala_tb)) == position


def test_rules_name_their_tables() -> None:
    rules = mancala_tb.Rules("kalah", pits=4, empty_capture=False)
    assert (rules.variant, rules.pits, rules.empty_capture, rules.id) == ("kalah", 4, False, "kalah-4-noempty")
    assert mancala_tb.Rules.from_id("kalah-4-noempty") == rules
    assert not rules.can_cycle and mancala_tb.Rules().can_cycle
    assert eval(repr(rules), vars(mancala_tb)) == rules
    assert rules.start(3).notation == "3,3,3,3/3,3,3,3"
    for bad in [lambda: mancala_tb.Rules("chess"), lambda: mancala_tb.Rules(pits=9)]:
        with pytest.raises(ValueError):
            bad()


def test_a_kalah_move_into_the_store_moves_again() -> None:
    start = mancala_tb.Rules("kalah").start(4)
    move = start.play("c")
    assert (move.pit, move.letter, move.gain, move.extra_turn) == (2, "c", 1, True)
    assert move.child.notation == "4,4,0,5,5,5/4,4,4,4,4,4"
    passing = start.play(0)
    assert not passing.extra_turn and passing.gain == 0
    assert passing.child.notation == "4,4,4,4,4,4/0,5,5,5,5,4"
    assert [m.pit for m in start.moves()] == start.legal_moves() == list(range(6))


def test_illegal_moves_are_refused() -> None:
    position = mancala_tb.Position("0,1,0,0,0,0/1,0,0,0,0,0")
    for bad in [0, "a", 6, -1, "z"]:
        with pytest.raises(ValueError):
            position.play(bad)


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.variant}-{r.pits}-{r.empty_capture}")
def test_children_are_the_ones_the_tables_were_built_by(tables: Tables, rules: RuleSet) -> None:
    texts = [notation(b, rules.pits) for b in random_positions(6, rules.pits, rules.stones, 100)]
    r = mancala_tb.Rules(rules.variant, rules.pits, rules.empty_capture)
    with mancala_tb.open_tablebase(tables.root, r) as tb:
        for text in texts:
            position = mancala_tb.Position(text, r)
            for (pit, value), move in zip(tb.move_values(position), position.moves()):
                assert move.pit == pit
                child = tb.value(move.child)
                assert value == (move.gain + child if move.extra_turn else move.gain - child)
