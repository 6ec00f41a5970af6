"""The order in which a CFR pass on a :class:`~sog.search.pool.beliefs.BeliefTree` visits its nodes
and rows, each once, in chunks of fixed size, so that a pass costs the grown tree and its actors'
valid infostates, not height x capacity nor the pool's [P, S, A] layout.

A pass has two kinds of step. A *node* step handles [2, S] ranges and values: a node takes the
ranges its parent passes down, or its value from a terminal's payoff, a leaf's value or its
children's sums. A *row* step handles one infostate s of the actor at an expanded node, over its
[A] actions: it pushes the actor's range down along the row's child map
(:attr:`~sog.search.pool.beliefs.BeliefTree.row_child`), or gathers its action values Q(s, a)
from the children and updates its regrets. The expanded (interior) nodes and their rows go depth
by depth: going down, depth d's node steps precede its row steps (a node's range is final before
its rows push it into depth d + 1); going up, depth d's row steps precede its node steps (its
children are final). The leaves (the used nodes not expanded, which have no rows) go in chunks
of any depths: after every interior depth going down, before them going up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chex
import flax.struct
import jax
import jax.numpy as jnp

from sog.search import batch_axis
from sog.search.pool import beliefs

#: Interior nodes a node step handles (of one depth): [2, S] each, so a level is best taken in
#: few steps.
NODE_CHUNK = 64

#: Leaves a node step handles (of any depths).
LEAF_CHUNK = 64

#: Rows a row step handles (of one depth): [A, F] each.
ROW_CHUNK = 64

#: Slots a step of :meth:`DepthOrder.zero_used` zeroes (a prefix of the pool, [2, S] each).
SLOT_CHUNK = 256

#: A pass's step: ``step(members, carry)`` with a chunk's nodes or rows [C] (P or R for padding).
Step = Callable[[chex.Array, Any], Any]


@flax.struct.dataclass
class ByDepth:
  """Members (a tree's used nodes, or its rows) in depth order, chunked per depth.

  Attributes:
    order: [N + C] int32 the members by depth, then N (no member); C, the chunk, is static.
    level_start: [P + 1] int32 the position in ``order`` of each depth's first member.
    level_size: [P + 1] int32 the members at each depth.
    level_chunks: [P + 1] int32 the chunks each depth takes (in a vmapped batch of searches ordered
      with its axis name, the batch's largest, so that the passes' loops run the same steps for
      every search and select nothing: the extra chunks are empty).
  """

  order: chex.Array
  level_start: chex.Array
  level_size: chex.Array
  level_chunks: chex.Array

  def chunk(self, depth: chex.Array, c: chex.Array, size: int, none: int) -> chex.Array:
    """[size] int32 the members of chunk ``c`` of ``depth`` (``none`` past the depth's last)."""
    members = jax.lax.dynamic_slice(self.order, (self.level_start[depth] + c * size,), (size,))
    return jnp.where(c * size + jnp.arange(size) < self.level_size[depth], members, none)


@flax.struct.dataclass
class RowsByDepth:
  """The rows of a tree's interior nodes by depth: the nodes' rows in the nodes' depth order (a
  node's rows are consecutive), found chunk by chunk from the nodes' row counts, so that no
  [R] array is laid out.

  Attributes:
    nodes: [P] int32 the interior nodes by depth (P past the last).
    first: [P] int32 the position of each of those nodes' first row in the layout.
    ends: [P] int32 the position past each one's last row.
    row_start: [P] int32 the tree's ``row_start``.
    level_start, level_size, level_chunks: [P + 1] int32, as :class:`ByDepth`'s.
  """

  nodes: chex.Array
  first: chex.Array
  ends: chex.Array
  row_start: chex.Array
  level_start: chex.Array
  level_size: chex.Array
  level_chunks: chex.Array

  def chunk(self, depth: chex.Array, c: chex.Array, size: int, none: int) -> chex.Array:
    """[size] int32 the rows of chunk ``c`` of ``depth`` (``none`` past the depth's last)."""
    P = self.nodes.shape[0]
    j = self.level_start[depth] + c * size + jnp.arange(size, dtype=jnp.int32)
    owner = jnp.minimum(jnp.searchsorted(self.ends, j, side="right"), P - 1)
    rows = self.row_start[jnp.minimum(self.nodes[owner], P - 1)] + j - self.first[owner]
    return jnp.where(c * size + jnp.arange(size) < self.level_size[depth], rows, none)


@flax.struct.dataclass
class DepthOrder:
  """A tree's interior nodes and their rows by depth (:class:`ByDepth`), and its leaves.

  Attributes:
    nodes: the expanded used slots by depth (N = P).
    rows: their rows by depth.
    leaves: [P + L] int32 the used slots not expanded, in slot order, then P (L, the leaves'
      chunk, is static).
    num_leaf_chunks: int32 scalar, the leaves' chunks (the batch's largest).
    num_levels: int32 scalar, the depths that hold an interior node (the batch's largest).
    num_slot_chunks: int32 scalar, the chunks of ``slot_chunk`` slots that hold the used ones
      (the batch's largest; :meth:`zero_used`).
  """

  nodes: ByDepth
  rows: RowsByDepth
  leaves: chex.Array
  num_leaf_chunks: chex.Array
  num_levels: chex.Array
  num_slot_chunks: chex.Array
  node_chunk: int = flax.struct.field(pytree_node=False, default=NODE_CHUNK)
  row_chunk: int = flax.struct.field(pytree_node=False, default=ROW_CHUNK)
  leaf_chunk: int = flax.struct.field(pytree_node=False, default=LEAF_CHUNK)
  slot_chunk: int = flax.struct.field(pytree_node=False, default=SLOT_CHUNK)
  row_capacity: int = flax.struct.field(pytree_node=False, default=0)

  def zero_used(self, array: chex.Array) -> chex.Array:
    """``array`` [P, ...] zeroed at the used slots (a prefix of the pool, ``slot_chunk`` slots a
    step), so that a pass's sums start at zero for the cost of the tree, not the pool's."""
    size = min(self.slot_chunk, array.shape[0])
    zeros = jnp.zeros((size, *array.shape[1:]), array.dtype)

    def step(c, x):
      return jax.lax.dynamic_update_slice(x, zeros, (c * size,) + (0 * c,) * (array.ndim - 1))

    return jax.lax.fori_loop(0, self.num_slot_chunks, step, array)

  def leaf_chunk_at(self, c: chex.Array) -> chex.Array:
    """[L] int32 the leaves of leaf chunk ``c`` (P past the last leaf)."""
    return jax.lax.dynamic_slice(self.leaves, (c * self.leaf_chunk,), (self.leaf_chunk,))

  def _level(self, i: chex.Array, carry: Any, upward: bool, node_step: Step, row_step: Step):
    P, R = self.rows.nodes.shape[0], self.row_capacity
    depth = self.num_levels - 1 - i if upward else i

    def nodes(carry):
      return jax.lax.fori_loop(
        0,
        self.nodes.level_chunks[depth],
        lambda c, x: node_step(self.nodes.chunk(depth, c, self.node_chunk, P), x),
        carry,
      )

    def rows(carry):
      return jax.lax.fori_loop(
        0,
        self.rows.level_chunks[depth],
        lambda c, x: row_step(self.rows.chunk(depth, c, self.row_chunk, R), x),
        carry,
      )

    return nodes(rows(carry)) if upward else rows(nodes(carry))

  def _leaves(self, node_step: Step, carry: Any) -> Any:
    return jax.lax.fori_loop(
      0, self.num_leaf_chunks, lambda c, x: node_step(self.leaf_chunk_at(c), x), carry
    )

  def _levels(self, upward: bool, node_step: Step, row_step: Step, carry: Any) -> Any:
    return jax.lax.fori_loop(
      0, self.num_levels, lambda i, x: self._level(i, x, upward, node_step, row_step), carry
    )

  def down(self, node_step: Step, row_step: Step, init: Any) -> Any:
    """From the root's depth down, each depth's interior node steps, then its row steps; then the
    leaves' node steps."""
    return self._leaves(node_step, self._levels(False, node_step, row_step, init))

  def up(self, node_step: Step, row_step: Step, init: Any) -> Any:
    """The leaves' node steps; then from the deepest depth up, each depth's row steps, then its
    interior node steps."""
    return self._levels(True, node_step, row_step, self._leaves(node_step, init))


def _chunks(size: chex.Array, chunk: int, axis_name: str | None) -> chex.Array:
  """The chunks of ``chunk`` that hold ``size`` members (each depth's, or a count), the batch's
  most where ``axis_name`` names a vmap axis."""
  return batch_axis.most((size + chunk - 1) // chunk, axis_name)


def _by_depth(
  order: chex.Array, size: chex.Array, chunk: int, axis_name: str | None, none: int
) -> ByDepth:
  """The :class:`ByDepth` of members listed in ``order`` (by depth, then ``none``) with ``size``
  [P + 1] members at each depth."""
  order = jnp.concatenate([order, jnp.full(chunk, none, jnp.int32)])
  return ByDepth(
    order=order,
    level_start=jnp.cumsum(size) - size,
    level_size=size,
    level_chunks=_chunks(size, chunk, axis_name),
  )


def depth_order(
  tree: beliefs.BeliefTree,
  axis_name: str | None = None,
  node_chunk: int = NODE_CHUNK,
  row_chunk: int = ROW_CHUNK,
  leaf_chunk: int = LEAF_CHUNK,
  slot_chunk: int = SLOT_CHUNK,
) -> DepthOrder:
  """The :class:`DepthOrder` of the tree's used nodes and rows (``axis_name``: the vmap axis of a
  batch of searches, whose passes then all run the batch's largest numbers of chunks).

  The interior nodes are sorted by depth (stable, so by slot within a depth); a node's rows are
  consecutive, so the rows by depth are the interior nodes' row ranges in that order
  (:class:`RowsByDepth`), neither sorted nor laid out over the R rows."""
  P, R = tree.capacity, tree.row_capacity
  interior = tree.used & tree.expanded
  depth = jnp.where(interior, tree.depth, P)
  nodes = jnp.argsort(depth, stable=True).astype(jnp.int32)
  nodes = jnp.where(interior[nodes], nodes, P)
  per_depth = lambda x: jnp.zeros(P + 1, jnp.int32).at[depth].add(x).at[P].set(0)  # noqa: E731
  counts = jnp.where(nodes < P, tree.row_count[jnp.minimum(nodes, P - 1)], 0)
  ends = jnp.cumsum(counts, dtype=jnp.int32)
  row_size = per_depth(tree.row_count)  # rows only at expanded nodes
  is_leaf = tree.used & ~tree.expanded
  leaves = jnp.nonzero(is_leaf, size=P + leaf_chunk, fill_value=P)[0].astype(jnp.int32)
  deepest = jnp.where(interior, tree.depth + 1, 0).max().astype(jnp.int32)
  levels = batch_axis.most(deepest, axis_name)
  return DepthOrder(
    nodes=_by_depth(nodes, per_depth(interior.astype(jnp.int32)), node_chunk, axis_name, P),
    rows=RowsByDepth(
      nodes=nodes,
      first=ends - counts,
      ends=ends,
      row_start=tree.row_start,
      level_start=jnp.cumsum(row_size) - row_size,
      level_size=row_size,
      level_chunks=_chunks(row_size, row_chunk, axis_name),
    ),
    leaves=leaves,
    num_leaf_chunks=_chunks(is_leaf.sum(dtype=jnp.int32), leaf_chunk, axis_name),
    num_levels=levels,
    num_slot_chunks=_chunks(tree.num_nodes, min(slot_chunk, P), axis_name),
    node_chunk=node_chunk,
    row_chunk=row_chunk,
    leaf_chunk=leaf_chunk,
    slot_chunk=slot_chunk,
    row_capacity=R,
  )
