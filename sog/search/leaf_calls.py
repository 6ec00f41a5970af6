"""A search's call of its leaf model on the frontier of its tree, and what it reads from the answer:
the batch sizes a pass chooses from (:class:`LeafBatches`), the call itself (:func:`call_frontier`),
the prior PUCT takes from the logits (:func:`prior_policy`) and the sample of queries self-play
keeps (:func:`sample_queries`).

The table search's and the belief pool's passes call here with their per-node arrays flattened over
their nodes (the table search's enumerated nodes, or the pool's slots); ``view`` is what the leaf
model reads about the nodes (``kind``, ``legal``, ``valid``, ``encoding`` at node indices: the
search tables, or the pool).
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

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


def leaf_batches(capacity: int, axis_name: str | None = None) -> LeafBatches:
  """The sizes a pass chooses from: the capacity bound is loose (it covers any tree s simulations
  could grow), so a pass evaluates the smallest batch that holds its frontier (the batch's largest
  under ``vmap``); about 1/16 and 1/4 of the bound, and the bound."""
  sizes = {max(8, -(-capacity // 16)), max(8, -(-capacity // 4)), capacity}
  return LeafBatches(tuple(sorted(size for size in sizes if size <= capacity)), axis_name)


class LeafCall(NamedTuple):
  """One pass's leaf-model call: the frontier's nodes [B] (its first rows in node order, B the
  largest batch size), their ranges [B, 2, S], the mask of real rows, the model's output (padded
  to B rows) and whether the model was called."""

  nodes: chex.Array
  ranges: chex.Array
  mask: chex.Array
  output: Any
  called: chex.Array


def call_frontier(
  view, apply, params, frontier: chex.Array, ranges: chex.Array, batches: LeafBatches, leaf_state
) -> tuple[chex.Array, LeafCall]:
  """The values [N, 2, S] of the ``frontier`` [N] nodes (zero elsewhere) from one leaf-model call
  at their ``ranges`` [N, 2, S] (``apply`` in the stateful form,
  :func:`sog.search.leaf_models.stateful_apply`, from ``leaf_state``), and the call.

  The call's batch is the smallest of ``batches.sizes`` that holds the frontier, and no call is
  made while the frontier is empty (a ``lax.switch``). Under ``vmap`` the branch is chosen from
  the largest frontier in the batch (``lax.pmax`` over ``batches.axis_name``), so the switch
  stays a branch and the batch makes one call of that size, or none. A deep re-solve grows its
  whole small subgame in a few simulations, and then its remaining passes would ask the leaf model
  about nothing."""
  sizes = batches.sizes
  full = batches.capacity
  count = frontier.sum()
  largest = count if batches.axis_name is None else jax.lax.pmax(count, batches.axis_name)
  # The frontier's first rows in node order, for the largest size; a smaller call takes a prefix
  # (the same rows), so only the call itself differs between the switch's branches.
  nodes = jnp.nonzero(frontier, size=full, fill_value=0)[0].astype(jnp.int32)
  mask = jnp.arange(full) < count
  batch = jnp.where(mask[:, None, None], ranges[nodes], 0.0)

  def at(size):
    def evaluate(_):
      out = apply(params, view, nodes[:size], batch[:size], mask[:size], leaf_state)
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
  placed = jnp.zeros_like(ranges).at[nodes].add(jnp.where(mask[:, None, None], out.values, 0.0))
  return placed, LeafCall(nodes, batch, mask, out, called)


def actor_rows(kind: chex.Array, per_player: chex.Array) -> chex.Array:
  """x[n, actor(n)] from x [n, 2, ...] (player 0's row at chance and terminal nodes)."""
  return jnp.where(
    (kind == 1).reshape(-1, *[1] * (per_player.ndim - 2)), per_player[:, 1], per_player[:, 0]
  )


def prior_policy(view, nodes: chex.Array, logits: chex.Array, temperature: float) -> chex.Array:
  """The actor's softmax(logits / T) over legal actions at ``nodes``, [L, S, A]."""
  rows = actor_rows(view.kind[nodes], logits)
  return jax.nn.softmax(jnp.where(view.legal[nodes], rows / temperature, -jnp.inf), axis=-1)


def sample_queries(sample: types.QuerySample, rng, nodes, ranges, mask) -> types.QuerySample:
  """``sample`` with a call's queries (``nodes``, ``ranges`` where ``mask``) offered: a uniform
  sample without replacement of every query so far, the ones with the smallest random keys."""
  size = sample.keys.shape[0]
  if not size:
    return sample
  draws = jax.random.uniform(rng, mask.shape, sample.keys.dtype)
  keys = jnp.concatenate([sample.keys, jnp.where(mask, draws, jnp.inf)])
  _, keep = jax.lax.top_k(-keys, size)
  return types.QuerySample(
    nodes=jnp.concatenate([sample.nodes, nodes])[keep],
    ranges=jnp.concatenate([sample.ranges, ranges])[keep],
    keys=keys[keep],
  )
