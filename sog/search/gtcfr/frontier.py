"""GT-CFR's frontier: which nodes are leaves of the current tree, the actions CFR may play there,
and the leaf-values hook of a CFR pass (one leaf-model call on the frontier's public belief states).
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import cfr
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


#: The vmap axis of a batch of table searches: a pass sizes its leaf-model call by the batch's
#: largest frontier (``lax.pmax`` over it), so the call's branch is chosen once for the batch.
SEARCH_AXIS = "searches"


class LeafBatches(NamedTuple):
  """The leaf-model batch sizes a search's passes choose from (ascending; the last the frontier
  bound) and, for a batch of searches under ``vmap``, its axis name (None: one search)."""

  sizes: tuple[int, ...]
  axis_name: str | None = None

  @property
  def capacity(self) -> int:
    return self.sizes[-1]


def leaf_batches(capacity: int, axis_name: str | None = None) -> LeafBatches:
  """The sizes a pass chooses from: the capacity bound is loose (it covers any tree s simulations
  could grow), so a pass evaluates the smallest batch that holds its frontier (the batch's largest
  under ``vmap``); about 1/16 and 1/4 of the bound, and the bound."""
  sizes = {max(8, -(-capacity // 16)), max(8, -(-capacity // 4)), capacity}
  return LeafBatches(tuple(sorted(size for size in sizes if size <= capacity)), axis_name)


def evaluate_frontier(tables, apply, params, frontier, batches: LeafBatches, leaf_state: Any):
  """The leaf-values hook of a CFR pass: the frontier leaves' values from one leaf-model call
  (``apply`` in the stateful form, :func:`sog.search.leaf_models.stateful_apply`, from
  ``leaf_state``).

  The call's batch is the smallest of ``batches.sizes`` that holds the frontier, and no call is
  made while the frontier is empty (a ``lax.switch``). Under ``vmap`` the branch is chosen from
  the largest frontier in the batch (``lax.pmax`` over ``batches.axis_name``), so the switch
  stays a branch and the batch makes one call of that size, or none. A deep re-solve grows its
  whole small subgame in a few simulations, and then its remaining passes would ask the leaf model
  about nothing. Outputs are padded to the largest size; the hook's extra output is (nodes, ranges,
  mask, output, whether the model was called).
  """
  sizes = batches.sizes
  full = batches.capacity

  def leaf_values(ranges):
    flat = jnp.concatenate(ranges)
    count = frontier.sum()
    largest = count if batches.axis_name is None else jax.lax.pmax(count, batches.axis_name)
    # The frontier's first rows in node order, for the largest size; a smaller call takes a prefix
    # (the same rows), so only the call itself differs between the switch's branches.
    nodes = jnp.nonzero(frontier, size=full, fill_value=0)[0].astype(jnp.int32)
    mask = jnp.arange(full) < count
    batch = jnp.where(mask[:, None, None], flat[nodes], 0.0)

    def at(size):
      def evaluate(_):
        out = apply(params, tables, nodes[:size], batch[:size], mask[:size], leaf_state)
        pad = lambda x: jnp.pad(x, [(0, full - size)] + [(0, 0)] * (x.ndim - 1))  # noqa: E731
        return out._replace(values=pad(out.values), logits=pad(out.logits)), jnp.bool_(True)

      return evaluate

    def skip(_):  # what a call with every row masked gives, without the call
      out, _ = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), jax.eval_shape(at(full), None))
      return out._replace(state=leaf_state), jnp.bool_(False)

    tier = jnp.minimum(jnp.searchsorted(jnp.asarray(sizes), largest), len(sizes) - 1)
    out, called = jax.lax.switch(
      jnp.where(largest > 0, tier + 1, 0), [skip] + [at(size) for size in sizes], None
    )
    placed = jnp.zeros_like(flat).at[nodes].add(jnp.where(mask[:, None, None], out.values, 0.0))
    return tables.split(placed), (nodes, batch, mask, out, called)

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
