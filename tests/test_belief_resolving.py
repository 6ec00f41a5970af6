"""Continual re-solving on the belief pool: the origins carried down a path give the tables' prior
weights, and a plan from a pool search's summary is the table plan from the table search's (recorded
in ``tests/fixtures/table_searches.npz`` before the table search left the library)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sog.games import public_game
from sog.games import registry
from sog.games import tree as tree_lib
from sog.search import leaf_models
from sog.search import types
from sog.search.pool import GTCFR
from sog.search.pool import belief_resolving
from sog.search.pool import beliefs
from tests.conftest import table_search


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard(map=glasses_hidden_short)"])
def test_origins_carried_down_each_path_give_the_prior_weights(name):
  """Every public state of the whole game (grown on a pool), its origins descended slot by slot
  from the root's: the prior mass p_i(s) is the enumerated tree's prior weight (Mr X's merging
  stations included), and an infostate's origins are empty exactly where it is not valid."""
  game = registry.load(name)
  public = game.public_game
  tree = beliefs.grow(public, game.tree.num_nodes)
  n = int(tree.num_nodes)
  descend = jax.jit(belief_resolving.descend_origins)
  origins = [belief_resolving.root_origins(tree.valid[0])]
  parent = np.asarray(tree.parent)
  for slot in range(1, n):
    origins.append(descend(tree, origins[parent[slot]], slot))
  origins = np.stack([np.asarray(o) for o in origins])
  marginals = public_game.prior_ranges(public)
  mass = np.asarray(jax.vmap(belief_resolving.prior_mass, (0, None))(origins, marginals))
  nodes = beliefs.tree_nodes(tree, game.tree)
  np.testing.assert_allclose(mass, tree_lib.prior_weights(game.tree)[nodes], atol=1e-6)
  np.testing.assert_array_equal(origins.any(-1), np.asarray(tree.valid)[:n])


@functools.cache
def _leduc_resolver() -> GTCFR:
  """Leduc's zero-leaf SoG(2,1) searcher in float64 with a branch as deep as the game: the table
  chain's settings, shared by the chain's and the batch's tests (one compilation each of its single
  and batched searches)."""
  game = registry.load("leduc_poker")
  return GTCFR(
    game,
    leaf_models.zero_leaf_model(),
    types.GTCFRConfig(simulations=2),
    dtype=jnp.float64,
    branch_depth=int(game.tree.num_levels),
  )


@pytest.mark.xdist_group("leduc_resolver")
def test_a_chain_of_plans_from_pool_summaries_is_the_tables_chain():
  """Leduc, two decisions re-solved in turn: a short search from the same start and key as the
  table search's, summarised, then the plan at the decision the table search's chain planned (below
  the tree as far as any). Both plans start at the same s_prev (its pair weights those of the whole
  game's pool) with the same branch, ranges and gadget (Terminate values, earlier range and p_o),
  in float64; the second plans from a summary rooted below the game's root, with the origins the
  first carried down."""
  game = registry.load("leduc_poker")
  public = game.public_game
  depth = int(game.tree.num_levels)
  with jax.enable_x64(True):
    grown = beliefs.grow(public, game.tree.num_nodes, jnp.float64)
    searcher = _leduc_resolver()
    pool_summary = belief_resolving.initial_summary(
      searcher.empty, jnp.asarray(public_game.prior_ranges(public)), depth
    )
    planned = belief_resolving.plan(pool_summary, jnp.full(depth, -1, jnp.int32), 0, depth)
    assert not bool(planned.start.gadget.enabled) and int(planned.depth) == 0
    summary_depth = 0  # the public moves from the game's root to the next summary's root
    for step, rng in enumerate(jax.random.split(jax.random.PRNGKey(0), 2)):
      table = table_search(f"chain/{step}")
      pool = searcher.search_from(rng, planned.start)
      pool_summary = belief_resolving.summarise(pool, pool_summary, planned)
      assert int(pool_summary.depth) == summary_depth
      node, moves = int(table["decision"]), int(table["moves"])
      assert moves >= 1
      path = np.full(depth, -1, np.int32)
      path[: len(game.tree.paths[node])] = game.tree.paths[node]
      player = int(game.tree.kind[node])
      planned = belief_resolving.plan(pool_summary, jnp.asarray(path), player, depth)
      belief_resolving.check(planned, depth)
      _assert_same_plan(game, grown, jax.tree.map(np.asarray, planned), table, node, moves)
      summary_depth = len(game.tree.paths[int(table["root"])])
      assert summary_depth >= 1  # the next summary is rooted below the game's root


def _assert_same_plan(game, grown, planned, table: dict, node: int, moves: int):
  root_path = game.tree.paths[int(table["root"])]
  assert int(planned.depth) == len(root_path) and int(planned.branch_moves) == moves
  np.testing.assert_array_equal(
    planned.start.branch[:moves], game.tree.paths[node][len(root_path) :]
  )
  assert (planned.start.branch[moves:] == -1).all()
  np.testing.assert_allclose(planned.start.ranges, table["start_ranges"], atol=1e-12)
  for field in ("enabled", "player", "terminate_values", "previous_range", "prior", "alpha"):
    np.testing.assert_allclose(
      getattr(planned.start.gadget, field), table[f"gadget_{field}"], atol=1e-12, err_msg=field
    )
  s_prev = beliefs.tree_nodes(grown, game.tree).tolist().index(int(table["root"]))
  np.testing.assert_allclose(planned.start.weight, grown.pair_weight(s_prev), atol=1e-12)


@pytest.mark.xdist_group("leduc_resolver")
def test_a_batch_of_resolving_searches_is_each_search_alone():
  """Leduc: re-solving starts planned from one pool summary at decisions whose branches have
  different lengths (padded to the searcher's ``branch_depth``), searched under ``vmap``: each
  search's tree, focus and policy are its own, in float64 (s = 2, the chain's searcher: a search
  that leaked into another row's would still differ from it alone)."""
  game = registry.load("leduc_poker")
  public = game.public_game
  depth = int(game.tree.num_levels)
  with jax.enable_x64(True):
    searcher = _leduc_resolver()
    initial = belief_resolving.initial_summary(
      searcher.empty, jnp.asarray(public_game.prior_ranges(public)), depth
    )
    at_root = belief_resolving.plan(initial, jnp.full(depth, -1, jnp.int32), 0, depth)
    first = searcher.search_from(jax.random.PRNGKey(0), at_root.start)
    summary = belief_resolving.summarise(first, initial, at_root)
    decisions = [n for n in range(game.tree.num_nodes) if game.tree.kind[n] < 2]
    chosen = [decisions[3], decisions[-1]]
    paths = np.full((2, depth), -1, np.int32)
    for row, node in enumerate(chosen):
      paths[row, : len(game.tree.paths[node])] = game.tree.paths[node]
    players = jnp.asarray([int(game.tree.kind[n]) for n in chosen])
    planned = jax.vmap(belief_resolving.plan, (None, 0, 0, None))(
      summary, jnp.asarray(paths), players, depth
    )
    moves = np.asarray(planned.branch_moves)
    assert moves[0] != moves[1] and (moves <= depth).all()
    rngs = jax.random.split(jax.random.PRNGKey(1), 2)
    batch = jax.tree.map(np.asarray, searcher.search_from_batch(rngs, planned.start))
    for row in range(2):
      start = jax.tree.map(lambda x, row=row: x[row], planned.start)
      alone = jax.tree.map(np.asarray, searcher.search_from(rngs[row], start))
      assert int(batch.tree.num_nodes[row]) == int(alone.tree.num_nodes)
      assert int(batch.focus[row]) == int(alone.focus)
      np.testing.assert_array_equal(batch.tree.parent[row], alone.tree.parent)
      np.testing.assert_allclose(batch.focus_policy[row], alone.focus_policy, atol=1e-12)
      np.testing.assert_allclose(batch.values[row], alone.values, atol=1e-12)


def test_a_plan_off_the_summarys_path_or_past_the_branch_is_refused():
  """Leduc, a summary rooted below the game's root (a search re-solved at a deep decision): the
  path to the summary's root plans a start there; a path through another child of the game's root,
  or a branch longer than the plan's, is not ``valid`` and :func:`check` names why."""
  game = registry.load("leduc_poker")
  public = game.public_game
  depth = int(game.tree.num_levels)
  searcher = GTCFR(
    game, leaf_models.zero_leaf_model(), types.GTCFRConfig(simulations=2), branch_depth=depth
  )
  initial = belief_resolving.initial_summary(
    searcher.empty, jnp.asarray(public_game.prior_ranges(public)), depth
  )
  deepest = int(np.flatnonzero(np.asarray(game.tree.kind) < 2)[-1])
  far = np.full(depth, -1, np.int32)
  far[: len(game.tree.paths[deepest])] = game.tree.paths[deepest]
  player = int(game.tree.kind[deepest])
  with pytest.raises(ValueError, match="more than branch_depth=1"):
    belief_resolving.check(belief_resolving.plan(initial, jnp.asarray(far), player, 1), 1)
  summary = initial
  for path, actor in ((np.full(depth, -1, np.int32), 0), (far, player)):
    planned = belief_resolving.plan(summary, jnp.asarray(path), actor, depth)
    belief_resolving.check(planned, depth)
    result = searcher.search_from(jax.random.PRNGKey(0), planned.start)
    summary = belief_resolving.summarise(result, summary, planned)
  assert int(summary.depth) >= 1
  at_root = belief_resolving.plan(summary, summary.root_path, 0, 0)
  belief_resolving.check(at_root, 0)
  assert int(at_root.branch_moves) == 0 and int(at_root.depth) == int(summary.depth)
  other = np.asarray(summary.root_path).copy()
  other[0] = 2 if other[0] == 1 else 1  # another child of the game's root
  with pytest.raises(ValueError, match="does not pass through the summary's root"):
    belief_resolving.check(belief_resolving.plan(summary, jnp.asarray(other), 0, depth), depth)
