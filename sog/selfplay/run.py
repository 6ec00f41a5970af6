"""A training run in a work directory: resume, rounds until the step or time budget, checkpoints,
metrics, periodic evaluation and the exploitability plot.

The work directory holds:
  * ``checkpoint/``: the latest checkpoint (:meth:`SelfPlay.save`; ``scripts/evaluate.py --leaf``
    takes it, or the work directory itself);
  * ``metrics.csv``: one row per logged round (step, counters, buffer fill, rates, losses);
  * ``evaluation.csv``: one row per evaluation and setting (step, seconds, min / mean / max);
  * ``tensorboard/``: the same rows (and the diagnostics') as TensorBoard scalars, tagged
    ``metrics/FIELD``, ``evaluation/SETTING/FIELD`` and ``diagnostics/FIELD``;
  * ``losses.png``: the value and policy losses against train steps (written at the end);
  * ``exploitability.png``: exploitability against train steps for every evaluated setting (SoG fig.
    3);
  * ``snapshots/step_N/``: the network at step N, if the experiment asks for snapshots (for
    evaluating a run offline with ``scripts/eval_snapshots.py``, e.g. one whose protocol is too
    costly to run during training): the untrained network at step 0, every ``snapshot_every_steps``,
    and the final one;
  * ``best/``: with ``evaluation.keep_best``, the network of the best evaluation so far (a
    checkpoint, with ``best.json``: its step, setting and mean exploitability);
  * ``diagnostics.csv`` and ``value_errors.png``: if the experiment asks for them, the solver's
    target error and the network's errors against exact solves (:mod:`sog.selfplay.diagnostics`) by
    step.
A run started on a work directory that has a checkpoint continues from it: the step, both buffers,
the counters and the time already spent (``max_seconds`` counts the self-play time of the whole run,
evaluations excluded); the CSVs are appended to.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
import csv
import json
import pathlib
import time

import jax

from sog import monitoring
from sog import plotting
from sog.eval import paper
from sog.selfplay import config as config_lib
from sog.selfplay import diagnostics as diagnostics_lib
from sog.selfplay import loop

CHECKPOINT = "checkpoint"
SNAPSHOTS = "snapshots"
BEST = "best"
METRICS = "metrics.csv"
EVALUATION = "evaluation.csv"
PLOT = "exploitability.png"
DIAGNOSTICS = "diagnostics.csv"
TENSORBOARD = monitoring.metrics.TENSORBOARD
DIAGNOSTICS_PLOT = "value_errors.png"
LOSSES_PLOT = "losses.png"
_METRIC_FIELDS = (
  "step",
  *loop.COUNTERS,
  "replay",
  "replay_available",
  "queries_waiting",
  "games_per_s",
  "queries_per_s",
  "steps_per_s",
  "loss",
  "value_loss",
  "policy_loss",
)
_EVALUATION_FIELDS = ("step", "seconds", "setting", "min", "mean", "max", "eval_seconds")
_DIAGNOSTIC_FIELDS = ("step", "seconds", *diagnostics_lib.ERRORS)


def plot_evaluation(
  workdir: str | pathlib.Path,
  title: str,
  game_name: str | None = None,
  csv_name: str = EVALUATION,
  png_name: str = PLOT,
  baselines: Mapping[str, Mapping[str, float]] | None = None,
) -> pathlib.Path | None:
  """Writes ``png_name`` from ``csv_name`` (exploitability against train steps, the mean of the
  seeds with their min-max ribbon, per setting), like SoG's fig. 3: where the paper has the game and
  the setting's s (``sog.eval.paper``), its untrained value is a cross at step 0 and its trained
  value a dashed line. ``baselines[label][setting]`` (e.g. another leaf model's protocol value) are
  drawn as horizontal lines, one line style per label."""
  workdir = pathlib.Path(workdir)
  if not (workdir / csv_name).is_file():
    return None
  series: dict[str, tuple[list, list, list, list]] = {}
  with (workdir / csv_name).open() as f:
    for row in sorted(csv.DictReader(f), key=lambda row: int(row["step"])):
      columns = series.setdefault(row["setting"], ([], [], [], []))
      for column, value in zip(
        columns, (int(row["step"]), *(float(row[k]) for k in ("min", "mean", "max"))), strict=True
      ):
        column.append(value)
  markers, levels, reference_label = {}, {}, "reference"
  reference = paper.fig3(game_name) if game_name else None
  if reference is not None:
    reference_label = (
      f"SoG paper (untrained: x at 0; trained {reference.trained_steps // 1000}k steps: dashed)"
    )
    for setting in series:
      if not setting.startswith("SoG("):  # a baseline's setting (ReBeL's): no fig. 3 value
        continue
      s = config_lib.parse_setting(setting)[0]
      if s in reference.trained:
        markers[setting] = [(0, reference.untrained[s])]
        levels[setting] = reference.trained[s]
  plotting.ribbon_plot(
    workdir / png_name,
    series,
    title,
    "train steps",
    "exploitability (mean, min-max of seeds)",
    markers,
    levels,
    reference_label,
    baselines,
  )
  return workdir / png_name


def _plot_columns(
  workdir: pathlib.Path,
  csv_name: str,
  png_name: str,
  columns: Mapping[str, str],
  title: str,
  ylabel: str,
) -> pathlib.Path | None:
  """Writes ``png_name`` in ``workdir``: the ``columns`` of ``csv_name`` (a line per label, its
  column's values) against train steps, over the rows that hold them all; None without such rows."""
  if not (workdir / csv_name).is_file():
    return None
  with (workdir / csv_name).open() as f:
    rows = [row for row in csv.DictReader(f) if all(row.get(c) for c in columns.values())]
  if not rows:
    return None
  steps = [int(row["step"]) for row in rows]
  series = {
    label: (steps, [float(row[column]) for row in rows]) for label, column in columns.items()
  }
  plotting.line_plot(workdir / png_name, series, title, "train steps", ylabel)
  return workdir / png_name


def plot_diagnostics(workdir: str | pathlib.Path, title: str) -> pathlib.Path | None:
  """Writes ``value_errors.png`` from ``diagnostics.csv`` (each error against train steps)."""
  return _plot_columns(
    pathlib.Path(workdir),
    DIAGNOSTICS,
    DIAGNOSTICS_PLOT,
    {name: name for name in diagnostics_lib.ERRORS},
    title,
    "mean |conditional value error| vs exact",
  )


def plot_losses(workdir: str | pathlib.Path, title: str) -> pathlib.Path | None:
  """Writes ``losses.png`` from ``metrics.csv``: the value and policy losses (each row's mean over
  its train steps) against train steps; None before the first train step."""
  return _plot_columns(
    pathlib.Path(workdir),
    METRICS,
    LOSSES_PLOT,
    {"value loss": "value_loss", "policy loss": "policy_loss"},
    title,
    "loss",
  )


class _Rates:
  """Rates of the counters over the last reporting interval."""

  def __init__(self, stats: dict):
    self.last, self.time = dict(stats), time.perf_counter()

  def update(self, stats: dict) -> dict[str, float]:
    now = time.perf_counter()
    elapsed = max(now - self.time, 1e-9)
    rates = {
      "games_per_s": (stats["games"] - self.last["games"]) / elapsed,
      "queries_per_s": (stats["queries_solved"] - self.last["queries_solved"]) / elapsed,
      "steps_per_s": (stats["step"] - self.last["step"]) / elapsed,
    }
    self.last, self.time = dict(stats), now
    return rates


def train(
  experiment: config_lib.Experiment,
  workdir: str | pathlib.Path,
  log: Callable[[str], None] | None = None,
  log_every_seconds: float = 10.0,
) -> dict:
  """Runs (or resumes) SoG's self-play ``experiment`` in ``workdir``, in one process or with its
  roles on Ray (``experiment.backend``); returns the final summary: game, steps, seconds, counters,
  rates, the local devices the searches and train steps are split over, the backend and its workers
  (0 in one process), and the last evaluation ({"SoG(s,c)": {"min", "mean", "max", ...}})."""
  if experiment.backend == "ray":
    from sog.selfplay import distributed  # Ray is imported only by runs that use it

    selfplay = distributed.RaySelfPlay(experiment)
    workers = experiment.ray.workers
  else:
    selfplay, workers = loop.SelfPlay(experiment), 0
  try:
    summary = drive(
      selfplay,
      experiment,
      workdir,
      "SoG self-play" + (f" on Ray ({workers} workers)" if workers else ""),
      log,
      log_every_seconds,
    )
  finally:
    if workers:
      selfplay.close()
  return {**summary, "backend": experiment.backend, "workers": workers}


def drive(
  run,
  experiment: config_lib.Experiment,
  workdir: str | pathlib.Path,
  title: str,
  log: Callable[[str], None] | None = None,
  log_every_seconds: float = 10.0,
) -> dict:
  """The training loop of a self-play ``run`` in ``workdir``, with ``experiment``'s budgets,
  evaluation, snapshot and diagnostics schedule: :class:`sog.selfplay.loop.SelfPlay`, or a
  baseline's run with the same methods (``round``, ``stats``, ``evaluate``, ``save``, ``restore``,
  ``save_network``) and attributes (``step``, ``params``, ``counters``, ``game``, ``network``,
  ``last_solved``: the latest solved queries and the examples they gave, or None).

  Progress (:class:`sog.monitoring.Progress`) counts the share of the nearer budget (steps or
  self-play seconds) done, with the counters and rates as postfix; events (resume, evaluations,
  diagnostics) and, off a terminal, a progress line every ``log_every_seconds`` go to ``log``
  (standard output if None)."""
  workdir = pathlib.Path(workdir)
  workdir.mkdir(parents=True, exist_ok=True)
  resumed = loop.has_checkpoint(workdir / CHECKPOINT)
  if resumed:
    run.restore(workdir / CHECKPOINT)

  def budget_done() -> float:
    """The share of the nearer budget spent, in percent."""
    share = run.step / experiment.max_steps
    if experiment.max_seconds > 0:
      share = max(share, run.counters["seconds"] / experiment.max_seconds)
    return 100.0 * min(share, 1.0)

  with (
    monitoring.MetricsWriter(workdir) as writer,
    monitoring.Progress(
      f"{run.game.name}: {title}",
      100.0,
      unit="%",
      every_seconds=log_every_seconds,
      log=log,
      initial=budget_done(),
    ) as progress,
  ):
    if resumed:
      stats = run.stats()
      progress.write(
        f"resumed from {workdir / CHECKPOINT}: step {run.step}, {stats['games']} "
        f"games, replay {stats['replay']}, queries waiting {stats['queries_waiting']}"
      )
    last = _loop(run, experiment, workdir, title, writer, progress, budget_done, log_every_seconds)
  plot_losses(workdir, f"{run.game.name}: {title}, losses")
  stats = run.stats()
  seconds = stats["seconds"]
  return {
    "game": run.game.name,
    "steps": run.step,
    "seconds": seconds,
    "exploitability": last,
    "games": stats["games"],
    "queries_solved": stats["queries_solved"],
    "games_per_s": stats["games"] / max(seconds, 1e-9),
    "queries_per_s": stats["queries_solved"] / max(seconds, 1e-9),
    "steps_per_s": run.step / max(seconds, 1e-9),
    "devices": jax.local_device_count(),
    "workdir": str(workdir),
  }


def _loop(
  run,
  experiment: config_lib.Experiment,
  workdir: pathlib.Path,
  title: str,
  writer: monitoring.MetricsWriter,
  progress: monitoring.Progress,
  budget_done: Callable[[], float],
  log_every_seconds: float,
) -> dict:
  """Rounds until the budget is spent, on the experiment's schedule; returns the last evaluation."""
  evaluation = experiment.evaluation
  evaluated_at = None

  def evaluate() -> dict:
    nonlocal evaluated_at
    evaluated_at = run.step
    results = run.evaluate()  # {} when the experiment evaluates nothing
    if not results:
      return {}
    for name, stats in results.items():
      writer.write(
        "evaluation",
        _EVALUATION_FIELDS,
        {
          **stats,
          "step": run.step,
          "seconds": f"{run.counters['seconds']:.1f}",
          "setting": name,
          "eval_seconds": stats["seconds"],
        },
        series_field="setting",
      )
      progress.write(
        f"  eval step {run.step}: {name} exploitability mean {stats['mean']:.4g} "
        f"(min {stats['min']:.4g}, max {stats['max']:.4g}), {stats['seconds']:.0f} s"
      )
    plot_evaluation(workdir, f"{run.game.name}: {title}, {evaluation.seeds} seeds", run.game.name)
    if evaluation.keep_best:  # by the first setting (the run's own name for it: SoG's, ReBeL's)
      setting = next(iter(results))
      keep_if_best(run, workdir, setting, results[setting]["mean"])
    return results

  diagnostics = None
  if experiment.diagnostics_every_steps:
    diagnostics = diagnostics_lib.ValueDiagnostics(run.game, run.network, seed=experiment.seed)
  next_diagnostics = run.step

  def diagnose() -> None:
    queries, solved = run.last_solved
    nodes = run.game.tree.nodes_of_padded_paths(queries.paths)
    errors = diagnostics.measure(run.params, nodes, solved.ranges, solved.values)
    writer.write(
      "diagnostics",
      _DIAGNOSTIC_FIELDS,
      {**errors, "step": run.step, "seconds": f"{run.counters['seconds']:.1f}"},
    )
    progress.write(
      f"  value errors at step {run.step}: "
      + ", ".join(f"{name} {value:.4g}" for name, value in errors.items())
    )
    plot_diagnostics(workdir, f"{run.game.name}: self-play value errors vs exact solves")

  last = evaluate() if run.step == 0 else {}
  next_eval = (
    (run.step // evaluation.every_steps + 1) * evaluation.every_steps
    if evaluation.every_steps
    else None
  )
  snapshots = experiment.snapshot_every_steps
  next_snapshot = (run.step // snapshots + 1) * snapshots if snapshots else None
  if snapshots and run.step == 0:  # the untrained network: a training curve's first point
    run.save_network(workdir / SNAPSHOTS / "step_0")
  rates = _Rates(run.stats())
  last_row = last_save = time.perf_counter()
  metrics: list[dict] = []
  postfix = ""

  def out_of_budget() -> bool:
    return run.step >= experiment.max_steps or (
      experiment.max_seconds > 0 and run.counters["seconds"] >= experiment.max_seconds
    )

  while not out_of_budget():
    metrics += run.round()
    now = time.perf_counter()
    if now - last_row >= log_every_seconds or out_of_budget():  # and a last row at the end
      stats = run.stats()
      row = {**stats, **rates.update(stats)}
      if metrics:
        row.update({k: sum(m[k] for m in metrics) / len(metrics) for k in metrics[0]})
      writer.write("metrics", _METRIC_FIELDS, row)
      postfix = _postfix(experiment, row)
      metrics, last_row = [], now
    progress.update(budget_done(), postfix)
    if diagnostics is not None and run.step >= next_diagnostics and run.last_solved is not None:
      diagnose()
      next_diagnostics = (
        run.step // experiment.diagnostics_every_steps + 1
      ) * experiment.diagnostics_every_steps
    if next_snapshot is not None and run.step >= next_snapshot:
      run.save_network(workdir / SNAPSHOTS / f"step_{run.step}")
      next_snapshot += snapshots
    if next_eval is not None and run.step >= next_eval:
      last = evaluate()
      next_eval += evaluation.every_steps
    if now - last_save >= experiment.checkpoint_every_seconds:
      run.save(workdir / CHECKPOINT)
      last_save = time.perf_counter()
  run.save(workdir / CHECKPOINT)
  if snapshots:
    run.save_network(workdir / SNAPSHOTS / f"step_{run.step}")
  if evaluated_at != run.step:
    last = evaluate()
  return last


def keep_if_best(run, workdir: pathlib.Path, setting: str, mean: float) -> bool:
  """Saves the run's network in ``best/`` (and its step and value in ``best/best.json``) if ``mean``
  is below the best evaluation kept so far; returns whether it did."""
  record = workdir / BEST / "best.json"
  if record.is_file() and json.loads(record.read_text())["mean"] <= mean:
    return False
  run.save_network(workdir / BEST)
  record.write_text(json.dumps({"step": run.step, "setting": setting, "mean": mean}) + "\n")
  return True


def _postfix(experiment: config_lib.Experiment, row: dict) -> str:
  """Steps, games, queries, buffer fill, rates and the loss of the last interval."""
  loss = f", loss {row['loss']:.4f}" if "loss" in row else ""
  return (
    f"step {row['step']}/{experiment.max_steps}, games {row['games']}, "
    f"queries solved {row['queries_solved']} (waiting {row['queries_waiting']}), "
    f"replay {row['replay']}/{experiment.selfplay.replay_capacity}, "
    f"{row['games_per_s']:.2f} games/s, {row['queries_per_s']:.1f} queries/s, "
    f"{row['steps_per_s']:.2f} steps/s{loss}"
  )
