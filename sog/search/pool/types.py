"""What every pool of node slots answers (:class:`Slots`: mctx's ``Tree`` form, a fixed-capacity
pytree of node arrays whose first ``num_nodes`` slots hold nodes)."""

from __future__ import annotations

import chex
import jax.numpy as jnp


class Slots:
  """What a pool of P node slots answers from its ``parent`` [P] and ``num_nodes`` (the slots in
  use are the first ``num_nodes``)."""

  parent: chex.Array
  num_nodes: chex.Array

  @property
  def capacity(self) -> int:
    return int(self.parent.shape[-1])

  @property
  def used(self) -> chex.Array:
    """[P] bool: the slots holding nodes."""
    return jnp.arange(self.parent.shape[-1]) < self.num_nodes
