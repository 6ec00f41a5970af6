"""GT-CFR on the belief pool (``GTCFR``): CFR+ on a grown tree, the prior's temperature, the
leaf models' error and warm starts, when and how wide the leaf model is called, the result's
invariants, bad settings, and top-k expansion.

Not here: soundness with an exact oracle and the completion below the frontier
(``test_completion.py``; the table search's second completion, "average", has no pool version);
batched searches as separate ones
(``test_belief_search.test_a_batch_of_pool_searches_is_each_search_alone``); the pool's capacity
(``test_belief_search``: ``test_a_full_pool_keeps_searching_the_tree_it_has``,
``test_the_default_pool_is_the_whole_tree_where_that_is_smaller_than_the_bound``, and the
``num_nodes <= capacity`` check of
``test_a_search_on_the_pool_is_the_table_search_from_the_same_key``).
"""

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import public_game
from sog.nets import leaf as leaf_lib
from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import leaf_models
from sog.search import solver
from sog.search import tables as tables_lib
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_cfr
from sog.search.pool import belief_expand
from sog.search.pool import belief_oracle
from sog.search.pool import belief_paths
from sog.search.pool import belief_search
from sog.search.pool import belief_state
from sog.search.pool import belief_update
from sog.search.pool import beliefs
from sog.search.pool import passes
from tests.conftest import load


def _counting(model: leaf_models.LeafModel, sizes: list[int]) -> leaf_models.LeafModel:
  """``model`` appending to ``sizes`` the rows of each call it makes, as the call runs (a branch of
  a pass's leaf call that is not taken appends nothing)."""

  def apply(params, view, nodes, ranges, mask, state):
    jax.debug.callback(lambda: sizes.append(nodes.shape[0]))
    return model.apply(params, view, nodes, ranges, mask, state)

  return model._replace(apply=apply)


@pytest.mark.parametrize(
  "updates",
  [
    pytest.param(
      "simultaneous",
      marks=pytest.mark.slow(reason="the same test's [alternating] case checks the property"),
    ),
    "alternating",
  ],
)
def test_search_on_a_fully_grown_tree_is_cfr_plus(updates):
  """A search whose pool holds the whole of Leduc from the start (every public state, each
  non-terminal one interior) adds nothing, calls no leaf model after the focus's prior, and its
  s = 40 CFR+ updates are CFR+'s: the solver's average policy at every valid infostate and its
  root values v_i(s_0), in float64."""
  game = load("leduc_poker")
  public, tree = game.public_game, game.tree
  config = types.GTCFRConfig(simulations=40, updates=updates)
  model = leaf_models.zero_leaf_model()
  capacity = tree.num_nodes
  batches = leaf_calls.leaf_batches(belief_search.frontier_capacity(capacity))
  with jax.enable_x64(True):
    start = belief_search.root_start(public, public_game.prior_ranges(public), jnp.float64)

    @jax.jit
    def grown_search(start):
      state = belief_search.init(
        public, capacity, model.apply, None, jax.random.PRNGKey(0), start, config
      )
      state = state.replace(tree=beliefs.grow_all(public, state.tree))
      grown = state.tree
      state = belief_search.run(public, model.apply, None, state, config, batches)
      return grown, belief_search.finish(model.apply, None, state, batches)

    grown, result = jax.tree.map(np.asarray, grown_search(start))
    reference = solver.Solver(tree, updates, dtype=jnp.float64)
    ranges = reference.root_ranges(None)
    cfr_state, _ = reference.run(reference.init(), ranges, config.phases * config.updates_per_phase)
    theirs = reference.average_policy(cfr_state)
    root_values = reference.root_values(cfr_state, ranges)
  assert int(grown.num_nodes) == tree.num_nodes
  assert (grown.expanded == (grown.kind != public_game.TERMINAL)).all()
  assert int(result.tree.num_nodes) == tree.num_nodes and bool(result.complete)
  assert int(result.leaf_calls) == 1  # the focus's prior at init; the frontier is empty after
  nodes = beliefs.tree_nodes(result.tree, tree)
  players = np.flatnonzero(tree.kind[nodes] < public_game.CHANCE)
  acting = tree.valid[nodes[players], tree.kind[nodes[players]]]
  ours = result.average_policy[players][acting]
  np.testing.assert_allclose(ours, theirs[nodes[players]][acting], rtol=1e-7, atol=1e-12)
  assert (ours.max(-1) < 0.99).any()  # mixed somewhere: not only pure rows compared
  np.testing.assert_allclose(result.focus_values, root_values, atol=1e-9)
  assert np.abs(root_values).max() > 0.01


def _scaled_logits_leaf(scale, view, nodes, ranges, mask):
  """Zero values and fixed random logits times ``scale`` (its params): 8 is far from uniform, 0 is
  the zero leaf model's output (uniform prior)."""
  del mask
  logits = jax.random.normal(jax.random.PRNGKey(5), (*ranges.shape, view.legal.shape[-1]))
  return leaf_models.LeafOutput(jnp.zeros_like(ranges), scale * logits)


def test_infinite_prior_temperature_is_the_uniform_prior():
  """With T_prior = inf, PUCT ignores the leaf model's logits: zero values with arbitrary logits
  search exactly as with zero logits (the zero leaf model's output: a uniform prior) at T_prior =
  1, and at T_prior = 1 those logits change the search. The logits' scale is the leaf model's
  params, so each temperature compiles one search."""
  game = load("leduc_poker")
  leaf_model = leaf_models.stateless(_scaled_logits_leaf, params=jnp.float32(0.0))

  def searcher(temperature):
    config = types.GTCFRConfig(simulations=20, prior_temperature=temperature)
    return GTCFR(game, leaf_model, config)

  at_one, at_infinity = searcher(1.0), searcher(float("inf"))
  rng = jax.random.PRNGKey(2)
  uniform = at_one.search(rng, params=jnp.float32(0.0))
  ignored = at_infinity.search(rng, params=jnp.float32(8.0))
  followed = at_one.search(rng, params=jnp.float32(8.0))
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


def _calls(model: leaf_models.LeafModel, view, nodes, ranges, mask, state, times: int):
  """The output of the last of ``times`` calls of ``model`` (jitted) at the same queries, each
  from the state the call before left."""
  apply = jax.jit(lambda state: model.apply(model.params, view, nodes, ranges, mask, state))
  for _ in range(times):
    out = apply(state)
    state = out.state
  return out


def test_warm_oracle_calls_continue_one_solve(rng):
  """Four warm-started oracle calls of 5 iterations at fixed ranges are one cold 20-iteration solve:
  the same values and realisation weights, and a state that counts the 20 iterations; so are an
  ensemble's of two warm oracles (on the search tables, ReBeL's oracle) and, on the belief pool, a
  routed model's of the pool's warm oracle as both model and oracle (player 0's values from the
  oracle), each carrying its own run in the composite's state. The pool's cold solve is the
  tables' at the same public states."""
  game = load("leduc_poker")
  tree = game.tree
  tables = tables_lib.make_tables(tree)
  nodes = jnp.asarray(np.flatnonzero(tree.parent == tree.node_of_path((1, 1)))[:3], jnp.int32)
  ranges = jnp.asarray(
    tree.root_ranges * rng.uniform(0.3, 1.0, (3, *tree.root_ranges.shape)), jnp.float32
  )
  mask = jnp.array([True, True, False])
  warm = leaf_models.exact_leaf_model(5, warm_start=True)
  out = _calls(warm, tables, nodes, ranges, mask, warm.init(tables, None), 4)
  cold = _calls(leaf_models.exact_leaf_model(20), tables, nodes, ranges, mask, (), 1)
  assert int(out.state.iteration) == 20
  assert cold.state == ()
  np.testing.assert_allclose(np.asarray(out.values)[:2], np.asarray(cold.values)[:2], atol=1e-6)
  np.testing.assert_allclose(np.asarray(out.policy_sums), np.asarray(cold.policy_sums), atol=1e-6)
  assert np.abs(np.asarray(cold.values)[:2]).max() > 0.1  # a real solve, not zeros
  pair = leaf_lib.ensemble_leaf_model([warm, warm])  # each member carries its own run
  both = _calls(pair, tables, nodes, ranges, mask, pair.init(tables, None), 4)
  assert [int(member.iteration) for member in both.state] == [20, 20]
  np.testing.assert_allclose(np.asarray(both.values)[:2], np.asarray(cold.values)[:2], atol=1e-6)
  np.testing.assert_allclose(np.asarray(both.policy_sums), np.asarray(cold.policy_sums), atol=1e-6)
  # On the pool: Leduc grown whole, the same three public states (slots), at the same ranges, from
  # a plain search's start at the game's root.
  public = game.public_game
  grown = beliefs.grow(public, tree.num_nodes)
  paths = beliefs.paths(grown)
  slots = jnp.asarray([paths.index(tuple(tree.paths[int(n)])) for n in nodes], jnp.int32)
  start = belief_search.root_start(public, public_game.prior_ranges(public))
  pool_cold = belief_oracle.exact_leaf_model(public, 20)
  solved = _calls(pool_cold, grown, slots, ranges, mask, jax.jit(pool_cold.init)(grown, start), 1)
  assert int(solved.state.cfr.iteration) == 0  # a cold oracle keeps no run
  np.testing.assert_allclose(np.asarray(solved.values)[:2], np.asarray(cold.values)[:2], atol=1e-5)
  pool_warm = belief_oracle.exact_leaf_model(public, 5, warm_start=True)
  routed = leaf_models.routed_leaf_model(pool_warm, pool_warm, "player_0")
  out = _calls(routed, grown, slots, ranges, mask, jax.jit(routed.init)(grown, start), 4)
  assert [int(member.cfr.iteration) for member in out.state[-2:]] == [20, 20]
  np.testing.assert_allclose(np.asarray(out.values)[:2], np.asarray(solved.values)[:2], atol=1e-6)


def _leduc_subgame_start(rng) -> tuple[belief_state.BeliefStart, int]:
  """A plain search's start at a Leduc public state four moves down (check, check, a board card,
  check), at random ranges, and the public states of its subgame (8)."""
  game = load("leduc_poker")
  tree = game.tree
  node = int(np.flatnonzero((tree.depth == 4) & (tree.kind < public_game.CHANCE))[0])
  state, weight = belief_paths.along(game.public_game, np.asarray(tree.paths[node], np.int32))
  valid = np.asarray(beliefs.valid_infostates(weight[None])[0])
  start = belief_state.BeliefStart(
    state=state,
    weight=weight,
    branch=np.zeros(0, np.int32),
    ranges=jnp.asarray(rng.uniform(0.2, 1.0, valid.shape) * valid, jnp.float32),
    gadget=gadget_lib.disabled(game.public_game.max_infostates, jnp.float32),
  )
  return start, tree.subtree(node).num_nodes


def test_a_search_stops_calling_the_leaf_model_once_its_tree_is_complete(rng):
  """A search rooted in a small Leduc subgame (in a pool sized to it) grows all of it in a few
  simulations. Its passes then make no leaf-model call, alone and in a vmapped batch (whose passes
  call on the batch's largest frontier), and both return the same search. (``leaf_calls`` counts
  the calls the model ran: test_a_batch_of_searches_calls_the_leaf_model_on_its_largest_frontier.)
  """
  game = load("leduc_poker")
  start, size = _leduc_subgame_start(rng)
  config = types.GTCFRConfig(simulations=20)
  capacity = belief_search.subgame_capacity(game.public_game, config, size)
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), config, capacity=capacity)
  one = jax.block_until_ready(searcher.search_from(jax.random.PRNGKey(4), start))
  assert bool(one.complete) and int(one.tree.num_nodes) == size
  every_pass = 2 + config.phases * config.updates_per_phase * config.passes_per_update
  assert int(one.leaf_calls) < every_pass // 2
  starts = jax.tree.map(lambda x: np.stack([np.asarray(x)] * 2), start)
  rngs = jnp.stack([jax.random.PRNGKey(4)] * 2)
  batched = jax.block_until_ready(searcher.search_from_batch(rngs, starts))
  for (path, expected), (_, got) in zip(
    jax.tree_util.tree_flatten_with_path(one)[0],
    jax.tree_util.tree_flatten_with_path(batched)[0],
    strict=True,
  ):
    expected = np.asarray(expected)
    for row in np.asarray(got):
      if np.issubdtype(expected.dtype, np.floating):  # batched matmuls round differently
        np.testing.assert_allclose(
          row, expected, rtol=1e-4, atol=1e-5, err_msg=jax.tree_util.keystr(path)
        )
      else:  # the calls and the rows evaluated included
        np.testing.assert_array_equal(row, expected, err_msg=jax.tree_util.keystr(path))


def test_a_batch_of_searches_calls_the_leaf_model_on_its_largest_frontier():
  """Under vmap each pass makes one leaf-model call for the batch, of the smallest batch size that
  holds the batch's largest frontier, or none: the rows each call ran with, recorded as it runs,
  are those sizes; the other calls are one row, the focus's prior at init and an expansion's prior
  at its node, made only while some search of the batch expands a leaf the last pass valued (so
  at least once, and at most once for each growing walk of the batch), each asked for by one
  search of the batch or more, as their ``prior_calls`` count."""
  game = load("leduc_poker")
  ran = []
  searcher = GTCFR(
    game,
    _counting(leaf_models.zero_leaf_model(), ran),
    types.GTCFRConfig(simulations=10, simulations_per_phase=1),
  )
  rngs = jax.random.split(jax.random.PRNGKey(0), 4)
  result = jax.block_until_ready(searcher.search_batch(rngs))
  sizes = searcher.leaf_batches.sizes
  assert ran[0] == 1  # the focus's prior, at init
  passes_ran = [rows for rows in ran[1:] if rows != 1]  # the expansions' priors are one row
  priors = len(ran) - len(passes_ran) - 1
  assert 1 <= priors <= int(result.growing_walks.sum()), priors
  own = np.asarray(result.prior_calls)  # each search counts the calls it asked for
  assert own.max() <= priors <= own.sum(), (own, priors)
  assert len(passes_ran) + 1 == int(result.leaf_calls[0])  # one call a pass for the whole batch
  assert set(passes_ran) <= set(sizes) and min(passes_ran) < sizes[-1]
  assert (np.asarray(result.leaf_calls) == int(result.leaf_calls[0])).all()
  # the last call (the final tree's frontier) is the smallest size that holds the largest one
  frontier = np.asarray(jax.vmap(passes.frontier)(result.tree).sum(-1))
  assert passes_ran[-1] == min(size for size in sizes if size >= frontier.max())


def test_search_result_is_consistent():
  """Scotland Yard (glasses, short: imperfect information, so k = all): the pool holds the root
  and exactly the children of its interior nodes, closed under parents; the focus policy is a
  distribution over legal actions; the root values are zero-sum; the queries are frontier leaves;
  one leaf-model call at the root, one per CFR pass and one at the end."""
  game = load("scotland_yard(map=glasses_short)")
  tree = game.tree
  searcher = GTCFR(
    game,
    leaf_models.zero_leaf_model(),
    types.GTCFRConfig(simulations=30, simulations_per_phase=0.5, query_samples=8),
  )
  assert searcher.k is None
  result = jax.tree.map(np.asarray, searcher.search(jax.random.PRNGKey(0)))
  pool = result.tree
  n = int(pool.num_nodes)
  expanded, parent = pool.expanded[:n], pool.parent[:n]
  # Closed under parents (a parent before its children), each parent interior; and exactly the
  # children of interior nodes are in it (matched to the enumerated tree by path).
  assert parent[0] == -1 and expanded[0] and int(result.focus) == 0
  assert (parent[1:] >= 0).all() and (parent[1:] < np.arange(1, n)).all()
  assert expanded[parent[1:]].all()
  assert not (expanded & (pool.kind[:n] == public_game.TERMINAL)).any()
  nodes = beliefs.tree_nodes(pool, tree)
  assert np.unique(nodes).size == n
  children = np.flatnonzero(np.isin(tree.parent, nodes[expanded]))
  np.testing.assert_array_equal(np.sort(nodes[1:]), children)
  assert n > 1 + (tree.parent == 0).sum()
  # The focus policy is a distribution over legal actions at every valid infostate of its actor.
  actor = int(pool.kind[0])
  valid = pool.valid[0, actor]
  policy = result.focus_policy[valid]
  np.testing.assert_allclose(policy.sum(-1), 1.0, rtol=1e-5)
  assert (policy[~pool.legal[0][valid]] == 0).all()
  # Zero-sum root values, and the ranges' root row is the search's root ranges.
  ranges, values = result.ranges, result.values
  assert abs((ranges[0] * values[0]).sum()) < 1e-5
  np.testing.assert_allclose(ranges[0], tree.root_ranges * tree.valid[0], rtol=1e-6)
  # Queried PBSs are frontier leaves of some pass: in the tree, below the focus, non-terminal,
  # with ranges on that node's valid infostates only.
  queries = result.queries
  assert queries.valid.all()
  asked = queries.nodes
  assert ((asked > 0) & (asked < n)).all()
  assert (pool.kind[asked] != public_game.TERMINAL).all()
  assert (queries.ranges[~pool.valid[asked]] == 0).all() and queries.ranges.sum() > 0
  # Leaf-model calls: one at the root, one per CFR pass (two updates per phase here), one at the
  # end.
  config = searcher.config
  assert int(result.leaf_calls) == (
    2 + config.phases * config.updates_per_phase * config.passes_per_update
  )


def _ended(game: public_game.PublicGame) -> public_game.PublicGame:
  """``game`` (Kuhn) starting where bet, call has ended it."""
  over = belief_paths.along(game, np.array([1, 1], np.int32))[0]
  ended = copy.copy(game)
  ended.__class__ = type("Ended", (type(game),), {"root": lambda self: over})
  return ended


def test_bad_config_raises_before_tracing():
  """The config's checks, and the pool's refusals of a leaf capacity, a pool too small for the
  first expansion, a terminal root, an oracle without iterations and bad root ranges, raise before
  the search is traced (the leaf model is traced once, by the searcher's check of what it reads)."""
  for bad in (
    dict(simulations=0),
    dict(simulations_per_phase=0.0),
    dict(expansion_k=0),
    dict(prior_temperature=0.0),
    dict(puct_constant=-1.0),
    dict(query_samples=-1),
    dict(updates="sometimes"),
  ):
    with pytest.raises(ValueError, match="GT-CFR config"):
      types.GTCFRConfig(**bad)
  game = load("kuhn_poker")
  traced = []  # the leaf model's traces

  def apply(params, view, nodes, ranges, mask):
    traced.append(nodes.shape[0])
    return leaf_models.zero_leaf_model().apply(params, view, nodes, ranges, mask, ())

  model = leaf_models.stateless(apply)
  config = types.GTCFRConfig(simulations=2)
  with pytest.raises(ValueError, match="capacity must be None"):
    GTCFR(game, model, config, capacity=2)
  with pytest.raises(ValueError, match="search root is terminal"):
    GTCFR(_ended(game.public_game), model, config)
  assert not traced
  with pytest.raises(ValueError, match="oracle iterations"):
    leaf_models.exact_leaf_model(0)
  with pytest.raises(ValueError, match="oracle iterations"):
    belief_oracle.exact_leaf_model(game, 0)
  searcher = GTCFR(game, model, config)
  assert len(traced) == 1
  with pytest.raises(ValueError, match="root ranges must have shape"):
    searcher.search(jax.random.PRNGKey(0), np.ones((3, 3)))
  with pytest.raises(ValueError, match="batched root ranges"):
    searcher.search_batch(jax.random.split(jax.random.PRNGKey(0), 2), np.ones((3, 2, 3)))
  assert len(traced) == 1


def test_top_k_expansion_grows_one_action_at_a_time():
  """k = 1 on an imperfect-information game: an expansion adds one action's children; a node is
  interior once every valid infostate of its actor has an added action, the tree holds exactly the
  children of interior nodes' added actions, and CFR plays only added actions there (no regret
  and no average-policy weight on the others)."""
  game = load("scotland_yard(map=glasses_short)")
  public, tree = game.public_game, game.tree
  config = types.GTCFRConfig(simulations=40, expansion_k=1)
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), config)
  assert searcher.k == 1
  apply = searcher.leaf_model.apply

  @jax.jit
  def grow(start):
    state = belief_search.init(
      public, searcher.capacity, apply, None, jax.random.PRNGKey(5), start, searcher.config
    )
    return belief_search.run(public, apply, None, state, searcher.config, searcher.leaf_batches)

  state = jax.tree.map(np.asarray, grow(searcher.start()))
  pool = state.tree
  n = int(pool.num_nodes)
  expanded, added, legal = pool.expanded[:n], pool.added[:n], pool.legal[:n]
  actor_valid = pool.valid[np.arange(n), np.clip(pool.kind[:n], 0, 1)]
  # The focus starts with all its actions.
  players = np.flatnonzero(expanded & (pool.kind[:n] < public_game.CHANCE))[1:]
  assert players.size
  for node in players:
    assert (legal[node][actor_valid[node]] & added[node]).any(-1).all()
  partial = [p for p in players if (legal[p][actor_valid[p]].any(0) & ~added[p]).any()]
  assert partial, "with k = 1 some interior node should still miss actions"
  # Children are in the tree exactly through added actions of interior nodes.
  nodes = beliefs.tree_nodes(pool, tree)
  through = {0}
  for slot in np.flatnonzero(expanded):
    for a in np.flatnonzero(added[slot]):
      children = tree.up_child[nodes[slot], a]
      through.update(children[children >= 0].tolist())
  assert sorted(nodes.tolist()) == sorted(through)
  policy = np.asarray(belief_cfr.average_policy(state.tree, state.cfr))
  sums, regrets = state.cfr.policy_sums, state.cfr.regrets
  for node in partial:
    assert (policy[node][:, ~added[node]] == 0).all()
    assert (sums[node][:, ~added[node]] == 0).all() and (regrets[node][:, ~added[node]] == 0).all()
  assert any(sums[node][:, added[node]].sum() > 0 for node in partial)


def _last_action_prior_model() -> leaf_models.LeafModel:
  """Zero values and a prior that ranks the actions by their index (the last one first)."""

  def apply(params, view, nodes, ranges, mask):
    del params, mask
    logits = jnp.broadcast_to(
      jnp.arange(view.legal.shape[-1], dtype=ranges.dtype),
      (nodes.shape[0], *ranges.shape[1:], view.legal.shape[-1]),
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
  public = game.public_game
  config = types.GTCFRConfig(simulations=40)
  searcher = GTCFR(game, _last_action_prior_model(), config)
  assert searcher.k == 1
  config, apply, batches = searcher.config, searcher.leaf_model.apply, searcher.leaf_batches
  state = jax.jit(
    lambda start: belief_search.init(
      public, searcher.capacity, apply, None, jax.random.PRNGKey(3), start, config
    )
  )(searcher.start())
  step = jax.jit(
    lambda s: belief_expand.grow(
      public,
      belief_update.cfr_update(apply, None, s, config, batches, public.utility_scale),
      config,
      belief_expand.LeafPrior(apply, None, config.prior_temperature),
    )
  )
  sizes = [int(state.tree.num_nodes)]
  assert sizes[0] == 1 + np.asarray(state.tree.legal[0, 0]).sum()  # the root and its children
  for _ in range(config.simulations):
    state = step(state)
    sizes.append(int(state.tree.num_nodes))
  growth = np.diff(sizes)
  assert set(growth.tolist()) <= {0, 1}
  pool = jax.tree.map(np.asarray, state.tree)
  n = int(pool.num_nodes)
  if (growth == 0).any():
    assert (pool.kind[:n] == public_game.TERMINAL).any()
  assert growth.sum() >= 0.75 * config.simulations
  added, expanded = pool.added[:n], pool.expanded[:n]
  grown = np.flatnonzero(expanded)[1:]  # the root starts with all its actions
  top = np.array([np.flatnonzero(pool.legal[node, 0])[-1] for node in grown])
  assert grown.size and added[grown, top].all()  # each node's first expansion took the prior's top
  # Some node gained a child after its first expansion: a second added action.
  assert (added[grown].sum(-1) >= 2).any()
