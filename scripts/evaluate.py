"""Exploitability of the SoG agent by SoG's protocol: composed re-solving policies over N seeds.

  python scripts/evaluate.py --game=leduc_poker --leaf=oracle --sims=100 --seeds=3
  python scripts/evaluate.py --game=kuhn_poker --sims=10,100,1000 --seeds=10 --plot=out/kuhn.png
  python scripts/evaluate.py --game=sequential_rps --sims=300 --updates=alternating --unsafe
  python scripts/evaluate.py --game="scotland_yard(map=glasses)" --oracle_iterations=2 \
      --oracle_warm_start --sims=100,1000

For each seed, the agent re-solves at every public state where a player acts, breadth-first, each
search continuing from the searching player's last search above it (``sog.protocol.compose``); the
composed policy's exact exploitability is reported as min / mean / max over the seeds. The leaf model
is the exact oracle (``--leaf=oracle``, a CFR+ solve of every frontier leaf's subgame per iteration,
bounded by --oracle_iterations; with --oracle_warm_start each call continues the previous one's solve),
zeros, or a CVPN checkpoint directory. Prints a table and ends with one JSON line (the first --sims
value's keys at the top level, every value under "results").
"""

import json
import time

from absl import app
from absl import flags
from absl import logging
import jax

from sog import plotting
import sog.games
from sog.nets import checkpoint
from sog.protocol import composed
from sog.search import cfr
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import resolving

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name.")
_LEAF = flags.DEFINE_string("leaf", "oracle", "oracle | zeros | a CVPN checkpoint directory.")
_SIMS = flags.DEFINE_list("sims", ["100"], "Values of s (simulations per search).")
_C = flags.DEFINE_float("c", 1.0, "Simulations per CFR phase (c).")
_SEEDS = flags.DEFINE_integer("seeds", 3, "Composed policies (seeds) per s.", lower_bound=1)
_FIRST_SEED = flags.DEFINE_integer("first_seed", 0, "Seeds run are first_seed, first_seed + 1, ... "
                                   "(to split a long evaluation over runs).", lower_bound=0)
_SAFE = flags.DEFINE_bool("safe", True, "Safe re-solving (the gadget); --nosafe or --unsafe: unsafe.")
_UNSAFE = flags.DEFINE_bool("unsafe", False, "Unsafe re-solving (same as --nosafe).")
_ALPHA = flags.DEFINE_float("alpha", resolving.ResolvingConfig.alpha,
                            "Weight of the gadget's opponent range in the mix.")
_TERMINATE = flags.DEFINE_enum("terminate_values", resolving.ResolvingConfig.terminate_values,
                               resolving.TERMINATE_VALUES,
                               "Which opponent values of the last search the gadget's Terminate pays.")
_ORACLE_ITERATIONS = flags.DEFINE_integer("oracle_iterations", 50,
                                          "CFR+ iterations of each exact-oracle call.", lower_bound=1)
_ORACLE_WARM_START = flags.DEFINE_bool(
    "oracle_warm_start", False, "Each exact-oracle call continues the search's previous call's "
    "CFR+ run (so t calls have solved below the frontier for t * oracle_iterations iterations).")
_UPDATES = flags.DEFINE_enum("updates", gtcfr.GTCFRConfig.updates, cfr.UPDATES,
                              "GT-CFR's CFR+ updates (default: the library's).")
_PRIOR_TEMPERATURE = flags.DEFINE_float(
    "prior_temperature", gtcfr.GTCFRConfig.prior_temperature,
    "T_prior of PUCT's prior, softmax(logits / T) of the leaf model's policy head (SoG: 1); inf: a "
    "uniform prior (what zeros and the oracle give).", lower_bound=0.0)
_PUCT = flags.DEFINE_float("puct_constant", gtcfr.GTCFRConfig.puct_constant,
                           "C of PUCT's expansion rule (values scaled to [-1, 1]).", lower_bound=0.0)
_VALUE_ERROR = flags.DEFINE_float(
    "leaf_value_error", 0.0, "sigma of a fixed N(0, sigma^2) error added to the leaf model's "
    "conditional values at each (public state, player, infostate) (leaf_models.with_value_error): "
    "with --leaf=oracle, a perfect network but for an error of known size.", lower_bound=0.0)
_VALUE_ERROR_SEED = flags.DEFINE_integer("leaf_value_error_seed", 0, "Seed of that error.")
_BATCH = flags.DEFINE_integer("batch_size", 1, "Searches per vmapped batch (one breadth-first "
                              "depth at a time; 1 is fastest on a CPU).", lower_bound=1)
_PLOT = flags.DEFINE_string("plot", None, "Write exploitability against s as a PNG here.")


def _leaf_model(game: sog.games.Game) -> leaf_models.LeafModel:
  if _LEAF.value == "oracle":
    model = leaf_models.exact_leaf_model(_ORACLE_ITERATIONS.value,
                                         warm_start=_ORACLE_WARM_START.value)
  elif _LEAF.value == "zeros":
    model = leaf_models.zero_leaf_model()
  else:
    model = checkpoint.restore_leaf_model(_LEAF.value, game.name)
  if _VALUE_ERROR.value > 0:
    model = leaf_models.with_value_error(model, _VALUE_ERROR.value, _VALUE_ERROR_SEED.value)
  return model


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)  # orbax logs every checkpoint read at INFO
  if _UNSAFE.value and flags.FLAGS["safe"].present and _SAFE.value:
    raise ValueError("--safe and --unsafe contradict each other; give one")
  safe = _SAFE.value and not _UNSAFE.value
  game = sog.games.load(_GAME.value)
  leaf = _leaf_model(game)
  resolving_config = resolving.ResolvingConfig(safe=safe, alpha=_ALPHA.value,
                                               terminate_values=_TERMINATE.value)
  sims_values = [int(x) for x in _SIMS.value]
  oracle = (f" ({_ORACLE_ITERATIONS.value} CFR+ iterations per call"
            f"{', warm-started' if _ORACLE_WARM_START.value else ''})")
  print(f"{game.name}: SoG(s, {_C.value:g}) agent, "
        f"{'safe (alpha=%g)' % _ALPHA.value if safe else 'unsafe'} re-solving, leaf={_LEAF.value}"
        f"{oracle if _LEAF.value == 'oracle' else ''}"
        f"{f' + value error sigma {_VALUE_ERROR.value:g}' if _VALUE_ERROR.value else ''}, "
        f"{_UPDATES.value} updates, "
        f"T_prior {_PRIOR_TEMPERATURE.value:g}, PUCT C {_PUCT.value:g}, "
        f"seeds {_FIRST_SEED.value}-{_FIRST_SEED.value + _SEEDS.value - 1}")
  print(f"{'s':>6} {'min':>10} {'mean':>10} {'max':>10} {'searches':>9} {'seconds':>9}")
  rows = []
  for sims in sims_values:
    config = gtcfr.GTCFRConfig(simulations=sims, simulations_per_phase=_C.value,
                               updates=_UPDATES.value,
                               prior_temperature=_PRIOR_TEMPERATURE.value,
                               puct_constant=_PUCT.value)
    searcher = gtcfr.GTCFR(game, leaf, config)
    reported, started = [0], time.perf_counter()

    def progress(done, total, sims=sims, reported=reported, started=started):
      if done * 10 // total > reported[0] or done == total:  # about every tenth
        reported[0] = done * 10 // total
        rate = done / (time.perf_counter() - started)
        print(f"  s={sims}: {done}/{total} searches, {rate:.2f}/s, ETA {(total - done) / rate:.0f} s",
              flush=True)

    seeds = range(_FIRST_SEED.value, _FIRST_SEED.value + _SEEDS.value)
    result = composed.compose(searcher, seeds, resolving_config, _BATCH.value, progress)
    stats = result.summary()
    rows.append({"game": game.name, "sims": sims, "c": _C.value, "seeds": _SEEDS.value,
                 "safe": safe, "exploitability": stats, "seconds": result.seconds,
                 "searches": result.searches, "leaf": _LEAF.value, "alpha": _ALPHA.value,
                 "terminate_values": _TERMINATE.value,
                 "updates": _UPDATES.value, "prior_temperature": str(_PRIOR_TEMPERATURE.value),
                 "puct_constant": _PUCT.value, "leaf_value_error": _VALUE_ERROR.value,
                 "leaf_value_error_seed": _VALUE_ERROR_SEED.value,
                 "oracle_iterations": _ORACLE_ITERATIONS.value,
                 "oracle_warm_start": _ORACLE_WARM_START.value,
                 "first_seed": _FIRST_SEED.value, "per_seed": result.exploitability.tolist(),
                 "device": jax.devices()[0].platform})
    print(f"{sims:>6} {stats['min']:>10.4g} {stats['mean']:>10.4g} {stats['max']:>10.4g} "
          f"{result.searches:>9} {result.seconds:>9.1f}")
  if _PLOT.value:
    series = {k: (sims_values, [r["exploitability"][k] for r in rows]) for k in ("min", "mean", "max")}
    plotting.line_plot(_PLOT.value, series,
                       f"{game.name}: SoG(s, {_C.value:g}) composed policy, {_SEEDS.value} seeds",
                       "simulations s", "exploitability", logx=True)
  print(json.dumps({**rows[0], "results": rows}))


if __name__ == "__main__":
  app.run(main)
