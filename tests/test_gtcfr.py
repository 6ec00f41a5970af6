"""GT-CFR: soundness with an exact oracle, CFR+ on a grown tree, batching, invariants, errors."""

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.eval import best_response
from sog.games import public_game
from sog.nets import cvpn as cvpn_lib
from sog.nets import leaf as leaf_lib
from sog.search import cfr
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import solver
from sog.search import tables as tables_lib
from sog.search.gtcfr import expand as expand_lib
from sog.search.gtcfr import frontier as gtcfr_frontier
from sog.search.gtcfr import update as update_lib
from tests.conftest import load
from tests.conftest import shared_searcher


def _grown_everywhere(state: gtcfr.SearchState) -> gtcfr.SearchState:
  return state.replace(
    in_tree=jnp.ones_like(state.in_tree),
    expanded=jnp.ones_like(state.expanded),
    added=jnp.ones_like(state.added),
  )


@pytest.mark.parametrize("updates", ["simultaneous", "alternating"])
def test_search_on_a_fully_grown_tree_is_cfr_plus(updates):
  game = load("leduc_poker")
  config = gtcfr.GTCFRConfig(simulations=40, updates=updates)
  searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), config)
  apply = searcher.leaf_model.apply

  @jax.jit
  def grown_search(tables, ranges):
    state = gtcfr.init(
      tables, apply, None, jax.random.PRNGKey(0), gtcfr.root_start(tables, ranges), config
    )
    state = gtcfr.run(
      tables, apply, None, _grown_everywhere(state), config, searcher.leaf_batches, searcher.k
    )
    return gtcfr.finish(tables, apply, None, state, searcher.leaf_batches)

  result = grown_search(searcher.tables, searcher.root_ranges(None))

  reference = solver.Solver(game.tree, updates)
  ranges = reference.root_ranges(None)
  cfr_state, _ = reference.run(reference.init(), ranges, config.simulations)
  np.testing.assert_array_equal(
    np.asarray(result.average_policy), np.asarray(cfr.average_policy(reference.levels, cfr_state))
  )
  np.testing.assert_allclose(
    np.asarray(result.focus_values), reference.root_values(cfr_state, ranges), atol=1e-6
  )


def _mean_exploitabilities(searcher: gtcfr.GTCFR, seeds: int, ranges) -> dict[str, float]:
  """Mean exploitability over ``seeds`` searches of their policies completed by each method."""
  results = searcher.search_batch(
    jax.random.split(jax.random.PRNGKey(7), seeds), np.stack([ranges] * seeds)
  )
  return {
    method: float(
      np.mean(
        [
          searcher.exploitability(
            jax.tree_util.tree_map(lambda x, i=i: x[i], results), 400, method, ranges
          )
          for i in range(seeds)
        ]
      )
    )
    for method in ("resolve", "average")
  }


@pytest.mark.parametrize(
  "oracle",
  [
    pytest.param(leaf_models.exact_leaf_model(100), marks=pytest.mark.slow, id="cold_100"),
    pytest.param(leaf_models.exact_leaf_model(2, warm_start=True), id="warm_2"),
  ],
)
def test_exact_oracle_search_is_sound_in_a_leduc_subgame(rng, oracle):
  """Theorem 1 on a subgame with a chance node (the scripts run it from the game's root): with an
  exact oracle, exploitability falls as s grows, by both completions, to CFR+'s level once the tree
  holds the whole subgame. The same holds for the warm-started oracle at 2 iterations a call (the
  default run's case; the cold oracle, 2 minutes, is marked slow: the warm oracle's calls are one
  cold solve, ``test_warm_oracle_calls_continue_one_solve``)."""
  game = load("leduc_poker")
  subtree = game.tree.subtree(game.tree.node_of_path((1, 1)))  # check, check: the board card next
  ranges = game.tree.root_ranges * rng.uniform(0.3, 1.0, game.tree.root_ranges.shape)
  curves = {"resolve": [], "average": []}
  for simulations in (10, 100, 1000):
    searcher = gtcfr.GTCFR(subtree, oracle, gtcfr.GTCFRConfig(simulations=simulations))
    for method, value in _mean_exploitabilities(searcher, 2, ranges).items():
      curves[method].append(value)
  for curve in curves.values():
    assert curve[0] > curve[1] > curve[2], curves
    assert curve[2] < 5e-3, curves


def test_warm_oracle_calls_continue_one_solve(rng):
  """Four warm-started oracle calls of 5 iterations at fixed ranges are one cold 20-iteration solve:
  the same values and realisation weights, and a state that counts the 20 iterations; so are an
  ensemble's of two warm oracles and a routed model's of a warm model and a warm oracle, each
  carrying its own run in the composite's state."""
  game = load("leduc_poker")
  tables = gtcfr.GTCFR(game, leaf_models.zero_leaf_model()).tables
  tree = game.tree
  nodes = jnp.asarray(np.flatnonzero(tree.parent == tree.node_of_path((1, 1)))[:3], jnp.int32)
  ranges = jnp.asarray(
    tree.root_ranges * rng.uniform(0.3, 1.0, (3, *tree.root_ranges.shape)), jnp.float32
  )
  mask = jnp.array([True, True, False])
  warm = leaf_models.exact_leaf_model(5, warm_start=True)
  state = warm.init(tables, None)
  for _ in range(4):
    out = warm.apply(None, tables, nodes, ranges, mask, state)
    state = out.state
  cold = leaf_models.exact_leaf_model(20).apply(None, tables, nodes, ranges, mask, ())
  assert int(state.iteration) == 20
  assert cold.state == ()
  np.testing.assert_allclose(np.asarray(out.values)[:2], np.asarray(cold.values)[:2], atol=1e-6)
  np.testing.assert_allclose(np.asarray(out.policy_sums), np.asarray(cold.policy_sums), atol=1e-6)
  assert np.abs(np.asarray(cold.values)[:2]).max() > 0.1  # a real solve, not zeros
  pair = leaf_lib.ensemble_leaf_model([warm, warm])  # each member carries its own run
  state = pair.init(tables, None)
  for _ in range(4):
    both = pair.apply(pair.params, tables, nodes, ranges, mask, state)
    state = both.state
  assert [int(member.iteration) for member in state] == [20, 20]
  np.testing.assert_allclose(np.asarray(both.values)[:2], np.asarray(cold.values)[:2], atol=1e-6)
  np.testing.assert_allclose(np.asarray(both.policy_sums), np.asarray(cold.policy_sums), atol=1e-6)
  routed = leaf_models.routed_leaf_model(warm, warm, "player_0")  # player 0's from the oracle
  start = types.SimpleNamespace(root=0, focus=tree.node_of_path((1, 1)))
  state = routed.init(tables, start)
  for _ in range(4):
    out = routed.apply(routed.params, tables, nodes, ranges, mask, state)
    state = out.state
  assert [int(member.iteration) for member in state[-2:]] == [20, 20]
  np.testing.assert_allclose(np.asarray(out.values)[:2], np.asarray(cold.values)[:2], atol=1e-6)


def _atol(path) -> float:
  """Absolute tolerance for a search output compared across batchings: 1e-5, except best-response
  values, which add up maxima over actions at every level (up to the pot, 13 chips in Leduc) and so
  carry about ten times the rounding of the average-policy values."""
  return 5e-5 if jax.tree_util.keystr(path) == ".best_response_values" else 1e-5


@pytest.mark.slow  # the default engine's: test_belief_search.test_a_batch_of_pool_searches_is_...
def test_batched_searches_equal_separate_searches():
  """8 searches under vmap return what 8 separate searches with the same rngs return."""
  game = load("leduc_poker")
  network = cvpn_lib.make_network(game.public_game)
  params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(1))
  searcher = gtcfr.GTCFR(
    game,
    leaf_lib.cvpn_leaf_model(network, params, game.name),
    gtcfr.GTCFRConfig(simulations=12, simulations_per_phase=2.0),
  )
  rngs = jax.random.split(jax.random.PRNGKey(3), 8)
  batch = searcher.search_batch(rngs)
  for i in range(8):
    one = searcher.search(rngs[i])
    batched, _ = jax.tree_util.tree_flatten_with_path(
      jax.tree_util.tree_map(lambda x, i=i: x[i], batch)
    )
    for (path, expected), (_, got) in zip(
      jax.tree_util.tree_flatten_with_path(one)[0], batched, strict=True
    ):
      got, expected = np.asarray(got), np.asarray(expected)
      if np.issubdtype(expected.dtype, np.floating):  # batched matmuls round differently
        np.testing.assert_allclose(
          got, expected, rtol=1e-4, atol=_atol(path), err_msg=jax.tree_util.keystr(path)
        )
      else:  # the trees grown, the queries sampled and the counts are identical
        np.testing.assert_array_equal(got, expected, err_msg=jax.tree_util.keystr(path))


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_infinite_prior_temperature_is_the_uniform_prior():
  """With T_prior = inf, PUCT ignores the leaf model's logits: zero values with arbitrary logits
  search exactly as the zero leaf model (uniform prior) does, and with T_prior = 1 those logits
  change it."""
  game = load("leduc_poker")

  def random_logits_leaf(params, tables, nodes, ranges, mask):
    del params, mask
    logits = jax.random.normal(jax.random.PRNGKey(5), (*ranges.shape, tables.legal.shape[-1]))
    return leaf_models.LeafOutput(jnp.zeros_like(ranges), 8.0 * logits)

  def search(leaf_model, temperature):
    config = gtcfr.GTCFRConfig(simulations=30, prior_temperature=temperature)
    return gtcfr.GTCFR(game, leaf_model, config).search(jax.random.PRNGKey(2))

  uniform = shared_searcher("leduc_poker", "zeros", 30).search(jax.random.PRNGKey(2))
  ignored = search(leaf_models.stateless(random_logits_leaf), float("inf"))
  followed = search(leaf_models.stateless(random_logits_leaf), 1.0)
  for (path, expected), got in zip(
    jax.tree_util.tree_flatten_with_path(uniform)[0],
    jax.tree_util.tree_leaves(ignored),
    strict=True,
  ):
    np.testing.assert_array_equal(
      np.asarray(got), np.asarray(expected), err_msg=jax.tree_util.keystr(path)
    )
  assert not np.array_equal(np.asarray(followed.average_policy), np.asarray(uniform.average_policy))


def test_leaf_value_error_is_fixed_zero_sum_and_of_the_stated_size():
  """``with_value_error``: sigma = 0 leaves a model (the exact oracle) unchanged; otherwise the same
  (node, player, infostate) gets the same error on every call, per unit of opponent mass the error
  has mean size about 0.8 sigma, and the output stays zero-sum (r0 . v0 + r1 . v1 = 0 for a zero
  base)."""
  game = load("leduc_poker")
  tables = tables_lib.make_tables(game.tree)
  nodes = np.flatnonzero(game.tree.kind >= 0)[:64]
  valid = game.tree.valid[nodes]
  ranges = jnp.asarray(np.random.default_rng(0).random(valid.shape) * valid, jnp.float32)
  mask = jnp.ones(len(nodes), bool)

  def values(model, ranges=ranges):
    state = model.init(tables, None)
    return np.asarray(model.apply(model.params, tables, nodes, ranges, mask, state).values)

  oracle = leaf_models.exact_leaf_model(iterations=5)
  np.testing.assert_array_equal(values(leaf_models.with_value_error(oracle, 0.0)), values(oracle))
  noisy = leaf_models.with_value_error(leaf_models.zero_leaf_model(), 0.5, seed=3)
  first, again = values(noisy), values(noisy)
  np.testing.assert_array_equal(first, again)
  r = np.asarray(ranges)
  np.testing.assert_allclose((r * first).sum((-2, -1)), 0.0, atol=1e-5)
  conditional = first / r.sum(-1, keepdims=True)[:, ::-1]
  assert 0.3 < np.abs(conditional[valid]).mean() < 0.5
  assert (first[~valid] == 0).all()
  other = values(leaf_models.with_value_error(leaf_models.zero_leaf_model(), 0.5, seed=4))
  assert not np.allclose(other, first)
  # The error is a function of the public state: other ranges keep the conditional error's pattern
  # up to the zero-sum shift, which is one number per node.
  rescaled = values(noisy, ranges * 0.5 + 0.25 * jnp.asarray(valid, jnp.float32))
  r2 = np.asarray(ranges * 0.5 + 0.25 * jnp.asarray(valid, jnp.float32))
  shift = rescaled / r2.sum(-1, keepdims=True)[:, ::-1] - conditional
  spread = np.where(valid, shift, np.nan)
  np.testing.assert_allclose(np.nanmax(spread, (-2, -1)), np.nanmin(spread, (-2, -1)), atol=1e-5)
  with pytest.raises(ValueError, match="sigma must be >= 0"):
    leaf_models.with_value_error(noisy, -1.0)


def test_a_search_stops_calling_the_leaf_model_once_its_tree_is_complete():
  """A search in a small subgame grows all of it in a few simulations. Its passes then make no
  leaf-model call, alone and in a vmapped batch (whose passes call on the batch's largest
  frontier), and both return the same search."""
  game = load("leduc_poker")
  network = cvpn_lib.make_network(game.public_game)
  params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(1))
  searcher = gtcfr.GTCFR(
    game, leaf_lib.cvpn_leaf_model(network, params, game.name), gtcfr.GTCFRConfig(simulations=40)
  )
  tree = game.tree
  # 8 nodes below
  node = int(np.flatnonzero((tree.depth == 4) & (tree.kind < public_game.CHANCE))[0])
  subgame = searcher.subgames(node)
  start = gtcfr.root_start(subgame.tables, jnp.asarray(tree.root_ranges, jnp.float32))
  twice = lambda x: np.stack([np.asarray(x)] * 2)  # noqa: E731
  tables, starts = jax.tree.map(twice, subgame.tables), jax.tree.map(twice, start)
  rngs = jnp.stack([jax.random.PRNGKey(4)] * 2)
  one = searcher.search_in_subgames(
    jax.tree.map(lambda x: x[:1], tables),
    subgame.capacity,
    rngs[:1],
    jax.tree.map(lambda x: x[:1], starts),
  )
  batched = searcher.search_in_subgames(tables, subgame.capacity, rngs, starts)
  config = searcher.config
  every_pass = 2 + config.phases * config.updates_per_phase * config.passes_per_update
  assert int(one.leaf_calls[0]) < every_pass // 2
  for (path, expected), (_, got) in zip(
    jax.tree_util.tree_flatten_with_path(batched)[0],
    jax.tree_util.tree_flatten_with_path(one)[0],
    strict=True,
  ):
    got, expected = np.asarray(got)[0], np.asarray(expected)[0]
    if np.issubdtype(expected.dtype, np.floating):  # batched matmuls round differently
      np.testing.assert_allclose(
        got, expected, rtol=1e-4, atol=_atol(path), err_msg=jax.tree_util.keystr(path)
      )
    else:  # the calls and the rows evaluated included
      np.testing.assert_array_equal(got, expected, err_msg=jax.tree_util.keystr(path))


def test_a_batch_of_searches_calls_the_leaf_model_on_its_largest_frontier():
  """Under vmap each pass makes one leaf-model call for the batch, of the smallest batch size that
  holds the batch's largest frontier, or none: the rows each call ran with, recorded as it runs,
  are those sizes."""
  game = load("leduc_poker")
  ran = []
  zero = leaf_models.zero_leaf_model()

  def apply(params, tables, nodes, ranges, mask, state):
    jax.debug.callback(lambda: ran.append(nodes.shape[0]))  # the size of the branch that runs
    return zero.apply(params, tables, nodes, ranges, mask, state)

  searcher = gtcfr.GTCFR(
    game, zero._replace(apply=apply), gtcfr.GTCFRConfig(simulations=10, simulations_per_phase=1)
  )
  rngs = jax.random.split(jax.random.PRNGKey(0), 4)
  result = jax.block_until_ready(searcher.search_batch(rngs))
  sizes = searcher.leaf_batches.sizes
  assert len(ran) == int(result.leaf_calls[0])  # one call a pass for the whole batch
  assert ran[0] == 1  # the focus's prior, at init
  assert set(ran[1:]) <= set(sizes) and min(ran[1:]) < sizes[-1]
  assert (np.asarray(result.leaf_calls) == int(result.leaf_calls[0])).all()


def test_search_result_is_consistent():
  game = load("scotland_yard(map=glasses_short)")
  searcher = gtcfr.GTCFR(
    game,
    leaf_models.zero_leaf_model(),
    gtcfr.GTCFRConfig(simulations=30, simulations_per_phase=0.5, query_samples=8),
  )
  result = searcher.search(jax.random.PRNGKey(0))
  tree = game.tree
  in_tree, expanded = np.asarray(result.in_tree), np.asarray(result.expanded)
  # The tree is closed under parents, and exactly the children of interior nodes are in it.
  assert in_tree[0] and expanded[0]
  assert (in_tree[1:] == expanded[tree.parent[1:]]).all()
  assert not (expanded & (tree.kind == public_game.TERMINAL)).any()
  assert int(result.nodes) == in_tree.sum() > 1 + (tree.parent == 0).sum()
  # Root policy is a distribution over legal actions at every valid infostate of the actor.
  actor = tree.kind[0]
  policy = np.asarray(result.focus_policy)[tree.valid[0, actor]]
  np.testing.assert_allclose(policy.sum(-1), 1.0, rtol=1e-5)
  assert (policy[~tree.legal[0][tree.valid[0, actor]]] == 0).all()
  # Zero-sum root values, and the ranges' root row is the search's root ranges.
  ranges, values = np.asarray(result.ranges), np.asarray(result.values)
  assert abs((ranges[0] * values[0]).sum()) < 1e-5
  np.testing.assert_allclose(ranges[0], tree.root_ranges * tree.valid[0], rtol=1e-6)
  # Queried PBSs are frontier leaves of some iteration: in the tree, non-terminal, with ranges of
  # that node's valid infostates.
  queries = result.queries
  valid = np.asarray(queries.valid)
  assert valid.all()
  nodes = np.asarray(queries.nodes)[valid]
  assert in_tree[nodes].all() and (tree.kind[nodes] != public_game.TERMINAL).all()
  assert (np.asarray(queries.ranges)[valid][~tree.valid[nodes]] == 0).all()
  # Leaf-model calls: one at the root, one per CFR pass (two updates per phase here), one at the
  # end.
  config = searcher.config
  assert (
    int(result.leaf_calls)
    == 2 + config.phases * config.updates_per_phase * config.passes_per_update
  )


def test_bad_config_raises_before_tracing():
  game = load("kuhn_poker")
  for bad in (
    dict(simulations=0),
    dict(simulations_per_phase=0.0),
    dict(expansion_k=0),
    dict(prior_temperature=0.0),
    dict(puct_constant=-1.0),
    dict(query_samples=-1),
  ):
    with pytest.raises(ValueError, match="GT-CFR config"):
      gtcfr.GTCFRConfig(**bad)
  leduc = load("leduc_poker")
  with pytest.raises(ValueError, match="too small"):
    gtcfr.GTCFR(
      leduc, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(simulations=100, leaf_capacity=4)
    )
  with pytest.raises(ValueError, match="terminal"):
    terminal = int(np.flatnonzero(game.tree.kind == public_game.TERMINAL)[0])
    gtcfr.GTCFR(game.tree.subtree(terminal), leaf_models.zero_leaf_model())
  with pytest.raises(ValueError, match="oracle iterations"):
    leaf_models.exact_leaf_model(0)
  searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(simulations=2))
  with pytest.raises(ValueError):
    searcher.search(jax.random.PRNGKey(0), np.ones((3, 3)))


def test_capacity_bound_holds_while_growing():
  """The frontier never exceeds the derived capacity (it is an upper bound, checked on a search
  that is given exactly that capacity)."""
  game = load("scotland_yard(map=glasses_short)")
  searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(simulations=25))
  result = searcher.search(jax.random.PRNGKey(2))
  frontier = gtcfr.frontier_mask(
    game.tree.kind, np.asarray(result.in_tree), np.asarray(result.expanded)
  )
  assert 0 < frontier.sum() <= searcher.capacity
  assert int(result.leaf_evaluations) >= frontier.sum()


def test_completions_agree_once_the_tree_is_the_whole_game():
  """Kuhn's tree is fully grown after a few simulations: both completions are then the search's own
  average policy (nothing is left below a frontier), and evaluate to the same exploitability."""
  game = load("kuhn_poker")
  searcher = gtcfr.GTCFR(game, leaf_models.exact_leaf_model(50), gtcfr.GTCFRConfig(simulations=30))
  result = searcher.search(jax.random.PRNGKey(0))
  assert np.asarray(result.in_tree).all()
  resolved = searcher.completed_policy(result, 200, "resolve")
  averaged = searcher.completed_policy(result, 200, "average")
  inner = np.asarray(searcher.tables.inner_nodes)
  own = np.asarray(result.average_policy, np.float64)
  np.testing.assert_allclose(resolved[inner], own / own.sum(-1, keepdims=True), atol=1e-12)
  # The oracle played only while the root's children were leaves: a small share of the average.
  np.testing.assert_allclose(averaged, resolved, atol=0.02)
  assert searcher.exploitability(result, 200, "resolve") == pytest.approx(
    best_response.exploitability(game, resolved), abs=1e-15
  )
  with pytest.raises(ValueError, match="method"):
    searcher.completed_policy(result, 10, "exact")


def test_top_k_expansion_grows_one_action_at_a_time():
  """k = 1: an expansion adds one action's children; a node is interior once every infostate of its
  actor has an added action, and CFR then plays only added actions there."""
  game = load("scotland_yard(map=glasses_short)")
  config = gtcfr.GTCFRConfig(simulations=40, expansion_k=1)
  searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), config)
  apply, tables = searcher.leaf_model.apply, searcher.tables

  @jax.jit
  def grow(tables, ranges):
    state = gtcfr.init(
      tables, apply, None, jax.random.PRNGKey(5), gtcfr.root_start(tables, ranges), config
    )
    return gtcfr.run(tables, apply, None, state, config, searcher.leaf_batches, searcher.k)

  state = grow(tables, searcher.root_ranges(None))
  tree = game.tree
  active, expanded, added = (np.asarray(x) for x in (state.in_tree, state.expanded, state.added))
  # The root starts with all.
  players = np.flatnonzero(expanded & (tree.kind < public_game.CHANCE))[1:]
  assert players.size
  for node in players:
    actor = tree.kind[node]
    rows = tree.legal[node][tree.valid[node, actor]]
    assert (rows & added[node]).any(-1).all()
  partial = [
    n for n in players if (tree.legal[n][tree.valid[n, tree.kind[n]]].any(0) & ~added[n]).any()
  ]
  assert partial, "with k = 1 some interior node should still miss actions"
  # Children are in the tree exactly through added actions of interior nodes.
  through = np.zeros(tree.num_nodes, bool)
  through[0] = True
  for node in np.flatnonzero(expanded):
    for a in np.flatnonzero(added[node]):
      children = tree.up_child[node, a]
      through[children[children >= 0]] = True
  np.testing.assert_array_equal(active, through)
  policy = np.asarray(
    cfr.regret_matching(state.cfr.policy_sums, gtcfr_frontier.available(tables, state))
  )
  inner = np.asarray(tables.inner_position)
  for node in partial:
    assert (policy[inner[node]][:, ~added[node]] == 0).all()


def _last_action_prior_model() -> leaf_models.LeafModel:
  """Zero values and a prior that ranks the actions by their index (the last one first)."""

  def apply(params, tables, nodes, ranges, mask):
    del params, mask
    logits = jnp.broadcast_to(
      jnp.arange(tables.legal.shape[-1], dtype=ranges.dtype),
      (nodes.shape[0], *ranges.shape[1:], tables.legal.shape[-1]),
    )
    return leaf_models.LeafOutput(jnp.zeros_like(ranges), logits)

  return leaf_models.stateless(apply)


def test_perfect_information_expansion_adds_one_child_per_simulation():
  """Perfect information, k = 1 by default: each simulation adds exactly one public state (none when
  its walk ends at a terminal). At a frontier leaf that is the child of the prior's top action
  (SoG's top-k by prior); a walk may also leave an interior node by an action not yet added
  (pi_select ranges over all legal actions), which adds that child, so the tree keeps widening where
  the walks go instead of freezing each node at its first child."""
  game = load("connect_four")
  config = gtcfr.GTCFRConfig(simulations=40)
  searcher = gtcfr.GTCFR(game, _last_action_prior_model(), config)
  assert searcher.k == 1
  apply, tables = searcher.leaf_model.apply, searcher.tables
  state = jax.jit(
    lambda t, r: gtcfr.init(t, apply, None, jax.random.PRNGKey(3), gtcfr.root_start(t, r), config)
  )(tables, searcher.root_ranges(None))
  step = jax.jit(
    lambda t, s: expand_lib.grow(
      t, update_lib.cfr_update(t, apply, None, s, config, searcher.leaf_batches), config, searcher.k
    )
  )
  tree = game.tree
  sizes = [int(np.asarray(state.in_tree).sum())]
  assert sizes[0] == 1 + tree.legal[0, 0].sum()  # the root and its children
  for _ in range(config.simulations):
    state = step(tables, state)
    sizes.append(int(np.asarray(state.in_tree).sum()))
  growth = np.diff(sizes)
  assert set(growth.tolist()) <= {0, 1}
  in_tree = np.asarray(state.in_tree)
  if (growth == 0).any():
    assert (in_tree & (tree.kind == public_game.TERMINAL)).any()
  assert growth.sum() >= 0.75 * config.simulations
  added, expanded = np.asarray(state.added), np.asarray(state.expanded)
  grown = np.flatnonzero(expanded)[1:]  # the root starts with all its actions
  top = np.array([np.flatnonzero(tree.legal[n, 0])[-1] for n in grown])
  assert grown.size and added[grown, top].all()  # each node's first expansion took the prior's top
  # Some node gained a child after its first expansion: a second added action.
  assert (added[grown].sum(-1) >= 2).any()
