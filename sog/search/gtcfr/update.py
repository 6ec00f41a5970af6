"""GT-CFR's CFR phase: one CFR+ update of the current tree (regrets, average policies, the gadget),
and the statistics PUCT reads from its pass (the prior at new frontier leaves, normalised action
values, the sample of leaf queries)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import cfr
from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import types
from sog.search.gtcfr import frontier as frontier_lib


def _normalised_action_values(tables, levels, ranges, q_values) -> chex.Array:
  """[M, S, A]: the actor's counterfactual action values over the opponent's range mass, scaled."""
  rows = []
  for level, r, q in zip(levels, ranges, q_values, strict=True):
    k = level.inner
    if not k:
      continue
    if q is None:
      rows.append(jnp.zeros(level.legal[:k].shape, r.dtype))
      continue
    opponent_mass = leaf_calls.actor_rows(level.kind[:k], r[:k, ::-1].sum(-1))
    scale = jnp.where(opponent_mass > 0, opponent_mass, 1.0) * tables.utility_scale
    rows.append(
      jnp.where(
        (opponent_mass > 0)[:, None, None],
        leaf_calls.actor_rows(level.kind[:k], q) / scale[:, None, None],
        0.0,
      )
    )
  return jnp.concatenate(rows)


def cfr_update(
  tables,
  apply,
  params,
  state: types.SearchState,
  config: types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
) -> types.SearchState:
  """One CFR+ update of the current tree: both players from one pass (simultaneous), or player 0 and
  then player 1 from a second pass against player 0's new policy (alternating; a ``fori_loop`` over
  the two, so the pass and its leaf-model call are compiled once, not twice)."""
  weight = (state.cfr.iteration + 1).astype(state.start.ranges.dtype)  # linear averaging
  if config.updates == "simultaneous":
    state = _update_players(
      tables, apply, params, state, config, batches, jnp.ones(2, bool), weight
    )
  else:
    state = jax.lax.fori_loop(
      0,
      2,
      lambda player, s: _update_players(
        tables, apply, params, s, config, batches, jnp.arange(2) == player, weight
      ),
      state,
    )
  return state.replace(cfr=state.cfr.replace(iteration=state.cfr.iteration + 1))


def _select(take: chex.Array, new, old):
  """``new`` where the scalar ``take`` (possibly traced) holds, else ``old``, leaf by leaf."""
  return jax.tree.map(lambda a, b: jnp.where(take, a, b), new, old)


def _update_gadget(
  tables, state: types.SearchState, values, updating: chex.Array, weight
) -> gadget_lib.GadgetState:
  """The gadget's regret-matching+ step from the opponent's root values, if the opponent updated."""
  gadget, root = state.start.gadget, state.start.root
  updated = gadget_lib.update(
    gadget,
    state.gadget,
    jnp.concatenate(values)[root, gadget.player],
    tables.valid[root, gadget.player],
    weight,
  )
  return _select(updating[gadget.player], updated, state.gadget)


def _average_weights(
  state: types.SearchState, config: types.GTCFRConfig, weight: chex.Array
) -> chex.Array:
  """The linear averaging weight of this update: the search's iteration t (``weight``) everywhere,
  or per inner node [M, 1, 1] t minus the iterations before the node became interior."""
  if config.averaging == "global":
    return weight
  since = state.interior_since.astype(weight.dtype)[:, None, None]
  return weight - since


def _update_players(
  tables,
  apply,
  params,
  state: types.SearchState,
  config: types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  updating: chex.Array,
  weight: chex.Array,
) -> types.SearchState:
  """One pass over the current tree (frontier valued by the leaf model) updating the regrets and
  average policies of the players ``updating`` [2] (bool, possibly traced) marks (and the gadget's,
  for the opponent), and the statistics PUCT reads from it."""
  frontier = frontier_lib.current_frontier(tables, state)
  levels = frontier_lib.with_leaves(tables, frontier)
  available = frontier_lib.available(tables, state)
  policy = cfr.regret_matching(state.cfr.regrets, available)
  root_ranges = gadget_lib.root_ranges(
    state.start.gadget, state.gadget, state.start.ranges, tables.valid[state.start.root]
  )
  rng, query_rng = jax.random.split(state.rng)

  def record(carry, call: leaf_calls.LeafCall):
    """The prior at the call's nodes, its queries offered to the sample, the oracle's policy
    sums."""
    prior, queries, leaf_policy_sums = carry
    prior, queries = leaf_calls.record_prior_and_queries(
      tables,
      call,
      tables.inner_position[call.nodes],
      config.prior_temperature,
      query_rng,
      prior,
      queries,
    )
    if call.output.policy_sums is not None:
      acts = (tables.kind < public_game.CHANCE) & updating[jnp.clip(tables.kind, 0, 1)]
      updated = tables.to_inner(acts)[:, None, None]
      leaf_policy_sums += jnp.where(updated, weight * call.output.policy_sums, 0.0)
    return prior, queries, leaf_policy_sums

  carry = (state.prior, state.queries, state.leaf_policy_sums)
  ranges, values, q_values, called = frontier_lib.tree_pass(
    tables,
    levels,
    policy,
    root_ranges,
    state,
    frontier_lib.evaluate_frontier(
      tables, apply, params, frontier, batches, state.leaf_state, record, carry
    ),
  )
  prior, queries, leaf_policy_sums = called.record
  interior = tables.to_inner(state.expanded)[:, None, None]
  acting = cfr.acting_masks(levels) & available & interior
  solver_state = state.cfr
  average_weight = _average_weights(state, config, weight)
  for player in (0, 1):
    updated = cfr.update_player(
      levels, solver_state, acting[player], policy, ranges, values, q_values, player, average_weight
    )
    solver_state = _select(updating[player], updated, solver_state)
  return state.replace(
    cfr=solver_state,
    gadget=_update_gadget(tables, state, values, updating, weight),
    prior=prior,
    action_values=jnp.where(
      interior, _normalised_action_values(tables, levels, ranges, q_values), state.action_values
    ),
    ranges=jnp.concatenate(ranges),
    leaf_policy_sums=leaf_policy_sums,
    leaf_state=called.leaf_state,
    queries=queries,
    leaf_evaluations=state.leaf_evaluations + frontier.sum(dtype=jnp.int32),
    leaf_calls=state.leaf_calls + called.called,
    rng=rng,
  )
