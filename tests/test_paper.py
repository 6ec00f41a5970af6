"""The published reference values are keyed by the names the scripts look up, in our units."""

import json
import subprocess
import sys

import pytest

import sog
from sog import games
from sog.eval import paper
from tests.conftest import ROOT

_KEYS = sorted({*paper.FIG3, *paper.REBEL_TABLE2, *paper.BASELINE_ANCHORS})


@pytest.mark.parametrize("name", _KEYS)
def test_reference_values_are_keyed_by_canonical_game_names(name):
  # The scripts look values up by ``game.name`` (the canonical name); a key in another spelling
  # would silently drop the reference line from every plot.
  assert games.canonical_name(name) == name


@pytest.mark.parametrize("name", sorted(paper.BASELINE_ANCHORS))
def test_baseline_anchors_lie_between_equilibrium_and_uniform_play(name):
  # Catches a figure entered in other units (NashConv instead of exploitability, mbb/h, ...).
  game = sog.load(name)
  uniform = sog.eval.exploitability(game, sog.eval.uniform_policy(game.tree))
  for label, value in paper.baseline_anchors(name).items():
    assert 0.0 < value < uniform, (label, value, uniform)


def _evaluate_output(path, rows, **fields):
  """A file shaped like scripts/evaluate.py's output: a table, then its JSON line (``fields``, such
  as ``per_seed`` and ``first_seed``, join each row)."""
  results = [
    {"sims": s, "exploitability": {"min": m, "mean": m, "max": m}, **fields} for s, m in rows
  ]
  path.write_text("s mean\n" + json.dumps({**results[0], "results": results}) + "\n")
  return str(path)


def _plot_protocol(png, *series: str) -> subprocess.CompletedProcess:
  command = [sys.executable, "scripts/plot_protocol.py", "--game=leduc_poker", f"--out={png}"]
  return subprocess.run(
    [*command, *(f"--series={s}" for s in series)], capture_output=True, text=True, cwd=ROOT
  )


def test_plot_protocol_draws_runs_beside_fig3(tmp_path):
  first = _evaluate_output(tmp_path / "a.txt", [(100, 0.0672)])
  second = _evaluate_output(tmp_path / "b.txt", [(33, 0.18), (1000, 0.0102)])
  png = tmp_path / "plot.png"
  out = _plot_protocol(png, f"perfect leaf={first},{second}")
  assert out.returncode == 0, out.stderr
  summary = json.loads(out.stdout.splitlines()[-1])
  assert summary["series"]["perfect leaf"] == pytest.approx(
    {"33": 180.0, "100": 67.2, "1000": 10.2}
  )
  trained = paper.fig3("leduc_poker").trained
  assert summary["series"]["SoG, fig. 3, trained"] == pytest.approx(
    {str(s): v * 1000 for s, v in trained.items()}
  )
  assert png.stat().st_size > 0
  twice = _plot_protocol(png, f"x={first},{first}")
  assert twice.returncode != 0 and "given twice" in twice.stderr
  # Slices of one evaluation over disjoint seeds (--first_seed) pool into one point per s.
  slices = [
    _evaluate_output(tmp_path / f"slice{k}.txt", [(100, 0.0)], per_seed=seeds, first_seed=first)
    for k, (first, seeds) in enumerate([(0, [0.1, 0.2]), (2, [0.3, 0.6, 0.3])])
  ]
  pooled = _plot_protocol(png, f"split={','.join(slices)}")
  assert pooled.returncode == 0, pooled.stderr
  assert json.loads(pooled.stdout.splitlines()[-1])["series"]["split"] == pytest.approx(
    {"100": 300.0}
  )
