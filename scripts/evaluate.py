"""Exploitability of the SoG agent by SoG's protocol: composed re-solving policies over N seeds.

  python scripts/evaluate.py --game=leduc_poker --leaf=oracle --sims=100 --seeds=3
  python scripts/evaluate.py --game=kuhn_poker --sims=10,100,1000 --seeds=10 --plot=out/kuhn.png
  python scripts/evaluate.py --game=sequential_rps --sims=300 --updates=alternating --unsafe
  python scripts/evaluate.py --game="scotland_yard(map=glasses)" --oracle_iterations=2 \
      --oracle_warm_start --sims=100,1000

For each seed, the agent re-solves at every public state where a player acts, breadth-first, each
search continuing from the searching player's last search above it (``sog.protocol.compose``); the
composed policy's exact exploitability is reported as min / mean / max over the seeds, with what the
searches grew, per search: public states expanded, expansion walks, idle walks (those that added
nothing) and the share of searches whose tree ended complete (JSON ``per_search``). The leaf model
is the exact oracle (``--leaf=oracle``, a CFR+ solve of every frontier leaf's subgame per iteration,
bounded by --oracle_iterations; with --oracle_warm_start each call continues the previous one's
solve), zeros, an untrained CVPN or a CVPN checkpoint directory (the flags shared with other scripts
are defined in ``scripts/common.py``). Prints a table and ends with one JSON line (the first --sims
value's keys at the top level, every value under "results").

The searches run on the belief pool (``sog.search.pool.GTCFR``, each search growing its own
tree from its re-solving root); ``--float64`` searches in float64, the precision of the fixtures
recorded from the table search before it left the library (``tests/fixtures``):

  python scripts/evaluate.py --game=leduc_poker --leaf=zeros --sims=10 --seeds=2 --float64

With ``--agent=rebel`` the agent is ReBeL (``sog.baselines.rebel``): depth-limited CFR-D subgames of
--depth levels and --iterations iterations, random-iteration play, its policy composed over the
whole tree per seed; reported are the per-seed exploitability (min / mean / max) and that of the
seeds' mixture (ReBeL's table 2 measure); the search flags (--sims, --c, ...) and re-solving flags
do not apply to it.

  python scripts/evaluate.py --agent=rebel --game="liars_dice(faces=4)" \
      --leaf="checkpoints/rebel_liars_dice(faces=4)" --seeds=10
"""

import dataclasses
import json
import pathlib

from absl import app
from absl import flags
from absl import logging
import jax
import jax.numpy as jnp

import common
from sog import plotting
from sog.baselines import rebel
from sog.eval import best_response
from sog.eval import paper
import sog.games
from sog.protocol import composed
from sog.protocol import queries as queries_lib
from sog.search import pool
from sog.search import predecessors

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name.")
_SEARCH = common.define_search_flags(sims=["100"])
_PROTOCOL = common.define_protocol_flags(seeds=3)
_LEAF = common.define_leaf_flags(leaf="oracle")
_PLOT = flags.DEFINE_string("plot", None, "Write exploitability against s as a PNG here.")
_RECORD_QUERIES = flags.DEFINE_string(
  "record_queries",
  None,
  "Write a sample of the leaf queries of every search (sog.protocol.queries) to "
  "DIR/queries_s{s}.npz, for scripts/diagnose_leaf.py.",
)
_QUERY_SAMPLES = flags.DEFINE_integer(
  "query_samples",
  16,
  "With --record_queries: leaf queries sampled per search (uniformly over its passes' frontier "
  "leaves; the searches themselves do not change).",
  lower_bound=1,
)
_AGENT = flags.DEFINE_enum("agent", "sog", ["sog", "rebel"], "The agent: SoG or ReBeL.")
_PRECISION = common.define_precision_flags()
_DEPTH = flags.DEFINE_integer("depth", rebel.ReBeLConfig.depth, "ReBeL: levels per subgame.")
_ITERATIONS = flags.DEFINE_integer(
  "iterations", rebel.ReBeLConfig.iterations, "ReBeL: CFR-D iterations per subgame."
)
_PLAY = flags.DEFINE_enum(
  "play",
  rebel.ReBeLConfig.play,
  list(rebel.PLAYS),
  "ReBeL: play a random iteration (safe) or the average policy.",
)
flags.adopt_module_key_flags(common)  # --help lists the shared flags too


#: The flags only one of the agents reads (--updates and the leaf and seed flags are both's).
_ONLY = {
  "sog": [
    "sims",
    "c",
    "prior_temperature",
    "puct_constant",
    "redraws",
    "tie_break",
    "open_chance",
    "averaging",
    "safe",
    "unsafe",
    "alpha",
    "terminate_values",
    "predecessor",
    "plot",
    "record_queries",
    "query_samples",
    "oracle_on",
    "reach_threshold",
    "float64",
  ],
  "rebel": ["depth", "iterations", "play"],
}


def _refuse_other_agents_flags() -> None:
  """``ValueError`` naming the flags on the command line that the chosen agent does not read."""
  other = "sog" if _AGENT.value == "rebel" else "rebel"
  given = [f"--{name}" for name in _ONLY[other] if flags.FLAGS[name].present]
  if given:
    raise ValueError(
      f"--agent={_AGENT.value} does not read {', '.join(given)} (they are --agent={other}'s)"
    )


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)  # orbax logs every checkpoint read at INFO
  _refuse_other_agents_flags()
  dtype = _PRECISION.dtype()
  game = common.load_game(_GAME.value)
  if _AGENT.value == "rebel":  # ReBeL's CFR-D subgames run on the enumerated tables
    _evaluate_rebel(game, _LEAF.model(game, on_tables=True))
    return
  leaf = _LEAF.model(game)
  settings_note = common.apply_checkpoint_settings(
    _LEAF.leaf.value, ("search", "resolving", "protocol")
  )
  resolving_config = _PROTOCOL.resolving_config()
  sims_values = _SEARCH.simulations()
  c = _SEARCH.c.value
  print(
    f"{game.name}: SoG agent ({jnp.dtype(dtype).name}), "
    f"{_SEARCH.describe()}, {_LEAF.describe()}, {_PROTOCOL.describe()}"
  )
  if settings_note:
    print(settings_note)
  print(
    f"{'s':>6} {'min':>10} {'mean':>10} {'max':>10} {'searches':>9} {'seconds':>9} "
    f"{'expanded':>9} {'walks':>7} {'idle':>7} {'complete':>8}"
  )
  rows = []
  for sims in sims_values:
    config = _SEARCH.config(sims)
    recorder = None
    if _RECORD_QUERIES.value:
      config = dataclasses.replace(config, query_samples=_QUERY_SAMPLES.value)
      recorder = queries_lib.QueryRecorder(game.tree)
    searcher = pool.GTCFR(
      game,
      leaf,
      config,
      dtype=dtype,
      branch_depth=predecessors.branch_depth(game.tree, _PROTOCOL.predecessor.value),
    )
    result = composed.compose(
      searcher,
      _PROTOCOL.seeds(),
      resolving_config,
      _PROTOCOL.batch_size.value,
      common.progress_printer(f"s={sims}"),
      predecessor=_PROTOCOL.predecessor.value,
      on_resolved=recorder,
      tree=game.tree,
    )
    if recorder is not None:
      path = pathlib.Path(_RECORD_QUERIES.value) / f"queries_s{sims}.npz"
      recorder.queries.save(path)
      print(f"  {recorder.queries.size} leaf queries recorded in {path}")
    stats = result.summary()
    rows.append(
      {
        "game": game.name,
        "sims": sims,
        "seeds": _PROTOCOL.seeds_count.value,
        "safe": resolving_config.safe,
        "exploitability": stats,
        "seconds": result.seconds,
        "searches": result.searches,
        "alpha": resolving_config.alpha,
        "terminate_values": resolving_config.terminate_values,
        "predecessor": _PROTOCOL.predecessor.value,
        "per_search": result.growth,
        **_SEARCH.record(),
        **_LEAF.record(),
        "first_seed": _PROTOCOL.first_seed.value,
        "per_seed": result.exploitability.tolist(),
        "device": jax.devices()[0].platform,
        "float64": _PRECISION.float64.value,
      }
    )
    print(
      f"{sims:>6} {stats['min']:>10.4g} {stats['mean']:>10.4g} {stats['max']:>10.4g} "
      f"{result.searches:>9} {result.seconds:>9.1f} {result.growth['expanded']:>9.1f} "
      f"{result.growth['walks']:>7.1f} {result.growth['idle_walks']:>7.1f} "
      f"{result.growth['complete']:>8.2f}"
    )
  if _PLOT.value:
    scale, unit = paper.exploitability_unit(game.name)
    stats = [r["exploitability"] for r in rows]
    series = {
      f"SoG(s, {c:g}), {_LEAF.describe()}": (
        sims_values,
        *([scale * row[k] for row in stats] for k in ("min", "mean", "max")),
      )
    }
    plotting.protocol_plot(
      _PLOT.value,
      series,
      paper.fig3_references(game.name, scale),
      f"{game.name}: SoG's protocol, {len(_PROTOCOL.seeds())} seeds "
      f"({_PROTOCOL.seeds().start}-{_PROTOCOL.seeds().stop - 1})",
      f"exploitability ({unit}): mean, min-max of seeds",
    )
  print(json.dumps({**rows[0], "results": rows}))


def _evaluate_rebel(game: sog.games.Game, leaf) -> None:
  settings_note = common.apply_checkpoint_settings(_LEAF.leaf.value, ("rebel",))
  config = rebel.ReBeLConfig(
    depth=_DEPTH.value,
    iterations=_ITERATIONS.value,
    updates=_SEARCH.updates.value,
    play=_PLAY.value,
  )
  print(
    f"{game.name}: ReBeL agent, depth {config.depth}, T = {config.iterations} "
    f"({config.updates}), {config.play} play, {_LEAF.describe()}, "
    f"{_PROTOCOL.seeds_count.value} seeds"
  )
  if settings_note:
    print(settings_note)
  agent = rebel.ReBeL(game, leaf, config)
  result = agent.compose(
    _PROTOCOL.seeds(), _PROTOCOL.batch_size.value, common.progress_printer("ReBeL")
  )
  mixture = best_response.exploitability(game, rebel.mixture_policy(game.tree, result.policies))
  stats = result.summary()
  print(
    f"per seed: min {stats['min']:.4g}  mean {stats['mean']:.4g}  max {stats['max']:.4g}; "
    f"mixture of the seeds' policies: {mixture:.4g}; {result.searches} subgames in "
    f"{result.seconds:.1f} s"
  )
  row = {
    "game": game.name,
    "agent": "rebel",
    "depth": config.depth,
    "iterations": config.iterations,
    "updates": config.updates,
    "play": config.play,
    "seeds": _PROTOCOL.seeds_count.value,
    "exploitability": stats,
    "mixture": mixture,
    "seconds": result.seconds,
    "searches": result.searches,
    **_LEAF.record(),
    "first_seed": _PROTOCOL.first_seed.value,
    "per_seed": result.exploitability.tolist(),
    "device": jax.devices()[0].platform,
  }
  print(json.dumps({**row, "results": [row]}))


if __name__ == "__main__":
  app.run(main)
