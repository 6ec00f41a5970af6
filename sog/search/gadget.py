"""The safe re-solving gadget: how a re-solving search sets the opponent's range at its root.

Re-solving a subgame from a summary (the searcher's range r_p and the opponent's counterfactual
values v_o at the subgame's root, from an earlier search) must not let the opponent gain in the
subgame what the earlier strategy denied them. The auxiliary game of Burch et al. (2014) puts a
choice before the subgame at each opponent infostate I: Terminate, receiving v_o(I), or Follow into
the subgame. Solving it by CFR, the opponent's range entering the subgame is its Follow probability
f(I), learned by regret-matching+ on the two choices from the Follow value (its counterfactual value
at the root in the latest pass) against the Terminate value.

DeepStack (Moravcik et al. 2017) and SoG ("Modified continual re-solving", alpha = 0.5) mix the
opponent's range of the earlier search into the gadget's. Both must be ranges in the library's units
(own reach times the chance weight p_o(I) of the infostate, :func:`sog.games.tree.prior_weights`): f
is an own-reach probability, so the gadget's range is f(I) p_o(I), and

  r_o(I) = alpha f(I) p_o(I) + (1 - alpha) r_prev(I).

alpha = 1 is the gadget alone (the safety guarantee); alpha = 0 is unsafe re-solving with the
earlier ranges. (Mixing f itself with r_prev, whose scale is p_o <= 1/6 per card in Leduc, would
weigh the gadget far above alpha.)

The Follow value often ties the Terminate value exactly: Terminate pays the earlier search's value
at the same public state, which the first passes here recompute with the same leaf model (an exact
oracle's solve, a frontier leaf's network value). Which of two engines' sums comes out a rounding
error above the other would then decide f(I) (1/2 against 1), so :func:`update` counts a Follow
value within :data:`TIE_EPS` machine epsilons (relative) of the Terminate value as a tie, which
moves neither regret.

Everything here is a pure function of fixed-shape arrays; a search holds a :class:`Gadget` (the
summary's side) and a :class:`GadgetState` (the regrets) and calls :func:`opponent_range` before a
pass and :func:`update` after it.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp

#: A Follow value within this many machine epsilons of the Terminate value (relative to their
#: size) is a tie: 2.3e-13 in float64, 1.2e-4 in float32.
TIE_EPS = 1024


@chex.dataclass(frozen=True)
class Gadget:
  """The auxiliary game at a re-solving root.

  Attributes:
    enabled: scalar bool; when False the root ranges are used as given (a first search, or unsafe
      re-solving).
    player: scalar int32, the opponent o whose range the gadget makes.
    terminate_values: [S] v_o(I) from the summary: what Terminate pays at each opponent infostate.
    previous_range: [S] r_prev, the opponent's range at the root in the earlier search.
    prior: [S] p_o(I), the chance weight of each opponent infostate at the root: the gadget's range
      is f(I) p_o(I).
    alpha: scalar, the weight of the gadget's range in the mix.
  """

  enabled: chex.Array
  player: chex.Array
  terminate_values: chex.Array
  previous_range: chex.Array
  prior: chex.Array
  alpha: chex.Array


@chex.dataclass(frozen=True)
class GadgetState:
  """Regret-matching+ regrets of (Follow, Terminate) per opponent infostate, and the linearly
  weighted sum of the mixed ranges played (their average is the opponent's range the search
  reports)."""

  regrets: chex.Array  # [2, S]: row 0 Follow, row 1 Terminate
  range_sum: chex.Array  # [S]
  weight_sum: chex.Array  # scalar


def disabled(num_infostates: int, dtype=jnp.float32) -> Gadget:
  """A gadget that leaves the root ranges alone."""
  zeros = jnp.zeros(num_infostates, dtype)
  return Gadget(
    enabled=jnp.bool_(False),
    player=jnp.int32(1),
    terminate_values=zeros,
    previous_range=zeros,
    prior=zeros,
    alpha=jnp.asarray(1.0, dtype),
  )


def init_state(gadget: Gadget) -> GadgetState:
  zeros = jnp.zeros_like(gadget.terminate_values)
  return GadgetState(
    regrets=jnp.stack([zeros, zeros]), range_sum=zeros, weight_sum=jnp.zeros((), zeros.dtype)
  )


def follow_probability(state: GadgetState) -> chex.Array:
  """[S] f(I): regret matching on (Follow, Terminate); 1/2 where both regrets are 0."""
  total = state.regrets.sum(0)
  return jnp.where(total > 0, state.regrets[0] / jnp.where(total > 0, total, 1.0), 0.5)


def opponent_range(gadget: Gadget, state: GadgetState, valid: chex.Array) -> chex.Array:
  """[S] alpha f p_o + (1 - alpha) r_prev over the opponent's valid infostates ``valid`` [S]."""
  gadget_range = follow_probability(state) * gadget.prior
  mixed = gadget.alpha * gadget_range + (1.0 - gadget.alpha) * gadget.previous_range
  return jnp.where(valid, mixed, 0.0)


def root_ranges(
  gadget: Gadget, state: GadgetState, ranges: chex.Array, valid: chex.Array
) -> chex.Array:
  """[2, S] the root ranges of the next pass: ``ranges`` with the opponent's row from the gadget
  (unchanged when the gadget is disabled). ``valid`` [2, S] is the root's valid infostates."""
  return _with_opponent_row(
    gadget, ranges, opponent_range(gadget, state, valid[gadget.player]), gadget.enabled
  )


def _with_opponent_row(
  gadget: Gadget, ranges: chex.Array, row: chex.Array, applies: chex.Array
) -> chex.Array:
  return jnp.where((applies & (jnp.arange(2) == gadget.player))[:, None], row[None, :], ranges)


def update(
  gadget: Gadget,
  state: GadgetState,
  follow_values: chex.Array,
  valid: chex.Array,
  weight: chex.Array,
) -> GadgetState:
  """One regret-matching+ step from the opponent's counterfactual values at the root [S] (the Follow
  values of the pass just made; one within :data:`TIE_EPS` epsilons of Terminate's is a tie), and
  the pass's range added to the average with ``weight``."""
  terminate = gadget.terminate_values
  tolerance = (
    TIE_EPS * jnp.finfo(terminate.dtype).eps * (jnp.abs(follow_values) + jnp.abs(terminate))
  )
  follow_values = jnp.where(
    jnp.abs(follow_values - terminate) <= tolerance, terminate, follow_values
  )
  f = follow_probability(state)
  expected = f * follow_values + (1.0 - f) * gadget.terminate_values
  gains = jnp.stack([follow_values - expected, gadget.terminate_values - expected])
  regrets = jnp.where(valid[None, :], jnp.maximum(state.regrets + gains, 0.0), 0.0)
  played = opponent_range(gadget, state, valid)
  return GadgetState(
    regrets=jnp.where(gadget.enabled, regrets, state.regrets),
    range_sum=state.range_sum + weight * played,
    weight_sum=state.weight_sum + weight,
  )


def average_range(
  gadget: Gadget, state: GadgetState, ranges: chex.Array, valid: chex.Array
) -> chex.Array:
  """[2, S] root ranges, the opponent's row averaged over the passes (for the final summary)."""
  mean = state.range_sum / jnp.maximum(state.weight_sum, 1e-30)
  return _with_opponent_row(
    gadget,
    ranges,
    jnp.where(valid[gadget.player], mean, 0.0),
    gadget.enabled & (state.weight_sum > 0),
  )
