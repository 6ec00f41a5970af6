"""GT-CFR's CFR phase on the belief pool: one CFR+ update of the grown tree (regrets and average
policies of the players it updates), and what PUCT reads from its passes (normalised action
values, the sample of leaf queries, and which pass an expansion takes its prior from)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import belief_state
from sog.search.pool import depth_order
from sog.search.pool import passes


def normalised_action_values(
  opponent_mass: chex.Array, q: chex.Array, utility_scale: float
) -> chex.Array:
  """[C, A]: the actor's counterfactual action values Q(s, a) at rows whose node's opponent range
  mass is ``opponent_mass`` [C], over that mass, in units of the game's largest utility (zero
  where the opponent's range is 0)."""
  scale = jnp.where(opponent_mass > 0, opponent_mass, 1.0) * utility_scale
  return jnp.where((opponent_mass > 0)[:, None], q / scale[:, None], 0.0)


def _update_players(
  apply,
  params,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  order: depth_order.DepthOrder,
  utility_scale: float,
  updating: chex.Array,
  weight: chex.Array,
  records_prior: chex.Array,
) -> belief_state.BeliefSearchState:
  """One pass over the grown tree (its frontier valued by one leaf-model call) updating the regrets
  and average policies of the players ``updating`` [2] (bool, possibly traced) marks (and the
  gadget's, for the opponent), and the statistics PUCT reads from it: the normalised action values
  at interior nodes (from the up pass's visits) and, where ``records_prior`` (a traced bool), the
  pass the next expansions take their prior from (the slots in use and the leaf model's state
  before its call: an expanded frontier leaf's prior is what this call gave it, computed for that
  node alone, :func:`~sog.search.pool.belief_expand.expand`)."""
  tree, start = state.tree, state.start
  policy = belief_cfr.current_policy(tree)
  root_ranges = gadget_lib.root_ranges(start.gadget, state.gadget, start.ranges, tree.valid[0])
  down = belief_cfr.PassArrays(state.ranges, state.pushed)
  ranges, pushed = belief_cfr.reach_down(tree, policy, root_ranges, order, state.cfr, arrays=down)
  rng, query_rng = jax.random.split(state.rng)

  def record(queries, call: leaf_calls.LeafCall):
    """The call's queries offered to the sample."""
    return leaf_calls.sample_queries(queries, query_rng, call.nodes, call.ranges, call.mask)

  frontier = passes.frontier(tree)
  called = leaf_calls.call_frontier(
    tree,
    apply,
    params,
    frontier,
    ranges,
    batches,
    state.leaf_state,
    record,
    state.queries,
    state.values,
  )

  def visit(carry, chunk: belief_cfr.RowVisit):
    """CFR+ at the chunk's rows (linear averaging: t, or per row t minus the iterations before
    its node became interior), and PUCT's normalised Q there."""
    solver, action_values = carry
    at = chunk.at
    if config.averaging == "global":
      average_weight = weight
    else:
      average_weight = (weight - state.interior_since[at.nodes].astype(weight.dtype))[:, None]
    solver = belief_cfr.update_rows(tree, solver, chunk, updating, average_weight)
    normalised = normalised_action_values(chunk.opponent_mass, chunk.q, utility_scale)
    written = jnp.where(at.ok & chunk.expanded, at.nodes, tree.capacity)
    return solver, action_values.at[written, at.infostates].set(normalised, mode="drop")

  up, (solver, action_values) = belief_cfr.values_up(
    tree,
    lambda rows, carry: policy(rows, carry[0]),
    ranges,
    order,
    visit=visit,
    carry=(state.cfr, state.action_values),
    arrays=belief_cfr.PassArrays(called.values, state.passed),
  )
  values = up.out
  gadget = start.gadget
  updated = gadget_lib.update(
    gadget, state.gadget, values[0, gadget.player], tree.valid[0, gadget.player], weight
  )
  return state.replace(
    cfr=solver,
    gadget=jax.tree.map(
      lambda new, old: jnp.where(updating[gadget.player], new, old), updated, state.gadget
    ),
    action_values=action_values,
    ranges=ranges,
    values=values,
    pushed=pushed,
    passed=up.sums,
    leaf_state=called.leaf_state,
    recorded_nodes=jnp.where(records_prior, tree.num_nodes, state.recorded_nodes),
    prior_leaf_state=jax.tree.map(
      lambda before, kept: jnp.where(records_prior, before, kept),
      state.leaf_state,
      state.prior_leaf_state,
    ),
    queries=called.record,
    leaf_evaluations=state.leaf_evaluations + frontier.sum(dtype=jnp.int32),
    leaf_calls=state.leaf_calls + called.called,
    rng=rng,
  )


def cfr_update(
  apply,
  params,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  utility_scale: float,
  records_prior: chex.Array | bool = True,
) -> belief_state.BeliefSearchState:
  """One CFR+ update of the grown tree: both players from one pass (``"simultaneous"``), or player 0
  and then player 1 from a second pass against player 0's new policy (``"alternating"``; a
  ``fori_loop`` over the two, so the pass and its leaf-model call are compiled once).

  Only the update's last pass is the one the next expansions take their prior from, and only where
  ``records_prior`` (a bool, possibly traced: the phase's last update, which an expansion
  follows): the tree, so its frontier, is fixed until the next expansion."""
  weight = (state.cfr.iteration + 1).astype(state.start.ranges.dtype)  # linear averaging
  order = depth_order.depth_order(state.tree, batches.axis_name)  # fixed within an update

  def update(s, updating, last):
    return _update_players(
      apply,
      params,
      s,
      config,
      batches,
      order,
      utility_scale,
      updating,
      weight,
      records_prior & last,
    )

  if config.updates == "simultaneous":
    state = update(state, jnp.ones(2, bool), True)
  else:
    state = jax.lax.fori_loop(
      0, 2, lambda player, s: update(s, jnp.arange(2) == player, player == 1), state
    )
  return state.replace(cfr=state.cfr.replace(iteration=state.cfr.iteration + 1))
