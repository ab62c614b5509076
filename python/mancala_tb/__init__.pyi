"""Perfect-play endgame tables for mancala games (Oware/Awari, Wari, Kalah).

Open tables built by ``mancala-tb build`` (or :func:`build`) with
:func:`open_tablebase`, and ask them for the exact value of a position and
of each of its moves, one position at a time or a numpy batch at once.
Positions are seen from the player to move: his pits ``a``, ``b``, ... (pit
numbers 0, 1, ...) first, then the opponent's, in sowing order, written
``"4,4,4,4,4,4/4,4,4,4,4,4"``. A value is the stones the player to move
ends with ahead of the opponent, of those on the board, under best play.
"""

from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Callable, Literal, Optional, Sequence, Tuple, Type, TypeVar, Union, final, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "ILLEGAL",
    "MissingTableError",
    "CorruptedTableError",
    "NotationError",
    "Rules",
    "Position",
    "Move",
    "Tablebase",
    "Game",
    "GameEnd",
    "Engine",
    "Analysis",
    "MoveAnalysis",
    "LevelReport",
    "open_tablebase",
    "build",
]

__version__: str

ILLEGAL: int
"""What :meth:`Tablebase.move_values_many` puts where a pit is no legal move (-128)."""

class MissingTableError(KeyError):
    """The tables for a position are not there (never built, or a file is missing)."""

class CorruptedTableError(Exception):
    """A table file is damaged, truncated or not the table its name says."""

class NotationError(ValueError):
    """Text, counts or an array row that is not a position of the rule set."""

_Variant = Literal["oware", "awari", "wari", "kalah"]
_Cycles = Literal["even", "forced"]

@final
class Rules:
    """A rule set: the variant, pits per side, Kalah's empty-capture option."""

    def __new__(cls, variant: _Variant = "oware", pits: int = 6, empty_capture: bool = True) -> Rules: ...
    @staticmethod
    def from_id(id: str) -> Rules:
        """The rule set of a table directory's name: ``oware-6``, ``kalah-4-noempty``."""
    @property
    def variant(self) -> _Variant: ...
    @property
    def pits(self) -> int: ...
    @property
    def empty_capture(self) -> bool: ...
    @property
    def can_cycle(self) -> bool:
        """Whether play can go round in circles within a level (not Kalah)."""
    @property
    def id(self) -> str: ...
    def start(self, seeds: int = 4) -> Position:
        """The start position with ``seeds`` in every pit."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

_PositionLike = Union[str, Sequence[int], "Position"]

@final
class Move:
    """One legal move and what it does."""

    @property
    def pit(self) -> int:
        """The pit emptied (0 is ``a``)."""
    @property
    def letter(self) -> str: ...
    @property
    def gain(self) -> int:
        """Stones the move put into the mover's store."""
    @property
    def extra_turn(self) -> bool:
        """Kalah: the mover moves again."""
    @property
    def child(self) -> Position:
        """The next position, seen from whoever moves next."""

@final
class Position:
    """A position seen from the player to move, under a rule set."""

    def __new__(
        cls, board: Union[str, Sequence[int], Position], rules: Union[Rules, _Variant, None] = None
    ) -> Position: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def pits(self) -> int: ...
    @property
    def cells(self) -> list[int]: ...
    @property
    def stones(self) -> int:
        """Stones on the board: the position's level."""
    @property
    def mover_stones(self) -> int: ...
    @property
    def opponent_stones(self) -> int: ...
    @property
    def notation(self) -> str: ...
    def legal_moves(self) -> list[int]:
        """Pit numbers of the legal moves, in order; empty when the game is over."""
    def moves(self) -> list[Move]: ...
    def play(self, move: Union[int, str]) -> Move:
        """Plays a pit (number or letter); raises ValueError if it is not legal."""
    def is_terminal(self) -> bool: ...
    def terminal_value(self) -> Optional[int]:
        """The value of a terminal position for the mover, None if it has moves."""
    def flipped(self) -> Position: ...
    def picture(self) -> str: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

_T = TypeVar("_T")
_Self = TypeVar("_Self", bound="Tablebase")

@final
class Tablebase:
    """The tables of one rule set and kind; one instance serves every thread."""

    @property
    def rules(self) -> Rules: ...
    @property
    def cycles(self) -> _Cycles: ...
    @property
    def directory(self) -> Path: ...
    @property
    def max_level(self) -> Optional[int]:
        """The highest level answered, None if there are no tables."""
    @property
    def levels(self) -> list[int]:
        """The levels answered, ascending (a --top-only set skips some)."""
    def value(self, position: _PositionLike) -> int:
        """The exact value for the player to move; MissingTableError if not covered."""
    @overload
    def get(self, position: _PositionLike) -> Optional[int]: ...
    @overload
    def get(self, position: _PositionLike, default: _T) -> Union[int, _T]: ...
    def move_values(self, position: _PositionLike) -> list[Tuple[int, int]]:
        """``(pit, value)`` of every legal move, in pit order."""
    def bounds(self, position: _PositionLike) -> Tuple[int, int]:
        """Forced tables: the stones (mover, opponent) can each be sure to win."""
    def verdict(
        self, position: _PositionLike, captured: Tuple[int, int] = ...
    ) -> Literal["win", "loss", "draw", "undecided"]:
        """Forced tables: the outcome with ``captured`` stones already stored."""
    def values(self, positions: npt.NDArray[np.integer]) -> npt.NDArray[np.int8]:
        """Values of an ``(N, 2P)`` integer array of positions, on every core."""
    def move_values_many(self, positions: npt.NDArray[np.integer]) -> npt.NDArray[np.int8]:
        """``(N, P)`` move values, ``ILLEGAL`` where a pit is no legal move."""
    @property
    def has_depths(self) -> bool:
        """Whether depth tables (``build(..., depth=True)``) are there."""
    def depth(self, position: _PositionLike) -> Optional[int]:
        """Plies to conversion (docs/RULES.md); None where the value is 0.

        Forced tables: plies within which the mover realizes his bound;
        None where it is 0."""
    def depths(self, positions: npt.NDArray[np.integer]) -> npt.NDArray[np.int16]:
        """Depths of an ``(N, 2P)`` integer array of positions, -1 where none."""
    def best_move(self, position: _PositionLike) -> Optional[int]:
        """The pit that realizes the value, or forced tables' mover's bound
        (by depth where depth tables are there)."""
    def close(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...

def open_tablebase(
    directory: Union[str, PathLike[str]],
    rules: Union[_Variant, Rules, None] = None,
    pits: int = 6,
    empty_capture: bool = True,
    cycles: _Cycles = "even",
    cache_mib: int = 256,
) -> Tablebase:
    """Opens the tables of a rule set under ``directory`` (as given to build)."""

_Side = Literal["south", "north"]

@final
class GameEnd:
    """How a game ended."""

    @property
    def reason(self) -> Literal["no-moves", "majority", "repetition"]: ...
    @property
    def stores(self) -> Tuple[int, int]:
        """The final stores, (south, north)."""
    @property
    def winner(self) -> Optional[_Side]:
        """The winner, None for a draw."""
    def margin_for(self, side: _Side) -> int: ...

@final
class Game:
    """A game in progress: position, player to move, stores, history."""

    def __new__(
        cls,
        rules: Union[Rules, _Variant, None] = None,
        seeds: int = 4,
        position: Union[str, Sequence[int], Position, None] = None,
        to_move: _Side = "south",
    ) -> Game: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def position(self) -> Position:
        """The board, seen from the player to move."""
    @property
    def to_move(self) -> _Side: ...
    @property
    def stores(self) -> Tuple[int, int]:
        """(south, north)."""
    @property
    def history(self) -> list[Tuple[_Side, Position]]: ...
    @property
    def store_margin(self) -> int: ...
    @property
    def total_stones(self) -> int: ...
    @property
    def occurrences(self) -> int: ...
    def legal_moves(self) -> list[int]: ...
    def is_over(self) -> bool: ...
    def end(self) -> Optional[GameEnd]: ...
    def play(self, move: Union[int, str]) -> None:
        """Plays a pit for the player to move, in place; ValueError if illegal."""
    def copy(self) -> Game: ...

@final
class MoveAnalysis:
    """One move of an analysis."""

    @property
    def pit(self) -> int: ...
    @property
    def value(self) -> int: ...
    @property
    def exact(self) -> bool: ...
    @property
    def final_margin(self) -> int: ...
    @property
    def outcome(self) -> Literal["win", "draw", "loss"]: ...
    @property
    def ends_game(self) -> Optional[str]: ...

@final
class Analysis:
    """The engine's answer for a game."""

    @property
    def to_move(self) -> _Side: ...
    @property
    def value(self) -> int: ...
    @property
    def exact(self) -> bool: ...
    @property
    def final_margin(self) -> int: ...
    @property
    def outcome(self) -> Literal["win", "draw", "loss"]: ...
    @property
    def moves(self) -> list[MoveAnalysis]: ...
    @property
    def best(self) -> list[int]: ...
    @property
    def pv(self) -> list[Tuple[_Side, int]]:
        """A perfect game from here: (player, pit) a ply."""
    @property
    def pv_end(self) -> Literal["game-over", "cycle", "truncated"]: ...
    @property
    def pv_end_reason(self) -> Optional[str]: ...
    @property
    def converts(self) -> bool:
        """Whether playing ``best[0]`` is proven to realize the value: the
        order of ``best`` is by depth to conversion (depth tables, or a
        search within the tables), the value is 0, or the rules cannot
        cycle (Kalah)."""
    @property
    def source(self) -> Literal["tables", "search"]: ...
    @property
    def nodes(self) -> int: ...
    @property
    def elapsed(self) -> float: ...

@final
class Engine:
    """The perfect player: tables within their range, search above."""

    def __new__(
        cls,
        tablebase: Tablebase,
        nodes: Optional[int] = None,
        time: Optional[float] = None,
        tt_mib: int = 64,
    ) -> Engine: ...
    def analyze(self, game: Union[Game, str, Sequence[int], Position]) -> Analysis: ...
    def best_move(self, game: Union[Game, str, Sequence[int], Position]) -> int: ...

@final
class LevelReport:
    """What a build did with one level."""

    @property
    def level(self) -> int: ...
    @property
    def positions(self) -> int: ...
    @property
    def seconds(self) -> float: ...
    @property
    def bytes(self) -> int: ...
    @property
    def reused(self) -> bool: ...
    @property
    def resumed(self) -> float: ...

def build(
    directory: Union[str, PathLike[str]],
    stones: int,
    rules: Union[_Variant, Rules, None] = None,
    pits: int = 6,
    empty_capture: bool = True,
    cycles: _Cycles = "even",
    encoding: Literal["full", "compact"] = "full",
    force: bool = False,
    progress: Union[bool, Callable[[int, int, int], object], None] = None,
    top_only: bool = False,
    depth: bool = False,
) -> list[LevelReport]:
    """Builds levels 0..=stones (reusing valid ones; top_only: stones and the
    levels it needs); Ctrl-C stops it cleanly."""
