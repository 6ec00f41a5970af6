"""What every GT-CFR engine's expansion phase shares: pi_select = 1/2 one-hot(argmax PUCT) + 1/2 the
average CFR policy at one infostate (every walk draws its actions here), the actions an expansion
with k < all adds, a simulation's redraws, and the phase's ceil(c) simulations around an engine's
own walk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chex
import jax
import jax.numpy as jnp

from sog.search import batch_axis
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


Walk = Callable[..., tuple[Any, chex.Array, chex.Array]]
"""walk(state, pending, rng[, active]) -> (state, pending, grew): one expansion walk of an engine,
its record of the phase's walks so far (their pending visits, for the virtual loss), and whether
it added a public state; with ``active`` (a bool,
possibly traced; given where :func:`simulate` runs under a vmap axis) False the walk changes
nothing."""


def top_missing_actions(
  score: chex.Array, missing: chex.Array, expanded: chex.Array, selected: chex.Array, k: int
) -> chex.Array:
  """[A] bool: the up to k ``missing`` actions an expansion adds, by ``score`` [A] (the prior
  weighted by the actor's range), and at an ``expanded`` (interior) node first ``selected``, the
  action the walk left it through: SoG's ranking, shared by every engine."""
  score = jnp.where(missing, score, -jnp.inf)
  score = score.at[selected].set(jnp.where(expanded & missing[selected], jnp.inf, score[selected]))
  top_scores, top = jax.lax.top_k(score, k)
  return jnp.zeros(missing.shape, bool).at[top].set(top_scores > -jnp.inf)


def simulate(
  walk: Walk,
  complete: Callable[[Any], chex.Array],
  state,
  pending: Any,
  config: types.GTCFRConfig,
  rng: chex.PRNGKey,
  axis_name: str | None = None,
):
  """One expansion simulation: a walk, walked again from a new key while it adds nothing and
  ``complete(state)`` (the focus's subgame fully grown) does not hold, at most ``config.redraws``
  times.

  Under ``vmap`` with ``axis_name`` (the batch's axis) the redraws run while any search of the
  batch redraws, each walk told whether its search is still ``active``: a loop whose condition
  differs across the batch would select every array of the state at every redraw."""
  if not config.redraws:
    state, pending, _ = walk(state, pending, rng)
    return state, pending

  def redraws(state, grew, tries):
    return (tries == 0) | (~grew & (tries <= config.redraws) & ~complete(state))

  def again(carry):
    state, _, grew, tries, _ = carry
    going = redraws(state, grew, tries)
    return batch_axis.any_of(going, axis_name)

  def body(carry):
    state, pending, grew, tries, rng = carry
    rng, walk_rng = jax.random.split(rng)
    if axis_name is None:
      return (*walk(state, pending, walk_rng), tries + 1, rng)
    active = redraws(state, grew, tries)
    state, pending, grew_now = walk(state, pending, walk_rng, active)
    return state, pending, jnp.where(active, grew_now, grew), tries + active, rng

  state, pending, _, _, _ = jax.lax.while_loop(
    again, body, (state, pending, jnp.bool_(False), 0, rng)
  )
  return state, pending


def expansion_phase(
  walk: Walk,
  complete: Callable[[Any], chex.Array],
  state,
  pending: Any,
  config: types.GTCFRConfig,
  axis_name: str | None = None,
  simulations: int | chex.Array | None = None,
):
  """The phase's simulations from ``state.rng`` (its next key kept in ``state.rng``), the virtual
  losses counted from ``pending`` (the engine's record of the phase's walks, none yet when given:
  :class:`~sog.search.pool.belief_expand.Pending`); ``axis_name``: the vmap axis
  of a batch of searches (:func:`simulate`); ``simulations``: how many (possibly traced, at most
  ceil(c)), ceil(c) when not given."""
  rng, sims_rng = jax.random.split(state.rng)
  rngs = jax.random.split(sims_rng, config.simulations_in_phase)
  count = config.simulations_in_phase if simulations is None else simulations

  def one(i, carry):
    return simulate(walk, complete, *carry, config, rngs[i], axis_name)

  state, _ = jax.lax.fori_loop(0, count, one, (state, pending))
  return state.replace(rng=rng)
