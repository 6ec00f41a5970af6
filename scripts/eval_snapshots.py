"""A training run's curve by SoG's protocol: every network snapshot of a work directory, SoG(s, c)
each.

  python scripts/eval_snapshots.py --workdir=out/leduc --sims=33,100,300,1000 --seeds=3

Evaluates each ``snapshots/step_N`` (with --every_steps, those at its multiples and the last), with
the search and re-solving flags of ``scripts/evaluate.py`` (``scripts/common.py``; the settings the
last snapshot carries in its ``search.json``, the run's own search, unless given); a run writes its
untrained network as step 0 and its final one as a snapshot too. Rows go to
``snapshot_evaluation.csv`` in the work directory (step, setting, min / mean / max over the seeds;
``snapshot_evaluation_prior_inf.csv`` and so on for settings off the defaults, the PNG named alike;
the same rows as TensorBoard scalars in ``tensorboard/``); rows already there are kept and not
re-run, so a killed evaluation resumes. Draws ``snapshot_exploitability.png``: mean and min-max
ribbon per setting against train steps, with SoG fig. 3's values where the paper has the game, and
with --references (files holding ``scripts/evaluate.py``'s JSON lines, e.g. its logs) as horizontal
lines: per leaf model and setting, the mean over the seeds of all the files' lines (seed slices run
apart pool into one value). Ends with one JSON line (the last snapshot's rows).

  python scripts/eval_snapshots.py --workdir=out/glasses_hidden --sims=100 --seeds=3 \
      --every_steps=5000 --references=out/gh_zero.log
"""

import csv
import json
import pathlib
import re

from absl import app
from absl import flags
from absl import logging

import common
from sog import monitoring
from sog.nets import checkpoint
from sog.protocol import composed
from sog.search import pool
from sog.search import predecessors
from sog.search import resolving
from sog.search import types as search_types
from sog.search.pool import sized
from sog.selfplay import config as config_lib
from sog.selfplay import run as run_lib

_WORKDIR = flags.DEFINE_string("workdir", None, "Training work directory.", required=True)
_SEARCH = common.define_search_flags(sims=["33", "100", "300", "1000"])
_PROTOCOL = common.define_protocol_flags(seeds=3)
_EVERY = flags.DEFINE_integer(
  "every_steps", 0, "Only the snapshots at multiples of this and the last (0: all).", lower_bound=0
)
_REFERENCES = flags.DEFINE_list(
  "references",
  [],
  "Files of scripts/evaluate.py JSON lines, drawn "
  "as horizontal lines (mean over their pooled seeds per leaf and s).",
)
flags.adopt_module_key_flags(common)  # --help lists the shared flags too

CSV = "snapshot_evaluation.csv"
PNG = "snapshot_exploitability.png"
_FIELDS = ("step", "setting", "min", "mean", "max", "eval_seconds", "seeds")


def _outputs() -> tuple[str, str]:
  """The CSV and PNG names for these search and re-solving flags: rows searched with any setting off
  the library's defaults go to their own files (``snapshot_evaluation_prior_inf.csv``,
  ``..._puct_2_unsafe.csv``), so a resumed evaluation never reuses rows of another setting."""
  search, search_default = _SEARCH.config(1), search_types.GTCFRConfig()
  resolve, resolve_default = _PROTOCOL.resolving_config(), resolving.ResolvingConfig()
  settings = (
    ("prior", search.prior_temperature, search_default.prior_temperature),
    ("puct", search.puct_constant, search_default.puct_constant),
    ("updates", search.updates, search_default.updates),
    ("redraws", search.redraws, search_default.redraws),
    ("ties", search.tie_break, search_default.tie_break),
    ("chance", search.open_chance, search_default.open_chance),
    ("averaging", search.averaging, search_default.averaging),
    ("predecessor", _PROTOCOL.predecessor.value, "own"),
    ("alpha", resolve.alpha, resolve_default.alpha),
    ("terminate", resolve.terminate_values, resolve_default.terminate_values),
    ("first_seed", _PROTOCOL.first_seed.value, 0),
  )
  suffix = "".join(
    f"_{name}_{value:g}" if isinstance(value, float) else f"_{name}_{value}"
    for name, value, default in settings
    if value != default
  )
  suffix += "" if resolve.safe else "_unsafe"
  return CSV.replace(".csv", f"{suffix}.csv"), PNG.replace(".png", f"{suffix}.png")


def _networks(workdir: pathlib.Path) -> list[tuple[int, pathlib.Path]]:
  """(step, directory) per snapshot to evaluate, in step order."""
  found = {}
  for path in (workdir / run_lib.SNAPSHOTS).glob("step_*"):
    match = re.fullmatch(r"step_(\d+)", path.name)
    if match:
      found[int(match.group(1))] = path
  if not found:
    raise ValueError(
      f"{workdir} has no {run_lib.SNAPSHOTS}/step_N/: not a training work directory "
      "of a run with snapshot_every_steps > 0"
    )
  last = max(found)
  return [
    (step, path)
    for step, path in sorted(found.items())
    if not _EVERY.value or step % _EVERY.value == 0 or step == last
  ]


def _done(path: pathlib.Path) -> set[tuple[int, str]]:
  if not path.is_file():
    return set()
  with path.open() as f:
    return {(int(row["step"]), row["setting"]) for row in csv.DictReader(f)}


def _reference_levels(paths: list[str], game_name: str) -> dict[str, dict[str, float]]:
  """{"leaf=L": {setting: mean exploitability}} over the seeds of every evaluate.py line in
  ``paths`` (lines not starting with "{" are skipped, so whole logs can be given)."""
  per_seed: dict[tuple[str, str], dict[int, float]] = {}
  for path in paths:
    lines = [line for line in pathlib.Path(path).read_text().splitlines() if line.startswith("{")]
    if not lines:
      raise ValueError(f"--references: {path} has no JSON line of scripts/evaluate.py")
    for row in (result for line in lines for result in json.loads(line)["results"]):
      if row["game"] != game_name:
        raise ValueError(f"--references: {path} evaluates {row['game']}, not {game_name}")
      seeds = per_seed.setdefault((row["leaf"], config_lib.setting_name(row["sims"], row["c"])), {})
      seeds.update(enumerate(row["per_seed"], start=row["first_seed"]))
  levels: dict[str, dict[str, float]] = {}
  for (leaf, setting), seeds in per_seed.items():
    levels.setdefault(f"leaf={leaf}", {})[setting] = sum(seeds.values()) / len(seeds)
  return levels


def main(argv):
  del argv
  logging.set_verbosity(logging.WARNING)
  workdir = pathlib.Path(_WORKDIR.value)
  networks = _networks(workdir)
  last_step, last_dir = networks[-1]
  game_name = checkpoint.read_config(last_dir).game
  game = common.load_game(game_name)
  settings_note = common.apply_checkpoint_settings(
    str(last_dir), ("search", "resolving", "protocol")
  )
  settings = [(sims, _SEARCH.c.value) for sims in _SEARCH.simulations()]
  csv_name, png_name = _outputs()
  done = _done(workdir / csv_name)
  references = _reference_levels(_REFERENCES.value, game.name)
  print(
    f"{game.name}: {len(networks)} networks (steps {[step for step, _ in networks]}), "
    f"settings {[config_lib.setting_name(*s) for s in settings]}, {_SEARCH.describe()}, "
    f"{_PROTOCOL.describe()}"
  )
  if settings_note:
    print(settings_note)
  last_rows = []
  depth = predecessors.branch_depth(game.tree, _PROTOCOL.predecessor.value)
  pools: dict[int, sized.SizedPools] = {}
  with monitoring.MetricsWriter(workdir) as writer:
    for step, directory in networks:
      leaf = checkpoint.restore_leaf_model(directory, game_name)
      for sims, c in settings:
        name = config_lib.setting_name(sims, c)
        if (step, name) in done:
          continue
        if sims not in pools:  # compiled once per s: the snapshots are parameters of it
          searcher = pool.GTCFR(game, leaf, _SEARCH.config(sims), branch_depth=depth)
          pools[sims] = sized.SizedPools(searcher, game.tree.max_moves, game.tree)
        result = composed.compose(
          pools[sims],
          _PROTOCOL.seeds(),
          _PROTOCOL.resolving_config(),
          _PROTOCOL.batch_size.value,
          common.progress_printer(f"step {step} {name}"),
          params=leaf.params,
          predecessor=_PROTOCOL.predecessor.value,
          tree=game.tree,
        )
        stats = result.summary()
        row = {
          "step": step,
          "setting": name,
          "min": stats["min"],
          "mean": stats["mean"],
          "max": stats["max"],
          "eval_seconds": f"{result.seconds:.1f}",
          "seeds": len(_PROTOCOL.seeds()),
        }
        writer.write(pathlib.Path(csv_name).stem, _FIELDS, row, series_field="setting")
        print(
          f"step {step:>7} {name:>14}: {stats['mean']:.4g} ({stats['min']:.4g}-"
          f"{stats['max']:.4g}), {result.seconds:.0f} s",
          flush=True,
        )
        if step == last_step:
          last_rows.append(row)
  run_lib.plot_evaluation(
    workdir,
    f"{game.name}: SoG self-play by the protocol, {len(_PROTOCOL.seeds())} seeds per point",
    game.name,
    csv_name,
    png_name,
    references,
  )
  print(
    json.dumps(
      {
        "game": game.name,
        "workdir": str(workdir),
        "step": last_step,
        "last": last_rows,
        "references": references,
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
