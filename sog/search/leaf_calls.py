"""A search's call of its leaf model on the frontier of its tree, and what it reads from the answer:
the batch sizes a pass chooses from (:class:`LeafBatches`), the call itself (:func:`call_frontier`),
the prior PUCT takes from the logits (:func:`prior_policy`) and the sample of queries self-play
keeps (:func:`sample_queries`).

The belief pool's passes call here with their per-node arrays flattened over the pool's slots;
``view`` is what the leaf model reads about the nodes (``kind``, ``legal``, ``valid``, ``encoding``
at slots: the pool).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from sog.search import batch_axis
from sog.search import types

#: The vmap axis of a batch of searches: a pass sizes its leaf-model call by the batch's largest
#: frontier (``lax.pmax`` over it), so the call's branch is chosen once for the batch.
SEARCH_AXIS = "searches"


class LeafBatches(NamedTuple):
  """The leaf-model batch sizes a search's passes choose from (ascending; the last the frontier
  bound) and, for a batch of searches under ``vmap``, its axis name (None: one search)."""

  sizes: tuple[int, ...]
  axis_name: str | None = None

  @property
  def capacity(self) -> int:
    return self.sizes[-1]


#: The smallest leaf-model batch, and the ratio of each batch size to the one before.
SMALLEST_BATCH, BATCH_RATIO = 8, 4


def leaf_batches(capacity: int, axis_name: str | None = None) -> LeafBatches:
  """The sizes a pass chooses from: the frontier is mostly far smaller than its bound (which covers
  any tree the search could hold), so a pass evaluates the smallest batch that holds its frontier
  (the batch's largest under ``vmap``): 8, 32, 128, ... below the bound (a size within
  ``BATCH_RATIO`` rows of the bound left out), and the bound. A frontier of more than 8 rows then
  pays for fewer than ``BATCH_RATIO`` times its rows, whatever the bound."""
  sizes = [capacity]
  size = SMALLEST_BATCH
  while size <= capacity - BATCH_RATIO:
    sizes.insert(-1, size)
    size *= BATCH_RATIO
  return LeafBatches(tuple(sizes), axis_name)


class LeafCall(NamedTuple):
  """One pass's leaf-model call as the branch that made it sees it: the frontier's nodes [B] (its
  first rows in node order, B the call's batch size), their ranges [B, 2, S], the mask of real
  rows and the model's output (B rows)."""

  nodes: chex.Array
  ranges: chex.Array
  mask: chex.Array
  output: Any


class Called(NamedTuple):
  """What a pass keeps of its leaf-model call: the frontier's values [N, 2, S] (elsewhere those it
  was given), the caller's ``record`` carry, the model's state after the call, and whether the
  model was called."""

  values: chex.Array
  record: Any
  leaf_state: Any
  called: chex.Array


def call_frontier(
  view,
  apply,
  params,
  frontier: chex.Array,
  ranges: chex.Array,
  batches: LeafBatches,
  leaf_state,
  record: Callable[[Any, LeafCall], Any] = lambda carry, call: carry,
  carry: Any = (),
  values: chex.Array | None = None,
) -> Called:
  """The values [N, 2, S] of the ``frontier`` [N] nodes from one leaf-model call at their
  ``ranges`` [N, 2, S] (``apply``, a :class:`~sog.search.leaf_models.LeafModel`'s, from
  ``leaf_state``), with ``record(carry, call)`` folded in: set in ``values`` [N, 2, S] at the
  frontier, its other rows kept (None: zeros; a search passes an array it keeps between passes,
  so that no pass zeroes N rows).

  The call's batch is the smallest of ``batches.sizes`` that holds the frontier, and no call is
  made while the frontier is empty. Under ``vmap`` the size is chosen from the largest frontier in
  the batch (``lax.pmax`` over ``batches.axis_name``), so the choice stays a branch and the batch
  makes one call of that size, or none. ``record`` runs inside the branch on the call at its batch
  size (the query sample a pass takes from it), so no work is sized by the
  frontier's bound. A deep re-solve grows its whole small subgame in a few simulations, and then
  its remaining passes would ask the leaf model about nothing.

  The branch is one two-way ``lax.cond`` per size (call at that size, or pass the result on), in
  sequence, rather than one ``lax.switch`` over the sizes: XLA hands each branch of a many-way
  conditional its own copy of the operands, so a switch would copy the ``record`` carry twice a
  pass, where a two-way cond that passes its operand on updates it in place."""
  sizes = batches.sizes
  count = frontier.sum()
  largest = batch_axis.most(count, batches.axis_name)
  # The frontier's first rows in node order; a smaller call takes a prefix (the same rows).
  nodes = jnp.nonzero(frontier, size=batches.capacity, fill_value=0)[0].astype(jnp.int32)

  def at(size):
    def evaluate(before: Called) -> Called:
      rows = nodes[:size]
      mask = jnp.arange(size) < count
      batch = jnp.where(mask[:, None, None], ranges[rows], 0.0)
      out = apply(params, view, rows, batch, mask, before.leaf_state)
      carry = record(before.record, LeafCall(rows, batch, mask, out))
      written = jnp.where(mask, rows, ranges.shape[0])  # the padding's rows dropped
      values = before.values.at[written].set(out.values.astype(ranges.dtype), mode="drop")
      return Called(values, carry, out.state, jnp.bool_(True))

    return evaluate

  tier = jnp.minimum(jnp.searchsorted(jnp.asarray(sizes), largest), len(sizes) - 1)
  chosen = jnp.where(largest > 0, tier, -1)
  values = jnp.zeros_like(ranges) if values is None else values
  called = Called(values, carry, leaf_state, jnp.bool_(False))
  for index, size in enumerate(sizes):
    called = jax.lax.cond(chosen == index, at(size), lambda before: before, called)
  return called


def actor_rows(kind: chex.Array, per_player: chex.Array) -> chex.Array:
  """x[n, actor(n)] from x [n, 2, ...] (player 0's row at chance and terminal nodes)."""
  return jnp.where(
    (kind == 1).reshape(-1, *[1] * (per_player.ndim - 2)), per_player[:, 1], per_player[:, 0]
  )


def prior_policy(view, nodes: chex.Array, logits: chex.Array, temperature: float) -> chex.Array:
  """The actor's softmax(logits / T) over legal actions at ``nodes``, [L, S, A]."""
  rows = actor_rows(view.kind[nodes], logits)
  legal = view.legal[nodes]
  return jax.nn.softmax(jnp.where(legal, rows / temperature, -jnp.inf), axis=-1)


def sample_queries(sample: types.QuerySample, rng, nodes, ranges, mask) -> types.QuerySample:
  """``sample`` with a call's queries (``nodes``, ``ranges`` where ``mask``) offered: a uniform
  sample without replacement of every query so far, the ones with the smallest random keys.

  The kept queries are found from the keys alone and only their ranges are read: the call's
  [B, 2, S] are never concatenated to the sample's (a copy of the whole batch each pass)."""
  size = sample.keys.shape[0]
  if not size:
    return sample
  draws = jax.random.uniform(rng, mask.shape, sample.keys.dtype)
  keys = jnp.concatenate([sample.keys, jnp.where(mask, draws, jnp.inf)])
  _, keep = jax.lax.top_k(-keys, size)
  held, offered = keep < size, jnp.maximum(keep - size, 0)

  def kept(old: chex.Array, new: chex.Array) -> chex.Array:
    from_sample = held.reshape(-1, *[1] * (old.ndim - 1))
    return jnp.where(from_sample, old[jnp.minimum(keep, size - 1)], new[offered])

  return types.QuerySample(
    nodes=kept(sample.nodes, nodes), ranges=kept(sample.ranges, ranges), keys=keys[keep]
  )
