"""Head-to-head games: the SoG agent against an OpenSpiel bot, seats swapped game by game.

  python scripts/play.py --game=connect_four --leaf="checkpoints/connect_four(rows=3,columns=3,x_in_row=3)" \
      --opponent=mcts --games=100
  python scripts/play.py --game=leduc_poker --leaf=checkpoints/leduc_poker --opponent=ismcts --games=200

The agent (``sog.search.SoGAgent`` as an OpenSpiel bot, ``sog.openspiel.SoGBot``) re-solves every one
of its decisions with SoG(s, c) from its last search (--sims takes one value; the search, re-solving
and leaf flags are the shared ones of ``scripts/common.py``). Game g seats the agent as player
g mod 2. Opponents, OpenSpiel's own bots:

  * mcts: ``MCTSBot`` with random-rollout evaluation (one rollout a leaf), UCT constant --uct_c,
    --opponent_simulations simulations a move, MCTS-Solver on (OpenSpiel's defaults); perfect
    information only;
  * ismcts: ``ISMCTSBot`` with the same evaluator, for imperfect-information games;
  * random: ``UniformRandomBot``.

A game is a win, draw or loss by the sign of the agent's return. Prints progress and a summary and ends
with one JSON line: game, games, wins, draws, losses, per seat, and the mean return.
"""

import json
import time

from absl import app
from absl import flags
from absl import logging
import numpy as np
import pyspiel
from open_spiel.python.algorithms import evaluate_bots
from open_spiel.python.algorithms import ismcts
from open_spiel.python.algorithms import mcts

import common
from sog import monitoring
from sog.openspiel import bot as bot_lib
from sog.openspiel import bridge
from sog.search import agent as agent_lib

OPPONENTS = ("mcts", "ismcts", "random")

_GAME = flags.DEFINE_string("game", "connect_four", "Game name (one with an OpenSpiel counterpart).")
_SEARCH = common.define_search_flags(sims=["100"])
_PROTOCOL = common.define_protocol_flags()
_LEAF = common.define_leaf_flags(leaf="zeros")
_OPPONENT = flags.DEFINE_enum("opponent", "mcts", list(OPPONENTS), "The OpenSpiel bot to play.")
_GAMES = flags.DEFINE_integer("games", 100, "Games to play (seats alternate).", lower_bound=1)
_OPPONENT_SIMULATIONS = flags.DEFINE_integer("opponent_simulations", 1000,
                                             "Simulations a move of (IS-)MCTS.", lower_bound=1)
_UCT_C = flags.DEFINE_float("uct_c", 2.0, "UCT exploration constant of (IS-)MCTS.", lower_bound=0.0)
_SEED = flags.DEFINE_integer("seed", 0, "Seeds both players' randomness (game g uses seed + g).")
flags.adopt_module_key_flags(common)  # --help lists the shared flags too


class _ISMCTSBot(ismcts.ISMCTSBot):
  """OpenSpiel's IS-MCTS bot, restartable: it builds its search tree anew at every move, so a new game
  needs nothing (its own ``restart_at`` is not implemented, and ``evaluate_bots`` calls it)."""

  def restart_at(self, state: pyspiel.State) -> None:
    del state


def opponent_bot(name: str, os_game: pyspiel.Game, player: int, simulations: int, uct_c: float,
                 seed: int) -> pyspiel.Bot:
  """OpenSpiel's bot ``name`` for seat ``player`` (``ValueError`` where it does not fit the game)."""
  rng = np.random.RandomState(seed)
  perfect = (os_game.get_type().information
             == pyspiel.GameType.Information.PERFECT_INFORMATION)
  if name == "random":
    return pyspiel.make_uniform_random_bot(player, seed)
  evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
  if name == "mcts":
    if not perfect:
      raise ValueError(f"--opponent=mcts needs a perfect-information game; {os_game} is not "
                       "(use ismcts or random)")
    return mcts.MCTSBot(os_game, uct_c, simulations, evaluator, random_state=rng)
  if name == "ismcts":
    return _ISMCTSBot(os_game, evaluator, uct_c, simulations, random_state=rng)
  raise ValueError(f"unknown opponent {name!r}; valid opponents: {', '.join(OPPONENTS)}")


def _tally(returns: np.ndarray) -> dict:
  """Wins, draws and losses by the sign of the agent's returns, and their mean."""
  return {"games": int(returns.size), "wins": int((returns > 0).sum()),
          "draws": int((returns == 0).sum()), "losses": int((returns < 0).sum()),
          "mean_return": float(returns.mean()) if returns.size else 0.0}


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)
  game = common.load_game(_GAME.value)
  os_game = bridge.openspiel_game(game)  # a clear ValueError for games OpenSpiel lacks
  settings_note = common.apply_checkpoint_settings(_LEAF.leaf.value, skip=("predecessor",))
  sims = _SEARCH.simulations()
  if len(sims) != 1:
    raise ValueError(f"--sims: play takes one value of s, got {sims}")
  config = _SEARCH.config(sims[0])
  opponent_bot(_OPPONENT.value, os_game, 1, 1, _UCT_C.value, 0)  # fail before anything compiles
  agent = agent_lib.SoGAgent(game, _LEAF.model(game), config, _PROTOCOL.resolving_config())
  name = f"SoG({sims[0]},{config.simulations_per_phase:g})"
  resolving = agent.resolving_config
  opponent = _OPPONENT.value + ("" if _OPPONENT.value == "random"
                                else f"({_OPPONENT_SIMULATIONS.value} simulations)")
  print(f"{game.name}: {name} ({_LEAF.describe()}; "
        f"{f'safe (alpha={resolving.alpha:g})' if resolving.safe else 'unsafe'} re-solving) against "
        f"{opponent}, {_GAMES.value} games, seats alternating", flush=True)
  if settings_note:
    print(settings_note, flush=True)
  returns, seats = [], []
  started = time.perf_counter()
  progress = monitoring.Progress("  match", _GAMES.value, unit="game")
  for g in range(_GAMES.value):
    seat, seed = g % 2, _SEED.value + g
    bots = [None, None]
    bots[seat] = bot_lib.SoGBot(agent, seat, seed=seed)
    bots[1 - seat] = opponent_bot(_OPPONENT.value, os_game, 1 - seat, _OPPONENT_SIMULATIONS.value,
                                  _UCT_C.value, seed)
    outcome = evaluate_bots.evaluate_bots(os_game.new_initial_state(), bots,
                                          np.random.RandomState(seed))
    returns.append(float(outcome[seat]))
    seats.append(seat)
    so_far = _tally(np.asarray(returns))
    progress.update(g + 1, f"{so_far['wins']} wins, {so_far['draws']} draws, "
                           f"{so_far['losses']} losses")
  progress.close()
  returns, seats = np.asarray(returns), np.asarray(seats)
  whole = _tally(returns)
  per_seat = {f"as_player_{p}": _tally(returns[seats == p]) for p in (0, 1)}
  for label, t in [("all", whole)] + list(per_seat.items()):
    print(f"{label:>12}: {t['wins']} wins, {t['draws']} draws, {t['losses']} losses "
          f"(mean return {t['mean_return']:+.3f}) in {t['games']} games")
  print(json.dumps({"game": game.name, **whole, **per_seat, "agent": name,
                    "opponent": _OPPONENT.value, "opponent_simulations": _OPPONENT_SIMULATIONS.value,
                    "uct_c": _UCT_C.value, "seconds": time.perf_counter() - started,
                    **_LEAF.record()}))


if __name__ == "__main__":
  app.run(main)
