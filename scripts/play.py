"""Head-to-head games: the SoG agent against an OpenSpiel bot, seats swapped game by game.

  python scripts/play.py --game=connect_four \
      --leaf="checkpoints/connect_four(rows=3,columns=3,x_in_row=3)" --opponent=mcts --games=100
  python scripts/play.py --game=leduc_poker --leaf=checkpoints/leduc_poker --opponent=ismcts \
      --games=200

The agent (``sog.search.SoGAgent`` as an OpenSpiel bot, ``sog.openspiel.SoGBot``) re-solves every
one of its decisions with SoG(s, c) from its last search (--sims takes one value; the search,
re-solving and leaf flags are the shared ones of ``scripts/common.py``). Game g seats the agent as
player g mod 2. Opponents, OpenSpiel's own bots:

  * mcts: ``MCTSBot`` with random-rollout evaluation (one rollout a leaf), UCT constant --uct_c,
    --opponent_simulations simulations a move, MCTS-Solver on (OpenSpiel's defaults); perfect
    information only;
  * ismcts: ``ISMCTSBot`` with the same evaluator, for imperfect-information games;
  * pimc: determinized MCTS in JAX (``sog.search.pimc``, the family of Scotland Yard's PimBot):
    --pimc_worlds worlds drawn from what the public history allows, each searched by mctx with
    random rollouts, --opponent_simulations a move over all of them, the most visited action;
  * random: ``UniformRandomBot``.

The agent's searches run on the belief pool (``sog.search.pool.GTCFR``: each grows its own
tree from its re-solving root, nothing enumerated); --float64 searches in float64.

In a perfect-information game SoG plays the most probable action of its policy, in an
imperfect-information game it draws its action from the policy (sound play); --sample or --nosample
chooses for any game.

A pgx game (``--game=pgx/tic_tac_toe``, ``pgx/connect_four``) is searched on the belief pool from
the state it is at (perfect information: no re-solving); its opponents add

  * mctx: AlphaZero's PUCT MCTS from mctx with the same leaf model and the same number of
    simulations (--sims), playing its most visited action (``sog.search.alphazero``);
  * minimax: perfect play (tic-tac-toe), an optimal action at random;

and mcts is OpenSpiel's C++ ``MCTSBot`` there, with the Python bot's settings (random rollouts,
MCTS-Solver on), which a 6 x 7 board needs for time.

  python scripts/play.py --game=pgx/tic_tac_toe --leaf=zeros --sims=100 --opponent=minimax \
      --games=20
  python scripts/play.py --game=pgx/connect_four --leaf=checkpoints/pgx/connect_four \
      --opponent=mctx

For a pgx game --leaf is ``zeros`` or a checkpoint trained by self-play on it
(``configs/pgx_*.py``), which mctx's search then uses too.

A game is a win, draw or loss by the sign of the agent's return. Prints progress and a summary and
ends with one JSON line: game, games, wins, draws, losses, per seat, the mean return, and the win
rate (a draw counts half) with its 95% Wilson interval.
"""

import json
import pathlib
import time

from absl import app
from absl import flags
from absl import logging
import numpy as np
from open_spiel.python.algorithms import evaluate_bots
from open_spiel.python.algorithms import ismcts
from open_spiel.python.algorithms import mcts
import pyspiel

import common
from sog import monitoring
from sog.games import pgx_games
from sog.games import registry
from sog.nets import checkpoint
from sog.openspiel import bot as bot_lib
from sog.openspiel import bridge
from sog.openspiel import pgx_bots
from sog.search import agent as agent_lib
from sog.search import alphazero
from sog.search import leaf_models
from sog.search import pimc
from sog.search import pool

OPPONENTS = ("mcts", "ismcts", "pimc", "random", "mctx", "minimax")
PGX_OPPONENTS = ("mctx", "minimax")

_GAME = flags.DEFINE_string(
  "game",
  "connect_four",
  "Game name (one with an OpenSpiel counterpart, or pgx/tic_tac_toe, pgx/connect_four).",
)
_SEARCH = common.define_search_flags(sims=["100"])
_PROTOCOL = common.define_protocol_flags()
_LEAF = common.define_leaf_flags(leaf="zeros")
_PRECISION = common.define_precision_flags()
_OPPONENT = flags.DEFINE_enum("opponent", "mcts", list(OPPONENTS), "The OpenSpiel bot to play.")
_GAMES = flags.DEFINE_integer("games", 100, "Games to play (seats alternate).", lower_bound=1)
_OPPONENT_SIMULATIONS = flags.DEFINE_integer(
  "opponent_simulations",
  1000,
  "Simulations a move of (IS-)MCTS, or of PIMC over all its worlds.",
  lower_bound=1,
)
_PIMC_WORLDS = flags.DEFINE_integer(
  "pimc_worlds", 10, "Worlds PIMC searches a move (--opponent=pimc).", lower_bound=1
)
_UCT_C = flags.DEFINE_float("uct_c", 2.0, "UCT exploration constant of (IS-)MCTS.", lower_bound=0.0)
_SEED = flags.DEFINE_integer("seed", 0, "Seeds both players' randomness (game g uses seed + g).")
_SAMPLE = flags.DEFINE_bool(
  "sample",
  None,
  "SoG draws its action from its re-solved policy (its sound play) instead of playing the most "
  "probable action. Default: it draws in imperfect-information games and plays the most probable "
  "action in perfect-information ones, as AlphaZero-style players are evaluated.",
)
flags.adopt_module_key_flags(common)  # --help lists the shared flags too


class _ISMCTSBot(ismcts.ISMCTSBot):
  """OpenSpiel's IS-MCTS bot, restartable: it builds its search tree anew at every move, so a new
  game needs nothing (its own ``restart_at`` is not implemented, and ``evaluate_bots`` calls it)."""

  def restart_at(self, state: pyspiel.State) -> None:
    del state


def opponent_bot(
  name: str, os_game: pyspiel.Game, player: int, simulations: int, uct_c: float, seed: int
) -> pyspiel.Bot:
  """OpenSpiel's bot ``name`` for seat ``player`` (``ValueError`` where it does not fit)."""
  rng = np.random.RandomState(seed)
  perfect = os_game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION
  if name == "random":
    return pyspiel.make_uniform_random_bot(player, seed)
  evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
  if name == "mcts":
    if not perfect:
      raise ValueError(
        f"--opponent=mcts needs a perfect-information game; {os_game} is not (use ismcts or random)"
      )
    return mcts.MCTSBot(os_game, uct_c, simulations, evaluator, random_state=rng)
  if name == "ismcts":
    return _ISMCTSBot(os_game, evaluator, uct_c, simulations, random_state=rng)
  if name in PGX_OPPONENTS:
    raise ValueError(
      f"--opponent={name} plays pgx games only (--game=pgx/...); valid opponents "
      f"here: mcts, ismcts, pimc, random"
    )
  raise ValueError(f"unknown opponent {name!r}; valid opponents: {', '.join(OPPONENTS)}")


def wilson_interval(rate: float, games: int, z: float = 1.96) -> tuple[float, float]:
  """The Wilson score interval of a win rate over ``games`` games (95% at the default z)."""
  if games == 0:
    return 0.0, 1.0
  centre = (rate + z * z / (2 * games)) / (1 + z * z / games)
  half = z * np.sqrt(rate * (1 - rate) / games + z * z / (4 * games * games)) / (1 + z * z / games)
  return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def _tally(returns: np.ndarray) -> dict:
  """Wins, draws and losses by the sign of the agent's returns, their mean, and the win rate (a
  draw counts half) with its 95% Wilson interval."""
  wins, draws = int((returns > 0).sum()), int((returns == 0).sum())
  rate = (wins + draws / 2) / returns.size if returns.size else 0.0
  return {
    "games": int(returns.size),
    "wins": wins,
    "draws": draws,
    "losses": int((returns < 0).sum()),
    "mean_return": float(returns.mean()) if returns.size else 0.0,
    "win_rate": rate,
    "win_rate_95": list(wilson_interval(rate, int(returns.size))),
  }


def _pgx_opponent(
  name: str,
  game: registry.Game,
  os_game: pyspiel.Game,
  leaf: leaf_models.LeafModel,
  simulations: int,
  player: int,
  seed: int,
) -> pyspiel.Bot:
  """A pgx game's opponent: mctx with SoG's leaf model and simulations, minimax, or OpenSpiel's."""
  if name == "mctx":
    return pgx_bots.AlphaZeroBot(_alphazero(game, leaf, simulations), player, seed)
  if name == "minimax":
    if game.name not in pgx_bots.SOLVABLE:
      raise ValueError(
        f"--opponent=minimax needs a game small enough to solve here: "
        f"{', '.join(pgx_bots.SOLVABLE)}; got {game.name}"
      )
    return pgx_bots.MinimaxBot(os_game, player, seed)
  if name in ("ismcts", "pimc"):
    raise ValueError(
      f"--opponent={name} draws worlds of imperfect-information games, and a pgx game has one; "
      "valid opponents of a pgx game: mcts, mctx, minimax, random"
    )
  if name == "mcts":  # OpenSpiel's C++ MCTS: the Python bot's settings at a fraction of its time
    evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
    return pyspiel.MCTSBot(
      os_game, evaluator, _UCT_C.value, _OPPONENT_SIMULATIONS.value, 10**4, True, seed, False
    )
  return opponent_bot(name, os_game, player, _OPPONENT_SIMULATIONS.value, _UCT_C.value, seed)


_ALPHAZERO = {}


def _pgx_leaf(spec: str, game: registry.Game) -> leaf_models.LeafModel:
  """--leaf for a pgx game: "zeros" or a checkpoint of a network trained on it."""
  if spec == "zeros":
    return leaf_models.zero_leaf_model()
  if not pathlib.Path(spec).is_dir():
    raise ValueError(
      f"--leaf={spec}: a pgx game's leaf is zeros or a checkpoint directory of a "
      f"network trained on {game.name} (scripts/train.py --config=configs/pgx_...)"
    )
  return checkpoint.restore_leaf_model(spec, game.name)


def _alphazero(game, leaf, simulations) -> alphazero.AlphaZero:
  key = (game.name, simulations)
  if key not in _ALPHAZERO:
    _ALPHAZERO[key] = alphazero.AlphaZero(game, leaf, simulations)
  return _ALPHAZERO[key]


def _players(simulations: int, config):
  """Prints the match's header; returns the game's name, OpenSpiel's game, the agent's name, whether
  it samples its actions, and makers of both bots, ``(seat, seed) -> pyspiel.Bot``."""
  opponent_simulations = simulations if _OPPONENT.value == "mctx" else _OPPONENT_SIMULATIONS.value
  opponent = _OPPONENT.value + (
    "" if _OPPONENT.value in ("random", "minimax") else f"({opponent_simulations} simulations)"
  )
  name = f"SoG({simulations},{config.simulations_per_phase:g})"
  if pgx_games.is_pgx_name(_GAME.value):
    if _PRECISION.float64.present:
      raise ValueError(
        "--float64: a pgx game is searched in float32 (its shipped networks and mctx's search "
        "are float32); the flag sets the precision of the other games' searches"
      )
    game = common.load_game(_GAME.value, enumerated=False)
    os_game = pgx_bots.openspiel_game(game)
    leaf = _pgx_leaf(_LEAF.leaf.value, game)
    _pgx_opponent(_OPPONENT.value, game, os_game, leaf, 1, 1, 0)  # fail before anything compiles
    searcher = pool.GTCFR(game, leaf, config)
    sample = bool(_SAMPLE.value)  # pgx's games here have perfect information
    print(
      f"{game.name}: {name} on the belief pool (leaf={_LEAF.leaf.value}, k={searcher.k}, "
      f"{_play_kind(sample)}) against {opponent}, {_GAMES.value} games, seats alternating",
      flush=True,
    )
    return (
      game.name,
      os_game,
      name,
      sample,
      lambda seat, seed: pgx_bots.SoGBot(searcher, seat, seed, sample),
      lambda seat, seed: _pgx_opponent(
        _OPPONENT.value, game, os_game, leaf, simulations, seat, seed
      ),
    )
  dtype = _PRECISION.dtype()  # (float64 switches JAX's x64 mode on before anything is built)
  game = common.load_game(_GAME.value, enumerated=False)  # the agent searches without enumeration
  os_game = bridge.openspiel_game(game)  # a clear ValueError for games OpenSpiel lacks
  if _OPPONENT.value == "pimc":
    player = pimc.PIMC(game, _OPPONENT_SIMULATIONS.value, _PIMC_WORLDS.value)
    opponent = f"pimc({_OPPONENT_SIMULATIONS.value} simulations over {_PIMC_WORLDS.value} worlds)"

    def opponent_of(seat, seed):
      return bot_lib.PIMCBot(player, seat, seed)
  else:
    opponent_bot(_OPPONENT.value, os_game, 1, 1, _UCT_C.value, 0)  # fail before anything compiles

    def opponent_of(seat, seed):
      return opponent_bot(
        _OPPONENT.value, os_game, seat, _OPPONENT_SIMULATIONS.value, _UCT_C.value, seed
      )

  agent = agent_lib.SoGAgent(
    game, _LEAF.model(game), config, _PROTOCOL.resolving_config(), dtype=dtype
  )
  resolving = agent.resolving_config
  sample = not agent.perfect_information if _SAMPLE.value is None else _SAMPLE.value
  print(
    f"{game.name}: {name} on the belief pool ({_LEAF.describe()}; "
    f"{f'safe (alpha={resolving.alpha:g})' if resolving.safe else 'unsafe'} re-solving, "
    f"{_play_kind(sample)}) against {opponent}, {_GAMES.value} games, seats alternating",
    flush=True,
  )
  return (
    game.name,
    os_game,
    name,
    sample,
    lambda seat, seed: bot_lib.SoGBot(agent, seat, seed=seed, sample=sample),
    opponent_of,
  )


def _play_kind(sample: bool) -> str:
  return "drawing its action from its policy" if sample else "playing its most probable action"


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)
  settings_note = common.apply_checkpoint_settings(
    _LEAF.leaf.value,
    ("search",) if pgx_games.is_pgx_name(_GAME.value) else ("search", "resolving"),
  )
  sims = _SEARCH.simulations()
  if len(sims) != 1:
    raise ValueError(f"--sims: play takes one value of s, got {sims}")
  config = _SEARCH.config(sims[0])
  game_name, os_game, name, sample, agent_bot, opponent_of = _players(sims[0], config)
  if settings_note:
    print(settings_note, flush=True)
  returns, seats = [], []
  started = time.perf_counter()
  progress = monitoring.Progress("  match", _GAMES.value, unit="game")
  for g in range(_GAMES.value):
    seat, seed = g % 2, _SEED.value + g
    bots = [None, None]
    bots[seat] = agent_bot(seat, seed)
    bots[1 - seat] = opponent_of(1 - seat, seed)
    outcome = evaluate_bots.evaluate_bots(
      os_game.new_initial_state(), bots, np.random.RandomState(seed)
    )
    returns.append(float(outcome[seat]))
    seats.append(seat)
    so_far = _tally(np.asarray(returns))
    progress.update(
      g + 1, f"{so_far['wins']} wins, {so_far['draws']} draws, {so_far['losses']} losses"
    )
  progress.close()
  returns, seats = np.asarray(returns), np.asarray(seats)
  whole = _tally(returns)
  per_seat = {f"as_player_{p}": _tally(returns[seats == p]) for p in (0, 1)}
  for label, t in [("all", whole), *per_seat.items()]:
    print(
      f"{label:>12}: {t['wins']} wins, {t['draws']} draws, {t['losses']} losses "
      f"(mean return {t['mean_return']:+.3f}; win rate {t['win_rate']:.3f}, 95% "
      f"{t['win_rate_95'][0]:.3f}-{t['win_rate_95'][1]:.3f}) in {t['games']} games"
    )
  print(
    json.dumps(
      {
        "game": game_name,
        **whole,
        **per_seat,
        "agent": name,
        "opponent": _OPPONENT.value,
        "opponent_simulations": {"mctx": sims[0], "random": None, "minimax": None}.get(
          _OPPONENT.value, _OPPONENT_SIMULATIONS.value
        ),
        "uct_c": _UCT_C.value,
        **({"pimc_worlds": _PIMC_WORLDS.value} if _OPPONENT.value == "pimc" else {}),
        "sample": sample,
        "seconds": time.perf_counter() - started,
        **_SEARCH.record(),
        **_LEAF.record(),
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
