"""The trainer role of self-play: CVPN train steps on minibatches from the replay buffer, and the
parameters it publishes to the actors and the solver every K steps (SoG, Algorithm 2)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sog.games import tree as tree_lib
from sog.nets import config as nets_config
from sog.nets import cvpn as cvpn_lib
from sog.nets import losses
from sog.nets import train
from sog.selfplay import buffers


def to_batch(tree: tree_lib.PublicTree, examples: buffers.Examples) -> train.Batch:
  """The network's training batch for replay examples."""
  pbs = cvpn_lib.pbs_at(tree, examples.nodes, examples.ranges)
  targets = losses.Targets(values=jnp.asarray(examples.values), policy=jnp.asarray(examples.policy),
                           has_policy=jnp.asarray(examples.has_policy),
                           has_value=jnp.asarray(examples.has_value))
  return train.Batch(pbs=pbs, targets=targets)


class Learner:
  """Holds the train state; ``train`` takes up to ``steps`` train steps while the replay buffer can
  fill a batch with examples below their update limit; ``published`` are the parameters the actors
  and the solver use, refreshed every ``publish_every`` steps."""

  def __init__(self, tree: tree_lib.PublicTree, network: cvpn_lib.CVPN,
               optimizer: nets_config.OptimizerConfig, params, batch_size: int, publish_every: int):
    self.tree, self.batch_size, self.publish_every = tree, batch_size, publish_every
    self.trainer = train.Trainer(network, optimizer)
    self.state = self.trainer.init(params)
    self.published = self.state.params

  @property
  def step(self) -> int:
    return int(self.state.step)

  def train(self, replay: buffers.ReplayBuffer, steps: int,
            rng: np.random.Generator) -> list[dict[str, float]]:
    """Up to ``steps`` train steps; the metrics of each step taken."""
    metrics = []
    for _ in range(steps):
      examples = replay.sample(self.batch_size, rng)
      if examples is None:
        break
      self.state, step_metrics = self.trainer.step(self.state, to_batch(self.tree, examples))
      metrics.append(step_metrics)
      if self.step % self.publish_every == 0:
        self.published = self.state.params
    return [{k: float(v) for k, v in m.items()} for m in metrics]
