"""Perfect play inside OpenSpiel: its ``oware`` and ``mancala`` states as
positions of the tables, and a bot that plays them perfectly.

OpenSpiel (``pip install open_spiel``, module ``pyspiel``) has two games
whose rules are rule sets of the tables:

- ``oware`` (any ``num_houses_per_player``, any ``num_seeds_per_house``) is
  ``Rules("oware", pits)``: same sowing, captures, grand slam and feeding.
  Its game ends differ in one way. OpenSpiel ends a game at the first
  repetition of a board (with the scores and the player to move) since the
  last capture, each player taking the stones on his side, where the
  tables score endless play as an even split.
- ``mancala`` is Kalah with six pits and four seeds, capturing only when
  the facing pit holds seeds: ``Rules("kalah", 6, empty_capture=False)``.

:func:`position_of` turns a state into the position the tables answer (the
player to move's view) and the stones each side has stored; a table
value ``v`` of that position promises the player to move a final margin of
``stored − opponent's stored + v``.

:class:`TablebaseBot` is a ``pyspiel.Bot``: it plays every move that keeps
the promised margin, ordered by depth to conversion (tables built with
``depth=True``), so it realizes what the tables promise:

- Where its value is not 0 it never lets a position come back: its own
  moves take the nearest conversion, the opponent's value-keeping moves
  bring one nearer, and any other move of his raises the margin the bot is
  promised, so OpenSpiel's repetition rule never ends its game. Against
  any opponent, it finishes with at least the promised margin, and so at
  least the promised result.
- Where its value is 0 (neither side can gain without the other's mistake)
  the tables' even split and OpenSpiel's repetition rule differ. The bot
  scores each move that would end the game by repetition as OpenSpiel
  does (each side takes his own stones) and takes it when that beats the
  split, but a repetition the opponent brings about can end the game
  below the split.

Without depth tables the bot still keeps the value, but the choice among
the moves that keep it is not proven to convert it (a warning says so when
the bot is made).
"""

from __future__ import annotations

import warnings
from typing import List, Optional, Tuple

import pyspiel  # type: ignore[import-not-found,import-untyped,unused-ignore]

from . import MissingTableError, Position, Rules, Tablebase

__all__ = ["rules_of", "position_of", "pit_of", "action_of", "TablebaseBot"]


def rules_of(game: pyspiel.Game) -> Rules:
    """The rule set of an OpenSpiel ``oware`` or ``mancala`` game."""
    name = game.get_type().short_name
    if name == "oware":
        return Rules("oware", int(game.get_parameters()["num_houses_per_player"]))
    if name == "mancala":
        return Rules("kalah", _KALAH_PITS, empty_capture=False)
    raise ValueError(f"OpenSpiel game {name!r} is not oware or mancala")


def position_of(state: pyspiel.State) -> Tuple[Position, Tuple[int, int]]:
    """The state's position, seen from the player to move, and the stones
    stored so far as ``(player to move's, opponent's)``."""
    board = _Board.of(state)
    return board.position(), board.stores_of(board.mover)


def pit_of(state: pyspiel.State, action: int) -> int:
    """The pit (0 is ``a``, the player to move's first) an action sows."""
    if _is_oware(state):
        return action
    return action - _kalah_first_pit(state.current_player())


def action_of(state: pyspiel.State, pit: int) -> int:
    """The action that sows pit ``pit`` of the player to move."""
    if _is_oware(state):
        return pit
    return pit + _kalah_first_pit(state.current_player())


class TablebaseBot(pyspiel.Bot):  # type: ignore[misc]
    """Plays an OpenSpiel ``oware`` or ``mancala`` game perfectly from the
    tables' range on: the move keeping the promised margin that converts it
    soonest (ahead) or puts the conversion off longest (behind).

    ``tablebase`` must hold the game's rule set (:func:`rules_of`), even
    tables, ideally with depth tables. Outside the tables' range the bot
    asks ``fallback`` (any ``pyspiel.Bot``) for its move, and without one
    raises :class:`mancala_tb.MissingTableError`.
    """

    def __init__(
        self,
        game: pyspiel.Game,
        player_id: int,
        tablebase: Tablebase,
        fallback: Optional[pyspiel.Bot] = None,
    ) -> None:
        pyspiel.Bot.__init__(self)
        rules = rules_of(game)
        if tablebase.rules != rules:
            raise ValueError(
                f"the tables are {tablebase.rules.id}, the game is {rules.id}"
            )
        if tablebase.cycles != "even":
            raise ValueError("the bot plays from even tables (cycles='even')")
        if rules.can_cycle and not tablebase.has_depths:
            warnings.warn(
                "no depth tables: the bot keeps the value but its choice is not "
                "proven to convert it (build the tables with depth=True)",
                stacklevel=2,
            )
        self._player_id = player_id
        self._tablebase = tablebase
        self._fallback = fallback

    def player_id(self) -> int:
        return self._player_id

    def provides_policy(self) -> bool:
        return False

    def restart_at(self, state: pyspiel.State) -> None:
        if self._fallback is not None:
            self._fallback.restart_at(state)

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        if self._fallback is not None:
            self._fallback.inform_action(state, player_id, action)

    def step(self, state: pyspiel.State) -> int:
        """The action to play in ``state`` (the bot's turn)."""
        board = _Board.of(state)
        if not self._covers(board):
            if self._fallback is None:
                raise MissingTableError(
                    f"{board.position().stones} stones on the board are beyond the "
                    f"tables (up to {self._tablebase.max_level}) and the bot has no fallback"
                )
            return int(self._fallback.step(state))
        return self._best(state, board)

    def covers(self, state: pyspiel.State) -> bool:
        """Whether the tables answer ``state``'s position."""
        return self._covers(_Board.of(state))

    def _covers(self, board: _Board) -> bool:
        return board.position().stones in self._tablebase.levels

    def promise(self, state: pyspiel.State) -> int:
        """The final margin (stored stones, the player to move's minus his
        opponent's) the tables promise the player to move."""
        board = _Board.of(state)
        mine, theirs = board.stores_of(board.mover)
        return mine - theirs + self._tablebase.value(board.position())

    def _best(self, state: pyspiel.State, board: _Board) -> int:
        me = int(state.current_player())
        stones = board.position().stones
        actions = [int(action) for action in state.legal_actions()]
        scored = [(action, *self._outcome(state, stones, action, me)) for action in actions]
        best_margin = max(margin for _, margin, _ in scored)
        keeping = [(action, plies) for action, margin, plies in scored if margin == best_margin]
        mine, theirs = board.stores_of(me)
        value = best_margin - (mine - theirs)
        # A move without a depth (only a damaged table gives one) comes
        # last for the side ahead, first for the side behind.
        if value > 0:
            return min(keeping, key=lambda c: _INFINITE if c[1] is None else c[1])[0]
        if value < 0:
            return max(keeping, key=lambda c: _INFINITE if c[1] is None else c[1])[0]
        return keeping[0][0]

    def _outcome(
        self, state: pyspiel.State, stones: int, action: int, me: int
    ) -> Tuple[int, Optional[int]]:
        """The margin ``me`` is promised after ``action`` in ``state`` (with
        ``stones`` on the board), and the plies to conversion through it (1
        if it takes stones off the board)."""
        child = state.child(action)
        after = _Board.of(child)
        if child.is_terminal():
            mine, theirs = after.final_stores(me)
            return mine - theirs, 1
        position = after.position()
        value = self._tablebase.value(position)
        mine, theirs = after.stores_of(me)
        margin = mine - theirs + (value if after.mover == me else -value)
        if position.stones < stones:
            return margin, 1
        if not self._tablebase.has_depths:
            return margin, None
        depth = self._tablebase.depth(position)
        return margin, None if depth is None else depth + 1


_KALAH_PITS = 6
_INFINITE = 1 << 30


def _is_oware(state: pyspiel.State) -> bool:
    return bool(state.get_game().get_type().short_name == "oware")


def _kalah_first_pit(player: int) -> int:
    """OpenSpiel's mancala board: 0 is North's store, 1-6 South's pits, 7
    South's store, 8-13 North's pits."""
    return 1 if player == 0 else _KALAH_PITS + 2


class _Board:
    """A state's pits in each player's sowing order, and the stores."""

    def __init__(self, pits: List[List[int]], stores: List[int], mover: int, rules: Rules) -> None:
        self.pits = pits
        self.stores = stores
        self.mover = mover
        self.rules = rules

    @staticmethod
    def of(state: pyspiel.State) -> _Board:
        rules = rules_of(state.get_game())
        if _is_oware(state):
            # "player | score0 score1 | seeds": South's houses, then North's.
            mover, scores, seeds = str(state.observation_string(0)).split(" | ")
            counts = [int(s) for s in seeds.split()]
            p = rules.pits
            return _Board(
                [counts[:p], counts[p:]], [int(s) for s in scores.split()], int(mover), rules
            )
        tensor = [int(round(x)) for x in state.observation_tensor(0)]
        cells, player = tensor[: 2 * _KALAH_PITS + 2], tensor[2 * _KALAH_PITS + 2]
        south = cells[1 : _KALAH_PITS + 1]
        north = cells[_KALAH_PITS + 2 :]
        return _Board([south, north], [cells[_KALAH_PITS + 1], cells[0]], player, rules)

    def position(self) -> Position:
        return Position(self.pits[self.mover] + self.pits[1 - self.mover], self.rules)

    def stores_of(self, player: int) -> Tuple[int, int]:
        """``(player's store, his opponent's)``."""
        return self.stores[player], self.stores[1 - player]

    def final_stores(self, player: int) -> Tuple[int, int]:
        """The stores of a finished game: OpenSpiel's oware has added the
        stones left to them; its mancala leaves each row to its owner."""
        mine, theirs = self.stores_of(player)
        if self.rules.variant == "oware":
            return mine, theirs
        return mine + sum(self.pits[player]), theirs + sum(self.pits[1 - player])
