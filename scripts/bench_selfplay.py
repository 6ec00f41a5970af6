"""Self-play throughput by backend and device count: games/s, queries/s and train steps/s of the same
experiment run in one process, on one or more local devices, and with its roles on Ray, each for the
same self-play time, with the ratios against the one-process, one-device loop.

  python scripts/bench_selfplay.py --config=configs/leduc.py --seconds=120
  python scripts/bench_selfplay.py --config=configs/kuhn.py --seconds=60 --runs=local,local:2,ray \
      --set=selfplay.search_chunk=2

Each run is ``scripts/train.py`` in a fresh process and work directory with evaluation off
(``evaluation.settings=()``), so compilation and Ray's start are outside the rates, which are the
run's own counters over its self-play seconds. ``local:D`` runs with D host devices forced
(``--xla_force_host_platform_device_count=D``): on a CPU they share the same cores, so this measures
the sharding's overhead, not a speed-up. ``ray`` runs with ``ray.actor_workers`` and
``ray.solver_workers`` from --ray_workers. Ends with one JSON line {"config", "seconds", "runs": {RUN:
{"games_per_s", "queries_per_s", "steps_per_s", "devices", "workers", "ratio_*"}}}.
"""

import json
import os
import subprocess
import sys
import tempfile

from absl import app
from absl import flags

_CONFIG = flags.DEFINE_string("config", "configs/leduc.py", "Experiment config file.")
_SECONDS = flags.DEFINE_float("seconds", 120.0, "Self-play seconds of each run.", lower_bound=1.0)
_RUNS = flags.DEFINE_list("runs", ["local", "ray"], "Runs: local, local:DEVICES, ray.")
_RAY_WORKERS = flags.DEFINE_string("ray_workers", "1,1", "Ray actor workers,solver workers.")
_SET = flags.DEFINE_multi_string("set", [], "A config override for every run, as FIELD=VALUE "
                                 "(e.g. --set=selfplay.search_chunk=2).")
_RATES = ("games_per_s", "queries_per_s", "steps_per_s")


def _command(run: str, workdir: str) -> tuple[list[str], dict[str, str]]:
  """The train.py command line and environment of ``run``; ``ValueError`` for an unknown run."""
  command = [sys.executable, os.path.join(os.path.dirname(__file__), "train.py"),
             f"--config={_CONFIG.value}", f"--workdir={workdir}", "--config.max_steps=100000000",
             f"--config.max_seconds={_SECONDS.value}", "--config.evaluation.settings=()",
             "--log_every=30", *(f"--config.{override}" for override in _SET.value)]
  env = dict(os.environ)
  backend, _, devices = run.partition(":")
  if backend == "ray" and not devices:
    actors, solvers = (int(n) for n in _RAY_WORKERS.value.split(","))
    command += ["--config.backend=ray", f"--config.ray.actor_workers={actors}",
                f"--config.ray.solver_workers={solvers}"]
  elif backend == "local" and (not devices or devices.isdigit()):
    if devices:
      env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} " \
                         f"--xla_force_host_platform_device_count={devices}".strip()
  else:
    raise ValueError(f"--runs: unknown run {run!r}; valid: local, local:DEVICES, ray")
  return command, env


def main(argv):
  del argv
  for run in _RUNS.value:  # every run checked before any starts
    _command(run, "")
  results = {}
  for run in _RUNS.value:
    with tempfile.TemporaryDirectory() as workdir:
      command, env = _command(run, workdir)
      print(f"{run}: {_SECONDS.value:g} s of self-play ...", flush=True)
      out = subprocess.run(command, capture_output=True, text=True, env=env)
      if out.returncode:
        raise RuntimeError(f"{run} failed:\n{out.stderr[-3000:]}")
      summary = json.loads(out.stdout.strip().splitlines()[-1])
    results[run] = {**{rate: summary[rate] for rate in _RATES}, "devices": summary["devices"],
                    "workers": summary["workers"], "steps": summary["steps"],
                    "games": summary["games"], "seconds": summary["seconds"]}
  base = results.get("local")
  print(f"\n{'run':>10} {'devices':>8} {'workers':>8} {'games/s':>9} {'queries/s':>10} "
        f"{'steps/s':>9}   ratios to local (games, queries, steps)")
  for run, row in results.items():
    if base:
      row.update({f"ratio_{rate}": row[rate] / base[rate] if base[rate] else None
                  for rate in _RATES})
    ratios = ", ".join("-" if row.get(f"ratio_{rate}") is None else f"{row[f'ratio_{rate}']:.2f}"
                       for rate in _RATES)
    print(f"{run:>10} {row['devices']:>8} {row['workers']:>8} {row['games_per_s']:>9.3f} "
          f"{row['queries_per_s']:>10.2f} {row['steps_per_s']:>9.2f}   {ratios}")
  print(json.dumps({"config": _CONFIG.value, "seconds": _SECONDS.value, "runs": results}))


if __name__ == "__main__":
  app.run(main)
