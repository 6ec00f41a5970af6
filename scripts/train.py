"""Trains a CVPN by SoG's sound self-play (actors, query solver, trainer), or by ReBeL's self-play
for a config with a ``rebel`` section, and evaluates it.

  python scripts/train.py --config=configs/leduc.py --workdir=out/leduc
  python scripts/train.py --config=configs/rebel_liars_dice.py --workdir=out/rebel_ld4
  python scripts/train.py --config=configs/kuhn.py --workdir=out/kuhn --config.max_steps=500
  python scripts/train.py --config=configs/leduc.py --workdir=out/leduc --config.max_seconds=3600
  python scripts/train.py --config=configs/pgx_connect_four.py --workdir=out/pgx_connect_four

On a perfect-information game (``configs/pgx_*.py``, ``configs/connect_four.py``) each of the
actors' searches starts at the state its game is at; on the others the actors re-solve.

Any field of the config can be overridden on the command line (``--config.selfplay.q_search=0.5``).
A run on a work directory that holds a checkpoint resumes from it (network, optimiser, both buffers,
counters). Shows progress (tqdm: share of the budget, ETA; steps, games, queries solved, buffer
fill, rates; a line every --log_every seconds when not on a terminal) and the periodic evaluations,
writes metrics.csv, evaluation.csv, TensorBoard event files (``tensorboard --logdir WORKDIR``) and
exploitability.png in the work directory, and ends with one JSON line: game, steps, seconds,
exploitability per evaluated setting, throughput.
"""

import json

from absl import app
from absl import flags
from absl import logging
from ml_collections import config_flags

from sog.baselines.rebel import selfplay as rebel_selfplay
from sog.selfplay import config as config_lib
from sog.selfplay import run

_CONFIG = config_flags.DEFINE_config_file("config", "configs/leduc.py", "Experiment config file.")
_WORKDIR = flags.DEFINE_string(
  "workdir", None, "Directory of checkpoints, metrics and plots.", required=True
)
_LOG_EVERY = flags.DEFINE_float(
  "log_every", 10.0, "Seconds between metrics rows (and progress lines when not on a terminal)."
)


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)  # orbax logs every save at INFO
  if "rebel" in _CONFIG.value:
    _train_rebel(rebel_selfplay.from_config_dict(_CONFIG.value))
    return
  experiment = config_lib.from_config_dict(_CONFIG.value)
  selfplay = experiment.selfplay
  print(
    f"{experiment.game}: self-play with actors SoG({experiment.actor.simulations},"
    f"{experiment.actor.simulations_per_phase:g}) x {selfplay.games} games, solver SoG("
    f"{experiment.solver.simulations},{experiment.solver.simulations_per_phase:g}) x "
    f"{selfplay.solver_batch} queries per round, network {experiment.network.depth} x "
    f"{experiment.network.width}; up to {experiment.max_steps} steps"
    + (f" or {experiment.max_seconds:.0f} s" if experiment.max_seconds else ""),
    flush=True,
  )
  summary = run.train(experiment, _WORKDIR.value, log_every_seconds=_LOG_EVERY.value)
  _report(summary, experiment)


def _train_rebel(experiment: rebel_selfplay.ReBeLExperiment) -> None:
  base, rebel = experiment.base, experiment.rebel
  print(
    f"{base.game}: ReBeL self-play, {base.selfplay.games} games, depth-{rebel.depth} subgames "
    f"of T = {rebel.iterations} CFR-D iterations ({rebel.updates}), eps {base.selfplay.eps:g}, "
    f"network {base.network.depth} x {base.network.width}; up to {base.max_steps} steps"
    + (f" or {base.max_seconds:.0f} s" if base.max_seconds else ""),
    flush=True,
  )
  summary = rebel_selfplay.train(experiment, _WORKDIR.value, log_every_seconds=_LOG_EVERY.value)
  _report(summary, base)


def _report(summary: dict, experiment: config_lib.Experiment) -> None:
  print(
    f"done: {summary['steps']} steps in {summary['seconds']:.0f} s, {summary['games']} games, "
    f"{summary['queries_solved']} queries solved"
  )
  for name, stats in summary["exploitability"].items():
    print(
      f"  {name}: exploitability {stats['mean']:.4g} (min {stats['min']:.4g}, "
      f"max {stats['max']:.4g}) over {experiment.evaluation.seeds} seeds"
    )
  print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
