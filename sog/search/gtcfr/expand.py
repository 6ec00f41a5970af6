"""GT-CFR's expansion phase: simulations that walk the tree from the focus by pi_select (PUCT mixed
with the average policy) and add the children of up to k actions where they leave it."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import tables as tables_lib
from sog.search import types
from sog.search import walks
from sog.search.gtcfr import frontier as frontier_lib


def _select_action(tables, state: types.SearchState, pending, node, infostate, config, rng):
  """pi_select at the actor's infostate, over all its legal actions: one whose child is not in the
  tree yet ends the walk and is added there (with k < all, the only way a node gains children after
  its first expansion)."""
  m = tables.inner_position[node]
  return walks.pi_select(
    tables.legal[node, infostate],
    state.visits[m, infostate],
    state.prior[m, infostate],
    state.action_values[m, infostate] - config.virtual_loss * pending[m, infostate],
    state.cfr.policy_sums[m, infostate],
    config,
    rng,
  )


def open_chance(tables, state: types.SearchState, nodes, mask) -> types.SearchState:
  """Expands the chance nodes among ``nodes`` [B] (where ``mask`` [B]) that are not expanded yet:
  all their outcomes join the tree (``open_chance="with_parent"``)."""
  opens = mask & (tables.kind[nodes] == public_game.CHANCE) & ~state.expanded[nodes]
  children = tables.up_child[nodes]
  activate = opens[:, None, None] & (children >= 0)
  positions = tables.inner_position[nodes]
  return state.replace(
    expanded=state.expanded.at[nodes].max(opens),
    added=state.added.at[nodes].max(opens[:, None]),
    in_tree=state.in_tree.at[jnp.where(activate, children, 0).ravel()].max(activate.ravel()),
    interior_since=state.interior_since.at[positions].set(
      jnp.where(opens, state.cfr.iteration, state.interior_since[positions])
    ),
  )


def _expand(
  tables, state: types.SearchState, node, selected, config: types.GTCFRConfig, k: int | None, grow
) -> types.SearchState:
  """If ``grow``: adds the children of up to k actions at ``node`` (all outcomes at a chance node),
  and with ``open_chance="with_parent"`` the outcomes of the chance nodes among them.

  At a frontier leaf these are its top k missing actions by the prior weighted by the actor's range
  (uniformly over its valid infostates where that range is 0), as SoG's expansion ranks them. At an
  interior node the walk left through ``selected``, an action not in the tree yet: it comes first.
  """
  m = tables.inner_position[node]
  actor = jnp.clip(tables.kind[node], 0, 1)
  num_actions = tables.legal.shape[-1]
  valid = tables.valid[node, actor]
  missing = tables.can_act[node] & ~state.added[node]
  chance = tables.kind[node] == public_game.CHANCE
  if k is None or k >= num_actions:
    new = missing
  else:
    own = state.ranges[node, actor]
    score = jnp.where(own.sum() > 0, own, valid.astype(own.dtype)) @ state.prior[m]
    new = walks.top_missing_actions(score, missing, state.expanded[node], selected, k)
  added = jnp.where(grow, jnp.where(chance, True, state.added[node] | new), state.added[node])
  has_action = (tables.legal[node] & added[None, :]).any(-1) | ~tables.valid[node, actor]
  expanded = state.expanded[node] | (grow & (chance | has_action.all()))
  children = tables.up_child[node]
  activate = (children >= 0) & added[:, None] & expanded
  kids = jnp.where(activate, children, 0).ravel()
  state = state.replace(
    added=state.added.at[node].set(added),
    expanded=state.expanded.at[node].set(expanded),
    in_tree=state.in_tree.at[kids].max(activate.ravel()),
    interior_since=state.interior_since.at[m].set(
      jnp.where(expanded & ~state.expanded[node], state.cfr.iteration, state.interior_since[m])
    ),
  )
  if config.open_chance == "with_parent":
    state = open_chance(tables, state, kids, activate.ravel())
  return state


def _walk(tables, state: types.SearchState, pending, config: types.GTCFRConfig, k: int | None, rng):
  """One expansion walk; returns the state, the phase's pending (virtual-loss) counts, and whether
  it added a public state to the tree.

  The walk carries only its position and path (a ``while_loop`` under ``vmap`` selects every carried
  array at every step); visits and the expansion are written once it has stopped.
  """
  world_rng, walk_rng = jax.random.split(rng)
  focus = state.start.focus
  s0, s1 = tables_lib.sample_world(tables, focus, state.ranges[focus], world_rng)
  depth = len(tables.level_starts) - 1
  empty_path = jnp.zeros(depth, jnp.int32)

  def step(carry):
    i, node, s0, s1, _, _, rng, path = carry
    rng, action_rng, chance_rng = jax.random.split(rng, 3)
    kind = tables.kind[node]
    infostate = jnp.where(kind == 1, s1, s0)
    is_player = kind < public_game.CHANCE
    action = jnp.where(
      is_player, _select_action(tables, state, pending, node, infostate, config, action_rng), 0
    )
    stop_here = ~state.expanded[node] | (is_player & ~state.added[node, action])
    moves = (kind != public_game.TERMINAL) & ~stop_here
    counted = moves & is_player
    path = tuple(
      p.at[i].set(jnp.where(counted, x, p[i]))
      for p, x in zip(path, (tables.inner_position[node], infostate, action, 1), strict=True)
    )
    child, t0, t1 = tables_lib.step_world(tables, node, s0, s1, action, chance_rng)
    return (
      i + 1,
      jnp.where(moves, child, node),
      jnp.where(moves, t0, s0),
      jnp.where(moves, t1, s1),
      ~moves,
      action,
      rng,
      path,
    )

  start = (
    jnp.int32(0),
    focus.astype(jnp.int32),
    s0,
    s1,
    jnp.bool_(False),
    jnp.int32(0),
    walk_rng,
    (empty_path,) * 4,
  )
  _, node, _, _, _, action, _, (rows, infostates, actions, counted) = jax.lax.while_loop(
    lambda c: ~c[4], step, start
  )
  counted = counted.astype(state.visits.dtype)
  size = state.in_tree.sum()
  state = state.replace(visits=state.visits.at[rows, infostates, actions].add(counted))
  state = _expand(tables, state, node, action, config, k, tables.kind[node] != public_game.TERMINAL)
  grew = state.in_tree.sum() > size
  state = state.replace(walks=state.walks + 1, growing_walks=state.growing_walks + grew)
  return state, pending.at[rows, infostates, actions].add(counted), grew


def fully_grown(tables, state: types.SearchState) -> chex.Array:
  """Whether the tree holds the focus's whole subgame: no frontier leaf below the focus, and no
  interior decision node there with an action its actor can take that is not added yet."""
  focus = state.start.focus
  below = tables.ancestors[:, (tables.ancestors[focus] >= 0).sum() - 1] == focus
  missing = (
    state.expanded & (tables.kind < public_game.CHANCE) & (tables.can_act & ~state.added).any(-1)
  )
  leaves = frontier_lib.current_frontier(tables, state)
  return ~((leaves | missing) & below).any()


def grow(
  tables, state: types.SearchState, config: types.GTCFRConfig, k: int | None
) -> types.SearchState:
  """The expansion phase: ceil(c) simulations (:func:`sog.search.walks.expansion_phase`)."""
  return walks.expansion_phase(
    lambda s, p, r: _walk(tables, s, p, config, k, r),
    lambda s: fully_grown(tables, s),
    state,
    jnp.zeros_like(state.visits),
    config,
  )
