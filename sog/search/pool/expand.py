"""Growing the node pool: adding a node's children (new slots, their states from the game's
``step``, valued by the leaf model once), and GT-CFR's expansion walks on the pool.

A walk draws its actions from pi_select = 1/2 PUCT + 1/2 the average policy at the mover, ends
where it leaves the tree (a frontier leaf, or an action not added yet) and adds there the children
of up to k actions, ranked by the prior with the selected action first. The walks and their redraws
were the table search's, the engine before the pools, step for step and key for key (its results
are the fixtures in tests/fixtures/table_searches.npz).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import types as search_types
from sog.search import walks
from sog.search.pool import passes
from sog.search.pool import types


def prior_policy(legal: chex.Array, logits: chex.Array, temperature: float) -> chex.Array:
  """softmax(logits / T) over ``legal`` [B, A] (zero rows where nothing is legal)."""
  some = legal.any(-1, keepdims=True)
  prior = jax.nn.softmax(jnp.where(legal, logits / temperature, -jnp.inf), axis=-1)
  return jnp.where(some, prior, 0.0)


def add_children(
  game: public_game.PublicGame,
  apply,
  params,
  tree: types.Tree,
  node: chex.Array,
  create: chex.Array,
  temperature: float,
  width: int,
) -> tuple[types.Tree, chex.Array]:
  """Adds the children of the actions ``create`` [A] marks at ``node`` (at most ``width`` of them,
  in action order) in the next free slots, valued by one leaf-model call of ``width`` rows; returns
  the tree and the states the leaf model valued. Slots past the capacity are not written (the
  searcher's capacity check rules that out)."""
  actions = jnp.nonzero(create, size=width, fill_value=0)[0].astype(jnp.int32)
  real = jnp.arange(width) < create.sum()
  slots = tree.num_nodes + jnp.arange(width)
  real = real & (slots < tree.capacity)
  slots = jnp.where(real, slots, tree.capacity)  # out of range: dropped by the scatters below
  parent_state = jax.tree.map(lambda x: x[node], tree.states)
  kids = jax.vmap(game.child, in_axes=(None, 0))(parent_state, actions)
  kind = jax.vmap(game.kind)(kids).astype(jnp.int32)
  legal = jax.vmap(lambda s: game.legal(s)[0])(kids)
  evaluate = real & (kind != public_game.TERMINAL)
  out = apply(params, game, kids, evaluate)
  put = lambda x, new: x.at[slots].set(new, mode="drop")  # noqa: E731
  depth = tree.depth[node] + 1
  tree = tree.replace(
    states=jax.tree.map(put, tree.states, kids),
    parent=put(tree.parent, jnp.full(width, node, jnp.int32)),
    action=put(tree.action, actions),
    depth=put(tree.depth, jnp.full(width, depth, jnp.int32)),
    kind=put(tree.kind, kind),
    legal=put(tree.legal, legal),
    utility=put(tree.utility, jax.vmap(lambda s: game.utility(s)[0, 0])(kids)),
    leaf_values=put(tree.leaf_values, jnp.where(evaluate[:, None], out.values, 0.0)),
    prior=put(tree.prior, prior_policy(legal, out.logits, temperature)),
    children=tree.children.at[node, jnp.where(real, actions, tree.children.shape[1])].set(
      slots, mode="drop"
    ),
    num_nodes=tree.num_nodes + real.sum(),
    height=jnp.maximum(tree.height, jnp.where(real.any(), depth, 0)),
  )
  return tree, evaluate.sum()


def _select_action(tree: types.Tree, pending, node, config: search_types.GTCFRConfig, rng):
  """pi_select at ``node`` over its legal actions (one not added yet ends the walk and is added)."""
  return walks.pi_select(
    tree.legal[node],
    tree.visits[node],
    tree.prior[node],
    tree.action_values[node] - config.virtual_loss * pending[node],
    tree.policy_sums[node],
    config,
    rng,
  )


def _expand(
  game,
  apply,
  params,
  state: types.PoolState,
  node,
  selected,
  config: search_types.GTCFRConfig,
  k: int,
  grow,
) -> types.PoolState:
  """If ``grow``: adds the children of up to k missing actions at ``node``, ranked by the prior (the
  walk's ``selected`` action first at an interior node)."""
  tree = state.tree
  num_actions = tree.legal.shape[-1]
  missing = tree.legal[node] & ~tree.added[node]
  if k >= num_actions:
    new = missing
  else:
    own = tree.reach[node, jnp.clip(tree.kind[node], 0, 1)]
    score = jnp.where(own > 0, own, 1.0) * tree.prior[node]
    new = walks.top_missing_actions(score, missing, tree.expanded[node], selected, k)
  added = jnp.where(grow, tree.added[node] | new, tree.added[node])
  expanded = tree.expanded[node] | (grow & (tree.legal[node] & added).any())
  create = added & expanded & tree.legal[node] & (tree.children[node] < 0)
  since = jnp.where(expanded & ~tree.expanded[node], state.iteration, tree.interior_since[node])
  tree = tree.replace(
    added=tree.added.at[node].set(added),
    expanded=tree.expanded.at[node].set(expanded),
    interior_since=tree.interior_since.at[node].set(since),
  )
  tree, evaluated = add_children(
    game, apply, params, tree, node, create, config.prior_temperature, min(k, num_actions)
  )
  return state.replace(tree=tree, leaf_evaluations=state.leaf_evaluations + evaluated)


def _walk(
  game,
  apply,
  params,
  state: types.PoolState,
  pending,
  config: search_types.GTCFRConfig,
  k: int,
  max_depth: int,
  rng,
):
  """One expansion walk from the root; returns the state, the phase's pending (virtual-loss)
  counts, and whether it added a node."""
  _, walk_rng = jax.random.split(rng)  # the first key drew the table search's world state
  tree = state.tree
  empty_path = jnp.zeros(max_depth, jnp.int32)

  def step(carry):
    i, node, _, _, rng, path = carry
    rng, action_rng, _ = jax.random.split(rng, 3)
    kind = tree.kind[node]
    is_player = kind != public_game.TERMINAL
    action = jnp.where(is_player, _select_action(tree, pending, node, config, action_rng), 0)
    stop_here = ~tree.expanded[node] | (is_player & ~tree.added[node, action])
    moves = is_player & ~stop_here
    path = tuple(
      p.at[i].set(jnp.where(moves, x, p[i]), mode="drop")
      for p, x in zip(path, (node, action, 1), strict=True)
    )
    return (i + 1, jnp.where(moves, tree.children[node, action], node), ~moves, action, rng, path)

  start = (jnp.int32(0), jnp.int32(0), jnp.bool_(False), jnp.int32(0), walk_rng, (empty_path,) * 3)
  _, node, _, action, _, (nodes, actions, counted) = jax.lax.while_loop(
    lambda c: ~c[2], step, start
  )
  counted = counted.astype(tree.visits.dtype)
  size = tree.num_nodes
  state = state.replace(tree=tree.replace(visits=tree.visits.at[nodes, actions].add(counted)))
  state = _expand(
    game, apply, params, state, node, action, config, k, tree.kind[node] != public_game.TERMINAL
  )
  grew = state.tree.num_nodes > size
  state = state.replace(walks=state.walks + 1, growing_walks=state.growing_walks + grew)
  return state, pending.at[nodes, actions].add(counted), grew


def fully_grown(tree: types.Tree) -> chex.Array:
  """Whether the tree holds the root's whole game: no frontier leaf, and no interior node with a
  legal action not added."""
  missing = tree.used & tree.expanded & (tree.legal & ~tree.added).any(-1)
  return ~(passes.frontier(tree) | missing).any()


def grow(
  game,
  apply,
  params,
  state: types.PoolState,
  config: search_types.GTCFRConfig,
  k: int,
  max_depth: int,
) -> types.PoolState:
  """The expansion phase: ceil(c) simulations (:func:`sog.search.walks.expansion_phase`)."""
  return walks.expansion_phase(
    lambda s, p, r: _walk(game, apply, params, s, p, config, k, max_depth, r),
    lambda s: fully_grown(s.tree),
    state,
    jnp.zeros_like(state.tree.visits),
    config,
  )
