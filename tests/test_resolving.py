"""Continual re-solving on the belief pool: the gadget, plans from summaries, safety, the
composed-policy protocol."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import load
from sog.games import public_game
from sog.games import tree as tree_lib
from sog.openspiel import bridge as openspiel_bridge
from sog.protocol import composed
from sog.search import gadget as gadget_lib
from sog.search import leaf_models
from sog.search import predecessors
from sog.search import resolving
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_oracle
from sog.search.pool import belief_paths
from sog.search.pool import belief_resolving
from sog.search.pool import belief_search
from sog.search.pool import beliefs


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


@functools.cache
def _leduc_searcher() -> GTCFR:
  """SoG(30, 1) on Leduc with the zero leaf, its branch as long as any path of the game (a plan's
  ``branch_depth``): one compiled search shared by the Leduc tests (one xdist group)."""
  game = load("leduc_poker")
  return GTCFR(
    game,
    leaf_models.zero_leaf_model(),
    types.GTCFRConfig(simulations=30),
    branch_depth=int(game.tree.max_moves),
  )


def _path(moves, length: int) -> jax.Array:
  return jnp.asarray(belief_paths.padded_path(moves, length))


def _initial_summary(searcher: GTCFR) -> belief_resolving.BeliefSummary:
  marginals = jnp.asarray(public_game.prior_ranges(searcher.game), searcher.dtype)
  return belief_resolving.initial_summary(searcher.empty, marginals, searcher.branch_depth)


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_plan_starts_at_the_closest_state_of_the_summary_with_the_branch_down_to_the_decision():
  """Leduc, the summary of a root search (s = 30) and a player-1 decision s_pub six moves down:
  s_prev is the deepest public state on s_pub's path that the search's tree holds (found here by
  the tree's paths), the start its public state and pair weights W (the whole game's, grown on a
  pool), the branch the rest of the path, the ranges the summary's at s_prev; the gadget on player
  0's range pays the summary's values there, with p_o the enumerated tree's prior weight. Unsafe
  re-solving turns the gadget off; the game's start plans from the root, the branch the whole
  path, at the priors."""
  searcher = _leduc_searcher()
  game = load("leduc_poker")
  tree, L = game.tree, searcher.branch_depth
  node = int(np.flatnonzero((tree.kind == 1) & (tree.depth == 6))[0])
  target = tree.paths[node]
  initial = _initial_summary(searcher)
  first = belief_resolving.plan(initial, _path((), L), 0, L)
  result = searcher.search_from(jax.random.PRNGKey(0), first.start)
  summary = belief_resolving.summarise(result, initial, first)
  held = {path: slot for slot, path in enumerate(beliefs.paths(summary.tree))}
  depth = max(d for d in range(len(target) + 1) if target[:d] in held)
  assert 1 <= depth < len(target) - 1  # s_prev below the game's root, two moves above s_pub or more
  s_prev = held[target[:depth]]
  planned = jax.device_get(belief_resolving.plan(summary, _path(target, L), 1, L))
  belief_resolving.check(planned, L)
  kept = jax.device_get(summary)  # read on the host
  start = planned.start
  assert int(planned.depth) == depth and int(planned.branch_moves) == len(target) - depth
  np.testing.assert_array_equal(planned.root_path, belief_paths.padded_path(target[:depth], L))
  np.testing.assert_array_equal(start.branch, belief_paths.padded_path(target[depth:], L))
  for ours, theirs in zip(
    jax.tree.leaves(start.state), jax.tree.leaves(kept.tree.states), strict=True
  ):
    np.testing.assert_array_equal(ours, theirs[s_prev])
  grown = beliefs.grow(game.public_game, tree.num_nodes)
  whole = beliefs.paths(grown).index(target[:depth])
  np.testing.assert_allclose(start.weight, grown.pair_weight(whole), rtol=1e-6)
  np.testing.assert_array_equal(start.ranges, kept.ranges[s_prev])
  gadget = start.gadget
  assert bool(gadget.enabled) and int(gadget.player) == 0  # player 1 re-solves
  np.testing.assert_array_equal(gadget.terminate_values, kept.values[s_prev, 0])
  np.testing.assert_array_equal(gadget.previous_range, kept.ranges[s_prev, 0])
  prior = tree_lib.prior_weights(tree)[tree.node_of_path(target[:depth]), 0]
  np.testing.assert_allclose(gadget.prior, prior, rtol=1e-6)
  unsafe = belief_resolving.plan(
    summary, _path(target, L), 1, L, resolving.ResolvingConfig(safe=False)
  )
  assert not bool(unsafe.start.gadget.enabled)
  np.testing.assert_array_equal(unsafe.start.ranges, start.ranges)
  at_start = jax.device_get(belief_resolving.plan(initial, _path(target, L), 1, L))
  assert int(at_start.depth) == 0 and not bool(at_start.start.gadget.enabled)
  np.testing.assert_array_equal(at_start.start.branch, belief_paths.padded_path(target, L))
  np.testing.assert_allclose(
    at_start.start.ranges, tree.root_ranges * tree.valid[0], rtol=1e-6, atol=1e-8
  )
  with pytest.raises(ValueError, match="alpha"):
    resolving.ResolvingConfig(alpha=1.5)


def _leduc_summary_after_the_board(rng):
  """Leduc: a player-1 decision in the second round (after the board card), its path, and a
  summary at random ranges and values whose tree is the branch from the game's root down to the
  decision's parent s_prev (player 0's, below the board card) with every child of the branch's
  nodes (a re-solving search's initial tree), so s_prev is the closest state it holds; s_prev's
  slot there."""
  game = load("leduc_poker")
  tree, public = game.tree, game.public_game
  chance = np.flatnonzero(tree.kind == 2)
  below_board = np.isin(tree.parent, chance) & (tree.kind == 0)
  node = int(
    np.flatnonzero((tree.kind == 1) & np.isin(tree.parent, np.flatnonzero(below_board)))[0]
  )
  above = tree.paths[int(tree.parent[node])]
  length = int(tree.max_moves)
  capacity = 1 + public.max_children * len(above)
  grown, s_prev = belief_search.grow_branch(
    public, beliefs.empty(public, capacity), _path(above, length)
  )
  valid = np.asarray(grown.valid)
  ranges = rng.random((capacity, 2, public.max_infostates)) * valid
  summary = belief_resolving.BeliefSummary(
    tree=grown,
    root_path=_path((), length),
    ranges=jnp.asarray(ranges, jnp.float32),
    values=jnp.asarray(rng.normal(size=ranges.shape), jnp.float32),
    origins=belief_resolving.root_origins(grown.valid[0]),
    marginals=jnp.asarray(public_game.prior_ranges(public), jnp.float32),
    resolvable=jnp.bool_(True),
  )
  return tree.paths[node], summary, int(s_prev)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_gadget_mixes_ranges_in_range_units_after_leducs_board_card(rng, alpha):
  """r_o = alpha f p_o + (1 - alpha) r_prev, p_o the prior mass of player 0's infostate at s_prev
  (carried down from the deal: 1/6 per possible card): alpha = 0 is the summary's range, alpha = 1
  the pure gadget f p_o, whatever the Follow probabilities."""
  path, summary, s_prev = _leduc_summary_after_the_board(rng)
  length = summary.root_path.shape[0]
  config = resolving.ResolvingConfig(alpha=alpha)
  planned = belief_resolving.plan(summary, _path(path, length), 1, length, config)
  assert int(planned.depth) == len(path) - 1 and int(planned.branch_moves) == 1
  start = planned.start
  np.testing.assert_array_equal(start.weight, summary.tree.pair_weight(s_prev))
  assert bool(start.gadget.enabled) and int(start.gadget.player) == 0
  valid = np.asarray(summary.tree.valid[s_prev])
  S = valid.shape[-1]
  np.testing.assert_allclose(start.gadget.prior, np.where(valid[0], 1 / 6, 0.0), rtol=1e-6)
  assert 0 < valid[0].sum() < S  # the board card is out of the players' hands
  state = gadget_lib.init_state(start.gadget)
  regrets = rng.random((2, S)) * rng.integers(0, 2, (2, S))
  state = state.replace(regrets=jnp.asarray(regrets, jnp.float32))
  total = regrets.sum(0)
  f = np.where(total > 0, regrets[0] / np.where(total > 0, total, 1), 0.5)
  r_prev = np.asarray(summary.ranges)[s_prev]
  expected = np.where(valid[0], alpha * f / 6 + (1 - alpha) * r_prev[0], 0.0)
  ranges = gadget_lib.root_ranges(start.gadget, state, start.ranges, jnp.asarray(valid))
  np.testing.assert_allclose(ranges[0], expected, rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(ranges[1], r_prev[1], rtol=1e-6)
  if alpha == 0.0:
    np.testing.assert_array_equal(ranges, r_prev * valid)


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_safe_resolving_with_alpha_zero_is_unsafe_resolving(rng):
  """With alpha = 0 the gadget's regrets move but never the ranges: the search is the unsafe one
  (its final pass at the averaged range, sum_t t r_prev / sum_t t, equal to r_prev up to
  rounding); with alpha = 0.5 the opponent's range at s_prev moves with f."""
  searcher = _leduc_searcher()
  path, summary, _ = _leduc_summary_after_the_board(rng)
  length = summary.root_path.shape[0]
  results = [
    jax.device_get(
      searcher.search_from(
        jax.random.PRNGKey(3),
        belief_resolving.plan(summary, _path(path, length), 1, length, config).start,
      )
    )
    for config in (
      resolving.ResolvingConfig(alpha=0.0),
      resolving.ResolvingConfig(safe=False),
      resolving.ResolvingConfig(alpha=0.5),
    )
  ]
  zero, unsafe, mixed = results
  assert int(zero.tree.expanded.sum()) > 2  # s_prev, s_pub and what the walks expanded below
  for field in ("focus", "focus_policy", "average_policy"):
    np.testing.assert_array_equal(getattr(zero, field), getattr(unsafe, field), err_msg=field)
  for field in ("num_nodes", "parent", "expanded"):
    np.testing.assert_array_equal(
      getattr(zero.tree, field), getattr(unsafe.tree, field), err_msg=field
    )
  for field in ("focus_values", "ranges", "values"):
    np.testing.assert_allclose(
      getattr(zero, field), getattr(unsafe, field), rtol=1e-5, atol=1e-7, err_msg=field
    )
  assert np.abs(mixed.ranges[0, 0] - unsafe.ranges[0, 0]).max() > 1e-3


@pytest.mark.xdist_group("leduc_zero_leaf_searcher")
def test_a_resolving_search_grows_only_below_its_decision():
  """Leduc, player 0's decision s_pub three moves down, planned from the game's start: the tree
  holds the branch from the root to s_pub, its nodes' children and s_pub's subgame, and nothing
  else; the simulations grow it below s_pub's children, and only the branch is expanded above."""
  searcher = _leduc_searcher()
  tree, L = load("leduc_poker").tree, searcher.branch_depth
  node = int(np.flatnonzero((tree.kind == 0) & (tree.depth == 3))[0])
  target = tree.paths[node]
  planned = belief_resolving.plan(_initial_summary(searcher), _path(target, L), 0, L)
  result = jax.device_get(searcher.search_from(jax.random.PRNGKey(0), planned.start))
  paths = beliefs.paths(result.tree)
  n = len(paths)
  below = np.array([p[: len(target)] == target for p in paths])
  branch = np.array([len(p) < len(target) and p == target[: len(p)] for p in paths])
  child_of_branch = np.array(
    [0 < len(p) <= len(target) and p[:-1] == target[: len(p) - 1] for p in paths]
  )
  assert (below | branch | child_of_branch).all()
  assert paths[int(result.focus)] == target
  assert below.sum() > 1 + (tree.parent == node).sum()  # grown past the focus's children
  np.testing.assert_array_equal(result.tree.expanded[:n] & ~below, branch)
  valid = result.tree.valid[int(result.focus), 0]
  np.testing.assert_allclose(result.focus_policy.sum(-1)[valid], 1.0, rtol=1e-5)


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
  previous = tree_lib.previous_decisions(tree)
  by_path = {path: previous[i] for i, path in enumerate(tree.paths)}
  node = {path: i for i, path in enumerate(tree.paths)}
  assert by_path[()] == -1 and by_path[(0,)] == -1 and by_path[(1,)] == -1
  assert by_path[(0, 1)] == node[()]


def _protocol_searcher(name: str, oracle: dict, simulations: int, **config) -> GTCFR:
  """SoG(s, 1) on the belief pool with the pool's exact oracle (``oracle``: its arguments), its
  branch as long as the protocol's re-solves need."""
  game = load(name)
  return GTCFR(
    game,
    belief_oracle.exact_leaf_model(game, **oracle),
    types.GTCFRConfig(simulations=simulations, **config),
    branch_depth=predecessors.branch_depth(game.tree),
  )


@functools.cache
def _kuhn_oracle_searcher(simulations: int) -> GTCFR:
  """Kuhn with the exact oracle (50 CFR+ iterations a call): shared by the Kuhn tests (one xdist
  group), so that s = 100 compiles once."""
  return _protocol_searcher("kuhn_poker", dict(iterations=50), simulations)


def test_gadget_resolving_is_safe_where_unsafe_resolving_is_exploitable():
  """Sequential RPS+ (ReBeL fig. 1a): player 1's decision re-solved from its first search. Unsafe
  re-solving, taking player 0's range as given, is indifferent between all its strategies there and
  drifts to an exploitable one (measured 1.0); the gadget keeps player 0's values to the first
  search's (0.0015 at alpha = 1, 0.0012 at alpha = 0.5)."""
  searcher = _protocol_searcher("sequential_rps", dict(iterations=100), 300, updates="alternating")
  tree = load("sequential_rps").tree
  exploitability = {}
  for name, config in (
    ("gadget", resolving.ResolvingConfig(alpha=1.0)),
    ("sog_mix", resolving.ResolvingConfig(alpha=0.5)),
    ("unsafe", resolving.ResolvingConfig(safe=False)),
  ):
    result = composed.compose(searcher, [0], config, batch_size=1, tree=tree)
    exploitability[name] = result.exploitability[0]
  assert exploitability["gadget"] < 0.01, exploitability
  assert exploitability["sog_mix"] < 0.01, exploitability
  assert exploitability["unsafe"] > 0.5, exploitability


@pytest.mark.xdist_group("kuhn_oracle_searchers")
def test_gadget_resolving_beats_unsafe_resolving_in_kuhn():
  """Kuhn with the exact oracle, SoG(100,1): unsafe re-solving takes player 0's range from the first
  search as given and stays exploitable (0.04 to 0.10 over seeds 0-3), while the gadget's composed
  policies converge (0.001 to 0.003), whatever alpha."""
  searcher = _kuhn_oracle_searcher(100)
  tree = load("kuhn_poker").tree
  exploitability = {
    name: composed.compose(searcher, range(4), config, batch_size=4, tree=tree).exploitability
    for name, config in (
      ("sog_mix", resolving.ResolvingConfig()),
      ("gadget", resolving.ResolvingConfig(alpha=1.0)),
      ("unsafe", resolving.ResolvingConfig(safe=False)),
    )
  }
  assert exploitability["unsafe"].min() > 0.02, exploitability
  for name in ("sog_mix", "gadget"):
    assert exploitability[name].max() < exploitability["unsafe"].min() / 3, exploitability


@pytest.mark.slow(
  reason="s = 10 and 100 over four seeds; the protocol's fall with s is checked by "
  "tests/test_completion.py::test_the_soundness_script_ends_with_its_json_line (its script) and "
  "the exploitability against OpenSpiel's by tests/test_openspiel_crosscheck.py::"
  "test_exploitability_matches_openspiel_on_uniform_and_random_policies"
)
@pytest.mark.xdist_group("kuhn_oracle_searchers")
def test_kuhn_composed_exploitability_falls_with_simulations():
  """Kuhn with the exact oracle over seeds 0-3: the composed policies' mean exploitability falls
  from s = 10 (0.044) to s = 100 (0.0018), and the protocol's number is the game's exploitability
  as OpenSpiel computes it."""
  game = load("kuhn_poker")
  means = []
  for sims in (10, 100):  # s = 100: the gadget test's compiled searches
    result = composed.compose(_kuhn_oracle_searcher(sims), range(4), batch_size=4, tree=game.tree)
    means.append(result.exploitability.mean())
    if sims == 10:  # the protocol's number is the game's exact exploitability, as OpenSpiel's
      np.testing.assert_allclose(
        result.exploitability[0],
        openspiel_bridge.exploitability_in_openspiel(game, result.policies[0]),
        rtol=1e-6,
      )
  assert means[0] > 5 * means[1], means
  assert means[1] < 0.01, means


@pytest.mark.slow(
  reason="a perfect-information protocol run at s = 30; tests/test_pool.py::"
  "test_a_perfect_information_search_equals_the_table_search checks k = 1 re-solving on Connect "
  "Four against the tables"
)
def test_exact_oracle_composed_policy_is_an_equilibrium_of_a_perfect_information_game():
  """Perfect information (k = 1): with the exact oracle (its solve's policy as the prior), the
  composed policy of SoG(30,1) on Connect Four 2 x 3, three in a row (265 public states, a draw),
  is an equilibrium (measured 3.9e-7, as the table search's; s = 100 gives 3.3e-9 at four times
  the cost), and it is the game's exploitability as OpenSpiel computes it."""
  game = load("connect_four(rows=2,columns=3,x_in_row=3)")
  searcher = _protocol_searcher(game.name, dict(iterations=10, policy_prior=True), 30)
  assert searcher.k == 1
  result = composed.compose(searcher, [0], batch_size=16, tree=game.tree)
  assert result.exploitability[0] <= 1e-6, result.exploitability
  np.testing.assert_allclose(
    openspiel_bridge.exploitability_in_openspiel(game, result.policies[0]),
    result.exploitability[0],
    atol=1e-9,
  )
