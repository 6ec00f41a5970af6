"""GT-CFR's soundness with an exact leaf oracle (SoG, Theorem 1): exploitability against s.

  python scripts/gtcfr_soundness.py --game=leduc_poker --sims=10,100,1000,10000 --seeds=3 \
      --plot=out/gtcfr_soundness_leduc.png

For each s, runs SoG(s, c) searches from the game's root on the belief pool (one vmapped batch of
--seeds searches, the pool's exact oracle valuing the frontier unless --leaf names another leaf
model) and measures the exact exploitability of each search's policy completed by "resolve" (below
every frontier leaf, a solve at its final ranges: ``sog.search.pool.completion``). The table
search's second completion, "average" (the average of the strategies each iteration played, the
oracle's below the frontier), needs the oracle's policy sums below its leaves, which the pool's
oracle does not return. Prints min / mean / max per s, ends with one JSON line.
"""

import json
import time

from absl import app
from absl import flags
import jax
import numpy as np

import common
from sog import plotting
from sog.search import pool
from sog.search.pool import completion

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name.")
_SEARCH = common.define_search_flags(sims=["10", "100", "1000", "10000"])
_LEAF = common.define_leaf_flags(leaf="oracle", oracle_iterations=100)
_SEEDS = flags.DEFINE_integer("seeds", 3, "Searches per s (one vmapped batch).", lower_bound=1)
_EVAL_ITERATIONS = flags.DEFINE_integer(
  "eval_iterations", 1000, "CFR+ iterations of the re-solves below the frontier.", lower_bound=1
)
_PLOT = flags.DEFINE_string("plot", None, "Write exploitability against s as a PNG here.")
flags.adopt_module_key_flags(common)  # --help lists the shared flags too

_METHODS = ("resolve",)


def main(argv):
  del argv
  game = common.load_game(_GAME.value)
  leaf = _LEAF.model(game)
  print(f"{game.name}: GT-CFR {_SEARCH.describe()}, {_LEAF.describe()}, {_SEEDS.value} seeds")
  print(
    f"{'s':>6} {'nodes':>7} "
    + " ".join(f"{m + ' min/mean/max':>34}" for m in _METHODS)
    + f" {'s/search':>9}"
  )
  rows = []
  for sims in _SEARCH.simulations():
    searcher = pool.GTCFR(game, leaf, _SEARCH.config(sims))
    rngs = jax.random.split(jax.random.PRNGKey(sims), _SEEDS.value)
    start = time.perf_counter()
    results = jax.block_until_ready(searcher.search_batch(rngs))
    seconds = (time.perf_counter() - start) / _SEEDS.value  # includes compilation
    measured = {m: [] for m in _METHODS}
    for i in range(_SEEDS.value):
      one = jax.tree_util.tree_map(lambda x, i=i: x[i], results)
      measured["resolve"].append(completion.exploitability(game.tree, one, _EVAL_ITERATIONS.value))
    stats = {
      m: {"min": min(v), "mean": float(np.mean(v)), "max": max(v)} for m, v in measured.items()
    }
    nodes = float(np.mean(np.asarray(results.nodes)))
    rows.append({"sims": sims, "nodes": nodes, "seconds_per_search": seconds, **stats})
    print(
      f"{sims:>6} {nodes:>7.0f} "
      + " ".join(
        f"{stats[m]['min']:>10.3g} {stats[m]['mean']:>11.3g} {stats[m]['max']:>11.3g}"
        for m in _METHODS
      )
      + f" {seconds:>9.2f}"
    )
  if _PLOT.value:
    sims = [r["sims"] for r in rows]
    plotting.line_plot(
      _PLOT.value,
      {m: (sims, [r[m]["mean"] for r in rows]) for m in _METHODS},
      f"{game.name}: GT-CFR SoG(s, {_SEARCH.c.value:g}), {_LEAF.leaf.value} "
      f"leaf ({_SEARCH.updates.value}), mean of {_SEEDS.value}",
      "simulations s",
      "exploitability of the completed policy",
      logx=True,
    )
  print(
    json.dumps(
      {
        "game": game.name,
        **_SEARCH.record(),
        **_LEAF.record(),
        "seeds": _SEEDS.value,
        "results": rows,
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
