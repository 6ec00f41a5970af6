"""GT-CFR on the belief pool (issue 48, part 5): the same search as the table engine's from the same
key, seed for seed, in float64 (the table search's results recorded in
``tests/fixtures/table_searches.npz`` before it left the library); batched searches as alone; bad
settings refused."""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import registry
from sog.nets import checkpoint
from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import leaf_models
from sog.search import tables as tables_lib
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_expand
from sog.search.pool import belief_oracle
from sog.search.pool import belief_paths
from sog.search.pool import belief_search
from sog.search.pool import belief_state
from sog.search.pool import beliefs
from sog.search.pool import passes
from sog.selfplay import config as selfplay_config
from tests.conftest import search_by_phase
from tests.conftest import table_case
from tests.conftest import table_search

ROOT = pathlib.Path(__file__).resolve().parents[1]

CASES = [
  ("kuhn_poker", "zeros", dict(simulations=20)),
  ("leduc_poker", "shipped", dict(simulations=30)),
  (
    "leduc_poker",
    "zeros",
    dict(
      simulations=20, simulations_per_phase=2.0, open_chance="with_parent", averaging="per_node"
    ),
  ),
  (
    "leduc_poker",
    "zeros",
    dict(
      simulations=20,
      simulations_per_phase=0.5,
      updates="simultaneous",
      tie_break="action",
      redraws=0,
    ),
  ),
  ("scotland_yard(map=glasses_hidden_short)", "zeros", dict(simulations=20)),
  ("kuhn_poker", "oracle", dict(simulations=10)),
]
_GADGET_FIELDS = ("enabled", "player", "terminate_values", "previous_range", "prior", "alpha")
#: The warm oracle and its policy prior, checked from a re-solving start (its pool grown at s_prev,
#: two moves above the focus).
WARM_ORACLE = pytest.param(
  "leduc_poker",
  "oracle_warm",
  dict(simulations=8),
  2,
  marks=pytest.mark.slow(
    reason="130 s; tests/test_belief_search.py::"
    "test_a_batch_of_oracle_searches_is_each_search_alone checks the warm oracle's state, "
    "tests/test_belief_search.py::"
    "test_a_search_on_the_pool_is_the_table_search_from_the_same_key[kuhn_poker-oracle] the cold "
    "oracle against the tables and the same test's [leduc_poker-shipped] case a re-solving start"
  ),
  id="oracle_warm",
)


def _leaf_model(game: registry.Game, leaf: str):
  """The leaf model ``leaf`` names ("oracle_warm": the exact oracle warm-started, with its policy
  as the prior)."""
  if leaf == "shipped":
    return checkpoint.restore_leaf_model(ROOT / "checkpoints" / game.name, game.name)
  if leaf.startswith("oracle"):
    settings = (
      dict(iterations=3, warm_start=True, policy_prior=True) if leaf == "oracle_warm" else {}
    )
    return belief_oracle.exact_leaf_model(game, **(settings or dict(iterations=10)))
  return leaf_models.zero_leaf_model()


def _assert_same_search(game, pool, table: dict, root_path=()):
  """The pool search (its slots matched to the game's nodes by path, below ``root_path``) made
  every walk, draw, pass and leaf call of the recorded table search: the same tree, interior
  nodes, walk counts, leaf calls and evaluations, average policy, values and best-response
  values."""
  pool = jax.tree.map(np.asarray, pool)
  n = int(pool.tree.num_nodes)
  nodes = np.array([game.tree.node_of_path((*root_path, *p)) for p in beliefs.paths(pool.tree)])
  assert sorted(nodes.tolist()) == table["nodes"].tolist()
  row = np.searchsorted(table["nodes"], nodes)  # each slot's row in the recorded arrays
  assert nodes[int(pool.focus)] == int(table["focus"])
  np.testing.assert_array_equal(pool.tree.expanded[:n], table["expanded"][row])
  assert bool(pool.complete) == bool(table["complete"])
  for field in ("walks", "growing_walks", "leaf_calls", "leaf_evaluations"):
    assert int(getattr(pool, field)) == int(table[field]), field
  for field in ("focus_policy", "focus_values"):
    np.testing.assert_allclose(getattr(pool, field), table[field], atol=1e-12)
  inner = np.asarray(game.tree.kind)[nodes] < 2
  expanded = pool.tree.expanded[:n] & inner
  valid = pool.tree.valid[:n]
  actor = np.clip(pool.tree.kind[:n], 0, 1)
  acting = expanded[:, None] & valid[np.arange(n), actor]
  np.testing.assert_allclose(
    pool.average_policy[:n][acting], table["average_policy"][row][acting], atol=1e-12
  )
  for field in ("ranges", "values", "best_response_values"):
    np.testing.assert_allclose(
      getattr(pool, field)[:n], table[field][row], atol=1e-12, err_msg=field
    )


@pytest.mark.parametrize(("name", "leaf", "settings"), CASES)
def test_a_search_on_the_pool_is_the_table_search_from_the_same_key(name, leaf, settings):
  """Every walk, draw, pass and leaf call of the table search, node for node (matched by path),
  in float64."""
  game = registry.load(name)
  with jax.enable_x64(True):
    searcher = GTCFR(
      game, _leaf_model(game, leaf), types.GTCFRConfig(**settings), dtype=jnp.float64
    )
    pool = searcher.search(jax.random.PRNGKey(3))
  assert int(pool.tree.num_nodes) <= searcher.capacity
  recorded = table_search("search/" + table_case(name, leaf, settings=settings))
  _assert_same_search(game, pool, recorded)


@pytest.mark.parametrize("leaf", ["shipped", "oracle_warm"])
def test_an_expansion_takes_its_prior_from_the_phases_recording_call_at_its_node(leaf):
  """A frontier leaf an expansion makes interior gets the prior the phase's recording pass (the
  last before its walks) gave it: the actor's softmax(logits / T) of that pass's leaf call over the
  frontier, as the call ran (recorded from inside it), also for a model whose state each call
  moves on (the warm-started oracle with its policy as the prior); a node added since that pass
  gets the uniform prior; the focus keeps the prior of ``init``'s call. Each of those priors is
  one call of the leaf model, as the search's ``prior_calls`` counts them."""
  game = registry.load("leduc_poker")
  model = _leaf_model(game, leaf)
  calls = []  # (nodes, mask, logits) of each call, as it runs

  def apply(params, view, nodes, ranges, mask, state):
    out = model.apply(params, view, nodes, ranges, mask, state)
    jax.debug.callback(
      lambda *call: calls.append(tuple(map(np.asarray, call))),
      nodes,
      mask,
      out.logits,
      ordered=True,
    )
    return out

  config = types.GTCFRConfig(simulations=16, simulations_per_phase=4.0, prior_temperature=0.7)
  searcher = GTCFR(game, model._replace(apply=apply), config)
  state, update, grow = search_by_phase(searcher, seed=2)
  focus = int(state.focus)
  focus_prior = np.asarray(state.prior[focus])  # init's call
  assert not np.allclose(focus_prior, belief_expand.uniform_prior(state.tree.legal[focus]))
  recorded = added_since = 0
  for _ in range(config.phases):
    calls.clear()
    updated = jax.block_until_ready(update(state))
    nodes, mask, logits = calls[-1]  # the phase's last pass's call over the frontier
    frontier = np.flatnonzero(np.asarray(passes.frontier(updated.tree)))
    np.testing.assert_array_equal(np.sort(nodes[mask]), frontier)
    by_call = np.asarray(leaf_calls.prior_policy(updated.tree, jnp.asarray(nodes), logits, 0.7))
    calls.clear()
    state = grow(updated)
    jax.effects_barrier()  # every callback of the phase's calls has run
    newly = np.flatnonzero(np.asarray(state.tree.expanded & ~updated.tree.expanded))
    # one one-row call for each frontier leaf of that pass made an interior decision node, counted
    decisions = [n for n in newly if n in frontier and int(state.tree.kind[n]) < 2]
    assert len(calls) == int(state.prior_calls - updated.prior_calls) == len(decisions)
    for node in newly:
      if node in frontier:
        expected, recorded = by_call[np.flatnonzero(mask & (nodes == node))[0]], recorded + 1
      else:
        expected = belief_expand.uniform_prior(state.tree.legal[node])
        added_since += 1
      np.testing.assert_allclose(state.prior[node], expected, rtol=1e-5, atol=1e-7)
  assert recorded >= config.phases and added_since > 0, (recorded, added_since)
  np.testing.assert_array_equal(state.prior[focus], focus_prior)


@pytest.mark.parametrize(
  ("name", "leaf", "settings", "branches"),
  [*[(*case, branches) for case, branches in zip(CASES[:3], (0, 2, 2), strict=True)], WARM_ORACLE],
)
def test_a_resolving_search_on_the_pool_is_the_table_search_from_the_same_start(
  name, leaf, settings, branches
):
  """The table search's safe re-solving start (planned from a first search's summary, s = 2, at a
  decision as far below its tree as any, ``branches`` moves at least: Kuhn's whole tree is in the
  summary, so its decision re-solves at s_prev = s_pub): the pool rooted at s_prev (its public
  state and pair weights grown from the game's root) grows the branch down to the focus and
  searches below it as the table search did, the gadget included, node for node, in float64."""
  game = registry.load(name)
  table = table_search("resolving/" + table_case(name, leaf, settings=settings))
  root_path = game.tree.paths[int(table["root"])]
  branch = game.tree.paths[int(table["decision"])][len(root_path) :]
  assert len(branch) >= branches
  config = types.GTCFRConfig(**settings)
  with jax.enable_x64(True):
    gadget = gadget_lib.Gadget(**{f: jnp.asarray(table[f"gadget_{f}"]) for f in _GADGET_FIELDS})
    assert bool(gadget.enabled)
    public = game.public_game
    grown, slot = belief_search.grow_branch(
      public,
      beliefs.empty(public, 1 + public.max_children * len(root_path), jnp.float64),
      jnp.asarray(root_path, jnp.int32),
    )
    searcher = GTCFR(
      game, _leaf_model(game, leaf), config, dtype=jnp.float64, branch_depth=len(branch)
    )
    pool = searcher.search_from(
      jax.random.PRNGKey(3),
      belief_state.BeliefStart(
        state=jax.tree.map(lambda x: x[slot], grown.states),
        weight=grown.pair_weight(slot),
        branch=np.asarray(branch, np.int32),
        ranges=jnp.asarray(table["start_ranges"]),
        gadget=gadget,
      ),
    )
  _assert_same_search(game, pool, table, root_path)


@pytest.mark.parametrize(
  "children_per_chunk, expansion",
  [
    pytest.param(None, {}, id="whole"),
    pytest.param(
      2,
      {},
      marks=pytest.mark.slow(
        reason="the same test's [chunks_of_2_k1_with_parent] case steps the walks' expansions 2 "
        "children at a time too, and init's and open_chance's besides"
      ),
      id="chunks_of_2",
    ),
    pytest.param(
      2, {"expansion_k": 1, "open_chance": "with_parent"}, id="chunks_of_2_k1_with_parent"
    ),
  ],
)
def test_a_batch_of_pool_searches_is_each_search_alone(children_per_chunk, expansion, monkeypatch):
  """Different keys and root ranges under vmap: each search's tree, policy and walks are its own
  (redraws included: the batch redraws while any search does, the others' walks write nothing),
  and the batch's passes make one call each, while any frontier is not empty. With children
  stepped 2 slots at a time (as the real board's 1,991 are, 64 at a time), an expansion's loops
  run the batch's most steps, and a search whose node has fewer children writes nothing in the
  extra ones: the walks' expansions, and with k = 1 and chance nodes opened with their parent
  also ``init``'s expansion of the focus and ``open_chance``'s."""
  if children_per_chunk is not None:
    monkeypatch.setattr(beliefs, "CHILDREN_PER_CHUNK", children_per_chunk)
  game = registry.load("leduc_poker")
  config = types.GTCFRConfig(simulations=20, **expansion)
  rngs = jax.random.split(jax.random.PRNGKey(0), 3)
  valid = np.asarray(game.tree.valid[0], np.float64)
  draws = np.random.default_rng(0).uniform(0.1, 1.0, (3, *valid.shape))
  ranges = draws * valid
  with jax.enable_x64(True):
    searcher = GTCFR(game, leaf_models.zero_leaf_model(), config, dtype=jnp.float64)
    batch = jax.tree.map(np.asarray, searcher.search_batch(rngs, ranges))
    alone = [jax.tree.map(np.asarray, searcher.search(rngs[i], ranges[i])) for i in range(3)]
  for i, one in enumerate(alone):
    assert int(batch.tree.num_nodes[i]) == int(one.tree.num_nodes)
    np.testing.assert_array_equal(batch.tree.parent[i], one.tree.parent)
    np.testing.assert_allclose(batch.average_policy[i], one.average_policy, atol=1e-12)
    np.testing.assert_allclose(batch.values[i], one.values, atol=1e-12)
    assert int(batch.leaf_evaluations[i]) == int(one.leaf_evaluations)
    assert int(batch.walks[i]) == int(one.walks)
    assert int(batch.growing_walks[i]) == int(one.growing_walks)
  assert len({int(one.walks) for one in alone}) > 1  # the searches redraw differently
  assert int(batch.leaf_calls[0]) >= max(int(one.leaf_calls) for one in alone)


def test_a_config_naming_a_setting_no_search_uses_is_refused():
  """``leaf_capacity`` (the perfect-information node pool's, gone with it in issue 48's part 11)
  is no setting of a search: a config that names it is refused with the valid keys."""
  config = selfplay_config.default_config_dict("kuhn_poker")
  config.actor.leaf_capacity = 64
  with pytest.raises(ValueError, match=r"config.actor: unknown keys \['leaf_capacity'\]"):
    selfplay_config.from_config_dict(config)


def test_the_pool_search_refuses_a_leaf_model_that_reads_the_tables():
  game = registry.load("kuhn_poker")
  with pytest.raises(ValueError, match=r"belief_oracle\.exact_leaf_model"):
    GTCFR(game, leaf_models.exact_leaf_model(), types.GTCFRConfig(simulations=4))


@pytest.mark.parametrize(
  ("ranges", "match"),
  [
    (np.ones((2, 2)), r"must have shape \[2, infostates\]"),
    (-np.ones((2, 3)), "finite and non-negative"),
    (np.stack([np.ones(3), np.zeros(3)]), "positive weight"),
  ],
)
def test_the_pool_search_refuses_bad_root_ranges(ranges, match):
  game = registry.load("kuhn_poker")
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=4))
  with pytest.raises(ValueError, match=match):
    searcher.search(jax.random.PRNGKey(0), ranges)


def test_a_full_pool_keeps_searching_the_tree_it_has():
  """A pool with room for three expansions of the most children: the search fills it, adds
  nothing once the next expansion might not fit, and values its frontier leaves as leaves."""
  game = registry.load("leduc_poker")
  most = game.public_game.max_children
  searcher = GTCFR(
    game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=10), capacity=1 + 3 * most
  )
  result = jax.tree.map(np.asarray, searcher.search(jax.random.PRNGKey(0)))
  nodes = int(result.tree.num_nodes)
  assert searcher.capacity - most < nodes <= searcher.capacity and not bool(result.complete)
  assert np.isfinite(result.values).all() and np.isfinite(result.average_policy).all()


@pytest.mark.parametrize(("name", "few"), [("kuhn_poker", 1), ("leduc_poker", 5)])
def test_the_default_pool_is_the_whole_tree_where_that_is_smaller_than_the_bound(name, few):
  """s simulations add at most 1 + most x (1 + s) states; where the root's whole game (counted by
  enumeration) is smaller, the pool holds it and the room one expansion asks for."""
  game = registry.load(name)
  many = types.GTCFRConfig(simulations=1000)
  most = belief_expand.added_at_most(game.public_game, many)
  whole = game.tree.num_nodes + most - 1
  assert belief_search.node_capacity(game.public_game, many) == whole
  bound = 1 + most * (1 + few)
  assert bound < whole
  assert belief_search.node_capacity(game.public_game, types.GTCFRConfig(simulations=few)) == bound


def test_a_pool_of_the_whole_tree_searches_as_a_larger_one():
  """Kuhn grown whole by 20 simulations: the default pool (the whole tree) and the bound's give
  the same tree, counts and policy, in float64."""
  game = registry.load("kuhn_poker")
  config = types.GTCFRConfig(simulations=20)
  model = leaf_models.zero_leaf_model()
  rng = jax.random.PRNGKey(5)
  bound = 1 + belief_expand.added_at_most(game.public_game, config) * 21
  with jax.enable_x64(True):
    whole = GTCFR(game, model, config, dtype=jnp.float64)
    large = GTCFR(game, model, config, dtype=jnp.float64, capacity=bound)
    assert whole.capacity < large.capacity
    a, b = (jax.tree.map(np.asarray, s.search(rng)) for s in (whole, large))
  n = int(a.tree.num_nodes)
  assert bool(a.complete) and n == int(b.tree.num_nodes) == game.tree.num_nodes
  np.testing.assert_array_equal(a.tree.parent[:n], b.tree.parent[:n])
  for field in ("walks", "growing_walks", "leaf_calls", "leaf_evaluations"):
    assert int(getattr(a, field)) == int(getattr(b, field)), field
  for field in ("average_policy", "values", "best_response_values"):
    np.testing.assert_allclose(getattr(a, field)[:n], getattr(b, field)[:n], atol=1e-12)


def test_the_pool_search_refuses_a_pool_too_small_for_one_expansion():
  game = registry.load("kuhn_poker")
  with pytest.raises(ValueError, match="capacity must be None"):
    GTCFR(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=4), capacity=2)


def _bad_start(start, change: str):
  gadget = start.gadget
  changes = {
    "long branch": dict(branch=np.zeros(4, np.int32)),
    "float branch": dict(branch=np.zeros(2, np.float32)),
    "slot out of range": dict(branch=np.array([0, 7], np.int32)),
    "gap in branch": dict(branch=np.array([-1, 0], np.int32)),
    "weight shape": dict(weight=np.ones((2, 2))),
    "negative ranges": dict(ranges=-np.asarray(start.ranges)),
    "zero weight": dict(weight=np.zeros_like(start.weight)),
    "alpha": dict(gadget=gadget.replace(alpha=np.float32(2.0))),
    "player": dict(gadget=gadget.replace(player=np.int32(3))),
    "impossible ranges": dict(weight=np.asarray(start.weight) * (np.arange(3) > 0)),
    "state": dict(state={"history": np.zeros(3)}),
    "terminate values": dict(gadget=gadget.replace(terminate_values=np.full(3, np.nan))),
    "no child": dict(branch=np.array([1, 1, 0], np.int32)),
    "terminal": dict(branch=np.array([1, 1], np.int32)),
  }
  return start.replace(**changes[change])


@pytest.mark.parametrize(
  ("change", "match"),
  [
    ("long branch", r"branch must be integers of shape \[D\] with D <= branch_depth=3"),
    ("float branch", "branch must be integers"),
    ("slot out of range", r"child slots in \[0, 2\), then -1"),
    ("gap in branch", "then -1 past its end"),
    ("weight shape", r"weight must have shape \[3, 3\]"),
    ("negative ranges", "ranges must be finite and non-negative"),
    ("zero weight", "must not be all zero"),
    ("alpha", r"alpha must be in \[0, 1\]"),
    ("player", "player must be 0 or 1"),
    ("impossible ranges", "infostates that cannot occur at its root"),
    ("state", "state must be a public state of kuhn_poker"),
    ("terminate values", "terminate_values must be finite"),
    ("no child", "a slot names no child there"),
    ("terminal", "ends at a terminal"),
  ],
)
def test_the_pool_search_refuses_a_bad_start(change, match):
  """Kuhn (bet, call ends the game; its nodes have two children): each broken field of a start is
  named, before the search where the host can tell, and after it where the branch must be grown
  (a slot with no child, a terminal focus)."""
  game = registry.load("kuhn_poker")
  searcher = GTCFR(
    game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=2), branch_depth=3
  )
  with pytest.raises(ValueError, match=match):
    searcher.search_from(jax.random.PRNGKey(0), _bad_start(searcher.start(), change))


def test_the_pool_search_refuses_a_start_weight_past_the_players_infostates():
  """sequential RPS: player 0 has three infostates, player 1 one; a start's W [S, S] padded to 3
  must be zero in the columns player 1 cannot hold (the pool keeps W at [S0, S1])."""
  game = registry.load("sequential_rps")
  searcher = GTCFR(game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=2))
  start = searcher.start()
  bad = start.replace(weight=np.asarray(start.weight) + np.eye(3)[2])
  with pytest.raises(ValueError, match=r"\(S0, S1\) = \(3, 1\) .* s1 >= 1"):
    searcher.search_from(jax.random.PRNGKey(0), bad)


@pytest.mark.parametrize(
  ("settings", "match"),
  [
    (dict(iterations=0), "oracle iterations must be >= 1"),
    (dict(tremble=-1.0), "tremble must be >= 0"),
  ],
)
def test_the_pool_oracle_refuses_bad_settings(settings, match):
  with pytest.raises(ValueError, match=match):
    belief_oracle.exact_leaf_model(registry.load("kuhn_poker"), **settings)


def test_a_batch_of_oracle_searches_is_each_search_alone():
  """Kuhn with the pool's warm oracle under ``vmap`` (its solve runs on every pass of the batch):
  each search's policy and values are its own, in float64."""
  game = registry.load("kuhn_poker")
  model = belief_oracle.exact_leaf_model(game, iterations=5, warm_start=True)
  rngs = jax.random.split(jax.random.PRNGKey(2), 2)
  with jax.enable_x64(True):
    searcher = GTCFR(game, model, types.GTCFRConfig(simulations=4), dtype=jnp.float64)
    batch = jax.tree.map(np.asarray, searcher.search_batch(rngs))
    for row in range(2):
      alone = jax.tree.map(np.asarray, searcher.search(rngs[row]))
      np.testing.assert_allclose(batch.average_policy[row], alone.average_policy, atol=1e-12)
      np.testing.assert_allclose(batch.values[row], alone.values, atol=1e-12)


def test_a_pool_oracle_too_small_for_the_subgame_values_its_leaves_nan():
  """An oracle pool of 4 slots cannot hold Kuhn's game: the leaves it cannot solve are NaN, never a
  solve of the wrong subgame."""
  game = registry.load("kuhn_poker")
  model = belief_oracle.exact_leaf_model(game, iterations=2, capacity=4)
  searcher = GTCFR(game, model, types.GTCFRConfig(simulations=2))
  assert np.isnan(np.asarray(searcher.search(jax.random.PRNGKey(0)).values)).any()


def test_a_value_error_is_drawn_per_public_state_on_either_engine():
  """``with_value_error`` on Leduc's whole tree grown on a pool (slots in another order than the
  tables' nodes): at every public state the same ranges get the same values as in the search
  tables, so an injected error is the same on both engines."""
  game = registry.load("leduc_poker")
  tree = game.tree
  pool = beliefs.grow_all(
    game.public_game, beliefs.empty(game.public_game, tree.num_nodes, jnp.float32)
  )
  slots = np.arange(tree.num_nodes)
  nodes = tree.nodes_of_padded_paths(
    belief_paths.slot_paths(jax.device_get(pool), slots, np.full(1, -1), tree.max_moves)
  )
  assert sorted(nodes.tolist()) == list(range(tree.num_nodes))  # the pool holds every node once
  ranges = jnp.asarray(np.random.default_rng(0).random(tree.valid.shape) * tree.valid, jnp.float32)
  noisy = leaf_models.with_value_error(leaf_models.zero_leaf_model(), 0.5, seed=3)
  tables = tables_lib.make_tables(tree)

  def values(view, at):
    mask = jnp.ones(at.size, bool)
    return np.asarray(noisy.apply(None, view, jnp.asarray(at), ranges[nodes], mask, ()).values)

  on_pool, on_tables = values(pool, slots), values(tables, nodes)
  np.testing.assert_allclose(on_pool, on_tables, rtol=1e-6, atol=1e-6)
  assert np.abs(on_pool).max() > 0


@pytest.mark.parametrize(
  ("name", "leaf"),
  [("scotland_yard(map=glasses_hidden_short)", "zeros"), ("leduc_poker", "shipped")],
)
def test_a_pass_into_the_searchs_kept_arrays_is_a_pass_from_fresh_zeros(name, leaf):
  """Each CFR+ update writes its ranges and values into the [P, 2, S] arrays the search keeps
  (``ranges``, ``values``, ``pushed``, ``passed``; belief_cfr.PassArrays) rather than into
  fresh zeros: phase by phase, as the tree grows (nodes turning interior, leaves added), the
  update from the kept arrays, holding the last pass's numbers, equals bit for bit the update
  from zeros in every field (a pass zeroes its sums at the used slots as it starts), and no pass
  writes past the used slots."""
  game = registry.load(name)
  config = types.GTCFRConfig(simulations=12, simulations_per_phase=2.0)
  searcher = GTCFR(game, _leaf_model(game, leaf), config)
  state, update, grow = search_by_phase(searcher, seed=3)
  zeros = jnp.zeros_like(state.ranges)
  for phase in range(config.phases):
    assert phase == 0 or np.any(np.asarray(state.ranges) != 0)  # the last pass's numbers
    kept = update(state)
    fresh = update(state.replace(ranges=zeros, values=zeros, pushed=zeros, passed=zeros))
    jax.tree.map(np.testing.assert_array_equal, kept, fresh)
    used = int(kept.tree.num_nodes)
    for kept_array in (kept.ranges, kept.values, kept.pushed, kept.passed):
      np.testing.assert_array_equal(kept_array[used:], 0.0)
    state = grow(kept)
  assert int(state.tree.num_nodes) > 10
  assert leaf == "zeros" or np.any(np.asarray(state.values) != 0)
