"""Compact subgame tables: padded shapes shared per depth, and searches in them equal to searches in
the whole game's tables."""

import jax
import numpy as np
import pytest

from sog.eval import best_response
from sog.games import load
from sog.games import public_game
from sog.search import subgames as subgames_lib


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard(map=glasses_short)"])
def test_subgames_of_a_depth_share_shapes_and_map_back_to_the_game(name):
  tree = load(name).tree
  subgames = subgames_lib.Subgames(tree)
  for depth in range(tree.num_levels):
    built = [
      subgames(n)
      for n in np.flatnonzero((tree.depth == depth) & (tree.kind != public_game.TERMINAL))
    ]
    if not built:
      continue
    shapes = {jax.tree.structure(s.tables) for s in built}
    assert len(shapes) == 1  # equal static fields (level sizes, actors, inner counts)
    assert len({tuple(x.shape for x in jax.tree.leaves(s.tables)) for s in built}) == 1
    for s in built:
      below = tree.descendants(s.root)
      np.testing.assert_array_equal(s.game_nodes[s.local[below]], below)
      assert (s.local >= 0).sum() == below.size
      padding = s.game_nodes < 0
      assert not np.asarray(s.tables.valid)[padding].any()
      assert (np.asarray(s.tables.parent)[padding] == -1).all()
      np.testing.assert_array_equal(np.asarray(s.tables.kind)[~padding], tree.kind[below])


def test_padded_subgame_keeps_the_subgame_values():
  """Best-response values of a subgame are unchanged by padding (the dummies are unreachable)."""
  tree = load("leduc_poker").tree
  node = int(np.flatnonzero(tree.depth == 3)[0])
  subgames = subgames_lib.Subgames(tree)
  template = subgames._templates[3]
  sub = tree.subtree(node)
  padded = sub.padded(template.inner, template.terminal, template.dummy_kinds)
  assert padded.num_nodes > sub.num_nodes
  rng = np.random.default_rng(0)
  policy = rng.random(sub.legal.shape) * sub.legal
  policy /= policy.sum(-1, keepdims=True)
  padded_policy = np.ones(padded.legal.shape) * padded.legal
  padded_policy /= padded_policy.sum(-1, keepdims=True)
  real = padded.game_node >= 0
  padded_policy[real] = policy
  ranges = tree.root_ranges * tree.valid[node]
  plain = best_response.evaluate(sub, policy, ranges)
  wider = best_response.evaluate(padded, padded_policy, ranges)
  np.testing.assert_allclose(wider.exploitability, plain.exploitability, rtol=0, atol=1e-12)
