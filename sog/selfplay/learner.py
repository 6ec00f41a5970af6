"""The trainer role of self-play: the replay buffer, CVPN train steps on minibatches drawn from it,
and the parameters it publishes to the actors and the solver every K steps (SoG, Algorithm 2)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.nets import config as nets_config
from sog.nets import cvpn as cvpn_lib
from sog.nets import losses
from sog.nets import train
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


def to_batch(examples: buffers.Examples) -> train.Batch:
  """The network's training batch for replay examples."""
  targets = losses.Targets(
    values=jnp.asarray(examples.values),
    policy=jnp.asarray(examples.policy),
    has_policy=jnp.asarray(examples.has_policy),
    has_value=jnp.asarray(examples.has_value),
  )
  return train.Batch(pbs=examples.pbs(), targets=targets)


class Learner:
  """The trainer with its replay buffer: examples come in (:meth:`add`); :meth:`train` takes up to
  ``steps`` train steps once the buffer holds ``selfplay.min_replay`` examples, while it can fill a
  batch with examples below their update limit; ``published`` are the parameters the actors and the
  solver use, refreshed every ``selfplay.publish_every`` steps (``published_step``: the step they
  were taken at). A self-play run holds one in its
  process, or as a Ray actor (:mod:`sog.selfplay.distributed`)."""

  def __init__(
    self,
    game: public_game.PublicGame,
    network: cvpn_lib.CVPN,
    optimizer: nets_config.OptimizerConfig,
    params,
    selfplay: config_lib.SelfPlayConfig,
  ):
    self.batch_size = selfplay.batch_size
    self.publish_every, self.min_replay = selfplay.publish_every, selfplay.min_replay
    self.trainer = train.Trainer(network, optimizer)
    self.state = self.trainer.init(params)
    self.published, self.published_step = self.state.params, self.step
    self.replay = buffers.ReplayBuffer(
      selfplay.replay_capacity,
      game.max_infostates,
      game.num_actions,
      game.encoding_size,
      selfplay.max_updates,
    )

  @property
  def step(self) -> int:
    return int(self.state.step)

  def add(self, examples: buffers.Examples) -> None:
    self.replay.add(examples)

  def train(self, steps: int, rng: np.random.Generator) -> list[dict[str, float]]:
    """Up to ``steps`` train steps (none below ``min_replay`` examples); the metrics of each step
    taken. ``rng`` draws the minibatches."""
    metrics = []
    if len(self.replay) < self.min_replay:
      return metrics
    for _ in range(steps):
      examples = self.replay.sample(self.batch_size, rng)
      if examples is None:
        break
      self.state, step_metrics = self.trainer.step(self.state, to_batch(examples))
      metrics.append(step_metrics)
      if self.step % self.publish_every == 0:
        self.published, self.published_step = self.state.params, self.step
    return [{k: float(v) for k, v in m.items()} for m in metrics]

  def replay_stats(self) -> dict[str, int]:
    """The replay buffer's fill and the examples in it that may still be drawn."""
    return {"replay": len(self.replay), "replay_available": self.replay.available()}

  def snapshot(self) -> tuple[train.TrainState, dict[str, np.ndarray]]:
    """The train state and the replay buffer's arrays, for a checkpoint."""
    return self.state, self.replay.state()

  def load(self, state, arrays: dict[str, np.ndarray]) -> None:
    """Continues from a saved train state and replay buffer (``arrays``,
    :meth:`ReplayBuffer.state`'s keys; others are ignored); the saved parameters are published."""
    self.state = state
    self.published, self.published_step = state.params, self.step
    self.replay.load(arrays)
