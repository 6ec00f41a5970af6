"""The CVPN loss: w_v * Huber(values) + w_p * KL(policy target || policy), masked (SoG, Materials
and Methods). Values are compared per unit of opponent range mass, the scale the network predicts
in."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import optax

from sog.nets import cvpn as cvpn_lib


@chex.dataclass(frozen=True)
class Targets:
  """values [B, 2, S] (library cfv units); policy [B, 2, S, A]; has_policy [B, 2, S] marks rows that
  carry a policy target (the acting player's valid infostates); has_value [B, 2, S] the entries that
  carry a value target (None: every valid infostate; a self-play policy or TD(1) example has
  fewer)."""

  values: chex.Array
  policy: chex.Array
  has_policy: chex.Array
  has_value: chex.Array | None = None


def loss_terms(
  prediction: cvpn_lib.Prediction, pbs: cvpn_lib.PBS, targets: Targets, huber_delta: float = 1.0
) -> tuple[chex.Array, chex.Array]:
  """(value loss, policy loss), each a mean over the entries that carry a target."""
  ranges = jnp.where(pbs.valid, pbs.ranges, 0.0)
  mass = cvpn_lib.opponent_mass(ranges)
  target = targets.values / jnp.maximum(mass, 1e-12)
  valid = pbs.valid if targets.has_value is None else pbs.valid & targets.has_value
  valid = valid.astype(target.dtype)
  huber = optax.huber_loss(prediction.normalized_values, target, delta=huber_delta)
  value_loss = (huber * valid).sum() / jnp.maximum(valid.sum(), 1.0)
  log_policy = jax.nn.log_softmax(prediction.logits, axis=-1)
  log_target = jnp.log(jnp.where(targets.policy > 0, targets.policy, 1.0))
  kl = jnp.where(pbs.policy_mask, targets.policy * (log_target - log_policy), 0.0).sum(-1)
  rows = targets.has_policy.astype(kl.dtype)
  policy_loss = (kl * rows).sum() / jnp.maximum(rows.sum(), 1.0)
  return value_loss, policy_loss
