"""GT-CFR's CFR phase on the belief pool: one CFR+ update of the grown tree (regrets and average
policies of the players it updates), and what PUCT reads from its passes (the prior at frontier
leaves, normalised action values, the sample of leaf queries)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import belief_state
from sog.search.pool import beliefs
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


#: The (node, infostate) rows of a call's prior that one step of :func:`record_prior` writes.
PRIOR_ROWS = 256


def record_prior(
  tree: beliefs.BeliefTree,
  call: leaf_calls.LeafCall,
  temperature: float,
  prior: chex.Array,
  axis_name: str | None = None,
  when: chex.Array | bool = True,
) -> chex.Array:
  """``prior`` [P, S, A] with the call's prior (the actor's softmax(logits / T) over its legal
  actions) written at its nodes' rows of the actor's valid infostates, the only rows PUCT and an
  expansion read, ``PRIOR_ROWS`` of them a step (in a vmapped batch, the batch's most steps,
  ``axis_name``): a Scotland Yard board node's Mr X holds a few of his 199 stations. Nothing is
  written where ``when`` (a bool, possibly traced) is False."""
  P, B, S = tree.capacity, call.nodes.shape[0], tree.legal.shape[1]
  actor = (tree.kind[call.nodes] == 1).astype(jnp.int32)  # player 0's row at chance nodes
  valid = jnp.take_along_axis(tree.valid[call.nodes], actor[:, None, None], 1)[:, 0]  # [B, S]
  # the k-th row written is the first entry of [B, S] where the count of rows so far passes k
  count = jnp.cumsum((call.mask[:, None] & valid).reshape(-1), dtype=jnp.int32)
  steps = jnp.where(when, (count[-1] + PRIOR_ROWS - 1) // PRIOR_ROWS, 0)
  if axis_name is not None:
    steps = jax.lax.pmax(steps, axis_name)

  def step(j, prior):
    k = j * PRIOR_ROWS + jnp.arange(PRIOR_ROWS, dtype=jnp.int32)
    at = jnp.where(k < count[-1], jnp.searchsorted(count, k + 1), B * S)
    b, s = jnp.minimum(at, B * S - 1) // S, at % S
    nodes = call.nodes[b]
    logits = call.output.logits[b, actor[b], s]  # [C, A]
    new = jax.nn.softmax(jnp.where(tree.legal[nodes, s], logits / temperature, -jnp.inf), -1)
    return prior.at[jnp.where(at < B * S, nodes, P), s].set(new, mode="drop")

  return jax.lax.fori_loop(0, steps, step, prior)


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
  gadget's, for the opponent), and the statistics PUCT reads from it: the prior at the frontier
  (from the call, where ``records_prior``, a traced bool) and the normalised action values at
  interior nodes (from the up pass's visits)."""
  tree, start = state.tree, state.start
  policy = belief_cfr.current_policy(tree)
  root_ranges = gadget_lib.root_ranges(start.gadget, state.gadget, start.ranges, tree.valid[0])
  ranges = belief_cfr.reach_down(tree, policy, root_ranges, order, state.cfr)
  rng, query_rng = jax.random.split(state.rng)

  def record(carry, call: leaf_calls.LeafCall):
    """The prior at the call's nodes (slots) and its queries offered to the sample."""
    prior, queries = carry
    prior = record_prior(
      tree, call, config.prior_temperature, prior, batches.axis_name, records_prior
    )
    return prior, leaf_calls.sample_queries(queries, query_rng, call.nodes, call.ranges, call.mask)

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
    (state.prior, state.queries),
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

  values, (solver, action_values) = belief_cfr.values_up(
    tree,
    lambda rows, carry: policy(rows, carry[0]),
    ranges,
    called.values,
    order,
    visit=visit,
    carry=(state.cfr, state.action_values),
  )
  prior, queries = called.record
  gadget = start.gadget
  updated = gadget_lib.update(
    gadget, state.gadget, values[0, gadget.player], tree.valid[0, gadget.player], weight
  )
  return state.replace(
    cfr=solver,
    gadget=jax.tree.map(
      lambda new, old: jnp.where(updating[gadget.player], new, old), updated, state.gadget
    ),
    prior=prior,
    action_values=action_values,
    ranges=ranges,
    leaf_state=called.leaf_state,
    queries=queries,
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

  Only the update's last pass records the leaf model's prior at the frontier, and only where
  ``records_prior`` (a bool, possibly traced: the phase's last update, which an expansion
  follows): the tree, so its frontier, is fixed until the next expansion, and each pass's prior
  would overwrite the one before unread."""
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
