"""World states played forward from a game's functions (``sog.games.worlds``): the table search's
world steps, from the same keys, with nothing enumerated."""

import jax
import numpy as np
import pytest

from sog.games import load
from sog.games import public_game
from sog.games import worlds
from sog.search import tables as tables_lib


@pytest.mark.parametrize(
  "name", ["kuhn_poker", "leduc_poker", "scotland_yard(map=glasses_short)", "liars_dice(faces=4)"]
)
def test_worlds_follow_the_table_search_s_world_steps_from_the_same_keys(name):
  """Random games: each deal, each player's move and each chance outcome reach the public state
  and infostates the tables' ``step_world`` reaches (matched by path), and the utility at the end
  is the tables' payoff over W."""
  game = load(name)
  tree, tables = game.tree, tables_lib.make_tables(game.tree)
  root_ranges = np.asarray(tree.root_ranges)
  step = jax.jit(lambda w, a, k: worlds.step(game.public_game, w, a, k))
  table_step = jax.jit(lambda n, s0, s1, a, k: tables_lib.step_world(tables, n, s0, s1, a, k))
  rng = np.random.default_rng(0)
  for g in range(12):
    key = jax.random.PRNGKey(g)
    world = worlds.deal(game.public_game, key)
    s = tables_lib.sample_world(tables, 0, root_ranges, key)
    assert np.asarray(world.infostates).tolist() == [int(s[0]), int(s[1])]
    node, path = 0, []
    while tree.kind[node] != public_game.TERMINAL:
      legal = tree.legal[node, int(world.infostates[max(int(tree.kind[node]), 0) % 2])]
      action = int(rng.choice(np.flatnonzero(legal))) if tree.kind[node] < 2 else 0
      key, now = jax.random.split(key)
      slot, world = step(world, action, now)
      path.append(int(slot))
      expected, e0, e1 = table_step(node, s[0], s[1], action, now)
      node, s = int(expected), (e0, e1)
      assert tree.node_of_path(tuple(path)) == node
      assert np.asarray(world.infostates).tolist() == [int(e0), int(e1)]
    u0 = tree.payoff[node, s[0], s[1]] / tree.pair_weight[node, s[0], s[1]]
    np.testing.assert_allclose(float(worlds.utility(game.public_game, world)), u0, rtol=1e-6)
