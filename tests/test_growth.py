"""How GT-CFR grows and averages its tree on the belief pool (``GTCFR``): redrawn walks,
PUCT's tie-break, chance nodes opened with their parent, per-node averaging, the growth counters,
and which search a re-solve continues."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.protocol import composed
from sog.search import leaf_models
from sog.search import predecessors
from sog.search import types
from sog.search import walks
from sog.search.pool import GTCFR
from sog.search.pool import belief_expand
from sog.search.pool import belief_oracle
from sog.search.pool import belief_search
from sog.search.pool import beliefs
from sog.search.pool import passes
from tests.conftest import load
from tests.conftest import search_by_phase


def _phases(searcher: GTCFR, seed: int = 0):
  """A root search of ``searcher`` (c = 1) to drive phase by phase: its initial state (the focus
  expanded: ``run``'s opening expansion) and one phase: CFR+ updates, then one simulation (walks as
  long as the whole search's), as ``belief_search.run``'s loop runs them."""
  state, update, grow = search_by_phase(searcher, seed)
  return state, jax.jit(lambda s: grow(update(s)))


def _grown_by_simulation(
  game_name: str, config: types.GTCFRConfig, seed: int = 0, whole_search: bool = True
):
  """Runs a root search on the pool phase by phase (c = 1); returns per simulation the tree's size
  before and after it and whether the tree was fully grown before it, the final state, and the
  searcher's own search from the same key (the same search, in one call; None without
  ``whole_search``, which saves its compilation)."""
  searcher = GTCFR(load(game_name), leaf_models.zero_leaf_model(), config)
  state, phase = _phases(searcher, seed)
  sizes = []
  for _ in range(config.phases):
    complete = bool(belief_expand.fully_grown(state))
    before = int(state.tree.num_nodes)
    state = phase(state)
    sizes.append((before, int(state.tree.num_nodes), complete))
  return sizes, state, searcher.search(jax.random.PRNGKey(seed)) if whole_search else None


@pytest.mark.parametrize(
  "game_name",
  [
    "kuhn_poker",
    pytest.param(
      "leduc_poker",
      marks=pytest.mark.slow(reason="the same test's [kuhn_poker] case checks the property"),
    ),
  ],
)
def test_with_redraws_every_simulation_grows_the_tree_until_it_is_complete(game_name):
  """With redraws, a simulation whose walk adds no public state walks again from a new world state
  while the focus's subgame is not complete: each of the s simulations adds to the tree until it is
  whole. Without them, some simulations add nothing before it is."""
  config = types.GTCFRConfig(simulations=60 if game_name == "kuhn_poker" else 120, redraws=64)
  sizes, state, searched = _grown_by_simulation(game_name, config)
  # Driven phase by phase, the search is the searcher's own: the same tree and walks.
  assert int(state.tree.num_nodes) == int(searched.tree.num_nodes)
  np.testing.assert_array_equal(np.asarray(state.tree.parent), np.asarray(searched.tree.parent))
  assert int(state.walks) == int(searched.walks)
  assert sum(not complete for _, _, complete in sizes) > 1  # simulations ran on a partial tree
  for before, after, complete in sizes:
    assert after > before or complete, (before, after)
  assert int(state.walks) > int(state.growing_walks)  # some walks were redrawn
  # Without redraws, some simulations add nothing before the tree is complete.
  plain, _, _ = _grown_by_simulation(
    game_name, types.GTCFRConfig(simulations=config.simulations, redraws=0), whole_search=False
  )
  assert any(after == before and not complete for before, after, complete in plain)


def test_growth_counters():
  """``walks`` counts every expansion walk (redraws included), ``growing_walks`` those that added a
  public state: with redraws each of Leduc's s = 30 simulations grows the tree (far from complete
  at s = 30), without them each simulation is one walk and some add nothing."""
  game = load("leduc_poker")
  for redraws in (0, 8):
    searcher = GTCFR(
      game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=30, redraws=redraws)
    )
    result = searcher.search(jax.random.PRNGKey(3))
    walks, growing = int(result.walks), int(result.growing_walks)
    assert not bool(result.complete)
    if redraws:
      assert growing == 30 and walks > 30
    else:
      assert walks == 30 and 0 < growing < 30
    assert walks <= 30 * (1 + redraws)
    # Each growing walk expanded one node: the focus's first expansion, then one per growing walk.
    assert int(np.asarray(result.tree.expanded).sum()) == 1 + growing


@pytest.mark.parametrize("open_chance", types.OPEN_CHANCE)
def test_the_opening_walk_is_the_focus_expansion(open_chance):
  """``run`` opens the focus with the walks' code (``grow(opening=True)``: one walk from the focus,
  a frontier leaf): it adds what ``expand`` at the focus adds (every child; with "with_parent" the
  outcomes of chance children too) and leaves the search's keys, visits and walk counts as they
  were, also where the focus is already expanded and the walk goes on below it."""
  game = load("leduc_poker")
  config = types.GTCFRConfig(simulations=4, open_chance=open_chance)
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), config)
  public, model, start = searcher.game, searcher.leaf_model, searcher.start()
  prior = belief_expand.LeafPrior(model.apply, None, config.prior_temperature)
  assert belief_expand.opens_by_walk(public, config)

  @jax.jit
  def opened(rng):
    state = belief_search.init(public, searcher.capacity, model.apply, None, rng, start, config)
    by_walk = belief_expand.grow(public, state, config, prior, opening=True)
    by_expand = belief_expand.expand(public, state, state.focus, config, prior)
    return (
      state,
      by_walk,
      by_expand,
      belief_expand.grow(public, by_walk, config, prior, opening=True),
    )

  state, by_walk, by_expand, again = jax.tree.map(np.asarray, opened(jax.random.PRNGKey(4)))
  assert int(by_walk.tree.num_nodes) > int(state.tree.num_nodes) == 1
  assert int(again.tree.num_nodes) > int(by_walk.tree.num_nodes)  # it walked below the focus
  check = lambda a, b: np.testing.assert_array_equal(a, b)  # noqa: E731
  jax.tree.map(check, (by_walk.tree, by_walk.prior), (by_expand.tree, by_expand.prior))
  jax.tree.map(check, by_walk.interior_since, by_expand.interior_since)
  for opened_state in (by_walk, again):
    check(opened_state.rng, state.rng)
    assert not opened_state.visits.any()
    assert int(opened_state.walks) == int(opened_state.growing_walks) == 0


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


def _grown_states(result) -> set[tuple[tuple[int, ...], bool]]:
  """The public states of a search's final tree (by path from the root), each with whether it is
  interior: the tree whatever slots the pool gave its nodes."""
  expanded = np.asarray(result.tree.expanded)
  return {(path, bool(expanded[n])) for n, path in enumerate(beliefs.paths(result.tree))}


@pytest.mark.slow(
  reason="a Leduc oracle search twice; tests/test_growth.py::"
  "test_puct_ties_follow_the_prior_then_chance checks how the option breaks PUCT's ties"
)
def test_tie_break_by_prior_changes_an_oracle_search_only_through_ties():
  """With the default ("action") walks are unchanged by the option's code; with "prior" a uniform
  prior spreads the walks over the tied actions (at an infostate with no visits PUCT is argmax Q,
  tied before a node's first pass), so a Leduc search with the pool's exact oracle grows other
  nodes."""
  game = load("leduc_poker")
  model = belief_oracle.exact_leaf_model(game, iterations=10)
  results = {
    tie: GTCFR(game, model, types.GTCFRConfig(simulations=40, tie_break=tie)).search(
      jax.random.PRNGKey(1)
    )
    for tie in types.TIE_BREAKS
  }
  for result in results.values():
    assert np.isfinite(np.asarray(result.values)).all()  # the oracle solved every leaf
  assert _grown_states(results["action"]) != _grown_states(results["prior"])


def test_chance_nodes_open_with_their_parent():
  """With ``open_chance="own_simulation"`` a chance node an expansion adds is a frontier leaf that
  a later simulation opens; with ``"with_parent"`` the expansion adds its outcomes too, so no chance
  node is ever a frontier leaf. The pool's bound counts the outcomes opened with a node: a pool
  twice as large grows the same tree (checked for "with_parent", the mode whose bound counts
  them)."""
  game = load("leduc_poker")
  model = leaf_models.zero_leaf_model()
  frontiers = {}
  for mode in types.OPEN_CHANCE:
    config = types.GTCFRConfig(simulations=10, open_chance=mode, redraws=0, tie_break="action")
    searcher = GTCFR(game, model, config)
    result = searcher.search(jax.random.PRNGKey(0))
    tree = jax.tree.map(np.asarray, result.tree)
    assert int(tree.num_nodes) <= searcher.capacity
    if mode == "with_parent":
      larger = GTCFR(game, model, config, capacity=2 * searcher.capacity)
      assert _grown_states(larger.search(jax.random.PRNGKey(0))) == _grown_states(result)
    chance = tree.used & (tree.kind == public_game.CHANCE)
    assert chance.any()  # the search reached the public card's deal
    frontiers[mode] = np.asarray(passes.frontier(tree)) & chance
  assert frontiers["own_simulation"].any()
  assert not frontiers["with_parent"].any()


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
def test_per_node_averaging_is_global_averaging_on_a_tree_that_never_grows(updates):
  """A pool holding the whole of Leduc from the start (every non-terminal public state interior at
  t0 = 0): per-node averaging weighs update t by t - t0 = t at every node, as global averaging
  does, so s = 20 updates give the same policy sums."""
  game = load("leduc_poker")
  public = game.public_game
  capacity = game.tree.num_nodes
  model = leaf_models.zero_leaf_model()
  batches = GTCFR(game, model, types.GTCFRConfig(simulations=20), capacity=capacity).leaf_batches
  start = belief_search.root_start(public, public_game.prior_ranges(public))
  policies = {}
  for averaging in types.AVERAGING:
    config = types.GTCFRConfig(simulations=20, updates=updates, averaging=averaging)

    @jax.jit
    def grown_search(start, config=config):
      state = belief_search.init(
        public, capacity, model.apply, None, jax.random.PRNGKey(0), start, config
      )
      state = state.replace(tree=beliefs.grow_all(public, state.tree))
      return state, belief_search.run(public, model.apply, None, state, config, batches)

    grown, state = grown_search(start)
    assert int(grown.tree.num_nodes) == capacity
    assert not np.asarray(grown.interior_since).any()  # every node interior from t0 = 0
    assert int(state.tree.num_nodes) == capacity  # it never grew
    assert int(state.cfr.iteration) == 20
    policies[averaging] = np.asarray(state.cfr.policy_sums)
  assert np.abs(policies["global"]).max() > 0
  np.testing.assert_array_equal(policies["global"], policies["per_node"])


def test_per_node_averaging_weighs_late_nodes_from_their_entry():
  """Each update adds weight * (own range) * policy to a node's policy sums; with per-node averaging
  the weight of the update at iteration t (1-based) is t - t0 at a node made interior after t0
  iterations: 1 at its first update. Checked update by update against the pass's own ranges."""
  game = load("leduc_poker")
  config = types.GTCFRConfig(simulations=30, updates="simultaneous", averaging="per_node")
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), config)
  state, phase = _phases(searcher)
  checked_late = 0
  for t in range(1, 31):
    tree = jax.tree.map(np.asarray, state.tree)
    interior = tree.expanded & (tree.kind < public_game.CHANCE)  # [P], before the update
    since = np.asarray(state.interior_since)
    sums = np.asarray(state.cfr.policy_sums)
    state = phase(state)  # update t, then a simulation (which changes no sums)
    assert int(state.cfr.iteration) == t
    added = (np.asarray(state.cfr.policy_sums) - sums).sum(-1)  # [P, S]
    actor = np.clip(tree.kind, 0, 1)
    own = np.asarray(state.ranges)[np.arange(tree.capacity), actor]  # the update's pass, [P, S]
    expected = np.where(interior[:, None], (t - since)[:, None] * own, 0.0)
    np.testing.assert_allclose(added, expected, rtol=1e-4, atol=1e-5)
    checked_late += int((interior & (since > 0)).sum())
  assert checked_late > 0


def test_nearest_predecessor_is_the_last_decision_above_whoever_acted():
  tree = load("leduc_poker").tree
  own = tree_lib.previous_decisions(tree, "own")
  nearest = tree_lib.previous_decisions(tree, "nearest")
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
    tree_lib.previous_decisions(tree, "closest")


def test_protocol_reports_growth_and_runs_from_the_nearest_predecessor():
  """Kuhn's protocol with s = 5 and no redraws: each search makes s walks, some idle, and expands at
  least its focus. The root's search has no predecessor either way (the same policy there); player
  1's decisions continue the root's search with ``"nearest"`` and start afresh with ``"own"``, so
  their composed policies differ."""
  game = load("kuhn_poker")
  tree = game.tree
  depth = max(predecessors.branch_depth(tree, p) for p in tree_lib.PREDECESSORS)
  searcher = GTCFR(
    game,
    leaf_models.zero_leaf_model(),
    types.GTCFRConfig(simulations=5, redraws=0),
    branch_depth=depth,
  )
  results, continued = {}, {}
  for predecessor in tree_lib.PREDECESSORS:
    searches = []
    result = composed.compose(
      searcher,
      [0, 1],
      batch_size=2,
      predecessor=predecessor,
      tree=tree,
      on_resolved=lambda rows, _, searches=searches: searches.extend(rows),
    )
    assert result.searches == len(searches) == 2 * int((tree.kind < public_game.CHANCE).sum())
    assert result.growth["walks"] == 5
    assert 0 < result.growth["idle_walks"] <= 5
    assert result.growth["expanded"] >= 1
    assert np.isfinite(result.exploitability).all()
    results[predecessor] = result
    continued[predecessor] = {node for _, node, went_on in searches if went_on}
  previous = tree_lib.previous_decisions(tree, "nearest")
  assert continued["nearest"] == set(np.flatnonzero(previous >= 0).tolist())
  player_1 = np.flatnonzero(tree.kind == public_game.PLAYER_1)
  assert not (continued["own"] & set(player_1.tolist()))
  own, nearest = results["own"].policies, results["nearest"].policies
  np.testing.assert_array_equal(own[:, 0], nearest[:, 0])  # the root's search, alike
  assert not np.allclose(own[:, player_1], nearest[:, player_1])
  with pytest.raises(ValueError, match="predecessor"):
    composed.compose(searcher, [0], predecessor="closest", tree=tree)


def test_bad_growth_options_raise():
  for bad in (
    dict(redraws=-1),
    dict(tie_break="random"),
    dict(open_chance="never"),
    dict(averaging="quadratic"),
  ):
    with pytest.raises(ValueError, match=next(iter(bad))):
      types.GTCFRConfig(**bad)
