"""Self-play throughput by backend and device count: games/s, queries/s and train steps/s of the
same experiment run in one process, on one or more local devices, and with its roles on Ray, each
for the same self-play time, with the ratios against the one-process, one-device loop.

  python scripts/bench_selfplay.py --config=configs/leduc.py --seconds=360
  python scripts/bench_selfplay.py --config=configs/kuhn.py --seconds=120 --runs=local,local:2,ray \
      --set=selfplay.search_chunk=2

Each run is ``scripts/train.py`` in a fresh process and work directory with evaluation off
(``evaluation.settings=()``). Its first rounds compile the searches (about two minutes for Leduc on
2 cores), so each rate is read from the run's ``metrics.csv`` over its steady window: from the first
row where that counter has moved to the last row, as the counter's increase over the self-play
seconds between them. The warm-up (self-play seconds until the first game ends) is reported beside
the rates; ``--seconds`` must leave a window after it. ``local:D`` runs with D host devices forced
(``--xla_force_host_platform_device_count=D``): on a CPU they share the same cores, so this measures
the sharding's overhead, not a speed-up. ``ray`` runs with ``ray.actor_workers`` and
``ray.solver_workers`` from --ray_workers. Ends with one JSON line {"config", "seconds", "runs":
{RUN: {"games_per_s", "queries_per_s", "steps_per_s", "warmup_s", "devices", "workers",
"ratio_*"}}}.
"""

import csv
import json
import os
import subprocess
import sys
import tempfile

from absl import app
from absl import flags

_CONFIG = flags.DEFINE_string("config", "configs/leduc.py", "Experiment config file.")
_SECONDS = flags.DEFINE_float(
  "seconds", 360.0, "Self-play seconds of each run (compilation included).", lower_bound=1.0
)
_RUNS = flags.DEFINE_list("runs", ["local", "ray"], "Runs: local, local:DEVICES, ray.")
_RAY_WORKERS = flags.DEFINE_string("ray_workers", "1,1", "Ray actor workers,solver workers.")
_SET = flags.DEFINE_multi_string(
  "set", [], "A config override for every run, as FIELD=VALUE (e.g. --set=selfplay.search_chunk=2)."
)
_RATES = {"games_per_s": "games", "queries_per_s": "queries_solved", "steps_per_s": "step"}
_LOG_EVERY = 15  # seconds between metrics rows


def _command(run: str, workdir: str) -> tuple[list[str], dict[str, str]]:
  """The train.py command line and environment of ``run``; ``ValueError`` for an unknown run."""
  command = [
    sys.executable,
    os.path.join(os.path.dirname(__file__), "train.py"),
    f"--config={_CONFIG.value}",
    f"--workdir={workdir}",
    "--config.max_steps=100000000",
    f"--config.max_seconds={_SECONDS.value}",
    "--config.evaluation.settings=()",
    f"--log_every={_LOG_EVERY}",
    *(f"--config.{override}" for override in _SET.value),
  ]
  env = dict(os.environ)
  backend, _, devices = run.partition(":")
  if backend == "ray" and not devices:
    actors, solvers = (int(n) for n in _RAY_WORKERS.value.split(","))
    command += [
      "--config.backend=ray",
      f"--config.ray.actor_workers={actors}",
      f"--config.ray.solver_workers={solvers}",
    ]
  elif backend == "local" and (not devices or devices.isdigit()):
    if devices:
      env["XLA_FLAGS"] = (
        f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
      )
  else:
    raise ValueError(f"--runs: unknown run {run!r}; valid: local, local:DEVICES, ray")
  return command, env


def steady_rates(rows: list[dict[str, str]]) -> dict[str, float | None]:
  """Each counter's rate over its steady window of the metrics ``rows`` (None where the counter
  moved in fewer than two rows), and ``warmup_s``: the self-play seconds at the first row with a
  game."""
  seconds = [float(row["seconds"]) for row in rows]
  out: dict[str, float | None] = {}
  for rate, counter in _RATES.items():
    values = [float(row[counter]) for row in rows]
    first = next((i for i, value in enumerate(values) if value > 0), len(values))
    moved = first < len(values) - 1 and seconds[-1] > seconds[first]
    out[rate] = (values[-1] - values[first]) / (seconds[-1] - seconds[first]) if moved else None
  first_game = next(
    (s for s, row in zip(seconds, rows, strict=True) if float(row["games"]) > 0), None
  )
  out["warmup_s"] = first_game
  return out


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
      with open(os.path.join(workdir, "metrics.csv"), newline="") as f:
        rates = steady_rates(list(csv.DictReader(f)))
    if rates["games_per_s"] is None:
      raise RuntimeError(
        f"{run}: no steady window after the warm-up in {_SECONDS.value:g} s; raise --seconds"
      )
    results[run] = {
      **rates,
      "devices": summary["devices"],
      "workers": summary["workers"],
      "steps": summary["steps"],
      "games": summary["games"],
      "seconds": summary["seconds"],
    }
  base = results.get("local")
  print(
    f"\n{'run':>10} {'devices':>8} {'workers':>8} {'warm-up s':>10} {'games/s':>9} "
    f"{'queries/s':>10} {'steps/s':>9}   ratios to local (games, queries, steps)"
  )
  for run, row in results.items():
    if base:
      row.update(
        {
          f"ratio_{rate}": row[rate] / base[rate] if row[rate] and base[rate] else None
          for rate in _RATES
        }
      )
    ratios = ", ".join(
      "-" if row.get(f"ratio_{rate}") is None else f"{row[f'ratio_{rate}']:.2f}" for rate in _RATES
    )
    queries, steps = (
      "-" if row[rate] is None else f"{row[rate]:.2f}" for rate in ("queries_per_s", "steps_per_s")
    )
    print(
      f"{run:>10} {row['devices']:>8} {row['workers']:>8} {row['warmup_s']:>10.0f} "
      f"{row['games_per_s']:>9.3f} {queries:>10} {steps:>9}   {ratios}"
    )
  print(json.dumps({"config": _CONFIG.value, "seconds": _SECONDS.value, "runs": results}))


if __name__ == "__main__":
  app.run(main)
