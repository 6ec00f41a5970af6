"""The counterfactual value-and-policy network (CVPN): f(beta) = (v0[S], v1[S], logits0[S, A],
logits1[S, A]) for a public belief state beta = (public state, r0, r1).

Input: the public state's encoding and both ranges, each normalised to sum 1; a range of mass 0 (a
player who does not reach the state) reads as zeros, or with ``NetworkConfig.unreached_range =
"uniform"`` as the uniform range over the valid infostates (with one infostate per player, S = 1,
the range then reads 1 at any reach: a perfect-information network sees only the state). Values
are predicted per unit of opponent range mass and scaled back by it (our cfvs are linear in the
opponent's range), so a leaf reached with tiny probability still gets values of the right shape.
The values are made exactly zero-sum (r0 . v0 + r1 . v1 = 0). Invalid infostates get value 0;
policy logits are masked to the acting player's legal actions at its valid infostates.
"""

from __future__ import annotations

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.nets import config as config_lib

_MASKED_LOGIT = -1e9
_ACTIVATIONS = {"relu": nn.relu, "gelu": nn.gelu, "silu": nn.silu, "tanh": jnp.tanh}


@chex.dataclass(frozen=True)
class PBS:
  """A batch of public belief states and the masks of their public states.

  encoding [B, E], ranges [B, 2, S], valid [B, 2, S] bool, policy_mask [B, 2, S, A] bool (where a
  player acts, at valid infostates, on legal actions).
  """

  encoding: chex.Array
  ranges: chex.Array
  valid: chex.Array
  policy_mask: chex.Array


@chex.dataclass(frozen=True)
class Prediction:
  values: chex.Array  # [B, 2, S], in the library's cfv units
  normalized_values: chex.Array  # [B, 2, S], per unit of opponent range mass
  logits: chex.Array  # [B, 2, S, A], masked


def node_masks(tree: tree_lib.PublicTree) -> tuple[np.ndarray, np.ndarray]:
  """valid [N, 2, S] and policy_mask [N, 2, S, A] of every node of a tree."""
  acts = tree.kind[:, None] == np.arange(2)[None, :]
  policy_mask = (acts[:, :, None] & tree.valid)[..., None] & tree.legal[:, None]
  return tree.valid, policy_mask


def pbs_of(encoding, kind, valid, legal, ranges) -> PBS:
  """The PBS batch of public states given by their facts: ``encoding`` [B, E], ``kind`` [B] (who
  acts), ``valid`` [B, 2, S], the actor's ``legal`` [B, S, A], with ``ranges`` [B, 2, S]."""
  valid, legal = jnp.asarray(valid, bool), jnp.asarray(legal, bool)
  acts = jnp.asarray(kind)[:, None] == jnp.arange(2)[None, :]
  return PBS(
    encoding=jnp.asarray(encoding, jnp.float32),
    ranges=jnp.asarray(ranges, jnp.float32),
    valid=valid,
    policy_mask=(acts[:, :, None] & valid)[..., None] & legal[:, None],
  )


def pbs_at(tree: tree_lib.PublicTree, nodes: np.ndarray, ranges: np.ndarray) -> PBS:
  """The PBS batch for ``nodes`` of ``tree`` with ``ranges`` [B, 2, S]."""
  return pbs_of(
    tree.encoding[nodes], tree.kind[nodes], tree.valid[nodes], tree.legal[nodes], ranges
  )


def opponent_mass(ranges: chex.Array) -> chex.Array:
  """[..., 2, 1]: the range mass of each player's opponent."""
  return ranges.sum(-1, keepdims=True)[..., ::-1, :]


class CVPN(nn.Module):
  """See the module docstring; ``num_infostates`` is S and ``num_actions`` A of the game."""

  num_infostates: int
  num_actions: int
  config: config_lib.NetworkConfig = config_lib.NetworkConfig()

  @nn.compact
  def __call__(self, pbs: PBS) -> Prediction:
    S, A = self.num_infostates, self.num_actions
    ranges = jnp.where(pbs.valid, pbs.ranges, 0.0)
    mass = ranges.sum(-1, keepdims=True)
    if self.config.unreached_range == "uniform":
      uniform = pbs.valid / jnp.maximum(pbs.valid.sum(-1, keepdims=True), 1)
      normalized = jnp.where(
        mass > 0, ranges / jnp.where(mass > 0, mass, 1.0), uniform.astype(ranges.dtype)
      )
    else:
      normalized = ranges / jnp.maximum(mass, 1e-12)
    x = jnp.concatenate([pbs.encoding, normalized.reshape(*normalized.shape[:-2], 2 * S)], axis=-1)
    activation = _ACTIVATIONS[self.config.activation]
    h = nn.Dense(self.config.width, name="embed")(x)
    for i in range(self.config.depth):
      y = nn.LayerNorm(name=f"norm_{i}")(h) if self.config.layer_norm else h
      y = activation(nn.Dense(self.config.width, name=f"dense_{i}")(y))
      h = h + y if self.config.residual else y
    if self.config.layer_norm:
      h = nn.LayerNorm(name="norm_out")(h)
    normalized_values = nn.Dense(2 * S, name="values")(h).reshape(*h.shape[:-1], 2, S)
    normalized_values = jnp.where(pbs.valid, normalized_values, 0.0)
    # Zero-sum output (as DeepStack's network): shift both players' values by half the residual of
    # r0 . v0 + r1 . v1 so that it is exactly 0, as it is for every true counterfactual value.
    residual = (normalized * normalized_values).sum((-2, -1), keepdims=True) / 2
    normalized_values = jnp.where(pbs.valid, normalized_values - residual, 0.0)
    logits = nn.Dense(2 * S * A, name="policy")(h).reshape(*h.shape[:-1], 2, S, A)
    return Prediction(
      values=normalized_values * opponent_mass(ranges),
      normalized_values=normalized_values,
      logits=jnp.where(pbs.policy_mask, logits, _MASKED_LOGIT),
    )


def make_network(
  game: public_game.PublicGame, config: config_lib.NetworkConfig = config_lib.NetworkConfig()
) -> CVPN:
  """The CVPN for ``game``'s S and A."""
  return CVPN(num_infostates=game.max_infostates, num_actions=game.num_actions, config=config)


def init_params(network: CVPN, game: public_game.PublicGame, rng: jax.Array):
  """Parameters for ``network`` on ``game``'s input sizes (initialised at its root's PBS, from the
  game's functions: nothing is enumerated; one compiled program, not an XLA compilation per layer
  and operation)."""
  root, ranges = game.root(), public_game.prior_ranges(game)
  example = pbs_of(
    game.encode(root)[None],
    game.kind(root)[None],
    ranges[None] > 0,
    game.legal(root)[None],
    ranges[None],
  )
  return jax.jit(network.init)(rng, example)["params"]
