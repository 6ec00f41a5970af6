"""GT-CFR's CFR phase on the belief pool: one CFR+ update of the grown tree (regrets and average
policies of the players it updates), and what PUCT reads from its passes (the prior at frontier
leaves, normalised action values, the sample of leaf queries)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import types as search_types
from sog.search.pool import belief_cfr
from sog.search.pool import belief_state
from sog.search.pool import beliefs
from sog.search.pool import level_order
from sog.search.pool import passes


def normalised_action_values(
  kind: chex.Array, ranges: chex.Array, q: chex.Array, utility_scale: float
) -> chex.Array:
  """[C, S, A]: the actor's counterfactual action values Q(s, a) at nodes of ``kind`` [C] over the
  opponent's range mass there (``ranges`` [C, 2, S]), in units of the game's largest utility (zero
  where the opponent's range is 0)."""
  opponent_mass = leaf_calls.actor_rows(kind, ranges[:, ::-1].sum(-1))  # [C]
  scale = jnp.where(opponent_mass > 0, opponent_mass, 1.0) * utility_scale
  return jnp.where((opponent_mass > 0)[:, None, None], q / scale[:, None, None], 0.0)


#: The wide player's frontier nodes whose whole prior rows one step of :func:`record_prior` writes.
WIDE_PRIORS = 8


def record_prior(
  tree: beliefs.BeliefTree,
  call: leaf_calls.LeafCall,
  temperature: float,
  prior: chex.Array,
  narrow: int | None,
  axis_name: str | None = None,
) -> chex.Array:
  """``prior`` [P, S, A] with the call's prior (:func:`~sog.search.leaf_calls.prior_policy`)
  written at its nodes: all S rows where the passes read every row in one class (``narrow`` is
  None), else (the pass's order split at S_n = ``narrow``, its
  :attr:`~sog.search.pool.level_order.LevelOrder.narrow`) the first S_n rows of every node, and
  all S rows of the wide player's nodes, ``WIDE_PRIORS`` at a time (in a vmapped batch, the
  batch's most steps, ``axis_name``): rows past its infostates are never read."""
  P, B = tree.capacity, call.nodes.shape[0]
  written = jnp.where(call.mask, call.nodes, P)
  logits = call.output.logits
  new = leaf_calls.prior_policy(tree, call.nodes, logits, temperature, narrow)
  prior = prior.at[written, : new.shape[1]].set(new, mode="drop")
  if narrow is None:
    return prior
  wide = call.mask & (tree.kind[call.nodes] == int(np.argmax(tree.weight.shape[1:])))
  order = jnp.nonzero(wide, size=B + WIDE_PRIORS, fill_value=B)[0]
  steps = (wide.sum(dtype=jnp.int32) + WIDE_PRIORS - 1) // WIDE_PRIORS
  if axis_name is not None:
    steps = jax.lax.pmax(steps, axis_name)

  def step(j, prior):
    at = jax.lax.dynamic_slice(order, (j * WIDE_PRIORS,), (WIDE_PRIORS,))
    rows = jnp.minimum(at, B - 1)
    new = leaf_calls.prior_policy(tree, call.nodes[rows], logits[rows], temperature)
    return prior.at[jnp.where(at < B, call.nodes[rows], P)].set(new, mode="drop")

  return jax.lax.fori_loop(0, steps, step, prior)


def _update_players(
  apply,
  params,
  state: belief_state.BeliefSearchState,
  config: search_types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  order: level_order.LevelOrder,
  utility_scale: float,
  updating: chex.Array,
  weight: chex.Array,
) -> belief_state.BeliefSearchState:
  """One pass over the grown tree (its frontier valued by one leaf-model call) updating the regrets
  and average policies of the players ``updating`` [2] (bool, possibly traced) marks (and the
  gadget's, for the opponent), and the statistics PUCT reads from it: the prior at the frontier
  (from the call) and the normalised action values at interior nodes (from the up pass's
  visits)."""
  tree, start = state.tree, state.start
  policy = belief_cfr.current_policy(tree)
  root_ranges = gadget_lib.root_ranges(start.gadget, state.gadget, start.ranges, tree.valid[0])
  ranges = belief_cfr.reach_down(tree, policy, root_ranges, order, state.cfr)
  rng, query_rng = jax.random.split(state.rng)

  def record(carry, call: leaf_calls.LeafCall):
    """The prior at the call's nodes (slots) and its queries offered to the sample."""
    prior, queries = carry
    prior = record_prior(
      tree, call, config.prior_temperature, prior, order.narrow, batches.axis_name
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

  def visit(carry, chunk: belief_cfr.Visit):
    """CFR+ at the chunk's nodes (linear averaging: t, or per node t minus the iterations before
    the node became interior), and PUCT's normalised Q there."""
    solver, action_values = carry
    at = jnp.minimum(chunk.nodes, tree.capacity - 1)
    if config.averaging == "global":
      average_weight = weight
    else:
      average_weight = (weight - state.interior_since[at].astype(weight.dtype))[:, None, None]
    solver = belief_cfr.update_rows(tree, solver, chunk, updating, average_weight)
    normalised = normalised_action_values(chunk.kind, chunk.ranges, chunk.q, utility_scale)
    W = chunk.q.shape[1]
    normalised = jnp.where(chunk.expanded[:, None, None], normalised, action_values[at, :W])
    return solver, action_values.at[chunk.nodes, :W].set(normalised, mode="drop")

  values, sums, (solver, action_values) = belief_cfr.values_up(
    tree,
    lambda nodes, carry, width: policy(nodes, carry[0], width),
    ranges,
    called.values,
    order,
    visit=visit,
    carry=(state.cfr, state.action_values),
    sums=state.cfr.action_sums,
  )
  prior, queries = called.record
  gadget = start.gadget
  updated = gadget_lib.update(
    gadget, state.gadget, values[0, gadget.player], tree.valid[0, gadget.player], weight
  )
  return state.replace(
    cfr=solver.replace(action_sums=sums),
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
) -> belief_state.BeliefSearchState:
  """One CFR+ update of the grown tree: both players from one pass (``"simultaneous"``), or player 0
  and then player 1 from a second pass against player 0's new policy (``"alternating"``; a
  ``fori_loop`` over the two, so the pass and its leaf-model call are compiled once)."""
  weight = (state.cfr.iteration + 1).astype(state.start.ranges.dtype)  # linear averaging
  chunk = level_order.interior_chunk(config.expansion_k, state.tree.added.shape[-1])
  order = level_order.level_order(state.tree, batches.axis_name, chunk)  # fixed within an update

  def update(s, updating):
    return _update_players(
      apply, params, s, config, batches, order, utility_scale, updating, weight
    )

  if config.updates == "simultaneous":
    state = update(state, jnp.ones(2, bool))
  else:
    state = jax.lax.fori_loop(0, 2, lambda player, s: update(s, jnp.arange(2) == player), state)
  return state.replace(cfr=state.cfr.replace(iteration=state.cfr.iteration + 1))
