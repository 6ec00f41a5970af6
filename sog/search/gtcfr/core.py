"""One GT-CFR search as pure functions of the tables and its state: ``init``, ``run`` (phases of CFR
updates then simulations, one ``fori_loop``), ``finish``; ``search`` chains them (jit it). To vmap
it, give it ``leaf_calls.leaf_batches(capacity, SEARCH_AXIS)`` and vmap with
``axis_name=SEARCH_AXIS`` (as :class:`~sog.search.gtcfr.GTCFR` does): without the axis name each
pass's ``lax.switch`` over leaf-batch sizes becomes a select that runs every size.
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp

from sog.search import cfr
from sog.search import gadget as gadget_lib
from sog.search import leaf_calls
from sog.search import tables as tables_lib
from sog.search import types
from sog.search.gtcfr import expand as expand_lib
from sog.search.gtcfr import frontier as frontier_lib
from sog.search.gtcfr import update as update_lib


def init(
  tables: tables_lib.SearchTables,
  apply,
  params,
  rng: chex.PRNGKey,
  start: types.Start,
  config: types.GTCFRConfig,
  leaf_state: Any = (),
) -> types.SearchState:
  """The initial tree (the start's branch, expanded, and all its nodes' children) and the focus's
  prior (one leaf-model call at its ranges under the uniform policy, from ``leaf_state``).

  ``apply`` here, in :func:`run` and in :func:`finish` is the leaf model's
  (:class:`~sog.search.leaf_models.LeafModel`)."""
  n, num_actions = tables.legal.shape[0], tables.legal.shape[-1]
  legal_inner = tables.to_inner(tables.legal)
  levels = tables.levels
  dtype = levels[0].payoff.dtype
  start = start.replace(ranges=start.ranges.astype(dtype))
  uniform = legal_inner / legal_inner.sum(-1, keepdims=True)
  S = tables.valid.shape[-1]
  gadget = gadget_lib.init_state(start.gadget)
  root_ranges = gadget_lib.root_ranges(start.gadget, gadget, start.ranges, tables.valid[start.root])
  focus = start.focus[None].astype(jnp.int32)
  first = cfr.evaluate_pass(
    levels,
    uniform,
    jnp.zeros_like(root_ranges),
    None,
    frontier_lib.root_entry(tables, start.root, root_ranges),
  )[0]
  out = apply(params, tables, focus, jnp.concatenate(first)[focus], jnp.ones(1, bool), leaf_state)
  branch = start.branch
  has_parent = tables.parent >= 0
  state = types.SearchState(
    cfr=cfr.init_state(levels),
    start=start,
    gadget=gadget,
    in_tree=branch | (has_parent & branch[jnp.maximum(tables.parent, 0)]),
    expanded=branch,
    added=jnp.broadcast_to(branch[:, None], (n, num_actions)),
    visits=jnp.zeros(legal_inner.shape, uniform.dtype),
    prior=uniform.at[tables.inner_position[focus]].set(
      leaf_calls.prior_policy(tables, focus, out.logits, config.prior_temperature)
    ),
    action_values=jnp.zeros(legal_inner.shape, uniform.dtype),
    ranges=jnp.zeros((n, 2, S), uniform.dtype),
    leaf_policy_sums=jnp.zeros(legal_inner.shape, uniform.dtype),
    leaf_state=out.state,
    queries=types.QuerySample(
      nodes=jnp.zeros(config.query_samples, jnp.int32),
      ranges=jnp.zeros((config.query_samples, 2, S), uniform.dtype),
      keys=jnp.full(config.query_samples, jnp.inf, uniform.dtype),
    ),
    leaf_evaluations=jnp.int32(1),
    leaf_calls=jnp.int32(1),
    interior_since=jnp.zeros(legal_inner.shape[0], jnp.int32),
    walks=jnp.int32(0),
    growing_walks=jnp.int32(0),
    rng=rng,
  )
  if config.open_chance == "with_parent":  # the focus's chance children, as an expansion opens them
    nodes = jnp.arange(n)
    state = expand_lib.open_chance(
      tables, state, nodes, state.in_tree & (tables.parent == focus[0])
    )
  return state


def run(
  tables: tables_lib.SearchTables,
  apply,
  params,
  state: types.SearchState,
  config: types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  k: int | None,
) -> types.SearchState:
  """The config's phases of CFR+ updates then expansion simulations, in one loop."""

  def phase(_, state):
    state = jax.lax.fori_loop(
      0,
      config.updates_per_phase,
      lambda _, s: update_lib.cfr_update(tables, apply, params, s, config, batches),
      state,
    )
    return expand_lib.grow(tables, state, config, k)

  return jax.lax.fori_loop(0, config.phases, phase, state)


def finish(
  tables: tables_lib.SearchTables,
  apply,
  params,
  state: types.SearchState,
  batches: leaf_calls.LeafBatches,
) -> types.SearchResult:
  """The search's answer: the average policy and its values and ranges (the opponent's root range
  the gadget's average, when it is on), the policy and values at the focus."""
  frontier = frontier_lib.current_frontier(tables, state)
  levels = frontier_lib.with_leaves(tables, frontier)
  average = cfr.average_policy(levels, state.cfr)
  start = state.start
  root_ranges = gadget_lib.average_range(
    start.gadget, state.gadget, start.ranges, tables.valid[start.root]
  )
  ranges, values, _, called, best = frontier_lib.tree_pass(
    tables,
    levels,
    average,
    root_ranges,
    state,
    frontier_lib.evaluate_frontier(tables, apply, params, frontier, batches, state.leaf_state),
    best_response_values=True,
  )
  values = jnp.concatenate(values)
  return types.SearchResult(
    focus_policy=average[tables.inner_position[start.focus]],
    focus_values=values[start.focus],
    root=start.root,
    focus=start.focus,
    average_policy=average,
    policy_sums=state.cfr.policy_sums,
    leaf_policy_sums=state.leaf_policy_sums,
    in_tree=state.in_tree,
    expanded=state.expanded,
    ranges=jnp.concatenate(ranges),
    values=values,
    best_response_values=jnp.concatenate(best),
    queries=state.queries,
    leaf_evaluations=state.leaf_evaluations + frontier.sum(dtype=jnp.int32),
    leaf_calls=state.leaf_calls + called.called,
    walks=state.walks,
    growing_walks=state.growing_walks,
    complete=expand_lib.fully_grown(tables, state),
  )


def search(
  tables: tables_lib.SearchTables,
  apply,
  params,
  rng: chex.PRNGKey,
  start: types.Start,
  config: types.GTCFRConfig,
  batches: leaf_calls.LeafBatches,
  k: int | None,
  leaf_state: Any = (),
) -> types.SearchResult:
  """One GT-CFR search from ``start``: init, run, finish."""
  state = init(tables, apply, params, rng, start, config, leaf_state)
  state = run(tables, apply, params, state, config, batches, k)
  return finish(tables, apply, params, state, batches)
