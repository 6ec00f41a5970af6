"""AlphaZero's search as SoG's perfect-information peer: mctx's PUCT MCTS (``mctx.muzero_policy``)
or Gumbel MuZero (``mctx.gumbel_muzero_policy``) on a perfect-information
:class:`~sog.games.public_game.PublicGame`, with the environment as the model and a leaf model
(:class:`~sog.search.leaf_models.LeafModel`, the one GT-CFR searches with) as the network, so SoG's
GT-CFR (k = 1) and MCTS run with the same network at the same number of simulations (the paper's
chess and Go comparison at our scale).

Two-player zero-sum in mctx's convention: a node's value is the mover's, the reward of a move is the
mover's utility when it ends the game, and the discount is -1 (the next node's value is the
opponent's) until the game ends, then 0.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx

from sog.games import public_game
from sog.games import registry
from sog.search import leaf_models

ALGORITHMS = ("muzero", "gumbel_muzero")
_MASKED = -1e9  # (not -inf: mctx mixes logits arithmetically)


class StateFacts(NamedTuple):
  """The facts a leaf model (:class:`~sog.search.leaf_models.LeafModel`) reads at its nodes
  (``kind``, ``legal``, ``valid``, ``encoding``), of a batch of states [B] of a perfect-information
  game: row b is state b, so the model values states outside a search's pool."""

  kind: chex.Array  # [B]
  legal: chex.Array  # [B, 1, A]
  valid: chex.Array  # [B, 2, 1]
  encoding: chex.Array  # [B, E]


def state_facts(game: public_game.PublicGame, states: chex.ArrayTree) -> StateFacts:
  """The :class:`StateFacts` of ``states`` [B, ...]."""
  kind = jax.vmap(game.kind)(states).astype(jnp.int32)
  return StateFacts(
    kind=kind,
    legal=jax.vmap(game.legal)(states),
    valid=jnp.ones((kind.shape[0], 2, 1), bool),
    encoding=jax.vmap(game.encode)(states),
  )


def _evaluate(game: public_game.PublicGame, leaf_model: leaf_models.LeafModel, params, states):
  """The mover's value [B] and masked prior logits [B, A] of a batch of states (both players'
  ranges 1: their values are the expected utilities)."""
  facts = state_facts(game, states)
  rows = jnp.arange(facts.kind.shape[0])
  ranges = jnp.ones((rows.size, 2, 1))
  live = facts.kind != public_game.TERMINAL
  out = leaf_model.apply(params, facts, rows, ranges, live, leaf_model.init(facts, None))
  mover = jnp.clip(facts.kind, 0, 1)
  mover_value = jnp.where(mover == 1, out.values[:, 1, 0], out.values[:, 0, 0])
  logits = jnp.where((mover == 1)[:, None], out.logits[:, 1, 0], out.logits[:, 0, 0])
  return (
    jnp.where(live, mover_value, 0.0),
    jnp.where(facts.legal[:, 0], logits, _MASKED),
  )


def _recurrent_fn(game: public_game.PublicGame, leaf_model: leaf_models.LeafModel):
  def recurrent_fn(params, rng, action, states):
    del rng
    kind = jax.vmap(game.kind)(states)
    children = jax.vmap(game.child)(states, action)
    ends = (jax.vmap(game.kind)(children) == public_game.TERMINAL) & (kind != public_game.TERMINAL)
    utility = jax.vmap(lambda s: game.utility(s)[0, 0])(children)
    reward = jnp.where(ends, jnp.where(kind == 1, -utility, utility), 0.0)
    value, logits = _evaluate(game, leaf_model, params, children)
    over = jax.vmap(game.kind)(children) == public_game.TERMINAL
    return mctx.RecurrentFnOutput(
      reward=reward, discount=jnp.where(over, 0.0, -1.0), prior_logits=logits, value=value
    ), children

  return recurrent_fn


def search(
  game: public_game.PublicGame,
  leaf_model: leaf_models.LeafModel,
  params,
  rng: chex.PRNGKey,
  roots: chex.ArrayTree,
  simulations: int,
  algorithm: str = "muzero",
) -> mctx.PolicyOutput:
  """mctx's search from a batch of states ``roots`` [B, ...]: ``action_weights`` [B, A] (the visit
  distribution, or Gumbel MuZero's improved policy) and ``action`` [B]. No Dirichlet noise (play,
  not training); mctx's default constants otherwise."""
  if algorithm not in ALGORITHMS:
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
  value, logits = _evaluate(game, leaf_model, params, roots)
  root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=roots)
  invalid = ~jax.vmap(lambda s: game.legal(s)[0])(roots)
  recurrent_fn = _recurrent_fn(game, leaf_model)
  if algorithm == "muzero":
    return mctx.muzero_policy(
      params, rng, root, recurrent_fn, simulations, invalid_actions=invalid, dirichlet_fraction=0.0
    )
  return mctx.gumbel_muzero_policy(
    params, rng, root, recurrent_fn, simulations, invalid_actions=invalid
  )


class AlphaZero:
  """mctx's search of one game and leaf model, compiled once: ``search(rng, roots)``, batched."""

  def __init__(
    self,
    game: public_game.PublicGame | registry.Game,
    leaf_model: leaf_models.LeafModel,
    simulations: int,
    algorithm: str = "muzero",
  ):
    if algorithm not in ALGORITHMS:
      raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if not isinstance(simulations, int) or simulations < 1:
      raise ValueError(f"simulations must be an int >= 1, got {simulations!r}")
    game = game.public_game if isinstance(game, registry.Game) else game
    if not public_game.is_perfect_information(game):
      raise ValueError(
        f"AlphaZero searches a perfect-information game (a pgx game, Connect Four, tic-tac-toe); "
        f"{game.name} has private information"
      )
    leaf_models.check_model_game(leaf_model, game.name, "AlphaZero")
    self.game, self.leaf_model, self.simulations = game, leaf_model, simulations
    self._search = jax.jit(
      functools.partial(search, game, leaf_model, simulations=simulations, algorithm=algorithm)
    )

  def search(self, rng: chex.PRNGKey, roots: chex.ArrayTree, params=None) -> mctx.PolicyOutput:
    params = self.leaf_model.params if params is None else params
    return self._search(params, rng, roots)
