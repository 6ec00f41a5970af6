"""Times our public-tree CFR+ against OpenSpiel's C++ CFR+ and OpenSpiel's JaxCFR in one run, and
against the same CFR+ on the node pool's imperfect-information tree grown to the whole game.

  python scripts/bench_cfr.py --games=leduc_poker,liars_dice(faces=6) --iterations=100
  python scripts/bench_cfr.py --games=scotland_yard(map=glasses_hidden) --solvers=ours,pool

All run alternating updates, regret-matching+ and linear averaging for the same number of
iterations. Steady-state iterations per second exclude set-up and compilation (reported apart); each
solver's exploitability after those iterations is computed exactly. ``ours`` runs on the level
tables of the enumerated tree (``sog.search.solver``); ``pool`` on a
:class:`~sog.search.pool.beliefs.BeliefTree` grown from the game's functions
(``sog.search.pool.belief_cfr``, a pass touching each node once). Prints a markdown table and ends
with one JSON line {game: {solver: {...}, "ratio_vs_<solver>": ours' iterations/s over its}}.
"""

import json
import time

from absl import app
from absl import flags
import jax
import pyspiel

import sog.eval
import sog.games
from sog.games import public_game
from sog.openspiel import bridge as openspiel_bridge
from sog.search import solver as solver_lib
from sog.search.pool import belief_cfr
from sog.search.pool import beliefs
from sog.search.pool import depth_order

SOLVERS = ("ours", "pool", "openspiel_cpp", "openspiel_jax")

_GAMES = flags.DEFINE_list("games", ["leduc_poker", "liars_dice(faces=6)"], "Games to time.")
_ITERATIONS = flags.DEFINE_integer("iterations", 100, "Timed iterations per solver.", lower_bound=1)
_REPEATS = flags.DEFINE_integer(
  "repeats", 3, "Timing repeats for our solvers (best is kept).", lower_bound=1
)
_SOLVERS = flags.DEFINE_multi_enum("solvers", list(SOLVERS), SOLVERS, "Solvers to time.")


def _best_of(run) -> float:
  best = float("inf")
  for _ in range(_REPEATS.value):
    start = time.perf_counter()
    jax.block_until_ready(run())
    best = min(best, time.perf_counter() - start)
  return best


def _ours(game: sog.games.Game, iterations: int) -> dict:
  start = time.perf_counter()
  solver = solver_lib.Solver(game.tree, "alternating")
  ranges = solver.root_ranges(None)
  setup = time.perf_counter() - start
  compile_seconds = solver.compile(ranges)
  jax.block_until_ready(solver.run(solver.init(), ranges, 1))  # warm-up
  best = _best_of(lambda: solver.run(solver.init(), ranges, iterations)[0])
  state, _ = solver.run(solver.init(), ranges, iterations)
  return {
    "setup_seconds": setup,
    "compile_seconds": compile_seconds,
    "iterations_per_second": iterations / best,
    "exploitability": sog.eval.exploitability(game, solver.average_policy(state)),
  }


def _pool(game: sog.games.Game, iterations: int) -> dict:
  tree = game.tree
  start = time.perf_counter()
  pool = beliefs.grow(game.public_game, tree.num_nodes)  # compiles and grows the whole game
  setup = time.perf_counter() - start
  root_ranges = jax.numpy.asarray(public_game.prior_ranges(game.public_game), jax.numpy.float32)

  def loop(pool, n):
    order = depth_order.depth_order(pool)  # the tree is fixed: its depth order too
    return jax.lax.fori_loop(
      0,
      n,
      lambda _, s: belief_cfr.iteration(pool, s, root_ranges, "alternating", order),
      belief_cfr.init_state(pool),
    )

  run = jax.jit(loop)
  start = time.perf_counter()
  jax.block_until_ready(run(pool, 1))
  compile_seconds = time.perf_counter() - start
  best = _best_of(lambda: run(pool, iterations))
  average = belief_cfr.average_policy(pool, run(pool, iterations))
  policy = tree.legal / tree.legal.sum(-1, keepdims=True)  # chance and terminal rows: any
  policy[beliefs.tree_nodes(pool, tree)] = average
  return {
    "setup_seconds": setup,
    "compile_seconds": compile_seconds,
    "iterations_per_second": iterations / best,
    "exploitability": sog.eval.exploitability(game, policy),
  }


def _openspiel_cpp(os_game: pyspiel.Game, iterations: int) -> dict:
  start = time.perf_counter()
  solver = pyspiel.CFRPlusSolver(os_game)
  setup = time.perf_counter() - start
  start = time.perf_counter()
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  seconds = time.perf_counter() - start
  return {
    "setup_seconds": setup,
    "iterations_per_second": iterations / seconds,
    "exploitability": pyspiel.exploitability(os_game, solver.average_policy()),
  }


def _openspiel_jax(os_game: pyspiel.Game, iterations: int) -> dict:
  from open_spiel.python.jax.cfr import jax_cfr

  start = time.perf_counter()
  solver = jax_cfr.JaxCFR(
    os_game, regret_matching_plus=True, alternating_updates=True, linear_averaging=True
  )
  solver.step()  # compiles its step
  jax.block_until_ready(solver.regrets)
  setup = time.perf_counter() - start
  start = time.perf_counter()
  solver.multiple_steps(iterations)
  jax.block_until_ready(solver.regrets)
  seconds = time.perf_counter() - start
  from open_spiel.python.algorithms import exploitability

  return {
    "setup_seconds": setup,
    "iterations_per_second": iterations / seconds,
    "exploitability_after": iterations + 1,
    "exploitability": float(exploitability.exploitability(os_game, solver.average_policy())),
  }


def main(argv):
  del argv
  results, rows = {}, []
  timers = {
    "ours": _ours,
    "pool": _pool,
    "openspiel_cpp": lambda game, n: _openspiel_cpp(openspiel_bridge.openspiel_game(game), n),
    "openspiel_jax": lambda game, n: _openspiel_jax(openspiel_bridge.openspiel_game(game), n),
  }
  solvers = [solver for solver in SOLVERS if solver in _SOLVERS.value]
  for name in _GAMES.value:
    game = sog.games.load(name)
    n = _ITERATIONS.value
    print(f"{game.name}: {n} iterations each ...", flush=True)
    entry = {solver: timers[solver](game, n) for solver in solvers}
    ours = entry["ours"]["iterations_per_second"] if "ours" in entry else None
    for solver in solvers:
      if ours is not None and solver != "ours":
        entry[f"ratio_vs_{solver}"] = ours / entry[solver]["iterations_per_second"]
    results[game.name] = entry
    for solver in solvers:
      r = entry[solver]
      ratio = 1.0 if solver == "ours" else entry.get(f"ratio_vs_{solver}", float("nan"))
      rows.append(
        f"| {game.name} | {solver} | {r['iterations_per_second']:.1f} | "
        f"{1000 / r['iterations_per_second']:.3f} | {ratio:.1f}x | "
        f"{r['setup_seconds'] + r.get('compile_seconds', 0.0):.2f} | "
        f"{r['exploitability']:.3g} |"
      )
  print(
    "\n| game | solver | iterations/s | ms/iteration | ours is faster by | set-up + compile s "
    "| exploitability |"
  )
  print("|---|---|---|---|---|---|---|")
  print("\n".join(rows))
  print(json.dumps(results))


if __name__ == "__main__":
  app.run(main)
