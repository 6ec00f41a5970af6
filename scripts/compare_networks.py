"""Which measurable property of a network predicts its protocol number: networks' exploitability
beside their diagnostics, and the rank correlation of each diagnostic with it.

  python scripts/compare_networks.py --networks="shipped=out/l49/shipped,run 0=out/l49/run0/eval"

Each network's directory holds ``eval.txt`` (``scripts/evaluate.py``'s output, with one or more
values of s; its last line is the JSON line) and ``diag_s{s}.txt`` for each s
(``scripts/diagnose_leaf.py``'s output on that run's recorded queries). For every s, the table has
the mean exploitability (mbb/h for poker) and the diagnostics of the queries of the searches at that
s: conditional value error over all queries, off the re-solving branch (and its bias), in first
searches, at reached and unreached infostates; the bias of each player's conditional values; the
held-out error and the policy prior's entropy. Then Spearman's rank correlation of each diagnostic
with the exploitability over the networks (with few networks it is a pointer, not a test). Prints
the tables in Markdown and ends with one JSON line.
"""

import json
import pathlib

from absl import app
from absl import flags
import numpy as np
from scipy import stats

from sog.eval import paper

_NETWORKS = flags.DEFINE_list(
  "networks", [], "LABEL=DIR pairs (DIR holds eval.txt and diag_s{s}.txt)."
)
_GAME = flags.DEFINE_string("game", "leduc_poker", "The game (for its exploitability unit).")

#: (column, group in diagnose_leaf's JSON, field) of the diagnostics compared.
DIAGNOSTICS = (
  ("error, all", "all", "conditional_error"),
  ("error, off-branch", "off_branch", "conditional_error"),
  ("bias, off-branch", "off_branch", "bias"),
  ("error, first searches", "first_search", "conditional_error"),
  ("error, unreached", "unreached", "conditional_error"),
  ("error, reached", "reached", "conditional_error"),
  ("cf. error, all", "all", "counterfactual_error"),
  ("bias, player 0", "player_0", "bias"),
  ("bias, player 1", "player_1", "bias"),
)


def _last_json(path: pathlib.Path) -> dict:
  lines = [line for line in path.read_text(errors="replace").splitlines() if line.startswith("{")]
  if not lines:
    raise ValueError(f"{path}: no JSON line")
  return json.loads(lines[-1])


def read_network(directory: pathlib.Path, scale: float) -> dict[int, dict[str, float]]:
  """{s: {"exploitability": ..., column: value, ...}} of one network's directory."""
  out = {}
  for row in _last_json(directory / "eval.txt")["results"]:
    s = row["sims"]
    entry = {"exploitability": scale * row["exploitability"]["mean"]}
    diag_path = directory / f"diag_s{s}.txt"
    if diag_path.is_file():
      diag = _last_json(diag_path)
      for column, group, field in DIAGNOSTICS:
        entry[column] = diag["groups"][group][field]
      entry["held-out error"] = diag["held_out_error"]
      entry["prior entropy"] = diag["prior_entropy"]
    out[s] = entry
  return out


def main(argv):
  del argv
  if not _NETWORKS.value:
    raise ValueError("give --networks=LABEL=DIR,...")
  scale, unit = paper.exploitability_unit(_GAME.value)
  networks = {}
  for spec in _NETWORKS.value:
    label, sep, directory = spec.partition("=")
    if not sep:
      raise ValueError(f"--networks entries are LABEL=DIR, got {spec!r}")
    if label in networks:
      raise ValueError(f"--networks: the label {label!r} is given twice")
    networks[label] = read_network(pathlib.Path(directory), scale)
  every_s = sorted({s for rows in networks.values() for s in rows})
  correlations = {}
  for s in every_s:
    rows = {label: rows[s] for label, rows in networks.items() if s in rows}
    columns = list(dict.fromkeys(c for row in rows.values() for c in row if c != "exploitability"))
    print(f"\ns = {s}: exploitability ({unit}) and diagnostics of the protocol's queries\n")
    print("| network | exploitability | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for label, row in rows.items():
      values = " | ".join(f"{row.get(c, float('nan')):.3g}" for c in columns)
      print(f"| {label} | {row['exploitability']:.1f} | {values} |")
    exploitability = [row["exploitability"] for row in rows.values()]
    correlations[s] = {}
    for c in columns:
      values = [row.get(c, np.nan) for row in rows.values()]
      if len(rows) >= 3 and np.isfinite(values).all():
        correlations[s][c] = float(stats.spearmanr(values, exploitability).statistic)
    print(
      "\nSpearman's rank correlation with the exploitability: "
      + ", ".join(f"{c} {r:+.2f}" for c, r in correlations[s].items())
    )
  print(json.dumps({"game": _GAME.value, "networks": networks, "spearman": correlations}))


if __name__ == "__main__":
  app.run(main)
