"""Exploitability against s from saved ``scripts/evaluate.py`` outputs, beside SoG's fig. 3.

  python scripts/plot_protocol.py --game=leduc_poker --out=docs/leduc_search.png \
      --series="perfect leaf, paper's schedule=out/sim33.txt,out/sim100.txt" \
      --series="shipped network=out/net.txt"

Each --series is ``LABEL=FILE[,FILE...]``: the files are evaluate.py's outputs (its last line is its
JSON line); every setting in them (``results``) becomes a point (s, mean exploitability), in mbb/h
for poker (x 1000; --scale sets another multiplier). Files of one series that give the same s over
disjoint seeds (``--first_seed`` slices of one evaluation) are pooled into one point. The paper's
trained and untrained fig. 3 curves are drawn when it has the game. Prints the table it drew and
ends with one JSON line.
"""

import json
import pathlib

from absl import app
from absl import flags

from sog import plotting
from sog.eval import paper

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game the runs are of (for fig. 3's curves).")
_SERIES = flags.DEFINE_multi_string("series", [], "LABEL=FILE[,FILE...] (evaluate.py outputs).")
_OUT = flags.DEFINE_string("out", "out/protocol.png", "The PNG to write.")
_SCALE = flags.DEFINE_float(
  "scale", None, "Multiplier of the exploitability (default: the game's unit, mbb/h for poker)."
)


def read_points(paths: list[str]) -> dict[int, float]:
  """{s: mean exploitability} from evaluate.py outputs. Files that give the same s over disjoint
  seeds (an evaluation split with ``--first_seed``) are pooled: the mean over all their seeds. A
  ``ValueError`` names a file without a JSON line, or one whose seeds at some s overlap another
  file's."""
  seeds: dict[int, dict[int, float]] = {}  # s -> {seed: exploitability}
  for path in paths:
    lines = [
      line
      for line in pathlib.Path(path).read_text(errors="replace").splitlines()
      if line.startswith("{")
    ]
    if not lines:
      raise ValueError(f"{path}: no JSON line (is it scripts/evaluate.py's output?)")
    for row in json.loads(lines[-1])["results"]:
      first = row.get("first_seed", 0)
      values = row.get("per_seed", [row["exploitability"]["mean"]])
      mine = dict(zip(range(first, first + len(values)), values, strict=True))
      known = seeds.setdefault(row["sims"], {})
      if known.keys() & mine.keys():
        raise ValueError(
          f"{path}: s = {row['sims']} is given twice in this series for seeds "
          f"{sorted(known.keys() & mine.keys())} (split evaluations pool only over disjoint seeds)"
        )
      known.update(mine)
  return {s: sum(values.values()) / len(values) for s, values in seeds.items()}


def parse_series(specs: list[str]) -> dict[str, dict[int, float]]:
  series = {}
  for spec in specs:
    label, sep, files = spec.partition("=")
    if not sep or not label or not files:
      raise ValueError(f"--series must be LABEL=FILE[,FILE...], got {spec!r}")
    series[label] = read_points(files.split(","))
  return series


def main(argv):
  del argv
  series = parse_series(_SERIES.value)
  if not series:
    raise ValueError("give at least one --series")
  scale, unit = paper.exploitability_unit(_GAME.value)
  if _SCALE.value is not None:
    scale, unit = _SCALE.value, f"exploitability x {_SCALE.value:g}"
  lines = {
    label: (sorted(points), [points[s] * scale for s in sorted(points)])
    for label, points in series.items()
  }
  reference = paper.fig3(_GAME.value)
  if reference is not None:
    for name, values in (
      ("SoG, fig. 3, trained", reference.trained),
      ("SoG, fig. 3, untrained", reference.untrained),
    ):
      lines[name] = (sorted(values), [values[s] * scale for s in sorted(values)])
  plotting.line_plot(
    _OUT.value, lines, f"{_GAME.value}: SoG(s, 1) by the protocol", "simulations s", unit, logx=True
  )
  every_s = sorted({s for x, _ in lines.values() for s in x})
  print(f"{'series':<44}" + "".join(f"{s:>9}" for s in every_s))
  for label, (x, y) in lines.items():
    row = dict(zip(x, y, strict=True))
    print(f"{label:<44}" + "".join(f"{row[s]:>9.1f}" if s in row else f"{'':>9}" for s in every_s))
  print(
    json.dumps(
      {
        "game": _GAME.value,
        "out": _OUT.value,
        "series": {
          label: dict(zip(map(str, x), y, strict=True)) for label, (x, y) in lines.items()
        },
      }
    )
  )


if __name__ == "__main__":
  app.run(main)
