"""Conformance suite every registered game passes, and the registry's error messages."""

import numpy as np
import pytest

import sog.games
from sog.eval import policy as policy_lib
from sog.games import propagation
from sog.games import rules as rules_lib
from tests.conftest import ALL_GAMES
from tests.conftest import load


@pytest.mark.parametrize("name", ALL_GAMES)
class TestConformance:

  def test_terminal_values_are_zero_sum(self, name, rng):
    tree = load(name).tree
    for level in tree.levels:
      ranges = rng.random((level.size, 2, tree.max_infostates)) * level.valid
      values = propagation.terminal_values(level, ranges, np)
      total = (ranges * values).sum(axis=(1, 2))
      np.testing.assert_allclose(total, 0.0, atol=1e-12)

  def test_legal_masks_non_empty_where_a_player_acts(self, name):
    tree = load(name).tree
    for player in (0, 1):
      rows = tree.decision_infostates(player)
      assert rows.any()
      assert tree.legal[rows].any(-1).all()

  def test_chance_probabilities_sum_to_one(self, name):
    tree = load(name).tree
    for node in np.flatnonzero(tree.kind == rules_lib.CHANCE):
      children = np.flatnonzero(tree.parent == node)
      assert children.size > 0
      np.testing.assert_allclose(tree.chance_probability[children].sum(), 1.0, atol=1e-12)
    assert np.all(tree.chance_probability[tree.kind[np.maximum(tree.parent, 0)] != rules_lib.CHANCE]
                  == 1.0)

  def test_children_consistent_with_masks(self, name):
    """At a player node, the actor's infostate s has an edge under action a exactly where a is legal
    at s, every edge reaches a child, each child's valid actor infostates are exactly those its
    edges reach, and no opponent infostate appears out of nothing (vectorised over nodes)."""
    tree = load(name).tree
    nodes = np.flatnonzero(tree.kind <= rules_lib.PLAYER_1)
    actor = tree.kind[nodes].astype(np.int64)
    edges = tree.up_weight[nodes, :, :, actor] > 0  # [n, A, K, S]
    has_child = edges.any(2).transpose(0, 2, 1)  # [n, S, A]
    rows = tree.valid[nodes, actor]  # [n, S]
    np.testing.assert_array_equal(has_child & rows[..., None], tree.legal[nodes] & rows[..., None])
    assert not (has_child & ~rows[..., None]).any()
    assert (tree.up_child[nodes][edges.any(-1)] >= 0).all()
    node, a, k, s = np.nonzero(edges)
    child = tree.up_child[nodes[node], a, k]
    reached_infostate = tree.up_infostate[nodes[node], a, k, actor[node], s]
    reached = np.zeros((tree.num_nodes, tree.max_infostates), bool)
    reached[child, reached_infostate] = True
    children = np.flatnonzero(np.isin(tree.parent, nodes))
    child_actor = tree.kind[tree.parent[children]].astype(np.int64)
    np.testing.assert_array_equal(reached[children], tree.valid[children, child_actor])
    opponent = 1 - child_actor
    assert not (tree.valid[children, opponent] & ~tree.valid[tree.parent[children], opponent]).any()
    leaves = tree.kind == rules_lib.TERMINAL
    assert not (tree.up_child[leaves] >= 0).any()

  def test_tree_structure(self, name):
    tree = load(name).tree
    assert tree.parent[0] == -1 and tree.depth[0] == 0
    np.testing.assert_array_equal(tree.depth[1:], tree.depth[tree.parent[1:]] + 1)
    assert np.all(np.diff(tree.depth) >= 0), "nodes must be in breadth-first order"
    assert tree.valid.any(-1).all(), "every public state has a possible infostate for each player"
    assert len(set(tree.paths)) == tree.num_nodes

  def test_encoding_fixed_shape(self, name):
    game = load(name)
    assert game.tree.encoding.shape == (game.tree.num_nodes, game.rules.encoding_size())
    assert np.isfinite(game.tree.encoding).all()
    assert len({row.tobytes() for row in game.tree.encoding}) > 1

  def test_prior_weights_bound_every_range(self, name, rng):
    """p_i(s) is the chance part of a range: every policy's range is at most p, playing every action
    (weight 1 each) reaches at least p, and p > 0 exactly where the infostate is possible."""
    tree = load(name).tree
    reach = lambda policy: np.concatenate(propagation.reach_down(  # noqa: E731
        tree.levels, propagation.split_levels(tree, policy), tree.root_ranges, np))
    random = policy_lib.random_policy(tree, rng)
    assert (reach(random) <= tree.prior_weight * (1 + 1e-9)).all()
    assert (reach(np.ones_like(random)) >= tree.prior_weight * (1 - 1e-9)).all()
    np.testing.assert_array_equal(tree.prior_weight > 0, tree.valid)
    if all(level.same_infostates for level in tree.levels):  # poker, dice: the deal's marginals
      np.testing.assert_allclose(tree.prior_weight, tree.root_ranges[None] * tree.valid)

  def test_root_ranges_are_prior_marginals(self, name):
    tree = load(name).tree
    np.testing.assert_allclose(tree.root_ranges.sum(-1), 1.0)
    assert not (tree.root_ranges > 0)[~tree.valid[0]].any()


def test_leduc_sizes_match_openspiel_counts():
  summary = load("leduc_poker").tree.size_summary()
  assert summary["infostates"] == [468, 468]
  assert summary["histories"] == 9457


def test_aliases_load_the_same_game():
  assert sog.games.load("liars_dice") is sog.games.load("liars_dice(faces=6)")
  assert sog.games.load("scotland_yard") is sog.games.load("scotland_yard(map=glasses)")


@pytest.mark.parametrize("name, message", [
    ("poker", "valid games: connect_four, kuhn_poker, leduc_poker, liars_dice, scotland_yard, "
              "sequential_rps, tic_tac_toe"),
    ("connect_four(rows=6,columns=7)", "valid choices: 2, 3, 4"),
    ("connect_four(rows=4,columns=4)", "at most 12 cells"),
    ("connect_four(x_in_row=4)", "x_in_row must be in 2..3"),
    ("tic_tac_toe(size=4)", "valid parameters: none"),
    ("liars_dice(faces=7)", "valid choices: 4, 5, 6"),
    ("liars_dice(faces=four)", "valid choices: 4, 5, 6"),
    ("liars_dice(dice=2)", "valid parameters: faces"),
    ("kuhn_poker(players=3)", "valid parameters: none"),
    ("scotland_yard(map=london)",
     "valid choices: glasses, glasses_hidden, glasses_hidden6, glasses_hidden_short, glasses_short, "
     "or a path to a .json"),
    ("", "unknown game"),
])
def test_bad_names_raise_clear_errors(name, message):
  with pytest.raises(ValueError, match=message):
    sog.games.load(name)


def test_glasses_rules():
  """Spot checks of the glasses map (SoG fig. S3) as the foundation issue fixes its rules."""
  game = load("scotland_yard(map=glasses)")
  tree, rules = game.tree, game.rules
  assert tree.root_ranges[0].argmax() == 5  # Mr X starts at station 6 (0-based 5)
  np.testing.assert_array_equal(np.flatnonzero(tree.legal[0, 5]), [4, 6])  # to stations 5 or 7
  # After round 1 Mr X may be at 5 or 7, privately.
  child = int(np.flatnonzero(tree.parent == 0)[0])
  np.testing.assert_array_equal(np.flatnonzero(tree.valid[child, 0]), [4, 6])
  # His station is public after his move in round 3 (depth 6: 2 rounds of 3 moves).
  reveal = np.flatnonzero((tree.depth == 7) & (tree.kind != rules_lib.TERMINAL))
  assert reveal.size and (tree.valid[reveal, 0].sum(-1) == 1).all()
  # Mr X is paid -1 when caught and +1 when he survives the last round, and only then.
  terminal = np.flatnonzero(tree.kind == rules_lib.TERMINAL)
  payoffs = tree.payoff[terminal][tree.valid[terminal, 0][:, :, None] & tree.valid[terminal, 1][:, None]]
  assert set(np.unique(payoffs)) == {-1.0, 1.0}
  wins = terminal[tree.payoff[terminal].max(axis=(1, 2)) > 0]
  assert (tree.depth[wins] == 3 * rules.map.rounds).all()
  assert rules.map.rounds == 5 and rules.map.reveal_rounds == {3}
