"""The published reference values are keyed by the names the scripts look them up by, in our units."""

import pytest

import sog
from sog import games
from sog.eval import paper

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
