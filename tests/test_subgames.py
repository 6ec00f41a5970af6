"""Compact subgame tables: padded shapes shared per depth, and searches in them equal to searches in
the whole game's tables."""

import jax
import numpy as np
import pytest

from sog.eval import best_response
from sog.games import load
from sog.games import public_game
from sog.search import resolving
from sog.search import subgames as subgames_lib
from sog.search import tables as tables_lib
from tests.conftest import shared_searcher


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard(map=glasses_short)"])
def test_subgames_of_a_depth_share_shapes_and_map_back_to_the_game(name):
  tree = load(name).tree
  subgames = subgames_lib.Subgames(tree, frontier_bound=10_000)
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
  subgames = subgames_lib.Subgames(tree, frontier_bound=10_000)
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


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_resolving_search_in_a_subgame_equals_the_search_in_the_whole_game():
  """A re-solve planned from a root search's summary, run in the subgame of its s_prev, grows the
  same tree and returns the same policy as in the game's tables (zero leaf model: no batch-shape
  effects)."""
  game = load("leduc_poker")
  tree = game.tree
  searcher = shared_searcher("leduc_poker", "zeros", 30)
  tables = searcher.tables
  first = searcher.search_from(
    jax.random.PRNGKey(0),
    resolving.plan(tables, resolving.initial_summary(tables, searcher.root_ranges(None)), 0),
  )
  summary = jax.device_get(resolving.summarise(first))
  every_node = np.arange(tree.num_nodes)
  depths_seen = set()
  # Two root depths (each compiles its own subgame search): s_prev at depth 3, whose subgames span
  # the board card, and at depth 5, after it.
  for node in np.flatnonzero(tree.kind == 0)[1:]:
    s_prev = int(resolving.closest_known(tables, summary.in_tree, node))
    if tree.depth[s_prev] in depths_seen or tree.depth[s_prev] not in (3, 5):
      continue
    depths_seen.add(tree.depth[s_prev])
    whole = searcher.search_from(jax.random.PRNGKey(1), resolving.plan(tables, summary, node))
    sub = searcher.subgames(s_prev)
    moved = summary.replace(
      **{
        k: sub.to_local(np.asarray(getattr(summary, k)), every_node)
        for k in ("in_tree", "ranges", "values")
      }
    )
    start = resolving.plan(sub.tables, moved, sub.local[node])
    batch = lambda x: x[None]  # noqa: E731
    local = searcher.search_in_subgames(
      jax.tree.map(batch, sub.tables),
      sub.capacity,
      jax.random.PRNGKey(1)[None],
      jax.tree.map(batch, start),
    )
    np.testing.assert_allclose(local.focus_policy[0], whole.focus_policy, atol=1e-6)
    in_tree = np.zeros(tree.num_nodes, bool)
    in_tree[sub.game_nodes[np.asarray(local.in_tree[0]) & (sub.game_nodes >= 0)]] = True
    np.testing.assert_array_equal(in_tree, np.asarray(whole.in_tree))
    assert sub.capacity <= tables_lib.frontier_capacity(tree, 30, None, branches=True)
  assert depths_seen == {3, 5}, depths_seen
