"""How GT-CFR grows and averages its tree: redrawn walks, PUCT's tie-break, chance nodes opened with
their parent, per-node averaging, the growth counters, and which search a re-solve continues."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import public_game
from sog.protocol import composed
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import predecessors
from sog.search import walks
from sog.search.gtcfr import expand as expand_lib
from tests.conftest import load


def _grown_by_simulation(game_name: str, config: gtcfr.GTCFRConfig, seed: int = 0):
  """Runs a root search phase by phase (c = 1); returns per simulation the tree's size before and
  after it and whether the tree was fully grown before it."""
  searcher = gtcfr.GTCFR(load(game_name), leaf_models.zero_leaf_model(), config)
  apply, tables = searcher.leaf_model.apply, searcher.tables
  one_phase = dataclasses.replace(config, simulations=1)

  @jax.jit
  def phase(state):
    return gtcfr.run(tables, apply, None, state, one_phase, searcher.leaf_batches, searcher.k)

  state = gtcfr.init(
    tables,
    apply,
    None,
    jax.random.PRNGKey(seed),
    gtcfr.root_start(tables, searcher.root_ranges(None)),
    config,
  )
  sizes = []
  for _ in range(config.simulations):
    complete = bool(expand_lib.fully_grown(tables, state))
    before = int(state.in_tree.sum())
    state = phase(state)
    sizes.append((before, int(state.in_tree.sum()), complete))
  return sizes, state


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_poker"])
def test_with_redraws_every_simulation_grows_the_tree_until_it_is_complete(game_name):
  config = gtcfr.GTCFRConfig(simulations=60 if game_name == "kuhn_poker" else 120, redraws=64)
  sizes, state = _grown_by_simulation(game_name, config)
  for before, after, complete in sizes:
    assert after > before or complete, (before, after)
  assert sizes[-1][2] or sizes[-1][1] > sizes[-1][0]
  assert int(state.walks) > int(state.growing_walks)  # some walks were redrawn
  # Without redraws, some simulations add nothing before the tree is complete.
  plain, _ = _grown_by_simulation(
    game_name, gtcfr.GTCFRConfig(simulations=config.simulations, redraws=0)
  )
  assert any(after == before and not complete for before, after, complete in plain)


def test_growth_counters():
  game = load("leduc_poker")
  for redraws in (0, 8):
    searcher = gtcfr.GTCFR(
      game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(simulations=30, redraws=redraws)
    )
    result = searcher.search(jax.random.PRNGKey(3))
    walks, growing = int(result.walks), int(result.growing_walks)
    if redraws:
      assert growing == 30 and walks > 30  # the tree is far from complete at s = 30
    else:
      assert walks == 30 and 0 < growing < 30
    assert walks <= 30 * (1 + redraws)


def test_puct_ties_follow_the_prior_then_chance():
  score = jnp.array([0.5, 0.5, 0.5, -jnp.inf])
  prior = jnp.array([0.2, 0.5, 0.3, 0.0])
  rng = jax.random.PRNGKey(0)
  assert int(walks.puct_action(score, prior, "action", rng)) == 0
  assert int(walks.puct_action(score, prior, "prior", rng)) == 1
  # Not tied: the score decides, whatever the prior.
  assert int(walks.puct_action(jnp.array([0.5, 0.4, 0.6, -jnp.inf]), prior, "prior", rng)) == 2
  # Equal priors among the tied actions: each is drawn, the untied and illegal ones never.
  picks = jax.vmap(
    lambda key: walks.puct_action(
      jnp.array([0.5, 0.1, 0.5, -jnp.inf]), jnp.full(4, 0.25), "prior", key
    )
  )(jax.random.split(rng, 200))
  assert set(np.asarray(picks).tolist()) == {0, 2}


def test_tie_break_by_prior_changes_an_oracle_search_only_through_ties():
  """With the default ("action") walks are unchanged by the option's code; with "prior" a uniform
  prior spreads the first walks of a Leduc search over the tied actions, so it grows other nodes."""
  game = load("leduc_poker")
  results = {
    tie: gtcfr.GTCFR(
      game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(simulations=40, tie_break=tie)
    ).search(jax.random.PRNGKey(1))
    for tie in gtcfr.TIE_BREAKS
  }
  assert not np.array_equal(
    np.asarray(results["action"].in_tree), np.asarray(results["prior"].in_tree)
  )


def test_chance_nodes_open_with_their_parent():
  game = load("leduc_poker")
  chance = game.tree.kind == public_game.CHANCE
  frontiers = {}
  for mode in gtcfr.OPEN_CHANCE:
    searcher = gtcfr.GTCFR(
      game,
      leaf_models.zero_leaf_model(),
      gtcfr.GTCFRConfig(simulations=10, open_chance=mode, redraws=0, tie_break="action"),
    )
    result = searcher.search(jax.random.PRNGKey(0))
    frontier = gtcfr.frontier_mask(
      game.tree.kind, np.asarray(result.in_tree), np.asarray(result.expanded)
    )
    assert frontier.sum() <= searcher.capacity  # the bound counts the outcomes opened with a node
    frontiers[mode] = frontier
  assert (frontiers["own_simulation"] & chance).any()
  assert not (frontiers["with_parent"] & chance).any()


@pytest.mark.parametrize("updates", ["simultaneous", "alternating"])
def test_per_node_averaging_is_global_averaging_on_a_tree_that_never_grows(updates):
  game = load("leduc_poker")
  policies = {}
  for averaging in gtcfr.AVERAGING:
    config = gtcfr.GTCFRConfig(simulations=20, updates=updates, averaging=averaging)
    searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), config)
    apply, tables = searcher.leaf_model.apply, searcher.tables
    state = gtcfr.init(
      tables,
      apply,
      None,
      jax.random.PRNGKey(0),
      gtcfr.root_start(tables, searcher.root_ranges(None)),
      config,
    )
    state = state.replace(
      in_tree=jnp.ones_like(state.in_tree),
      expanded=jnp.ones_like(state.expanded),
      added=jnp.ones_like(state.added),
    )
    state = jax.jit(
      lambda s, config=config, searcher=searcher, apply=apply, tables=tables: gtcfr.run(
        tables, apply, None, s, config, searcher.leaf_batches, searcher.k
      )
    )(state)
    policies[averaging] = np.asarray(state.cfr.policy_sums)
  np.testing.assert_array_equal(policies["global"], policies["per_node"])


def test_per_node_averaging_weighs_late_nodes_from_their_entry():
  """Each update adds weight * (own range) * policy to a node's policy sums; with per-node averaging
  the weight of the update at iteration t (1-based) is t - t0 at a node made interior after t0
  iterations: 1 at its first update. Checked update by update against the pass's own ranges."""
  game = load("leduc_poker")
  config = gtcfr.GTCFRConfig(simulations=1, updates="simultaneous", averaging="per_node")
  searcher = gtcfr.GTCFR(game, leaf_models.zero_leaf_model(), config)
  apply, tables = searcher.leaf_model.apply, searcher.tables
  phase = jax.jit(
    lambda s: gtcfr.run(tables, apply, None, s, config, searcher.leaf_batches, searcher.k)
  )
  state = gtcfr.init(
    tables,
    apply,
    None,
    jax.random.PRNGKey(0),
    gtcfr.root_start(tables, searcher.root_ranges(None)),
    config,
  )
  inner = np.asarray(tables.inner_nodes)
  kind = np.asarray(tables.kind)[inner]
  player = kind < public_game.CHANCE
  checked_late = 0
  for t in range(1, 31):
    interior = np.asarray(state.expanded)[inner] & player
    since = np.asarray(state.interior_since)
    sums = np.asarray(state.cfr.policy_sums)
    state = phase(state)
    added = (np.asarray(state.cfr.policy_sums) - sums).sum(-1)  # [M, S]
    own = np.asarray(state.ranges)[inner, np.clip(kind, 0, 1)]  # the update's pass, [M, S]
    expected = np.where(interior[:, None], (t - since)[:, None] * own, 0.0)
    np.testing.assert_allclose(added, expected, rtol=1e-4, atol=1e-5)
    checked_late += int((interior & (since > 0)).sum())
  assert checked_late > 0


def test_nearest_predecessor_is_the_last_decision_above_whoever_acted():
  tree = load("leduc_poker").tree
  own = predecessors.previous_decisions(tree, "own")
  nearest = predecessors.previous_decisions(tree, "nearest")
  decision = tree.kind < public_game.CHANCE
  for n in np.flatnonzero(decision):
    above, p = [], tree.parent[n]
    while p >= 0:
      if tree.kind[p] < public_game.CHANCE:
        above.append(p)
      p = tree.parent[p]
    assert nearest[n] == (above[0] if above else -1)
    same = [a for a in above if tree.kind[a] == tree.kind[n]]
    assert own[n] == (same[0] if same else -1)
  assert (nearest[decision] != own[decision]).any()
  with pytest.raises(ValueError, match="predecessor"):
    predecessors.previous_decisions(tree, "closest")


def test_protocol_reports_growth_and_runs_from_the_nearest_predecessor():
  game = load("kuhn_poker")
  searcher = gtcfr.GTCFR(
    game, leaf_models.zero_leaf_model(), gtcfr.GTCFRConfig(simulations=5, redraws=0)
  )
  for predecessor in predecessors.PREDECESSORS:
    result = composed.compose(searcher, [0, 1], batch_size=2, predecessor=predecessor)
    assert result.growth["walks"] == 5
    assert 0 <= result.growth["idle_walks"] <= 5
    assert result.growth["expanded"] >= 1
    assert np.isfinite(result.exploitability).all()
  with pytest.raises(ValueError, match="predecessor"):
    composed.compose(searcher, [0], predecessor="closest")


def test_bad_growth_options_raise():
  for bad in (
    dict(redraws=-1),
    dict(tie_break="random"),
    dict(open_chance="never"),
    dict(averaging="quadratic"),
  ):
    with pytest.raises(ValueError, match=next(iter(bad))):
      gtcfr.GTCFRConfig(**bad)
