"""A search's policy completed below its frontier, for exact evaluation of what it has solved."""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

from sog.search import leaf_models
from sog.search import tables as tables_lib
from sog.search import types
from sog.search.gtcfr import frontier as frontier_lib


@functools.partial(jax.jit, static_argnums=(2, 3, 4))
def resolve_below_frontier(
  tables: tables_lib.SearchTables,
  result: types.SearchResult,
  capacity: int,
  iterations: int,
  tremble: float,
) -> chex.Array:
  leaves = frontier_lib.frontier_mask(tables.kind, result.in_tree, result.expanded)
  nodes = jnp.nonzero(leaves, size=capacity, fill_value=0)[0]
  mask = jnp.arange(capacity) < leaves.sum()
  below, _, _ = leaf_models.solve_at_nodes(
    tables, nodes, result.ranges[nodes], mask, iterations, tremble
  )
  return jnp.where(tables.to_inner(result.expanded)[:, None, None], result.average_policy, below)
