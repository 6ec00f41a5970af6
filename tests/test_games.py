"""Conformance suite every registered game passes, and the registry's error messages."""

import copy
import dataclasses
import types

import numpy as np
import pytest

import sog.games
from sog.games import boards
from sog.games import conformance
from sog.games import public_game
from tests.conftest import ALL_GAMES
from tests.conftest import load


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("name", ALL_GAMES)
def test_conformance(name, check, rng):
  check(load(name), rng)


def _broken(game, **fields):
  """``game`` with tree fields replaced (copies), as a conformance check sees it."""
  return types.SimpleNamespace(
    public_game=game.public_game, tree=dataclasses.replace(game.tree, **fields)
  )


def _with(array, index, value):
  array = array.copy()
  array[index] = value
  return array


def _broken_trees():
  """Each check against a tree broken in the way it names (every check here can fail)."""
  kuhn, leduc = load("kuhn_poker"), load("leduc_poker")
  tree = leduc.tree
  chance = int(np.flatnonzero(tree.kind == public_game.CHANCE)[0])
  chance_child = int(np.flatnonzero(tree.parent == chance)[0])
  acting = np.argwhere(kuhn.tree.decision_infostates(0))[0]
  terminal = int(np.flatnonzero(kuhn.tree.kind == public_game.TERMINAL)[0])
  kuhn_child = int(np.flatnonzero(kuhn.tree.parent == 0)[0])
  return [
    (
      conformance.terminal_values_are_zero_sum,
      _broken(kuhn, payoff=_with(kuhn.tree.payoff, (terminal, 0, 1), np.nan)),
    ),
    (conformance.utility_scale_is_the_largest_payoff, _broken(kuhn, payoff=kuhn.tree.payoff * 2)),
    (
      conformance.legal_actions_where_players_act,
      _broken(kuhn, legal=_with(kuhn.tree.legal, tuple(acting), False)),
    ),
    (
      conformance.chance_probabilities_sum_to_one,
      _broken(leduc, chance_probability=_with(tree.chance_probability, chance_child, 0.5)),
    ),
    (
      conformance.children_match_legal_actions,
      _broken(kuhn, up_child=_with(kuhn.tree.up_child, terminal, 1)),
    ),
    (conformance.tree_is_breadth_first, _broken(kuhn, depth=_with(kuhn.tree.depth, kuhn_child, 2))),
    (
      conformance.encoding_has_fixed_shape,
      _broken(kuhn, encoding=np.zeros_like(kuhn.tree.encoding)),
    ),
    (
      conformance.prior_weights_bound_every_range,
      _broken(leduc, prior_weight=tree.prior_weight * 0.5),
    ),
    (
      conformance.root_ranges_are_prior_marginals,
      _broken(kuhn, root_ranges=kuhn.tree.root_ranges * 2),
    ),
    (conformance.max_moves_bounds_the_tree, _shorter(kuhn)),
    (conformance.decisions_follow_within_the_declared_gap, _declaring_a_gap(leduc, 3)),
    (conformance.world_rows_match_transitions, _wrong_world_rows(kuhn)),
  ]


def _wrong_world_rows(game):
  """``game`` whose ``world_row`` sends each world's actor to the next infostate up."""
  rules = copy.copy(game.public_game)
  right = type(rules).world_row

  def world_row(state, infostates):
    row = right(rules, state, infostates)
    return row.replace(next_infostate=row.next_infostate + 1)

  rules.world_row = world_row
  return types.SimpleNamespace(public_game=rules, tree=game.tree)


def _shorter(game):
  """``game`` claiming one public move fewer than its deepest public state lies below the root."""
  rules = copy.copy(game.public_game)
  rules.max_moves = game.tree.num_levels - 2
  return types.SimpleNamespace(public_game=rules, tree=game.tree)


def _declaring_a_gap(game, gap):
  """``game`` claiming that no decision lies more than ``gap`` public moves after its player's last
  one (Leduc: four, player 1's raise, player 0's call, the public card and player 0's check)."""
  rules = copy.copy(game.public_game)
  rules.max_moves_between_decisions = gap
  return types.SimpleNamespace(public_game=rules, tree=game.tree)


def test_a_declared_decision_gap_that_holds_passes():
  """Leduc's longest gap between one player's decisions is four moves: declaring four passes."""
  leduc = load("leduc_poker")
  conformance.decisions_follow_within_the_declared_gap(_declaring_a_gap(leduc, 4), None)


@pytest.mark.parametrize("name", ALL_GAMES)
def test_every_built_in_game_gives_its_exact_length(name):
  """``max_moves`` from the rules is the enumerated tree's depth, not only a bound on it, except on
  k-in-a-row boards (the board's cells), where a small board can be won before it fills."""
  game = load(name)
  depth = game.tree.num_levels - 1
  assert game.max_moves == game.public_game.max_moves
  if isinstance(game.public_game, boards.KInARow):
    assert depth <= game.max_moves == game.public_game.cells
  else:
    assert game.max_moves == depth


def test_every_check_rejects_a_broken_tree(rng):
  broken = _broken_trees()
  assert [check for check, _ in broken] == list(conformance.CHECKS)
  for check, game in broken:
    with pytest.raises(ValueError, match=r"^kuhn_poker: |^leduc_poker: "):
      check(game, rng)


def test_leduc_sizes_match_openspiel_counts():
  summary = load("leduc_poker").tree.size_summary()
  assert summary["infostates"] == [468, 468]
  assert summary["histories"] == 9457


def test_aliases_load_the_same_game():
  assert sog.games.load("liars_dice") is sog.games.load("liars_dice(faces=6)")
  assert sog.games.load("scotland_yard") is sog.games.load("scotland_yard(map=glasses)")


@pytest.mark.parametrize(
  "name, message",
  [
    (
      "poker",
      "valid games: connect_four, kuhn_poker, leduc_poker, liars_dice, scotland_yard, "
      "sequential_rps, tic_tac_toe",
    ),
    ("connect_four(rows=6,columns=7)", "valid choices: 2, 3, 4"),
    ("connect_four(rows=4,columns=4)", "at most 12 cells"),
    ("connect_four(x_in_row=4)", "x_in_row must be in 2..3"),
    ("tic_tac_toe(size=4)", "valid parameters: none"),
    ("liars_dice(faces=7)", "valid choices: 4, 5, 6"),
    ("liars_dice(faces=four)", "valid choices: 4, 5, 6"),
    ("liars_dice(dice=2)", "valid parameters: faces"),
    ("kuhn_poker(players=3)", "valid parameters: none"),
    (
      "scotland_yard(map=paris)",
      "valid choices: glasses, glasses_hidden, glasses_hidden6, glasses_hidden_short, "
      "glasses_short, london, "
      "or a path to a .json",
    ),
    ("", "unknown game"),
  ],
)
def test_bad_names_raise_clear_errors(name, message):
  with pytest.raises(ValueError, match=message):
    sog.games.load(name)


def test_glasses_rules():
  """Spot checks of the glasses map (SoG fig. S3) as the foundation issue fixes its rules."""
  game = load("scotland_yard(map=glasses)")
  tree, public = game.tree, game.public_game
  assert tree.root_ranges[0].argmax() == 5  # Mr X starts at station 6 (0-based 5)
  np.testing.assert_array_equal(np.flatnonzero(tree.legal[0, 5]), [4, 6])  # to stations 5 or 7
  # After round 1 Mr X may be at 5 or 7, privately.
  child = int(np.flatnonzero(tree.parent == 0)[0])
  np.testing.assert_array_equal(np.flatnonzero(tree.valid[child, 0]), [4, 6])
  # His station is public after his move in round 3 (depth 6: 2 rounds of 3 moves).
  reveal = np.flatnonzero((tree.depth == 7) & (tree.kind != public_game.TERMINAL))
  assert reveal.size and (tree.valid[reveal, 0].sum(-1) == 1).all()
  # Mr X is paid -1 when caught and +1 when he survives the last round, and only then.
  terminal = np.flatnonzero(tree.kind == public_game.TERMINAL)
  payoffs = tree.payoff[terminal][
    tree.valid[terminal, 0][:, :, None] & tree.valid[terminal, 1][:, None]
  ]
  assert set(np.unique(payoffs)) == {-1.0, 1.0}
  wins = terminal[tree.payoff[terminal].max(axis=(1, 2)) > 0]
  assert (tree.depth[wins] == 3 * public.map.rounds).all()
  assert public.map.rounds == 5 and public.map.reveal_rounds == {3}
