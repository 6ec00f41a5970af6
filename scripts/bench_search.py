"""GT-CFR search speed with a CVPN leaf model, against our CFR+ on a tree of the same size and against
OpenSpiel's IS-MCTS with as many simulations.

  python scripts/bench_search.py [--games=leduc_poker,scotland_yard(map=glasses)] [--sims=100,1000]

Per game and SoG(s, 1): seconds per search (one search, and per search in a vmapped batch of 32;
compilation excluded), public states grown, leaf-model (network) calls and PBSs evaluated, and
``iteration_cost_ratio``: the time of one GT-CFR iteration (CFR update + expansion simulation)
divided by one CFR+ iteration (simultaneous, same CVPN valuing the same leaves) on the search's final
tree, fixed. The network is an untrained CVPN of the default size (timing does not depend on its
weights). Ends with one JSON line.
"""

import json
import time

from absl import app
from absl import flags
import jax
import numpy as np
import pyspiel

import common
import sog.games
from sog.openspiel import bridge as openspiel_bridge
from sog.search import gtcfr
from sog.search import solver as solver_lib

_GAMES = flags.DEFINE_list("games", ["leduc_poker", "scotland_yard(map=glasses)"], "Games.")
_SIMS = flags.DEFINE_list("sims", ["100", "1000"], "Values of s (c = 1).")
_BATCH = flags.DEFINE_integer("batch", 32, "Searches in the vmapped batch.", lower_bound=1)
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed single searches (best of).", lower_bound=1)


def _timed(fn, repeats: int) -> tuple[float, object]:
  best, out = float("inf"), None
  for _ in range(repeats):
    start = time.perf_counter()
    out = jax.block_until_ready(fn())
    best = min(best, time.perf_counter() - start)
  return best, out


def _grown_tree(tree: sog.games.PublicTree, result: gtcfr.SearchResult) -> sog.games.PublicTree:
  """The search's final tree as a depth-limited tree (frontier leaves as leaves)."""
  in_tree = np.asarray(result.in_tree)
  keep = np.flatnonzero(in_tree)
  leaves = gtcfr.frontier_mask(tree.kind, in_tree, np.asarray(result.expanded))
  return tree.limited(keep, leaves[keep])


def _cfr_iteration_seconds(tree: sog.games.PublicTree, model) -> float:
  solver = solver_lib.Solver(tree, "simultaneous", model if tree.is_leaf.any() else None)
  ranges = solver.root_ranges(None)
  solver.compile(ranges)
  iterations = 200
  seconds, _ = _timed(lambda: solver.run(solver.init(), ranges, iterations)[0], 2)
  return seconds / iterations


def _ismcts_seconds(game: sog.games.Game, simulations: int) -> float | None:
  """OpenSpiel's C++ IS-MCTS (random rollouts) choosing the first move with ``simulations``; None
  for games OpenSpiel only has in Python (our registered Scotland Yard)."""
  if game.name.startswith("scotland_yard"):
    return None
  game = openspiel_bridge.openspiel_game(game)
  evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
  bot = pyspiel.ISMCTSBot(0, evaluator, 2.0, simulations, -1,
                          pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT, False, False)
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  seconds, _ = _timed(lambda: bot.step(state), 3)
  return seconds


def main(argv):
  del argv
  results = {}
  print(f"{'game':>28} {'SoG':>10} {'s/search':>9} {'batched':>9} {'nodes':>6} {'calls':>6} "
        f"{'PBSs':>8} {'cost ratio':>10} {'IS-MCTS s':>9}")
  for name in _GAMES.value:
    game = common.load_game(name)
    model = common.leaf_model("untrained", game)
    for sims in (int(x) for x in _SIMS.value):
      config = gtcfr.GTCFRConfig(simulations=sims)
      searcher = gtcfr.GTCFR(game, model, config)
      rng = jax.random.PRNGKey(1)
      start = time.perf_counter()
      jax.block_until_ready(searcher.search(rng))
      compile_seconds = time.perf_counter() - start
      single, result = _timed(lambda: searcher.search(rng), _REPEATS.value)
      rngs = jax.random.split(rng, _BATCH.value)
      jax.block_until_ready(searcher.search_batch(rngs))
      batched, _ = _timed(lambda: searcher.search_batch(rngs), 1)
      iterations = config.phases * config.updates_per_phase
      ratio = (single / iterations) / _cfr_iteration_seconds(_grown_tree(game.tree, result), model)
      ismcts = _ismcts_seconds(game, sims)
      row = {"seconds_per_search": single,
             f"seconds_per_search_batched{_BATCH.value}": batched / _BATCH.value,
             "nodes": int(result.nodes), "network_calls": int(result.leaf_calls),
             "pbs_evaluated": int(result.leaf_evaluations), "iteration_cost_ratio": ratio,
             "leaf_capacity": searcher.capacity, "compile_seconds": compile_seconds,
             "ismcts_seconds": ismcts}
      results.setdefault(name, {})[f"SoG({sims},1)"] = row
      print(f"{name:>28} {f'({sims},1)':>10} {single:>9.3f} {batched / _BATCH.value:>9.3f} "
            f"{row['nodes']:>6} {row['network_calls']:>6} {row['pbs_evaluated']:>8} "
            f"{ratio:>10.2f} " + (f"{ismcts:>9.3f}" if ismcts is not None else f"{'-':>9}"))
  print("cost ratio: one GT-CFR iteration / one CFR+ iteration (same CVPN leaves) on the final tree; "
        "IS-MCTS: OpenSpiel C++ with random rollouts, same number of simulations, first move")
  print(json.dumps(results))


if __name__ == "__main__":
  app.run(main)
