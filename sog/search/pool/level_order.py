"""The order in which a CFR pass on a :class:`~sog.search.pool.beliefs.BeliefTree` visits its used
slots: the interior (expanded) nodes depth by depth, the leaves in any order, each node once, in
chunks of fixed size, so that a pass costs the grown tree and not height x capacity.

A pass reads [S, A] rows at a node: its actor's (policy, action values, regrets) and its parent
actor's (the edges and infostates the parent's actions lead through). Where one player has far
fewer infostates than the other (the real Scotland Yard board's detectives share one, Mr X has 199
stations), most nodes read only rows of that player: the order then puts those nodes in a
*narrow* class whose steps read the first S_n = min(S0, S1) rows of each [S, A] array, and the
rest in a *wide* class that reads all S. A player's infostates are the first S_i rows, so a step
at width S_n computes what one at width S would (the rows past S_i carry no edge, range or value);
only the order of a parent's sums over its children changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chex
import flax.struct
import jax
import jax.numpy as jnp

from sog.search.pool import beliefs

#: Interior nodes a pass handles in one step (of one depth) in the wide class. A step costs a fixed
#: part and a part per row, padding included: small chunks suit the trees searches grow with k =
#: all (a few interior nodes per depth: a re-solve's branch and the nodes below its focus that an
#: expansion opened), at the price of more steps on a bushy tree.
CHUNK = 8

#: The interior chunk of searches whose expansions add k < all children (perfect information's
#: k = 1): every expansion opens an interior node, so their interior levels are wide.
WIDE_CHUNK = 32

#: Interior nodes of the narrow class a step handles: their rows are few, so a step's fixed part
#: dominates and a level is best taken in one step.
NARROW_CHUNK = 64

#: Leaves (frontier leaves and terminals) a pass handles in one step, of any depths: a leaf depends
#: only on its parent going down and on nothing below it going up, so every leaf of the tree is
#: one batch of steps, after the interior nodes going down and before them going up. The wide
#: class of a split order, whose leaves are few (the children of the wide player's nodes) and
#: whose rows are many, takes its interior chunk of them a step.
LEAF_CHUNK = 64

#: The split into a narrow and a wide class is made where a narrow node saves at least this many
#: entries of each [S, A] array, (S - S_n) A (a second class is a second copy of each step in the
#: program: compile time).
SPLIT_FROM = 4096

#: A pass's step: ``step(nodes, carry, width)`` with a chunk's slots [B] (P for padding) whose
#: steps read the first ``width`` rows (static) of each [S, A] array.
Step = Callable[[chex.Array, Any, int], Any]


@flax.struct.dataclass
class RowClass:
  """The used slots of one class in the order a pass visits them.

  Attributes:
    width: the rows of each [S, A] array the class's steps read (static).
    order: [P + C] int32 the class's interior slots by (depth, slot), then P (no node); C, the
      interior chunk, is static (:attr:`size`).
    level_start: [P + 1] int32 the position in ``order`` of each depth's first node.
    level_size: [P + 1] int32 the class's interior nodes at each depth.
    level_chunks: [P + 1] int32 the chunks each depth takes (in a vmapped batch of searches ordered
      with its axis name, the batch's largest, so that the passes' loops run the same steps for
      every search and select nothing: the extra chunks are empty).
    leaves: [P + L] int32 the class's used slots that are not expanded, in slot order, then P;
      L, the leaves' chunk, is static (:attr:`leaf_size`).
    num_leaf_chunks: int32 scalar, the leaves' chunks (the batch's largest, as ``level_chunks``).
  """

  order: chex.Array
  level_start: chex.Array
  level_size: chex.Array
  level_chunks: chex.Array
  leaves: chex.Array
  num_leaf_chunks: chex.Array
  width: int = flax.struct.field(pytree_node=False, default=0)

  @property
  def size(self) -> int:
    """C, the nodes of an interior chunk (static)."""
    return self.order.shape[0] - (self.level_start.shape[0] - 1)

  def chunk(self, depth: chex.Array, c: chex.Array) -> chex.Array:
    """[C] int32 the nodes of chunk ``c`` of ``depth`` (P where the chunk is shorter, and past the
    depth's last)."""
    P, C = self.order.shape[0] - self.size, self.size
    nodes = jax.lax.dynamic_slice(self.order, (self.level_start[depth] + c * C,), (C,))
    return jnp.where(c * C + jnp.arange(C) < self.level_size[depth], nodes, P)

  @property
  def leaf_size(self) -> int:
    """L, the leaves of a leaf chunk (static)."""
    return self.leaves.shape[0] - (self.level_start.shape[0] - 1)

  def leaf_chunk(self, c: chex.Array) -> chex.Array:
    """[L] int32 the leaves of leaf chunk ``c`` (P past the last leaf)."""
    return jax.lax.dynamic_slice(self.leaves, (c * self.leaf_size,), (self.leaf_size,))


@flax.struct.dataclass
class LevelOrder:
  """The used slots of a tree in the order a pass visits them: the interior nodes depth by depth
  (each depth the wide class's chunks, then the narrow's), then the leaves' chunks (with
  ``upward``: the leaves', then the interior nodes from the deepest; :meth:`walk`); each node once.

  Attributes:
    classes: the :class:`RowClass` of each width (one, or the wide and the narrow).
    num_levels: int32 scalar, the depths that hold an interior node (the batch's largest).
  """

  classes: tuple[RowClass, ...]
  num_levels: chex.Array

  @property
  def narrow(self) -> int | None:
    """S_n, the narrow class's width, where the order is split (None: one class)."""
    return self.classes[-1].width if len(self.classes) > 1 else None

  def walk(self, step: Step, init: Any, upward: bool = False) -> Any:
    """``step(nodes, carry, width)`` folded over the interior chunks from the shallowest depth and
    then the leaves' chunks (with ``upward``: the leaves' chunks and then the interior chunks from
    the deepest depth)."""

    def level(i, carry):
      depth = self.num_levels - 1 - i if upward else i
      for rows in self.classes:
        carry = jax.lax.fori_loop(
          0,
          rows.level_chunks[depth],
          lambda c, carry, rows=rows: step(rows.chunk(depth, c), carry, rows.width),
          carry,
        )
      return carry

    def interior(carry):
      return jax.lax.fori_loop(0, self.num_levels, level, carry)

    def leaves(carry):
      for rows in self.classes:
        carry = jax.lax.fori_loop(
          0,
          rows.num_leaf_chunks,
          lambda c, carry, rows=rows: step(rows.leaf_chunk(c), carry, rows.width),
          carry,
        )
      return carry

    return interior(leaves(init)) if upward else leaves(interior(init))


def interior_chunk(k: int | None, num_actions: int) -> int:
  """The wide class's interior chunk C for a search whose expansions add the children of ``k`` of
  the game's ``num_actions`` actions (None: all of them): ``CHUNK``, or ``WIDE_CHUNK`` where
  k < all."""
  return CHUNK if k is None or k >= num_actions else WIDE_CHUNK


def narrow_width(tree: beliefs.BeliefTree) -> int | None:
  """S_n = min(S0, S1) where the split into a narrow and a wide class pays (:data:`SPLIT_FROM`),
  else None (one class)."""
  (S0, S1), (S, A) = tree.weight.shape[1:], tree.legal.shape[1:]
  narrow = min(S0, S1)
  return narrow if narrow < S and (S - narrow) * A >= SPLIT_FROM else None


def _rows_read(tree: beliefs.BeliefTree) -> chex.Array:
  """[P] int32: the rows of the [S, A] arrays a pass reads at each node: its own actor's infostates
  if it is an expanded player node, its parent actor's if its parent is a player node (the most
  of the two; 0 for neither)."""
  counts = jnp.array([*tree.weight.shape[1:], 0, 0], jnp.int32)  # by kind: S0, S1, none, none
  own = jnp.where(tree.expanded, counts[tree.kind], 0)
  parent = jnp.maximum(tree.parent, 0)
  above = jnp.where(tree.parent >= 0, counts[tree.kind[parent]], 0)
  return jnp.maximum(own, above)


def _row_class(
  tree: beliefs.BeliefTree,
  members: chex.Array,
  width: int,
  chunk: int,
  leaf_chunk: int,
  axis_name: str | None,
) -> RowClass:
  P = tree.capacity
  interior = members & tree.used & tree.expanded
  depth = jnp.where(interior, tree.depth, P)
  order = jnp.argsort(depth, stable=True).astype(jnp.int32)
  order = jnp.concatenate([jnp.where(interior[order], order, P), jnp.full(chunk, P, jnp.int32)])
  size = jnp.zeros(P + 1, jnp.int32).at[depth].add(1)[: P + 1].at[P].set(0)  # nodes per depth
  level_chunks = (size + chunk - 1) // chunk
  is_leaf = members & tree.used & ~tree.expanded
  leaves = jnp.nonzero(is_leaf, size=P + leaf_chunk, fill_value=P)[0].astype(jnp.int32)
  num_leaf_chunks = (is_leaf.sum(dtype=jnp.int32) + leaf_chunk - 1) // leaf_chunk
  if axis_name is not None:
    level_chunks = jax.lax.pmax(level_chunks, axis_name)
    num_leaf_chunks = jax.lax.pmax(num_leaf_chunks, axis_name)
  return RowClass(
    order=order,
    level_start=jnp.cumsum(size) - size,
    level_size=size,
    level_chunks=level_chunks,
    leaves=leaves,
    num_leaf_chunks=num_leaf_chunks,
    width=width,
  )


def level_order(
  tree: beliefs.BeliefTree,
  axis_name: str | None = None,
  chunk: int = CHUNK,
  split: bool | None = None,
) -> LevelOrder:
  """The :class:`LevelOrder` of the tree's used slots, the wide class in interior chunks of
  ``chunk`` nodes (``axis_name``: the vmap axis of a batch of searches, whose passes then all run
  the batch's largest numbers of chunks); ``split``: whether to put the nodes that read only the
  first S_n rows in a narrow class (None: where :func:`narrow_width` finds it pays; True needs
  S_n < S)."""
  S = tree.legal.shape[1]
  narrow = narrow_width(tree) if split is None else min(tree.weight.shape[1:]) if split else None
  if narrow is not None and narrow >= S:
    raise ValueError(f"level_order: split=True needs min(S0, S1) < S, got {tree.weight.shape[1:]}")
  interior = tree.used & tree.expanded
  levels = jnp.where(interior, tree.depth + 1, 0).max().astype(jnp.int32)
  if axis_name is not None:
    levels = jax.lax.pmax(levels, axis_name)
  if narrow is None:
    classes = (_row_class(tree, tree.used, S, chunk, LEAF_CHUNK, axis_name),)
  else:
    is_narrow = _rows_read(tree) <= narrow
    classes = (
      _row_class(tree, ~is_narrow, S, chunk, chunk, axis_name),
      _row_class(tree, is_narrow, narrow, NARROW_CHUNK, LEAF_CHUNK, axis_name),
    )
  return LevelOrder(classes=classes, num_levels=levels)
