"""GT-CFR's soundness with an exact leaf oracle (SoG, Theorem 1): exploitability against s.

  python scripts/gtcfr_soundness.py --game=leduc_poker --sims=10,100,1000,10000 --seeds=3 \
      --plot=out/gtcfr_soundness_leduc.png

For each s, runs SoG(s, c) searches from the game's root (one vmapped batch of --seeds searches, the
exact oracle valuing the frontier) and measures the exact exploitability of each search's completed
policy two ways (see ``GTCFR.completed_policy``): "resolve" (below every frontier leaf, a solve at its
final ranges) and "average" (the average of the strategies each iteration played, the oracle's below
the frontier). Prints min / mean / max per s, ends with one JSON line.
"""

import json
import time

from absl import app
from absl import flags
import jax
import numpy as np

import sog.games
from sog import plotting
from sog.search import cfr
from sog.search import gtcfr
from sog.search import leaf_models

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name.")
_SIMS = flags.DEFINE_list("sims", ["10", "100", "1000", "10000"], "Values of s.")
_C = flags.DEFINE_float("c", 1.0, "Simulations per CFR phase (c).")
_SEEDS = flags.DEFINE_integer("seeds", 3, "Searches per s (one vmapped batch).", lower_bound=1)
_ORACLE_ITERATIONS = flags.DEFINE_integer("oracle_iterations", 100,
                                          "CFR+ iterations of each exact-oracle solve.", lower_bound=1)
_ORACLE_WARM_START = flags.DEFINE_bool("oracle_warm_start", False,
                                       "Each oracle call continues the search's previous call's solve.")
_EVAL_ITERATIONS = flags.DEFINE_integer("eval_iterations", 1000,
                                        "CFR+ iterations of the re-solves below the frontier.",
                                        lower_bound=1)
_UPDATES = flags.DEFINE_enum("updates", gtcfr.GTCFRConfig.updates, cfr.UPDATES,
                              "GT-CFR's CFR+ updates (default: the library's).")
_PLOT = flags.DEFINE_string("plot", None, "Write exploitability against s as a PNG here.")

_METHODS = ("resolve", "average")


def main(argv):
  del argv
  game = sog.games.load(_GAME.value)
  oracle = leaf_models.exact_leaf_model(_ORACLE_ITERATIONS.value,
                                        warm_start=_ORACLE_WARM_START.value)
  print(f"{game.name}: GT-CFR SoG(s, {_C.value:g}), {_UPDATES.value} updates, exact oracle "
        f"({_ORACLE_ITERATIONS.value} CFR+ iterations per solve"
        f"{', warm-started' if _ORACLE_WARM_START.value else ''}), {_SEEDS.value} seeds")
  print(f"{'s':>6} {'nodes':>7} " + " ".join(f"{m + ' min/mean/max':>34}" for m in _METHODS)
        + f" {'s/search':>9}")
  rows = []
  for sims in (int(x) for x in _SIMS.value):
    config = gtcfr.GTCFRConfig(simulations=sims, simulations_per_phase=_C.value,
                               updates=_UPDATES.value)
    searcher = gtcfr.GTCFR(game, oracle, config)
    rngs = jax.random.split(jax.random.PRNGKey(sims), _SEEDS.value)
    start = time.perf_counter()
    results = jax.block_until_ready(searcher.search_batch(rngs))
    seconds = (time.perf_counter() - start) / _SEEDS.value  # includes compilation
    measured = {m: [] for m in _METHODS}
    for i in range(_SEEDS.value):
      one = jax.tree_util.tree_map(lambda x, i=i: x[i], results)
      for method in _METHODS:
        measured[method].append(searcher.exploitability(one, _EVAL_ITERATIONS.value, method))
    stats = {m: {"min": min(v), "mean": float(np.mean(v)), "max": max(v)}
             for m, v in measured.items()}
    nodes = float(np.mean(np.asarray(results.nodes)))
    rows.append({"sims": sims, "nodes": nodes, "seconds_per_search": seconds, **stats})
    print(f"{sims:>6} {nodes:>7.0f} " + " ".join(
        f"{stats[m]['min']:>10.3g} {stats[m]['mean']:>11.3g} {stats[m]['max']:>11.3g}"
        for m in _METHODS) + f" {seconds:>9.2f}")
  if _PLOT.value:
    sims = [r["sims"] for r in rows]
    plotting.line_plot(_PLOT.value, {m: (sims, [r[m]["mean"] for r in rows]) for m in _METHODS},
                       f"{game.name}: GT-CFR SoG(s, {_C.value:g}) with an exact oracle "
                       f"({_UPDATES.value}), mean of {_SEEDS.value}", "simulations s",
                       "exploitability of the completed policy", logx=True)
  print(json.dumps({"game": game.name, "c": _C.value, "updates": _UPDATES.value,
                    "seeds": _SEEDS.value, "oracle_iterations": _ORACLE_ITERATIONS.value,
                    "oracle_warm_start": _ORACLE_WARM_START.value,
                    "results": rows}))


if __name__ == "__main__":
  app.run(main)
