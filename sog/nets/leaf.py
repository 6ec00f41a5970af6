"""The CVPN as a leaf model (:class:`~sog.search.leaf_models.LeafModel`): it values GT-CFR's
frontier and gives PUCT its prior, and values the leaves of depth-limited solves
(:class:`sog.search.Solver`) and mctx's AlphaZero search (:mod:`sog.search.alphazero`)."""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp

from sog.nets import cvpn as cvpn_lib
from sog.search import leaf_models


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
