"""Solves a game with public-tree CFR+ and reports exploitability against iterations.

  python scripts/solve.py --game=leduc_poker --iterations=1000 --eval_every=100 --plot=out/leduc.png

Prints exploitability (and mbb/h for poker) with solver wall time, compile time apart, and ends with
one JSON line: {"game", "iterations", "exploitability", "seconds", "compile_seconds", ...}.
"""

import json
import time

from absl import app
from absl import flags
import jax
import jax.numpy as jnp

import common
from sog import plotting
import sog.eval
import sog.games
from sog.search import cfr
from sog.search import solver as solver_lib

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name, e.g. liars_dice(faces=4).")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000, "CFR+ iterations.", lower_bound=1)
_EVAL_EVERY = flags.DEFINE_integer(
  "eval_every", 100, "Iterations between exact evaluations.", lower_bound=1
)
_UPDATES = flags.DEFINE_enum("updates", "alternating", cfr.UPDATES, "Update schedule.")
_SEED = flags.DEFINE_integer("seed", 0, "Recorded with the results (CFR+ itself is deterministic).")
_FLOAT64 = flags.DEFINE_bool("float64", False, "Run the solver in float64 instead of float32.")
_PLOT = flags.DEFINE_string("plot", None, "Write an exploitability-vs-iterations PNG here.")


def main(argv):
  del argv
  if _FLOAT64.value:
    jax.config.update("jax_enable_x64", True)
  game = common.load_game(_GAME.value)
  solver = solver_lib.Solver(
    game.tree, _UPDATES.value, dtype=jnp.float64 if _FLOAT64.value else jnp.float32
  )
  ranges = solver.root_ranges(None)
  compile_seconds = solver.compile(ranges)
  poker = "poker" in game.name
  print(
    f"{game.name}: CFR+ ({_UPDATES.value} updates), {_ITERATIONS.value} iterations, "
    f"compiled in {compile_seconds:.2f}s"
  )
  print(
    f"{'iteration':>10} {'exploitability':>15}"
    + (f" {'mbb/h':>10}" if poker else "")
    + f" {'solver s':>9} {'it/s':>9}"
  )
  state, done, seconds, curve = solver.init(), 0, 0.0, []
  while done < _ITERATIONS.value:
    chunk = min(_EVAL_EVERY.value, _ITERATIONS.value - done)
    start = time.perf_counter()
    state, _ = solver.run(state, ranges, chunk)
    jax.block_until_ready(state)
    seconds += time.perf_counter() - start
    done += chunk
    value = sog.eval.exploitability(game, solver.average_policy(state))
    curve.append((done, value))
    print(
      f"{done:>10} {value:>15.6g}"
      + (f" {1000 * value:>10.3f}" if poker else "")
      + f" {seconds:>9.3f} {done / seconds:>9.0f}"
    )
  if _PLOT.value:
    plotting.line_plot(
      _PLOT.value,
      {"exploitability": tuple(zip(*curve, strict=True))},
      f"{game.name}: public-tree CFR+ ({_UPDATES.value})",
      "CFR+ iterations",
      "exploitability (NashConv / 2)",
      logx=True,
    )
  print(
    json.dumps(
      {
        "game": game.name,
        "iterations": done,
        "exploitability": curve[-1][1],
        "seconds": seconds,
        "compile_seconds": compile_seconds,
        "updates": _UPDATES.value,
        "seed": _SEED.value,
        "dtype": "float64" if _FLOAT64.value else "float32",
        "curve": curve,
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
