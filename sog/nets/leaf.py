"""The CVPN as a leaf model (:class:`~sog.search.leaf_models.LeafModel`): it values GT-CFR's
frontier and gives PUCT its prior, and values the leaves of depth-limited solves
(:class:`sog.search.Solver`); and as a pool search's leaf model
(:class:`~sog.search.pool.PoolLeafModel`) on a perfect-information
:class:`~sog.games.public_game.PublicGame`."""

from __future__ import annotations

from collections.abc import Sequence

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.nets import config as config_lib
from sog.nets import cvpn as cvpn_lib
from sog.search import leaf_models
from sog.search import pool


def cvpn_leaf_model(network: cvpn_lib.CVPN, params, game: str) -> leaf_models.LeafModel:
  """The CVPN as a leaf model: values and policy logits at any nodes of a search's tree (the belief
  pool's slots in GT-CFR's searches, the search tables' nodes in ReBeL's solves).

  ``game`` is the canonical name of the game the network is for (``Game.name``); searchers on
  another game refuse the model (:func:`sog.search.leaf_models.check_model_game`).
  """

  def apply(net_params, tables, nodes, ranges, mask):
    del mask  # padding rows are evaluated like any other and ignored by the search
    acts = tables.kind[nodes][:, None] == jnp.arange(2)[None, :]
    valid = tables.valid[nodes]
    policy_mask = (acts[:, :, None] & valid)[..., None] & tables.legal[nodes][:, None]
    pbs = cvpn_lib.PBS(
      encoding=tables.encoding[nodes], ranges=ranges, valid=valid, policy_mask=policy_mask
    )
    prediction = network.apply({"params": net_params}, pbs)
    return leaf_models.LeafOutput(prediction.values, prediction.logits)

  return leaf_models.stateless(apply, params, game)


def ensemble_leaf_model(models: Sequence[leaf_models.LeafModel]) -> leaf_models.LeafModel:
  """The mean of several networks of one game as one leaf model (networks of separate runs): the
  values are averaged (so they stay zero-sum) and so are the policy logits (a normalised geometric
  mean of the policies) and, where every model plays below its leaves (the exact oracle), their
  policy sums; each model carries its own state. ``ValueError`` for no model or models of other
  games."""
  models = tuple(models)
  if not models:
    raise ValueError("an ensemble needs at least one leaf model")
  games = {model.game for model in models}
  if len(games) != 1:
    raise ValueError(f"an ensemble's models must value one game, got {sorted(map(str, games))}")

  def init(tables, start):
    return tuple(model.init(tables, start) for model in models)

  def apply(params, tables, nodes, ranges, mask, state):
    outs = [
      model.apply(p, tables, nodes, ranges, mask, s)
      for model, p, s in zip(models, params, state, strict=True)
    ]
    sums = [out.policy_sums for out in outs]
    return leaf_models.LeafOutput(
      sum(out.values for out in outs) / len(outs),
      sum(out.logits for out in outs) / len(outs),
      None if any(s is None for s in sums) else sum(sums) / len(sums),
      tuple(out.state for out in outs),
    )

  return leaf_models.LeafModel(init, apply, tuple(model.params for model in models), games.pop())


def pool_pbs(encoding: chex.Array, mover: chex.Array, legal: chex.Array) -> cvpn_lib.PBS:
  """The PBS batch of perfect-information states (one infostate per player, both reached): their
  encodings [B, E], movers [B] (TERMINAL where none) and legal actions [B, A]."""
  batch = encoding.shape[0]
  acts = mover[:, None] == jnp.arange(2)[None, :]
  return cvpn_lib.PBS(
    encoding=encoding,
    ranges=jnp.ones((batch, 2, 1)),
    valid=jnp.ones((batch, 2, 1), bool),
    policy_mask=acts[:, :, None, None] & legal[:, None, None, :],
  )


def states_pbs(game: public_game.PublicGame, states) -> cvpn_lib.PBS:
  """:func:`pool_pbs` of a batch of a game's states."""
  return pool_pbs(
    jax.vmap(game.encode)(states),
    jax.vmap(game.kind)(states),
    jax.vmap(lambda s: game.legal(s)[0])(states),
  )


def make_pool_network(
  game: public_game.PublicGame, config: config_lib.NetworkConfig = config_lib.NetworkConfig()
) -> cvpn_lib.CVPN:
  """The CVPN of a perfect-information :class:`~sog.games.public_game.PublicGame` (S = 1)."""
  return cvpn_lib.CVPN(num_infostates=1, num_actions=game.num_actions, config=config)


def init_pool_params(network: cvpn_lib.CVPN, game: public_game.PublicGame, rng: jax.Array):
  return network.init(rng, states_pbs(game, jax.tree.map(lambda x: x[None], game.root())))["params"]


def cvpn_pool_leaf_model(network: cvpn_lib.CVPN, params, game: str) -> pool.PoolLeafModel:
  """The CVPN as a pool search's leaf model: both players' values (per unit of the opponent's reach,
  both reaches 1) and the mover's logits at each state."""

  def apply(net_params, game_, states, mask):
    del mask
    pbs = states_pbs(game_, states)
    prediction = network.apply({"params": net_params}, pbs)
    mover = jax.vmap(game_.kind)(states)
    logits = jnp.where(
      (mover == 1)[:, None], prediction.logits[:, 1, 0], prediction.logits[:, 0, 0]
    )
    return pool.PoolLeafOutput(prediction.values[..., 0], logits)

  return pool.PoolLeafModel(apply, params, game=game)
