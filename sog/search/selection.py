"""GT-CFR's action selection on an expansion walk: pi_select = 1/2 one-hot(argmax PUCT) + 1/2 the
average CFR policy, at one infostate (every engine's walks draw their actions here)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.search import cfr
from sog.search import types

TIE_TOLERANCE = 1e-6  # PUCT scores this close are a tie (float32 values of order 1)


def puct_action(
  score: chex.Array, prior: chex.Array, tie_break: str, rng: chex.PRNGKey
) -> chex.Array:
  """argmax_a ``score`` [A] (-inf where illegal), a tie going to the lowest action (``"action"``)
  or to the highest ``prior`` among the tied actions, uniformly at random among equal priors
  (``"prior"``; ``rng`` is used only then)."""
  if tie_break == "action":
    return jnp.argmax(score)
  tied = score >= score.max() - TIE_TOLERANCE
  prior = jnp.where(tied, prior, -jnp.inf)
  first = prior >= prior.max()
  return jax.random.choice(rng, score.shape[0], p=first / first.sum())


def pi_select(
  allowed: chex.Array,
  visits: chex.Array,
  prior: chex.Array,
  action_values: chex.Array,
  policy_sums: chex.Array,
  config: types.GTCFRConfig,
  rng: chex.PRNGKey,
) -> chex.Array:
  """An action drawn from pi_select at one infostate, from its rows [A]: the legal actions, visit
  counts N(s, a), prior P(s, a), PUCT's Q(s, a) (virtual loss already taken off) and the average
  policy's sums. PUCT is argmax_a Q + C P sqrt(sum_b N(s, b)) / (1 + N(s, a))."""
  u = config.puct_constant * prior * jnp.sqrt(visits.sum()) / (1.0 + visits)
  tie_rng = None
  if config.tie_break != "action":  # (the default draws no key: its walks are as they were)
    tie_rng, rng = jax.random.split(rng)
  best = puct_action(
    jnp.where(allowed, action_values + u, -jnp.inf), prior, config.tie_break, tie_rng
  )
  puct = jax.nn.one_hot(best, allowed.shape[0])
  average = cfr.regret_matching(policy_sums, allowed)
  action = jax.random.choice(rng, allowed.shape[0], p=0.5 * puct + 0.5 * average)
  return action.astype(jnp.int32)
