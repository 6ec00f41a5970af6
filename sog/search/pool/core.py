"""One GT-CFR search on a node pool as pure functions: ``init``, ``run`` (phases of CFR+ updates
then simulations, one ``fori_loop``), ``finish``; ``search`` chains them (jit it, vmap it).

SoG's Algorithm 1 (the library's defaults: alternating CFR+ updates, linear averaging, redraws,
PUCT ties by the prior) for a perfect-information game, on a tree whose arrays hold only the nodes
it grew: a pass costs the grown tree, and the leaf model values each node once, when the node is
added (with one infostate per player a network's conditional values do not depend on the ranges).
It was the table search's, the engine before it, walk for walk (its results are the fixtures in
tests/fixtures/table_searches.npz). A pool search starts at a state; re-solving searches and the
gadget run on the belief pool (:class:`~sog.search.pool.BeliefGTCFR`).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import types as search_types
from sog.search.pool import expand as expand_lib
from sog.search.pool import passes
from sog.search.pool import types

ROOT_REACH = jnp.ones(2)


def empty_tree(game: public_game.PublicGame, root: chex.ArrayTree, capacity: int) -> types.Tree:
  """A pool of ``capacity`` slots holding only ``root`` (valued by nothing yet)."""
  num_actions = game.num_actions
  per_action = lambda dtype, fill=0: jnp.full((capacity, num_actions), fill, dtype)  # noqa: E731
  per_node = lambda dtype, fill=0: jnp.full(capacity, fill, dtype)  # noqa: E731
  floats = per_action(jnp.float32)
  return types.Tree(
    states=jax.tree.map(lambda x: jnp.broadcast_to(x, (capacity, *jnp.shape(x))), root),
    parent=per_node(jnp.int32, -1),
    action=per_node(jnp.int32, -1),
    children=per_action(jnp.int32, -1),
    depth=per_node(jnp.int32),
    kind=per_node(jnp.int32, public_game.TERMINAL).at[0].set(game.kind(root)),
    legal=per_action(bool, False).at[0].set(game.legal(root)[0]),
    utility=per_node(jnp.float32).at[0].set(game.utility(root)[0, 0]),
    leaf_values=jnp.zeros((capacity, 2)),
    prior=floats,
    expanded=per_node(bool, False),
    added=per_action(bool, False),
    regrets=floats,
    policy_sums=floats,
    visits=floats,
    action_values=floats,
    reach=jnp.zeros((capacity, 2)),
    interior_since=per_node(jnp.int32),
    num_nodes=jnp.int32(1),
    height=jnp.int32(0),
  )


def init(
  game: public_game.PublicGame,
  apply,
  params,
  rng: chex.PRNGKey,
  root: chex.ArrayTree,
  config: search_types.GTCFRConfig,
  capacity: int,
) -> types.PoolState:
  """The initial tree: the root, expanded, with all its children (frontier leaves); the root's prior
  and its children's values and priors from the leaf model."""
  tree = empty_tree(game, root, capacity)
  out = apply(params, game, jax.tree.map(lambda x: x[None], root), jnp.ones(1, bool))
  tree = tree.replace(
    prior=tree.prior.at[0].set(
      expand_lib.prior_policy(tree.legal[:1], out.logits, config.prior_temperature)[0]
    ),
    expanded=tree.expanded.at[0].set(True),
    added=tree.added.at[0].set(True),
  )
  tree, evaluated = expand_lib.add_children(
    game,
    apply,
    params,
    tree,
    jnp.int32(0),
    tree.legal[0],
    config.prior_temperature,
    game.num_actions,
  )
  size = config.query_samples
  return types.PoolState(
    tree=tree,
    iteration=jnp.int32(0),
    queries=types.PoolQueries(
      nodes=jnp.zeros(size, jnp.int32), reach=jnp.zeros((size, 2)), keys=jnp.full(size, jnp.inf)
    ),
    leaf_evaluations=1 + evaluated,
    walks=jnp.int32(0),
    growing_walks=jnp.int32(0),
    rng=rng,
  )


def _sample_queries(
  queries: types.PoolQueries, rng, leaves: chex.Array, reach: chex.Array
) -> types.PoolQueries:
  """The sample with this pass's frontier leaves offered (a node already in it is not offered again:
  with one infostate per player its query is the same state whatever the reach)."""
  size = queries.keys.shape[0]
  if not size:
    return queries
  sampled = jnp.zeros(leaves.shape, bool).at[queries.nodes].max(jnp.isfinite(queries.keys))
  offered = leaves & ~sampled
  keys = jnp.concatenate(
    [queries.keys, jnp.where(offered, jax.random.uniform(rng, leaves.shape), jnp.inf)]
  )
  _, keep = jax.lax.top_k(-keys, size)
  nodes = jnp.arange(leaves.shape[0], dtype=jnp.int32)
  return types.PoolQueries(
    nodes=jnp.concatenate([queries.nodes, nodes])[keep],
    reach=jnp.concatenate([queries.reach, reach])[keep],
    keys=keys[keep],
  )


def _update_players(
  game: public_game.PublicGame,
  state: types.PoolState,
  config: search_types.GTCFRConfig,
  updating: chex.Array,
  weight: chex.Array,
) -> types.PoolState:
  """One pass over the tree updating the players ``updating`` [2] marks, and PUCT's Q from it."""
  tree = state.tree
  policy = passes.matching(tree.regrets, passes.available(tree))
  reach = passes.reach_down(tree, policy, ROOT_REACH)
  utilities = passes.utilities_up(tree, policy)
  if config.averaging == "per_node":
    weight = weight - tree.interior_since.astype(weight.dtype)[:, None]
  for player in (0, 1):
    updated = passes.update(tree, policy, reach, utilities, player, weight)
    tree = tree.replace(
      regrets=jnp.where(updating[player], updated.regrets, tree.regrets),
      policy_sums=jnp.where(updating[player], updated.policy_sums, tree.policy_sums),
    )
  interior = (tree.used & tree.expanded)[:, None]
  rng, query_rng = jax.random.split(state.rng)
  tree = tree.replace(
    reach=reach,
    action_values=jnp.where(
      interior,
      passes.normalised_action_values(tree, reach, utilities, game.utility_scale),
      tree.action_values,
    ),
  )
  return state.replace(
    tree=tree,
    rng=rng,
    queries=_sample_queries(state.queries, query_rng, passes.frontier(tree), reach),
  )


def cfr_update(
  game: public_game.PublicGame, state: types.PoolState, config: search_types.GTCFRConfig
) -> types.PoolState:
  """One CFR+ update: both players from one pass, or player 0 then player 1 (alternating)."""
  weight = (state.iteration + 1).astype(jnp.float32)
  if config.updates == "simultaneous":
    state = _update_players(game, state, config, jnp.ones(2, bool), weight)
  else:
    state = jax.lax.fori_loop(
      0, 2, lambda p, s: _update_players(game, s, config, jnp.arange(2) == p, weight), state
    )
  return state.replace(iteration=state.iteration + 1)


def run(
  game: public_game.PublicGame,
  apply,
  params,
  state: types.PoolState,
  config: search_types.GTCFRConfig,
  k: int,
  max_depth: int,
) -> types.PoolState:
  """The config's phases of CFR+ updates then expansion simulations, in one loop."""

  def phase(_, state):
    state = jax.lax.fori_loop(
      0, config.updates_per_phase, lambda _, s: cfr_update(game, s, config), state
    )
    return expand_lib.grow(game, apply, params, state, config, k, max_depth)

  return jax.lax.fori_loop(0, config.phases, phase, state)


def finish(state: types.PoolState) -> types.PoolResult:
  """The average policy (over each node's added actions), its values and reaches."""
  tree = state.tree
  average = passes.matching(tree.policy_sums, passes.available(tree))
  reach = passes.reach_down(tree, average, ROOT_REACH)
  utilities = passes.utilities_up(tree, average)
  queries = state.queries
  return types.PoolResult(
    root_policy=average[0],
    root_values=utilities[0],
    average_policy=average,
    values=utilities,
    reach=reach,
    tree=tree,
    query_states=jax.tree.map(lambda x: x[queries.nodes], tree.states),
    query_reach=queries.reach,
    query_valid=jnp.isfinite(queries.keys),
    leaf_evaluations=state.leaf_evaluations,
    walks=state.walks,
    growing_walks=state.growing_walks,
    complete=expand_lib.fully_grown(tree),
  )


def node_capacity(num_actions: int, config: search_types.GTCFRConfig, k: int) -> int:
  """The most nodes a search can hold: the root, its children, and at most k children a simulation
  (a simulation's walks add nothing until the one that adds, which ends it)."""
  return 1 + num_actions + config.phases * config.simulations_in_phase * min(k, num_actions)


def check_capacity(
  game: public_game.PublicGame, config: search_types.GTCFRConfig, k: int, capacity: int
) -> None:
  """``ValueError`` where ``capacity`` slots cannot hold what s simulations with k can grow."""
  needed = node_capacity(game.num_actions, config, k)
  if not isinstance(capacity, int) or capacity < needed:
    raise ValueError(
      f"capacity={capacity!r} is too small for s={config.simulations}, k={k} on "
      f"{game.name}: a search can grow {needed} nodes (1 + A + s * min(k, A) with "
      f"A = {game.num_actions}); use at least {needed} or None"
    )


def search(
  game: public_game.PublicGame,
  apply,
  params,
  rng: chex.PRNGKey,
  root: chex.ArrayTree,
  config: search_types.GTCFRConfig,
  capacity: int,
  k: int,
  max_depth: int,
) -> types.PoolResult:
  """One GT-CFR search from ``root`` on a pool of ``capacity`` nodes: init, run, finish
  (``ValueError`` for a capacity :func:`node_capacity` says is too small)."""
  check_capacity(game, config, k, capacity)
  state = init(game, apply, params, rng, root, config, capacity)
  state = run(game, apply, params, state, config, k, max_depth)
  return finish(state)
