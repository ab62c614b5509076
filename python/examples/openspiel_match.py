"""The tables' bot against OpenSpiel's MCTS bot, inside OpenSpiel.

    pip install open_spiel
    python python/examples/openspiel_match.py [--dir TABLES] [--games 10]

Builds Oware tables with depths (levels 0-12) if they are not there, then
plays OpenSpiel's ``oware`` with two seeds a house: random moves until at
most 12 stones are on the board, then ``mancala_tb.openspiel.TablebaseBot``
against ``open_spiel``'s MCTS bot. Prints, for each game, the margin the
tables promised the bot when it took over and the margin it ended with.
"""

import argparse
import random

import numpy as np
import pyspiel  # type: ignore[import-not-found,import-untyped,unused-ignore]
from open_spiel.python.algorithms import mcts  # type: ignore[import-not-found,import-untyped,unused-ignore]

import mancala_tb
from mancala_tb import openspiel

LEVEL = 12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="tables")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    game = pyspiel.load_game("oware(num_seeds_per_house=2)")
    rules = openspiel.rules_of(game)
    mancala_tb.build(args.dir, LEVEL, rules=rules, depth=True)
    tb = mancala_tb.open_tablebase(args.dir, rules)
    rng = random.Random(args.seed)
    for number in range(args.games):
        state = game.new_initial_state()
        while not state.is_terminal() and openspiel.position_of(state)[0].stones > LEVEL:
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        me = state.current_player()
        bot = openspiel.TablebaseBot(game, me, tb)
        evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(number))
        opponent = mcts.MCTSBot(game, 2.0, 200, evaluator, random_state=np.random.RandomState(number))
        promised = bot.promise(state)
        while not state.is_terminal():
            player = bot if state.current_player() == me else opponent
            state.apply_action(player.step(state))
        result = {1: "won", 0: "drew", -1: "lost"}[int(state.returns()[me])]
        print(f"game {number + 1}: promised {promised:+d}, the bot {result} ({state.returns()[me]:+.0f})")


if __name__ == "__main__":
    main()
