"""A whole game: the perfect player against a random one, by the rules the tables obey.

    python python/examples/perfect_play.py [--dir TABLES] [--seed 1]

Builds Kalah tables (4 pits a side, levels 0-24) if they are not there, then
plays Kalah(4, 3) from the start: South is ``mancala_tb.Engine`` (exact
values from the tables), North moves at random. Prints every move with the
engine's verdict and the result, which is never worse for South than the
start position's value says.
"""

import argparse
import random

import mancala_tb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="tables")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rules = mancala_tb.Rules("kalah", pits=4)
    mancala_tb.build(args.dir, stones=24, rules=rules)
    rng = random.Random(args.seed)
    with mancala_tb.open_tablebase(args.dir, rules) as tb:
        engine = mancala_tb.Engine(tb)
        game = mancala_tb.Game(rules, seeds=3)
        promised = engine.analyze(game).final_margin
        print(f"Kalah(4, 3): South (the engine) can make sure of a final margin of {promised:+}")
        while not game.is_over():
            if game.to_move == "south":
                analysis = engine.analyze(game)
                move = analysis.best[0]
                why = f"value {analysis.value:+}, final margin {analysis.final_margin:+}"
            else:
                move = rng.choice(game.legal_moves())
                why = "random"
            print(f"{game.to_move:>5} plays {'abcd'[move]} in {game.position}  ({why})")
            game.play(move)
        end = game.end()
        assert end is not None
        margin = end.margin_for("south")
        print(f"game over ({end.reason}): stores {end.stores}, South's margin {margin:+}")
        assert margin >= promised, "the perfect player did worse than it promised"


if __name__ == "__main__":
    main()
