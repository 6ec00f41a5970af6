"""A batch of independent searches split over local devices along its batch axis: the arguments
the batch shares (tables, a leaf model's parameters) replicated, a batch the device count does not
divide padded with copies of its last search, dropped from the results."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np


def mesh(devices: Sequence[jax.Device] | None = None) -> jax.sharding.Mesh:
  """A one-axis ("batch") mesh over ``devices`` (default: every local device)."""
  return jax.sharding.Mesh(np.asarray(devices or jax.local_devices()), ("batch",))


def over_devices(
  batch_mesh: jax.sharding.Mesh, batched_search: Callable, shared: tuple, batch: tuple
):
  """``batched_search(*shared, *batch)`` with ``batch``'s leading axis split over ``batch_mesh``
  (called as it is on a mesh of one device)."""
  devices = batch_mesh.size
  if devices == 1:
    return batched_search(*shared, *batch)
  count = jax.tree.leaves(batch)[0].shape[0]
  padding = -count % devices
  if padding:
    batch = jax.tree.map(lambda x: jnp.concatenate([x, jnp.repeat(x[-1:], padding, axis=0)]), batch)
  sharding, spec = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
  shared = jax.device_put(shared, sharding(batch_mesh, spec()))
  batch = jax.device_put(batch, sharding(batch_mesh, spec("batch")))
  result = batched_search(*shared, *batch)
  return jax.tree.map(lambda x: x[:count], result) if padding else result
