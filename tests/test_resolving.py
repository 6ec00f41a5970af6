"""Continual re-solving: the gadget, plans from summaries, safety, and the composed-policy protocol."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.eval import composed
from sog.games import load
from sog.games import openspiel_bridge
from sog.search import gadget as gadget_lib
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import resolving


def _gadget(terminate_values, previous_range, alpha=1.0):
  return gadget_lib.Gadget(enabled=jnp.bool_(True), player=jnp.int32(1),
                           terminate_values=jnp.asarray(terminate_values, jnp.float32),
                           previous_range=jnp.asarray(previous_range, jnp.float32),
                           alpha=jnp.float32(alpha))


def test_gadget_follows_where_the_subgame_pays_more_and_terminates_where_it_pays_less():
  gadget = _gadget([0.0, 0.0, 0.0], [0.3, 0.3, 0.3])
  state = gadget_lib.init_state(gadget)
  valid = jnp.array([True, True, False])
  np.testing.assert_allclose(gadget_lib.follow_probability(state), 0.5)
  follow_values = jnp.array([1.0, -1.0, 5.0])
  for t in range(1, 20):
    state = gadget_lib.update(gadget, state, follow_values, valid, jnp.float32(t))
    assert (state.regrets >= 0).all()  # regret-matching+
  f = gadget_lib.follow_probability(state)
  assert f[0] == 1.0 and f[1] == 0.0
  ranges = gadget_lib.root_ranges(gadget, state, jnp.ones((2, 3)), jnp.stack([valid, valid]))
  np.testing.assert_allclose(ranges, [[1, 1, 1], [1, 0, 0]])  # player 0's row kept; invalid is 0
  half = gadget.replace(alpha=jnp.float32(0.5))
  np.testing.assert_allclose(gadget_lib.opponent_range(half, state, valid), [0.65, 0.15, 0.0],
                             rtol=1e-6)
  off = gadget.replace(enabled=jnp.bool_(False))
  np.testing.assert_allclose(gadget_lib.root_ranges(off, state, jnp.ones((2, 3)),
                                                    jnp.stack([valid, valid])), jnp.ones((2, 3)))


def test_plan_starts_at_the_closest_state_of_the_summary_with_the_branch_down_to_the_decision():
  game = load("leduc_poker")
  tree = game.tree
  tables = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(10)).tables
  node = int(np.flatnonzero((tree.kind == 1) & (tree.depth == 6))[0])
  path = [node]
  while tree.parent[path[-1]] >= 0:
    path.append(int(tree.parent[path[-1]]))
  path = path[::-1]  # root .. node
  ranges = jnp.asarray(np.random.default_rng(0).random((tree.num_nodes, 2, tree.max_infostates)),
                       jnp.float32)
  in_tree = np.zeros(tree.num_nodes, bool)
  in_tree[path[:3]] = True
  summary = resolving.Summary(in_tree=jnp.asarray(in_tree), ranges=ranges, values=-ranges,
                              resolvable=jnp.bool_(True))
  start = resolving.plan(tables, summary, node)
  assert int(start.root) == path[2] and int(start.focus) == node
  np.testing.assert_array_equal(np.flatnonzero(start.branch), sorted(path[2:]))
  np.testing.assert_allclose(start.ranges, ranges[path[2]])
  assert bool(start.gadget.enabled) and int(start.gadget.player) == 0  # player 1 re-solves
  np.testing.assert_allclose(start.gadget.terminate_values, -ranges[path[2], 0])
  np.testing.assert_allclose(start.gadget.previous_range, ranges[path[2], 0])
  unsafe = resolving.plan(tables, summary, node, resolving.ResolvingConfig(safe=False))
  assert not bool(unsafe.gadget.enabled)
  first = resolving.plan(tables, resolving.initial_summary(tables, tree.root_ranges), node)
  assert int(first.root) == 0 and not bool(first.gadget.enabled)
  np.testing.assert_array_equal(np.flatnonzero(first.branch), path)
  np.testing.assert_allclose(first.ranges, tree.root_ranges * tree.valid[0], rtol=1e-6)
  with pytest.raises(ValueError, match="alpha"):
    resolving.ResolvingConfig(alpha=1.5)


def test_a_resolving_search_grows_only_below_its_decision():
  game = load("leduc_poker")
  tree = game.tree
  searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(60))
  tables = searcher.tables
  node = int(np.flatnonzero((tree.kind == 0) & (tree.depth == 3))[0])
  start = resolving.plan(tables, resolving.initial_summary(tables, tree.root_ranges), node)
  result = searcher.search_from(jax.random.PRNGKey(0), start)
  branch = np.asarray(start.branch)
  below = np.zeros(tree.num_nodes, bool)
  below[tree.descendants(node)] = True
  children_of_branch = np.zeros(tree.num_nodes, bool)
  children_of_branch[1:] = branch[tree.parent[1:]]
  in_tree = np.asarray(result.in_tree)
  assert not (in_tree & ~(below | branch | children_of_branch)).any()
  assert (in_tree & below).sum() > 1 + tree.up_child[node].max(-1).clip(0).astype(bool).sum()
  np.testing.assert_array_equal(np.asarray(result.expanded) & ~below, branch & ~below)
  np.testing.assert_allclose(np.asarray(result.root_policy).sum(-1)[tree.valid[node, 0]], 1.0,
                             rtol=1e-5)


def test_previous_decisions_are_the_same_players_last_decision_above():
  tree = load("kuhn_poker").tree  # root (p0), pass -> p1, bet -> p1, pass-bet -> p0
  previous = composed.previous_decisions(tree)
  by_path = {path: previous[i] for i, path in enumerate(tree.paths)}
  node = {path: i for i, path in enumerate(tree.paths)}
  assert by_path[()] == -1 and by_path[(0,)] == -1 and by_path[(1,)] == -1
  assert by_path[(0, 1)] == node[()]


def test_gadget_resolving_is_safe_where_unsafe_resolving_is_exploitable():
  """Sequential RPS+ (ReBeL fig. 1a): player 1's decision re-solved from its first search. Unsafe
  re-solving, taking player 0's range as given, is indifferent between all its strategies there and
  drifts to an exploitable one; the gadget keeps player 0's values to the first search's."""
  game = load("sequential_rps")
  searcher = gtcfr.GTCFR(game, leaf_models.exact_leaf_model(100),
                         gtcfr.GTCFRConfig(simulations=300, updates="alternating"))
  exploitability = {}
  for name, config in (("gadget", resolving.ResolvingConfig(alpha=1.0)),
                       ("sog_mix", resolving.ResolvingConfig(alpha=0.5)),
                       ("unsafe", resolving.ResolvingConfig(safe=False))):
    exploitability[name] = composed.compose(searcher, [0], config, batch_size=1).exploitability[0]
  assert exploitability["gadget"] < 0.01, exploitability
  assert exploitability["sog_mix"] < 0.01, exploitability
  assert exploitability["unsafe"] > 0.5, exploitability


def test_kuhn_composed_exploitability_falls_with_simulations():
  game = load("kuhn_poker")
  means = []
  for sims in (10, 100, 1000):
    searcher = gtcfr.GTCFR(game, leaf_models.exact_leaf_model(50), gtcfr.GTCFRConfig(sims))
    result = composed.compose(searcher, range(10), batch_size=40)
    means.append(result.exploitability.mean())
    if sims == 10:  # the protocol's number is the game's exact exploitability, as OpenSpiel's
      np.testing.assert_allclose(
          result.exploitability[0],
          openspiel_bridge.exploitability_in_openspiel(game, result.policies[0]), rtol=1e-6)
  assert means[0] > means[1] > means[2], means
  assert means[2] < 0.01, means
