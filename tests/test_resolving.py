"""Continual re-solving: the gadget, plans from summaries, safety, the composed-policy protocol."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import load
from sog.openspiel import bridge as openspiel_bridge
from sog.protocol import composed
from sog.search import gadget as gadget_lib
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import predecessors
from sog.search import resolving
from tests.conftest import shared_searcher


def _gadget(terminate_values, previous_range, alpha=1.0, prior=None):
  prior = np.ones(len(previous_range)) if prior is None else prior
  return gadget_lib.Gadget(
    enabled=jnp.bool_(True),
    player=jnp.int32(1),
    terminate_values=jnp.asarray(terminate_values, jnp.float32),
    previous_range=jnp.asarray(previous_range, jnp.float32),
    prior=jnp.asarray(prior, jnp.float32),
    alpha=jnp.float32(alpha),
  )


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
  np.testing.assert_allclose(
    gadget_lib.opponent_range(half, state, valid), [0.65, 0.15, 0.0], rtol=1e-6
  )
  off = gadget.replace(enabled=jnp.bool_(False))
  np.testing.assert_allclose(
    gadget_lib.root_ranges(off, state, jnp.ones((2, 3)), jnp.stack([valid, valid])),
    jnp.ones((2, 3)),
  )


def test_plan_starts_at_the_closest_state_of_the_summary_with_the_branch_down_to_the_decision():
  game = load("leduc_poker")
  tree = game.tree
  tables = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(10)).tables
  node = int(np.flatnonzero((tree.kind == 1) & (tree.depth == 6))[0])
  path = [node]
  while tree.parent[path[-1]] >= 0:
    path.append(int(tree.parent[path[-1]]))
  path = path[::-1]  # root .. node
  ranges = jnp.asarray(
    np.random.default_rng(0).random((tree.num_nodes, 2, tree.max_infostates)), jnp.float32
  )
  in_tree = np.zeros(tree.num_nodes, bool)
  in_tree[path[:3]] = True
  summary = resolving.Summary(
    in_tree=jnp.asarray(in_tree), ranges=ranges, values=-ranges, resolvable=jnp.bool_(True)
  )
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


def _leduc_summary_after_the_board(rng):
  """A Leduc searcher, a player-1 decision node in the second round (after the board card), and a
  summary whose tree holds the node's parent chain up to the chance node above it."""
  game = load("leduc_poker")
  tree = game.tree
  searcher = shared_searcher("leduc_poker", "zeros", 30)
  chance = np.flatnonzero(tree.kind == 2)
  below_board = np.isin(tree.parent, chance) & (tree.kind == 0)
  node = int(
    np.flatnonzero((tree.kind == 1) & np.isin(tree.parent, np.flatnonzero(below_board)))[0]
  )
  s_prev = int(tree.parent[node])
  in_tree = np.zeros(tree.num_nodes, bool)
  in_tree[tree.descendants(0, int(tree.depth[s_prev]))] = True
  ranges = rng.random((tree.num_nodes, 2, tree.max_infostates)) * tree.prior_weight
  values = rng.normal(size=ranges.shape)
  summary = resolving.Summary(
    in_tree=jnp.asarray(in_tree),
    ranges=jnp.asarray(ranges, jnp.float32),
    values=jnp.asarray(values, jnp.float32),
    resolvable=jnp.bool_(True),
  )
  return searcher, node, s_prev, summary


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_gadget_mixes_ranges_in_range_units_after_leducs_board_card(rng, alpha):
  """r_o = alpha f p_o + (1 - alpha) r_prev, p_o the chance weight (1/6 per possible card): alpha =
  0 is the summary's range, alpha = 1 the pure gadget f p_o, whatever the Follow probabilities."""
  searcher, node, s_prev, summary = _leduc_summary_after_the_board(rng)
  tree = searcher.tree
  start = resolving.plan(searcher.tables, summary, node, resolving.ResolvingConfig(alpha=alpha))
  assert int(start.root) == s_prev and int(start.gadget.player) == 0
  valid = tree.valid[s_prev, 0]
  np.testing.assert_allclose(start.gadget.prior, np.where(valid, 1 / 6, 0.0), rtol=1e-6)
  assert 0 < valid.sum() < tree.max_infostates  # the board card is out of the players' hands
  state = gadget_lib.init_state(start.gadget)
  regrets = rng.random((2, tree.max_infostates)) * rng.integers(0, 2, (2, tree.max_infostates))
  state = state.replace(regrets=jnp.asarray(regrets, jnp.float32))
  total = regrets.sum(0)
  f = np.where(total > 0, regrets[0] / np.where(total > 0, total, 1), 0.5)
  r_prev = np.asarray(summary.ranges)[s_prev, 0]
  expected = np.where(valid, alpha * f / 6 + (1 - alpha) * r_prev, 0.0)
  ranges = gadget_lib.root_ranges(start.gadget, state, start.ranges, searcher.tables.valid[s_prev])
  np.testing.assert_allclose(ranges[0], expected, rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(ranges[1], np.asarray(summary.ranges)[s_prev, 1], rtol=1e-6)
  if alpha == 0.0:
    np.testing.assert_array_equal(ranges, np.asarray(summary.ranges)[s_prev] * tree.valid[s_prev])


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_safe_resolving_with_alpha_zero_is_unsafe_resolving(rng):
  """With alpha = 0 the gadget's regrets move but never the ranges: the search is the unsafe one
  (its final pass at the averaged range, sum_t t r_prev / sum_t t, equal to r_prev up to
  rounding)."""
  searcher, node, _, summary = _leduc_summary_after_the_board(rng)
  results = [
    searcher.search_from(
      jax.random.PRNGKey(3), resolving.plan(searcher.tables, summary, node, config)
    )
    for config in (resolving.ResolvingConfig(alpha=0.0), resolving.ResolvingConfig(safe=False))
  ]
  for field in ("focus_policy", "average_policy", "in_tree", "expanded"):
    np.testing.assert_array_equal(
      np.asarray(getattr(results[0], field)), np.asarray(getattr(results[1], field)), err_msg=field
    )
  for field in ("focus_values", "ranges", "values"):
    np.testing.assert_allclose(
      np.asarray(getattr(results[0], field)),
      np.asarray(getattr(results[1], field)),
      rtol=1e-5,
      atol=1e-7,
      err_msg=field,
    )


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_a_resolving_search_grows_only_below_its_decision():
  game = load("leduc_poker")
  tree = game.tree
  searcher = shared_searcher("leduc_poker", "zeros", 30)
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
  np.testing.assert_allclose(
    np.asarray(result.focus_policy).sum(-1)[tree.valid[node, 0]], 1.0, rtol=1e-5
  )


def test_search_keys_are_each_jobs_own_fold_in():
  seeds, nodes = [0, 0, 3, 7, 2**31 - 1], [0, 5, 5, 12345, 9]
  expected = np.stack(
    [
      np.asarray(jax.random.fold_in(jax.random.PRNGKey(s), n))
      for s, n in zip(seeds, nodes, strict=True)
    ]
  )
  np.testing.assert_array_equal(np.asarray(composed.search_keys(seeds, nodes)), expected)
  with pytest.raises(ValueError, match="equal-length"):
    composed.search_keys([0, 1], [0])


def test_previous_decisions_are_the_same_players_last_decision_above():
  tree = load("kuhn_poker").tree  # root (p0), pass -> p1, bet -> p1, pass-bet -> p0
  previous = predecessors.previous_decisions(tree)
  by_path = {path: previous[i] for i, path in enumerate(tree.paths)}
  node = {path: i for i, path in enumerate(tree.paths)}
  assert by_path[()] == -1 and by_path[(0,)] == -1 and by_path[(1,)] == -1
  assert by_path[(0, 1)] == node[()]


def test_gadget_resolving_is_safe_where_unsafe_resolving_is_exploitable():
  """Sequential RPS+ (ReBeL fig. 1a): player 1's decision re-solved from its first search. Unsafe
  re-solving, taking player 0's range as given, is indifferent between all its strategies there and
  drifts to an exploitable one; the gadget keeps player 0's values to the first search's."""
  game = load("sequential_rps")
  searcher = gtcfr.GTCFR(
    game,
    leaf_models.exact_leaf_model(100),
    gtcfr.GTCFRConfig(simulations=300, updates="alternating"),
  )
  exploitability = {}
  for name, config in (
    ("gadget", resolving.ResolvingConfig(alpha=1.0)),
    ("sog_mix", resolving.ResolvingConfig(alpha=0.5)),
    ("unsafe", resolving.ResolvingConfig(safe=False)),
  ):
    exploitability[name] = composed.compose(searcher, [0], config, batch_size=1).exploitability[0]
  assert exploitability["gadget"] < 0.01, exploitability
  assert exploitability["sog_mix"] < 0.01, exploitability
  assert exploitability["unsafe"] > 0.5, exploitability


@pytest.mark.xdist_group("kuhn_oracle_searchers")
def test_gadget_resolving_beats_unsafe_resolving_in_kuhn():
  """Kuhn with the exact oracle, SoG(100,1): unsafe re-solving takes player 0's range from the first
  search as given and stays exploitable (about 0.06 at s = 30 and at s = 300 over 10 seeds), while
  the gadget's composed policies converge (0.010 at s = 30, 0.0005 at s = 300), whatever alpha."""
  searcher = shared_searcher("kuhn_poker", "oracle", 100)
  exploitability = {
    name: composed.compose(searcher, range(4), config, batch_size=4).exploitability
    for name, config in (
      ("sog_mix", resolving.ResolvingConfig()),
      ("gadget", resolving.ResolvingConfig(alpha=1.0)),
      ("unsafe", resolving.ResolvingConfig(safe=False)),
    )
  }
  assert exploitability["unsafe"].min() > 0.02, exploitability
  for name in ("sog_mix", "gadget"):
    assert exploitability[name].max() < exploitability["unsafe"].min() / 3, exploitability


@pytest.mark.xdist_group("kuhn_oracle_searchers")
def test_kuhn_composed_exploitability_falls_with_simulations():
  game = load("kuhn_poker")
  means = []
  for sims in (10, 100):  # s = 100: the gadget test's compiled searches
    result = composed.compose(shared_searcher("kuhn_poker", "oracle", sims), range(4), batch_size=4)
    means.append(result.exploitability.mean())
    if sims == 10:  # the protocol's number is the game's exact exploitability, as OpenSpiel's
      np.testing.assert_allclose(
        result.exploitability[0],
        openspiel_bridge.exploitability_in_openspiel(game, result.policies[0]),
        rtol=1e-6,
      )
  assert means[0] > 5 * means[1], means
  assert means[1] < 0.01, means


def test_exact_oracle_composed_policy_is_an_equilibrium_of_a_perfect_information_game():
  """Perfect information (k = 1): with the exact oracle (its solve's policy as the prior), the
  composed policy of SoG(100,1) on Connect Four 2 x 3, three in a row (265 public states, a draw),
  is an equilibrium (measured 3.3e-9; s = 10 gives 2.8e-5, s = 30 3.9e-7), and it is the game's
  exploitability as OpenSpiel computes it."""
  game = load("connect_four(rows=2,columns=3,x_in_row=3)")
  searcher = gtcfr.GTCFR(
    game, leaf_models.exact_leaf_model(10, policy_prior=True), gtcfr.GTCFRConfig(simulations=100)
  )
  assert searcher.k == 1
  result = composed.compose(searcher, [0], batch_size=64)  # one batch a depth (compile-bound)
  assert result.exploitability[0] <= 1e-6, result.exploitability
  np.testing.assert_allclose(
    openspiel_bridge.exploitability_in_openspiel(game, result.policies[0]),
    result.exploitability[0],
    atol=1e-9,
  )
