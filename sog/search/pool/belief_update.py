"""GT-CFR's CFR phase on the belief pool: one CFR+ update of the grown tree (regrets and average
policies of the players it updates), and what PUCT reads from its passes (the prior at frontier
leaves, normalised action values, the sample of leaf queries)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.search import leaf_calls
from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import belief_state
from sog.search.pool import passes


def normalised_action_values(
  tree, ranges: chex.Array, q: chex.Array, utility_scale: float
) -> chex.Array:
  """[P, S, A]: the actor's counterfactual action values Q(s, a) over the opponent's range mass at
  the node, in units of the game's largest utility (zero where the opponent's range is 0)."""
  opponent_mass = leaf_calls.actor_rows(tree.kind, ranges[:, ::-1].sum(-1))  # [P]
  scale = jnp.where(opponent_mass > 0, opponent_mass, 1.0) * utility_scale
  return jnp.where((opponent_mass > 0)[:, None, None], q / scale[:, None, None], 0.0)


def _average_weights(state: belief_state.BeliefSearchState, config, weight) -> chex.Array:
  """The linear averaging weight of this update: t everywhere (``"global"``), or per node [P, 1, 1]
  t minus the iterations before the node became interior (``"per_node"``)."""
  if config.averaging == "global":
    return weight
  return weight - state.interior_since.astype(weight.dtype)[:, None, None]


def _select(take: chex.Array, new, old):
  """``new`` where the scalar ``take`` (possibly traced) holds, else ``old``, leaf by leaf."""
  return jax.tree.map(lambda a, b: jnp.where(take, a, b), new, old)


def _update_players(
  apply,
  params,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  order: belief_cfr.LevelOrder,
  utility_scale: float,
  updating: chex.Array,
  weight: chex.Array,
) -> belief_state.BeliefSearchState:
  """One pass over the grown tree (its frontier valued by one leaf-model call) updating the regrets
  and average policies of the players ``updating`` [2] (bool, possibly traced) marks, and the
  statistics PUCT reads from it."""
  tree = state.tree
  policy = belief_cfr.matching(state.cfr.regrets, tree.legal)
  ranges = belief_cfr.reach_down(tree, policy, state.root_ranges, order)
  leaf_values, call = leaf_calls.call_frontier(
    tree, apply, params, passes.frontier(tree), ranges, batches, state.leaf_state
  )
  values, q = belief_cfr.values_up(tree, policy, ranges, leaf_values, order)
  solver = state.cfr
  average_weight = _average_weights(state, config, weight)
  for player in (0, 1):
    updated = belief_cfr.update_player(
      tree, solver, policy, ranges, values, q, player, average_weight
    )
    solver = _select(updating[player], updated, solver)
  prior = leaf_calls.prior_policy(tree, call.nodes, call.output.logits, config.prior_temperature)
  interior = (tree.used & tree.expanded)[:, None, None]
  rng, query_rng = jax.random.split(state.rng)
  return state.replace(
    cfr=solver,
    prior=state.prior.at[call.nodes].set(
      jnp.where(call.mask[:, None, None], prior, state.prior[call.nodes])
    ),
    action_values=jnp.where(
      interior, normalised_action_values(tree, ranges, q, utility_scale), state.action_values
    ),
    ranges=ranges,
    leaf_state=call.output.state,
    queries=leaf_calls.sample_queries(state.queries, query_rng, call.nodes, call.ranges, call.mask),
    leaf_evaluations=state.leaf_evaluations + call.mask.sum(dtype=jnp.int32),
    leaf_calls=state.leaf_calls + call.called,
    rng=rng,
  )


def cfr_update(
  apply,
  params,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  utility_scale: float,
) -> belief_state.BeliefSearchState:
  """One CFR+ update of the grown tree: both players from one pass (``"simultaneous"``), or player 0
  and then player 1 from a second pass against player 0's new policy (``"alternating"``; a
  ``fori_loop`` over the two, so the pass and its leaf-model call are compiled once)."""
  weight = (state.cfr.iteration + 1).astype(state.root_ranges.dtype)  # linear averaging
  order = belief_cfr.level_order(state.tree, batches.axis_name)  # fixed within an update

  def update(s, updating):
    return _update_players(
      apply, params, s, config, batches, order, utility_scale, updating, weight
    )

  if config.updates == "simultaneous":
    state = update(state, jnp.ones(2, bool))
  else:
    state = jax.lax.fori_loop(0, 2, lambda player, s: update(s, jnp.arange(2) == player), state)
  return state.replace(cfr=state.cfr.replace(iteration=state.cfr.iteration + 1))
