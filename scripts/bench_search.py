"""GT-CFR search speed with a CVPN leaf model, against our CFR+ on a tree of the same size and
against OpenSpiel's IS-MCTS (MCTS for perfect-information games) with as many simulations.

  python scripts/bench_search.py [--games=leduc_poker,scotland_yard(map=glasses)] [--sims=100,1000]
  python scripts/bench_search.py --games=leduc_poker,pgx/tic_tac_toe --sims=100

Per game and SoG(s, 1), searching at the game's first decision (its root, or below a public chance
root the first outcome of each chance node: the real Scotland Yard board's detectives draw their
start cards first): seconds per search (one search, and per search in a vmapped batch of 32;
compilation excluded), public states grown, leaf-model (network) calls on the frontier and PBSs
evaluated there, the one-row calls its expansions made for new interior nodes' priors, and
``cost_ratio``: the time of one GT-CFR iteration (CFR update + expansion simulation) divided by one
CFR+ iteration with the same updates (alternating by default: two passes and two leaf-model calls;
the same CVPN valuing the same leaves) on the search's final tree, fixed.
The network is an untrained CVPN of the default size (timing does not depend on its weights);
``--leaf=zeros`` times the same searches with the zero leaf model instead, so that the two runs'
difference is the network's share of a search.

Every game is searched on the belief pool (:class:`sog.search.pool.GTCFR`, nothing
enumerated, passes over the grown tree only), whose ``cost_ratio`` divides a GT-CFR iteration by
one CFR+ update (the same passes and leaf-model calls) of the final pool tree. The table search's
numbers come from a commit before it left the library (``--engine=tables`` there); ``farm-bench``
pairs the two commits.

A pgx game (``pgx/tic_tac_toe``) is searched with the zero leaf model, and timed against mctx's
AlphaZero search (``mctx.muzero_policy``, same leaf model, same simulations, single and batched)
and OpenSpiel's C++ MCTS (random rollouts) where OpenSpiel has the game. (Before issue 48's part
11 a pgx game was searched on the perfect-information node pool, ``sog.search.pool.PoolGTCFR``;
``farm-bench`` pairs the two commits.)
Ends with one JSON line.
"""

import json
import time

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np
import pyspiel

import common
import sog.games
from sog.games import pgx_games
from sog.games import public_game
from sog.openspiel import bridge as openspiel_bridge
from sog.openspiel import pgx_bots
from sog.search import alphazero
from sog.search import leaf_models
from sog.search import pool
from sog.search import types as search_types
from sog.search.pool import belief_paths
from sog.search.pool import belief_search
from sog.search.pool import belief_state
from sog.search.pool import belief_update
from sog.search.pool import beliefs

_GAMES = flags.DEFINE_list("games", ["leduc_poker", "scotland_yard(map=glasses)"], "Games.")
_SIMS = flags.DEFINE_list("sims", ["100", "1000"], "Values of s (c = 1).")
_BATCH = flags.DEFINE_integer("batch", 32, "Searches in the vmapped batch.", lower_bound=1)
_CAPACITY = flags.DEFINE_integer(
  "capacity",
  None,
  "The pool's slots (default: the most s simulations can add, belief_search.node_capacity; a "
  "game with many child slots, the real board's 1,991, needs a smaller one).",
  lower_bound=1,
)
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed single searches (best of).", lower_bound=1)
_LEAF = flags.DEFINE_enum(
  "leaf",
  "untrained",
  ["untrained", "zeros"],
  "The imperfect-information games' leaf model: an untrained CVPN, or the zero leaf (pgx games "
  "always search with the zero leaf).",
)


def _timed(fn, repeats: int) -> tuple[float, object]:
  best, out = float("inf"), None
  for _ in range(repeats):
    start = time.perf_counter()
    out = jax.block_until_ready(fn())
    best = min(best, time.perf_counter() - start)
  return best, out


def _peer_seconds(game: sog.games.Game, simulations: int) -> float | None:
  """OpenSpiel's C++ MCTS (perfect information) or IS-MCTS (imperfect), random rollouts, choosing
  the first move with ``simulations``; None for games OpenSpiel only has in Python (our registered
  Scotland Yard) or lacks."""
  if pgx_games.is_pgx_name(game.name):
    if game.name not in pgx_bots.OPENSPIEL_NAMES:
      return None
    os_game = pgx_bots.openspiel_game(game)
  elif game.name.startswith("scotland_yard"):
    return None
  else:
    os_game = openspiel_bridge.openspiel_game(game)
  evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
  if os_game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION:
    bot = pyspiel.MCTSBot(os_game, evaluator, 2.0, simulations, 10**7, False, 0, False)
  else:
    bot = pyspiel.ISMCTSBot(
      0,
      evaluator,
      2.0,
      simulations,
      -1,
      pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT,
      False,
      False,
    )
  state = os_game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  seconds, _ = _timed(lambda: bot.step(state), 3)
  return seconds


def _first_decision(game: public_game.PublicGame, dtype) -> belief_state.BeliefStart:
  """A plain search's start at the game's first decision: the root, or below a public chance root
  the first outcome of each chance node, with the pair weight the draws leave (the deal's priors
  as ranges, on the infostates still possible)."""
  path, state = [], game.root()
  while int(game.kind(state)) == public_game.CHANCE:
    path.append(int(np.argmax(np.asarray(game.transitions(state).present))))
    state = game.child(state, path[-1])
  state, weight = belief_paths.along(game, belief_paths.padded_path(path, len(path)), dtype)
  ranges = public_game.prior_ranges(game) * np.asarray(beliefs.valid_infostates(weight[None])[0])
  return belief_search.root_start(game, ranges, dtype).replace(state=state, weight=weight)


def _time_searcher(searcher, start, rng) -> dict:
  """A searcher's first (compiling) search, best single search and per-search time in a batch."""
  begin = time.perf_counter()
  jax.block_until_ready(searcher.search_from(rng, start))
  compile_seconds = time.perf_counter() - begin
  single, result = _timed(lambda: searcher.search_from(rng, start), _REPEATS.value)
  rngs = jax.random.split(rng, _BATCH.value)
  starts = jax.tree.map(lambda x: jnp.broadcast_to(x, (_BATCH.value, *jnp.shape(x))), start)
  jax.block_until_ready(searcher.search_from_batch(rngs, starts))
  batched, _ = _timed(lambda: searcher.search_from_batch(rngs, starts), 1)
  return {
    "seconds_per_search": single,
    f"seconds_per_search_batched{_BATCH.value}": batched / _BATCH.value,
    "compile_seconds": compile_seconds,
    "result": result,
  }


def _belief_row(game: sog.games.Game, sims: int) -> dict:
  """A game searched on the belief pool; ``cost_ratio`` against one CFR+ update of its final tree
  (the same passes, the same leaf-model calls on the final frontier)."""
  pgx = pgx_games.is_pgx_name(game.name)
  model = leaf_models.zero_leaf_model() if pgx else common.leaf_model(_LEAF.value, game)
  config = search_types.GTCFRConfig(simulations=sims)
  searcher = pool.GTCFR(game, model, config, capacity=_CAPACITY.value)
  rng = jax.random.PRNGKey(1)
  start = _first_decision(searcher.game, searcher.dtype)
  row = _time_searcher(searcher, start, rng)
  result = row.pop("result")
  public = searcher.game
  apply = model.apply
  batches = searcher.leaf_batches
  final = belief_search.init(
    public,
    searcher.capacity,
    apply,
    model.params,
    rng,
    start,
    config,
    model.init(searcher.empty, start),
  ).replace(tree=result.tree)
  updates = 100
  update = jax.jit(
    lambda params, state: (
      jax.lax.fori_loop(
        0,
        updates,
        lambda _, s: belief_update.cfr_update(
          apply, params, s, config, batches, public.utility_scale
        ),
        state,
      ).cfr.regrets
    )
  )
  jax.block_until_ready(update(model.params, final))
  update_seconds, _ = _timed(lambda: update(model.params, final), 2)
  iterations = config.phases * config.updates_per_phase
  return {
    **row,
    "nodes": int(result.nodes),
    "network_calls": int(result.leaf_calls),
    "prior_calls": int(result.prior_calls),
    "pbs_evaluated": int(result.leaf_evaluations),
    "cost_ratio": (row["seconds_per_search"] / iterations) / (update_seconds / updates),
    "capacity": searcher.capacity,
    "leaf": "zeros" if pgx else _LEAF.value,
    "peer_seconds": _peer_seconds(game, sims),
    **(_mctx_columns(game, model, sims) if pgx else {}),
  }


def _mctx_columns(game: sog.games.Game, model, sims: int) -> dict:
  """mctx's AlphaZero search (muzero_policy) of a pgx game with SoG's leaf model and simulations,
  one search and per search in a batch, from the initial state."""
  rng = jax.random.PRNGKey(1)
  mctx_search = alphazero.AlphaZero(game, model, sims)
  root = game.public_game.root()
  roots = jax.tree.map(lambda x: jnp.broadcast_to(x, (_BATCH.value, *jnp.shape(x))), root)
  one_root = jax.tree.map(lambda x: x[:1], roots)
  jax.block_until_ready(mctx_search.search(rng, one_root).action_weights)
  mctx_single, _ = _timed(lambda: mctx_search.search(rng, one_root).action_weights, _REPEATS.value)
  jax.block_until_ready(mctx_search.search(rng, roots).action_weights)
  mctx_batched, _ = _timed(lambda: mctx_search.search(rng, roots).action_weights, 1)
  return {
    "mctx_seconds_per_search": mctx_single,
    f"mctx_seconds_per_search_batched{_BATCH.value}": mctx_batched / _BATCH.value,
  }


def main(argv):
  del argv
  results = {}
  print(
    f"{'game':>28} {'SoG':>10} {'s/search':>9} {'batched':>9} {'nodes':>6} {'calls':>6} "
    f"{'PBSs':>8} {'priors':>6} {'cost ratio':>10} {'peer s':>9} {'mctx s':>9}"
  )
  for name in _GAMES.value:
    game = common.load_game(name, enumerated=False)
    for sims in (int(x) for x in _SIMS.value):
      row = _belief_row(game, sims)
      results.setdefault(name, {})[f"SoG({sims},1)"] = row
      peer, mctx_seconds = row["peer_seconds"], row.get("mctx_seconds_per_search")
      print(
        f"{name:>28} {f'({sims},1)':>10} {row['seconds_per_search']:>9.4f} "
        f"{row[f'seconds_per_search_batched{_BATCH.value}']:>9.4f} {row['nodes']:>6} "
        f"{row['network_calls']:>6} {row['pbs_evaluated']:>8} {row['prior_calls']:>6} "
        f"{row['cost_ratio']:>10.2f} "
        + (f"{peer:>9.4f}" if peer is not None else f"{'-':>9}")
        + (f" {mctx_seconds:>9.4f}" if mctx_seconds is not None else f" {'-':>9}")
      )
  print(
    "cost ratio: one GT-CFR iteration / one CFR+ iteration (same leaves) on the final tree; "
    "peer: OpenSpiel C++ MCTS (perfect information) or IS-MCTS with random rollouts, same "
    "number of simulations, first move; mctx: muzero_policy, same leaf model (pgx games)"
  )
  print(json.dumps(results))


if __name__ == "__main__":
  app.run(main)
