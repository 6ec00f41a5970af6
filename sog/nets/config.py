"""Typed, validated configuration of the CVPN and its optimiser (defaults: SoG's Scotland Yard
column of table S2, scaled down where noted)."""

from __future__ import annotations

import dataclasses

ACTIVATIONS = ("relu", "gelu", "silu", "tanh")
UNREACHED_RANGES = ("zeros", "uniform")
OPTIMIZERS = ("sgd", "adam")


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
  """MLP trunk: ``depth`` layers of ``width`` units (SoG: 6 x 512 ReLU for Scotland Yard; ReBeL:
  GeLU with LayerNorm), optionally residual.

  ``unreached_range`` is what the network reads for a range of mass 0 (a player who does not reach
  the public state; the values are scaled by the opponent's mass, so only that player's own values
  and both players' logits depend on it): ``"zeros"`` (the normalised range is all zeros) or
  ``"uniform"`` (the uniform range over the valid infostates; with one infostate per player the
  input is then the same at any reach, as for pgx's networks, trained on states alone).
  """

  width: int = 256
  depth: int = 4
  activation: str = "relu"
  residual: bool = True
  layer_norm: bool = True
  unreached_range: str = "zeros"

  def __post_init__(self):
    if self.width < 1 or self.depth < 1:
      raise ValueError(f"network width and depth must be >= 1, got {self.width} x {self.depth}")
    if self.activation not in ACTIVATIONS:
      raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
    if self.unreached_range not in UNREACHED_RANGES:
      raise ValueError(
        f"unreached_range must be one of {UNREACHED_RANGES}, got {self.unreached_range!r}"
      )


@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
  """alpha_t = learning_rate * decay_rate ** (t / decay_steps) (SoG table S2), gradient clipping,
  and the loss weights w_v (values, Huber) and w_p (policy, KL)."""

  name: str = "adam"
  learning_rate: float = 1e-3
  decay_steps: int = 2_000_000
  decay_rate: float = 0.5
  momentum: float = 0.9
  clip_norm: float = 1.0
  value_weight: float = 1.0
  policy_weight: float = 0.05
  huber_delta: float = 1.0

  def __post_init__(self):
    if self.name not in OPTIMIZERS:
      raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.name!r}")
    if self.learning_rate <= 0 or self.decay_steps < 1 or not 0 < self.decay_rate <= 1:
      raise ValueError("learning_rate must be > 0, decay_steps >= 1 and decay_rate in (0, 1]")
    if (
      self.clip_norm <= 0
      or self.value_weight < 0
      or self.policy_weight < 0
      or self.huber_delta <= 0
    ):
      raise ValueError("clip_norm and huber_delta must be > 0, loss weights >= 0")
