"""Exploitability against self-play time for several training runs in one PNG (SoG against ReBeL).

  python scripts/compare_runs.py --runs=out/sog_ld4,out/rebel_ld4 \
      --plot=docs/liars_dice4_sog_vs_rebel.png

Reads each run's ``evaluation.csv`` (``scripts/train.py``: one row per evaluation and setting, with
the run's self-play seconds so far) and draws every setting's mean exploitability with its min-max
ribbon against those seconds. Where ReBeL's table 2 has the game (``sog.eval.paper``), its ReBeL
value and its full-game CFR value are drawn as horizontal lines. Prints each setting's last
evaluation and ends with one JSON line.
"""

import csv
import json
import pathlib

from absl import app
from absl import flags

from sog import plotting
from sog.eval import paper

_RUNS = flags.DEFINE_list("runs", None, "Work directories of training runs.", required=True)
_PLOT = flags.DEFINE_string("plot", None, "Write the PNG here.", required=True)
_GAME = flags.DEFINE_string(
  "game",
  None,
  "The runs' game (for the reference values; default: "
  "read from the first run's checkpoint progress file).",
)


def _game_of(workdir: pathlib.Path) -> str | None:
  progress = workdir / "checkpoint" / "selfplay.json"
  if not progress.is_file():
    return None
  return json.loads(progress.read_text())["experiment"]["game"]


def main(argv):
  del argv
  series, last = {}, {}
  for run in _RUNS.value:
    path = pathlib.Path(run) / "evaluation.csv"
    if not path.is_file():
      raise ValueError(f"--runs: {run} has no evaluation.csv (is it a scripts/train.py work dir?)")
    with path.open() as f:
      for row in sorted(csv.DictReader(f), key=lambda r: float(r["seconds"])):
        columns = series.setdefault(row["setting"], ([], [], [], []))
        for column, value in zip(
          columns,
          (float(row["seconds"]), *(float(row[k]) for k in ("min", "mean", "max"))),
          strict=True,
        ):
          column.append(value)
        last[row["setting"]] = {
          "step": int(row["step"]),
          "seconds": float(row["seconds"]),
          "mean": float(row["mean"]),
          "min": float(row["min"]),
          "max": float(row["max"]),
          "run": run,
        }
  game = _GAME.value or _game_of(pathlib.Path(_RUNS.value[0]))
  reference = paper.rebel_table2(game) if game else None
  baselines = None
  if reference is not None:
    rebel = [name for name in series if name.startswith("ReBeL")]
    baselines = {
      "ReBeL paper, table 2": dict.fromkeys(rebel, reference.rebel) or {"-": reference.rebel},
      "full-game CFR, 1,024 iterations (ReBeL table 2)": {"-": reference.full_game_cfr},
    }
  plotting.ribbon_plot(
    _PLOT.value,
    series,
    f"{game}: exploitability against self-play time",
    "self-play seconds (2 CPU cores)",
    "exploitability (mean, min-max of seeds)",
    baselines=baselines,
  )
  for name, row in last.items():
    print(
      f"{name:>24}: step {row['step']}, {row['seconds']:.0f} s: mean {row['mean']:.4g} "
      f"(min {row['min']:.4g}, max {row['max']:.4g})"
    )
  print(json.dumps({"game": game, "last": last, "plot": _PLOT.value}))


if __name__ == "__main__":
  app.run(main)
