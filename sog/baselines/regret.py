"""How cumulative regrets and the average policy grow from iteration to iteration: the CFR family.

Discounted CFR (Brown & Sandholm 2019, "Solving imperfect-information games via discounted regret
minimization") names the family DCFR(alpha, beta, gamma): on iteration t, after the instantaneous
regrets are added, the positive cumulative regrets are multiplied by t^alpha / (t^alpha + 1), the
negative ones by t^beta / (t^beta + 1), and the iteration's contribution to the average policy is
weighed by t^gamma. Its members here:

  * ``cfr``: no discount (alpha = beta = inf), uniform average (gamma = 0); Zinkevich et al. 2007.
  * ``cfr_plus``: regrets floored at 0 after each update, linear average (gamma = 1); Tammelin 2014.
  * ``linear``: Linear CFR, DCFR(1, 1, 1): iteration t weighs t in both; Pluribus' blueprint
    discount.
  * ``dcfr``: DCFR(3/2, 0, 2), the setting Brown & Sandholm recommend.

The same update serves the full-game solvers (:mod:`sog.baselines.tabular`, exact instantaneous
regrets) and Monte Carlo CFR (:mod:`sog.baselines.mccfr`, sampled ones). Regrets are per unit of own
range, as everywhere in sog (a positive rescaling per infostate of OpenSpiel's), which every scheme
here preserves, so the policies equal OpenSpiel's iteration by iteration.
"""

from __future__ import annotations

import dataclasses
import math

import chex
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class Accumulation:
  """DCFR(alpha, beta, gamma), optionally with CFR+'s floor (see the module docstring).

  Attributes:
    alpha: the positive regrets' discount exponent (``math.inf``: no discount).
    beta: the negative regrets' discount exponent (``math.inf``: no discount).
    gamma: the average policy weighs iteration t by t^gamma (0: uniform, 1: linear).
    floor: regrets are clipped at 0 after each update (regret-matching+).
  """

  alpha: float = math.inf
  beta: float = math.inf
  gamma: float = 0.0
  floor: bool = False

  def __post_init__(self):
    for name in ("alpha", "beta", "gamma"):
      value = getattr(self, name)
      if not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"Accumulation.{name} must be a number, got {value!r}")
    if not 0 <= self.gamma < math.inf:
      raise ValueError(f"Accumulation.gamma must be finite and >= 0, got {self.gamma}")


ACCUMULATIONS = {
  "cfr": Accumulation(),
  "cfr_plus": Accumulation(gamma=1.0, floor=True),
  "linear": Accumulation(alpha=1.0, beta=1.0, gamma=1.0),
  "dcfr": Accumulation(alpha=1.5, beta=0.0, gamma=2.0),
}


def accumulation(scheme: str | Accumulation) -> Accumulation:
  """The scheme a name stands for (``ValueError`` naming the valid ones), or the scheme itself."""
  if isinstance(scheme, Accumulation):
    return scheme
  if scheme not in ACCUMULATIONS:
    raise ValueError(f"unknown regret accumulation {scheme!r}; valid: {sorted(ACCUMULATIONS)}")
  return ACCUMULATIONS[scheme]


def _discount(t: chex.Array, exponent: float) -> chex.Array | float:
  """t^e / (t^e + 1); 1 for e = inf (no discount)."""
  if exponent == math.inf:
    return 1.0
  power = t**exponent
  return power / (power + 1.0)


def accumulate(
  scheme: Accumulation,
  regrets: chex.Array,
  policy_sums: chex.Array,
  instant: chex.Array,
  reach_policy: chex.Array,
  acting: chex.Array,
  t: chex.Array,
) -> tuple[chex.Array, chex.Array]:
  """One player's update on iteration t (1-based) where ``acting`` [M, S, A] allows.

  Args:
    regrets, policy_sums: the cumulative regrets and average-policy sums [M, S, A].
    instant: the iteration's instantaneous regrets (exact or sampled) [M, S, A].
    reach_policy: own range times the current policy [M, S, A], the average policy's increment.
    t: the iteration, a float scalar.
  """
  updated = regrets + instant
  if scheme.floor:
    updated = jnp.maximum(updated, 0.0)
  if scheme.alpha != math.inf or scheme.beta != math.inf:
    updated = updated * jnp.where(
      updated >= 0, _discount(t, scheme.alpha), _discount(t, scheme.beta)
    )
  weight = 1.0 if scheme.gamma == 0 else (t if scheme.gamma == 1 else t**scheme.gamma)
  return (
    jnp.where(acting, updated, regrets),
    jnp.where(acting, policy_sums + weight * reach_policy, policy_sums),
  )
