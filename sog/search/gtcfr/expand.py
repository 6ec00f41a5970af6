"""GT-CFR's expansion phase: simulations that walk the tree from the focus by pi_select (PUCT mixed
with the average policy) and add the children of up to k actions where they leave it."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from sog.games import rules as rules_lib
from sog.search import cfr
from sog.search import tables as tables_lib
from sog.search import types


def _select_action(tables, state: types.SearchState, pending, node, infostate, config, rng):
  """pi_select = 1/2 one-hot(argmax PUCT) + 1/2 average CFR policy, at the actor's infostate, over
  all its legal actions: one whose child is not in the tree yet ends the walk and is added there
  (with k < all, the only way a node gains children after its first expansion)."""
  m = tables.inner_position[node]
  allowed = tables.legal[node, infostate]
  visits = state.visits[m, infostate]
  q = state.action_values[m, infostate] - config.virtual_loss * pending[m, infostate]
  u = config.puct_constant * state.prior[m, infostate] * jnp.sqrt(visits.sum()) / (1.0 + visits)
  puct = jax.nn.one_hot(jnp.argmax(jnp.where(allowed, q + u, -jnp.inf)), allowed.shape[0])
  average = cfr.regret_matching(state.cfr.policy_sums[m, infostate], allowed)
  return jax.random.choice(rng, allowed.shape[0], p=0.5 * puct + 0.5 * average)


def _expand(tables, state: types.SearchState, node, selected, k: int | None,
            grow) -> types.SearchState:
  """If ``grow``: adds the children of up to k actions at ``node`` (all outcomes at a chance node).

  At a frontier leaf these are its top k missing actions by the prior weighted by the actor's range
  (uniformly over its valid infostates where that range is 0), as SoG's expansion ranks them. At an
  interior node the walk left through ``selected``, an action not in the tree yet: it comes first.
  """
  m = tables.inner_position[node]
  actor = jnp.clip(tables.kind[node], 0, 1)
  num_actions = tables.legal.shape[-1]
  valid = tables.valid[node, actor]
  can_act = (tables.legal[node] & valid[:, None]).any(0)
  missing = can_act & ~state.added[node]
  chance = tables.kind[node] == rules_lib.CHANCE
  if k is None or k >= num_actions:
    new = missing
  else:
    own = state.ranges[node, actor]
    score = jnp.where(own.sum() > 0, own, valid.astype(own.dtype)) @ state.prior[m]
    score = jnp.where(missing, score, -jnp.inf)
    score = score.at[selected].set(jnp.where(state.expanded[node] & missing[selected], jnp.inf,
                                             score[selected]))
    top_scores, top = jax.lax.top_k(score, k)
    new = jnp.zeros(num_actions, bool).at[top].set(top_scores > -jnp.inf)
  added = jnp.where(grow, jnp.where(chance, True, state.added[node] | new), state.added[node])
  has_action = (tables.legal[node] & added[None, :]).any(-1) | ~tables.valid[node, actor]
  expanded = state.expanded[node] | (grow & (chance | has_action.all()))
  children = tables.up_child[node]
  activate = (children >= 0) & added[:, None] & expanded
  return state.replace(
      added=state.added.at[node].set(added), expanded=state.expanded.at[node].set(expanded),
      in_tree=state.in_tree.at[jnp.where(activate, children, 0).ravel()].max(activate.ravel()))


def _simulate(tables, state: types.SearchState, pending, config: types.GTCFRConfig, k: int | None,
              rng):
  """One expansion simulation; returns the state and the phase's pending (virtual-loss) counts.

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
    is_player = kind < rules_lib.CHANCE
    action = jnp.where(is_player, _select_action(tables, state, pending, node, infostate, config,
                                                 action_rng), 0)
    stop_here = ~state.expanded[node] | (is_player & ~state.added[node, action])
    moves = (kind != rules_lib.TERMINAL) & ~stop_here
    counted = moves & is_player
    path = tuple(p.at[i].set(jnp.where(counted, x, p[i])) for p, x in
                 zip(path, (tables.inner_position[node], infostate, action, 1)))
    child, t0, t1 = tables_lib.step_world(tables, node, s0, s1, action, chance_rng)
    return (i + 1, jnp.where(moves, child, node), jnp.where(moves, t0, s0),
            jnp.where(moves, t1, s1), ~moves, action, rng, path)

  start = (jnp.int32(0), focus.astype(jnp.int32), s0, s1, jnp.bool_(False), jnp.int32(0), walk_rng,
           (empty_path,) * 4)
  _, node, _, _, _, action, _, (rows, infostates, actions, counted) = jax.lax.while_loop(
      lambda c: ~c[4], step, start)
  counted = counted.astype(state.visits.dtype)
  state = state.replace(visits=state.visits.at[rows, infostates, actions].add(counted))
  state = _expand(tables, state, node, action, k, tables.kind[node] != rules_lib.TERMINAL)
  return state, pending.at[rows, infostates, actions].add(counted)


def grow(tables, state: types.SearchState, config: types.GTCFRConfig,
         k: int | None) -> types.SearchState:
  rng, sims_rng = jax.random.split(state.rng)
  rngs = jax.random.split(sims_rng, config.simulations_in_phase)

  def one(i, carry):
    return _simulate(tables, *carry, config, k, rngs[i])

  state, _ = jax.lax.fori_loop(0, config.simulations_in_phase, one,
                               (state, jnp.zeros_like(state.visits)))
  return state.replace(rng=rng)
