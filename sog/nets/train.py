"""Training the CVPN: optimiser from config, a jitted train step that is data-parallel over devices.

The batch is split over a one-axis device mesh ("data") and the train state replicated; under
``jit`` XLA inserts the gradient all-reduce. With one device this is an ordinary jitted step.
"""

from __future__ import annotations

from collections.abc import Callable

import chex
import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec
import numpy as np
import optax

from sog.nets import config as config_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import losses


@chex.dataclass(frozen=True)
class TrainState:
  params: chex.ArrayTree
  opt_state: chex.ArrayTree
  step: chex.Array


@chex.dataclass(frozen=True)
class Batch:
  pbs: cvpn_lib.PBS
  targets: losses.Targets


def learning_rate(config: config_lib.OptimizerConfig) -> optax.Schedule:
  """alpha_t = alpha_0 * d ** (t / T_decay), smooth (SoG table S2)."""
  return optax.exponential_decay(
    config.learning_rate, transition_steps=config.decay_steps, decay_rate=config.decay_rate
  )


def make_optimizer(config: config_lib.OptimizerConfig) -> optax.GradientTransformation:
  schedule = learning_rate(config)
  if config.name == "sgd":
    update = optax.sgd(schedule, momentum=config.momentum)
  else:
    update = optax.adam(schedule)
  return optax.chain(optax.clip_by_global_norm(config.clip_norm), update)


def init_state(params: chex.ArrayTree, optimizer: optax.GradientTransformation) -> TrainState:
  return TrainState(params=params, opt_state=optimizer.init(params), step=jnp.zeros((), jnp.int32))


def make_loss_fn(network: cvpn_lib.CVPN, config: config_lib.OptimizerConfig) -> Callable:
  """loss(params, batch) -> (total, {"value": ..., "policy": ...})."""

  def loss_fn(params, batch: Batch):
    prediction = network.apply({"params": params}, batch.pbs)
    value, policy = losses.loss_terms(prediction, batch.pbs, batch.targets, config.huber_delta)
    total = config.value_weight * value + config.policy_weight * policy
    return total, {"loss": total, "value_loss": value, "policy_loss": policy}

  return loss_fn


class Trainer:
  """Holds the network, optimiser and device mesh; ``step`` runs one data-parallel train step.

  Args:
    devices: the devices to split each batch over (default: all local devices). The batch size must
      be a multiple of their number.
  """

  def __init__(
    self, network: cvpn_lib.CVPN, config: config_lib.OptimizerConfig, devices: list | None = None
  ):
    self.network = network
    self.config = config
    self.optimizer = make_optimizer(config)
    self.mesh = Mesh(np.asarray(devices or jax.local_devices()), ("data",))
    self.replicated = NamedSharding(self.mesh, PartitionSpec())
    self.sharded = NamedSharding(self.mesh, PartitionSpec("data"))
    loss_fn = make_loss_fn(network, config)

    def step(state: TrainState, batch: Batch) -> tuple[TrainState, dict]:
      (_, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params, batch)
      updates, opt_state = self.optimizer.update(grads, state.opt_state, state.params)
      params = optax.apply_updates(state.params, updates)
      return TrainState(params=params, opt_state=opt_state, step=state.step + 1), metrics

    self._step = jax.jit(step)

  @property
  def num_devices(self) -> int:
    return self.mesh.size

  def init(self, params: chex.ArrayTree) -> TrainState:
    return jax.device_put(init_state(params, self.optimizer), self.replicated)

  def shard(self, batch: Batch) -> Batch:
    size = jax.tree_util.tree_leaves(batch)[0].shape[0]
    if size % self.num_devices:
      raise ValueError(f"batch size {size} must be a multiple of the {self.num_devices} devices")
    return jax.device_put(batch, self.sharded)

  def step(self, state: TrainState, batch: Batch) -> tuple[TrainState, dict]:
    return self._step(state, self.shard(batch))
