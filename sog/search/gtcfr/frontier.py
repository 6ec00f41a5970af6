"""GT-CFR's frontier: which nodes are leaves of the current tree, the actions CFR may play there,
and the leaf-values hook of a CFR pass (one leaf-model call on the frontier's public belief states).
"""

from __future__ import annotations

from typing import Any

import chex
import jax.numpy as jnp

from sog.games import public_game
from sog.search import cfr
from sog.search import leaf_calls
from sog.search import tables as tables_lib
from sog.search import types


def frontier_mask(kind: chex.Array, in_tree: chex.Array, expanded: chex.Array) -> chex.Array:
  """[N] bool: the frontier leaves: in the tree, not terminal, not expanded (NumPy or JAX)."""
  return in_tree & ~expanded & (kind != public_game.TERMINAL)


def current_frontier(tables: tables_lib.SearchTables, state: types.SearchState) -> chex.Array:
  return frontier_mask(tables.kind, state.in_tree, state.expanded)


def with_leaves(tables: tables_lib.SearchTables, frontier: chex.Array) -> cfr.Levels:
  """The tables' levels with the frontier marked as leaves (valued by the leaf model in a pass)."""
  return tuple(
    level.replace(is_leaf=f) for level, f in zip(tables.levels, tables.split(frontier), strict=True)
  )


def available(tables: tables_lib.SearchTables, state: types.SearchState) -> chex.Array:
  """[M, S, A]: the actions CFR may play at each inner node: those whose children are in the tree
  (all legal ones at nodes outside it, where the policy is never used)."""
  legal = tables.to_inner(tables.legal)
  restricted = tables.to_inner(state.expanded & (tables.kind < public_game.CHANCE))
  added = tables.to_inner(state.added)
  return legal & (added[:, None, :] | ~restricted[:, None, None])


def evaluate_frontier(
  tables,
  apply,
  params,
  frontier,
  batches: leaf_calls.LeafBatches,
  leaf_state: Any,
  record=lambda carry, call: carry,
  carry: Any = (),
):
  """The leaf-values hook of a CFR pass: the frontier leaves' values from one leaf-model call
  (:func:`sog.search.leaf_calls.call_frontier`: sized by the frontier, none while it is empty,
  ``record`` folded in); the hook's extra output is the :class:`~sog.search.leaf_calls.Called`."""

  def leaf_values(ranges):
    called = leaf_calls.call_frontier(
      tables, apply, params, frontier, jnp.concatenate(ranges), batches, leaf_state, record, carry
    )
    return tables.split(called.values), called

  return leaf_values


def root_entry(tables, root: chex.Array, root_ranges: chex.Array) -> cfr.Entry:
  """The per-level injection of ``root_ranges`` at ``root`` (nodes above it get no range)."""
  ranges = root_ranges * tables.valid[root]
  return [(mask, ranges) for mask in tables.split(jnp.arange(tables.num_nodes) == root)]


def tree_pass(
  tables,
  levels,
  policy,
  root_ranges,
  state: types.SearchState,
  leaf_values=None,
  best_response_values: bool = False,
):
  """A CFR pass from the start's root at ``root_ranges``."""
  return cfr.evaluate_pass(
    levels,
    policy,
    jnp.zeros_like(root_ranges),
    leaf_values,
    root_entry(tables, state.start.root, root_ranges),
    best_response_values,
  )
