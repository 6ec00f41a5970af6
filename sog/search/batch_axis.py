"""A vmapped batch of searches seen from one of them: the batch's most or any of a per-search value,
so that a loop count or branch predicate computed from it is the same for every search of the batch
(a ``fori_loop`` whose count differs across a batch, or a ``cond`` whose predicate does, becomes a
``select`` over everything it carries; with the batch's value the extra steps do nothing)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp


def most(x: chex.Array, axis_name: str | None) -> chex.Array:
  """``x`` (an int array) maximised over the batch's ``axis_name`` (``x`` itself for one search:
  ``axis_name`` None)."""
  return x if axis_name is None else jax.lax.pmax(x, axis_name)


def any_of(x: chex.Array, axis_name: str | None) -> chex.Array:
  """Whether ``x`` (a bool array) holds for any search of the batch's ``axis_name`` (``x`` for one
  search)."""
  return x if axis_name is None else most(x.astype(jnp.int32), axis_name) > 0
