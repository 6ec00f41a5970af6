"""The seeds' other algorithms on one game for equal wall time, exploitability measured exactly.

  python scripts/baselines.py --game=leduc_poker --seconds=60
  python scripts/baselines.py --game="liars_dice(faces=4)" --algorithms=dcfr,mccfr_external \
      --seconds=300 --plot=out/baselines_ld4.png

Each algorithm (``sog.baselines.ALGORITHMS``) runs for --seconds of its own time (compilation apart;
evaluations are not charged to it) and its average policy's exploitability is computed exactly
after chunks of 1, 2, 4, ... iterations. OpenSpiel's own implementation of each algorithm, where it
has one, runs for --openspiel_seconds beside it for the speed column. The PNG draws exploitability
against wall time (log-log), with SoG's protocol numbers for the game's shipped network as
horizontal lines where ``checkpoints/GAME/protocol.json`` records them, and the baselines' published
figures where ``sog.eval.paper.baseline_anchors`` has them; the curves' points go to a JSON file
beside it (the PNG's name, .json). Ends with one JSON line:
{"game", "seconds", ALGORITHM: {"exploitability", "seconds", "iterations"}, ..., "openspiel":
{...}}.
"""

import json
import pathlib

from absl import app
from absl import flags
import jax
import jax.numpy as jnp

import sog
from sog import baselines
from sog import plotting
from sog.eval import paper
from sog.openspiel import peers

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name (sog.registered_games()).")
_ALGORITHMS = flags.DEFINE_list(
  "algorithms",
  sorted(baselines.ALGORITHMS),
  f"Algorithms to run, from {sorted(baselines.ALGORITHMS)}.",
)
_SECONDS = flags.DEFINE_float(
  "seconds", 60.0, "Wall time of each algorithm (0: --iterations only).", lower_bound=0.0
)
_ITERATIONS = flags.DEFINE_integer(
  "iterations",
  None,
  "Stop each algorithm after this many iterations (default: time only).",
  lower_bound=1,
)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the sampling algorithms.")
_OPENSPIEL_SECONDS = flags.DEFINE_float(
  "openspiel_seconds", 10.0, "Time for each OpenSpiel peer (0: none).", lower_bound=0.0
)
_FLOAT64 = flags.DEFINE_bool(
  "float64",
  False,
  "Run the algorithms in float64 (float32 regret and "
  "average sums stall near 1e-5 after ~1e6 Kuhn iterations).",
)
_PLOT = flags.DEFINE_string("plot", None, "PNG path (default out/baselines/GAME.png).")
_PROTOCOL = flags.DEFINE_string(
  "protocol",
  None,
  "A protocol.json of SoG's numbers to mark (default checkpoints/GAME/protocol.json if present).",
)

_ROOT = pathlib.Path(__file__).resolve().parents[1]


def _sog_levels(game: str) -> dict[str, float]:
  """{"SoG(100,1), shipped network (50 seeds)": 0.176, ...} from a protocol.json, if any."""
  path = (
    pathlib.Path(_PROTOCOL.value)
    if _PROTOCOL.value
    else (_ROOT / "checkpoints" / game / "protocol.json")
  )
  if not path.is_file():
    if _PROTOCOL.value:
      raise ValueError(f"--protocol: no file {path}")
    return {}
  record = json.loads(path.read_text())
  return {
    f"{setting}, shipped network ({record['seeds']} seeds)": values["mean"]
    for setting, values in record["exploitability"].items()
  }


def main(argv):
  del argv
  for name in _ALGORITHMS.value:
    if name not in baselines.ALGORITHMS:
      raise ValueError(f"--algorithms: unknown {name!r}; valid: {sorted(baselines.ALGORITHMS)}")
  if not _SECONDS.value and _ITERATIONS.value is None:
    raise ValueError("--seconds=0 needs --iterations")
  if _FLOAT64.value:
    jax.config.update("jax_enable_x64", True)
  dtype = jnp.float64 if _FLOAT64.value else jnp.float32
  game = sog.load(_GAME.value)
  print(
    f"{game.name}: {', '.join(_ALGORITHMS.value)}, {_SECONDS.value:g} s each"
    + (f", at most {_ITERATIONS.value} iterations" if _ITERATIONS.value else "")
  )
  curves, peer_results = {}, {}
  for name in _ALGORITHMS.value:
    algorithm = baselines.make(name, game, dtype)
    curve = baselines.run_for(
      algorithm,
      game,
      _SECONDS.value,
      _ITERATIONS.value,
      _SEED.value,
      log=lambda p, name=name: print(
        f"  {name}: {p.iterations} iterations, {p.seconds:.4g} s, "
        f"exploitability {p.exploitability:.4g}",
        flush=True,
      ),
    )
    curves[name] = curve
    if _OPENSPIEL_SECONDS.value and name in peers.PEERS:
      peer_results[name] = peers.run_peer(name, game, _OPENSPIEL_SECONDS.value, _SEED.value)

  print(
    f"\n{'algorithm':>16} {'iterations':>11} {'it/s':>10} {'exploitability':>15}   OpenSpiel "
    "(implementation: it/s, exploitability at its budget; our speed ratio)"
  )
  for name, curve in curves.items():
    final, peer = curve.final, peer_results.get(name)
    rate = final.iterations / final.seconds
    if peer is None:
      theirs = "-"
    elif "error" in peer:
      theirs = f"{peer['implementation']}: fails ({peer['error']})"
    else:
      theirs = (
        f"{peer['implementation']}: {peer['iterations_per_s']:.4g} it/s, "
        f"{peer['exploitability']:.4g} after {peer['iterations']}; "
        f"x{rate / peer['iterations_per_s']:.3g}"
      )
    print(
      f"{name:>16} {final.iterations:>11} {rate:>10.4g} {final.exploitability:>15.4g}   {theirs}"
    )

  plot = _PLOT.value or f"out/baselines/{game.name}.png"
  series = {
    name: tuple(zip(*[(p.seconds, p.exploitability) for p in curve.points], strict=True))
    for name, curve in curves.items()
  }
  plotting.line_plot(
    plot,
    series,
    f"{game.name}: exploitability against wall time (2 CPU cores)",
    "seconds (own time, compilation excluded)",
    "exploitability",
    logx=True,
    levels=_sog_levels(game.name) | paper.baseline_anchors(game.name),
  )
  curves_path = pathlib.Path(plot).with_suffix(".json")
  curves_path.write_text(
    json.dumps(
      {name: {"seconds": list(x), "exploitability": list(y)} for name, (x, y) in series.items()}
    )
  )
  print(
    json.dumps(
      {
        "game": game.name,
        "seconds": _SECONDS.value,
        **{name: curve.summary() for name, curve in curves.items()},
        "openspiel": peer_results,
        "dtype": "float64" if _FLOAT64.value else "float32",
        "plot": plot,
        "curves": str(curves_path),
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
