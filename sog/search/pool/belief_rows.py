"""The rows of a :class:`~sog.search.pool.beliefs.BeliefTree`: one per valid infostate of the actor
at each player node whose children are added, holding the map from the row's (s, a) to the
children it reaches, the F = ``game.max_fan_out`` at most over the opponent's infostates (what a
pass pushes ranges down and gathers action values up along, :mod:`sog.search.pool.belief_cfr`).
"""

from __future__ import annotations

import chex
import jax.numpy as jnp

#: The rows a pool holds at most where P x S would be more (a large board's Mr X, 199 stations):
#: rows are allocated as nodes expand, one per valid infostate of the actor, and an expansion
#: that finds none left adds nothing.
MAX_ROWS = 1 << 16


def row_capacity(capacity: int, num_infostates: int) -> int:
  """R: a row for every infostate of every slot (P x S), at most :data:`MAX_ROWS` (and at least
  P)."""
  return max(capacity, min(capacity * num_infostates, MAX_ROWS))


def allocate(
  tree: chex.ArrayTree, node: chex.Array, when: chex.Array, valid: chex.Array
) -> chex.ArrayTree:
  """``tree`` (a :class:`~sog.search.pool.beliefs.BeliefTree`) with a row for each of ``node``'s
  actor's ``valid`` [S] infostates where ``when`` (a traced bool) holds, the next free rows in
  infostate order."""
  R = tree.row_capacity
  rows = jnp.where(when & valid, tree.num_rows + jnp.cumsum(valid, dtype=jnp.int32) - 1, R)
  count = jnp.where(when, valid.sum(dtype=jnp.int32), 0)
  keep = lambda x, new: x.at[node].set(jnp.where(when, new, x[node]))  # noqa: E731
  return tree.replace(
    row_of=keep(tree.row_of, rows),
    row_start=keep(tree.row_start, tree.num_rows),
    row_count=keep(tree.row_count, count),
    row_node=tree.row_node.at[rows].set(node, mode="drop"),
    row_infostate=tree.row_infostate.at[rows].set(
      jnp.arange(valid.shape[0], dtype=jnp.int32), mode="drop"
    ),
    num_rows=tree.num_rows + count,
  )


def child_map(
  tree: chex.ArrayTree, node: chex.Array, reach: chex.Array, slots: chex.Array
) -> chex.Array:
  """``tree.row_child`` with the new children in ``slots`` [M] entered at the (s, a) of
  ``node``'s rows that reach them (``reach`` [M, S, A]), after the children (s, a) reaches
  already: the f-th new child of (s, a) is the first m whose count of children so far is f + 1,
  so the node's [S, A, F] entries are written as its rows, without a scatter per entry."""
  R, P, F = tree.row_capacity, tree.capacity, tree.row_child.shape[-1]
  rows = tree.row_of[node]  # [S]
  held_children = tree.row_child[jnp.minimum(rows, R - 1)]  # [S, A, F]
  held = (held_children < P).sum(-1)  # [S, A]
  count = jnp.cumsum(reach, 0, dtype=jnp.int32)  # [M, S, A]
  new = jnp.stack(
    [slots[jnp.argmax(reach & (count == f + 1), 0)] for f in range(F)], -1
  )  # [S, A, F]: the f-th new child of each (s, a), where it has one
  j = jnp.arange(F) - held[..., None]  # entry j takes new child j - held
  taken = jnp.take_along_axis(new, jnp.clip(j, 0, F - 1), -1)
  merged = jnp.where(j < 0, held_children, jnp.where(j < count[-1][..., None], taken, P))
  return tree.row_child.at[rows].set(merged, mode="drop")
