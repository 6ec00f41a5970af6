"""The CVPN as a leaf model (:class:`~sog.search.leaf_models.LeafModel`): it values GT-CFR's frontier
and gives PUCT its prior, and values the leaves of depth-limited solves (:class:`sog.search.Solver`)."""

from __future__ import annotations

import jax.numpy as jnp

from sog.nets import cvpn as cvpn_lib
from sog.search import leaf_models


def cvpn_leaf_model(network: cvpn_lib.CVPN, params, game: str) -> leaf_models.LeafModel:
  """The CVPN as a GT-CFR leaf model: values and policy logits at any nodes of the search tables.

  ``game`` is the canonical name of the game the network is for (``Game.name``); searchers on another
  game refuse the model (:func:`sog.search.leaf_models.check_model_game`).
  """

  def apply(net_params, tables, nodes, ranges, mask):
    del mask  # padding rows are evaluated like any other and ignored by the search
    acts = tables.kind[nodes][:, None] == jnp.arange(2)[None, :]
    valid = tables.valid[nodes]
    policy_mask = (acts[:, :, None] & valid)[..., None] & tables.legal[nodes][:, None]
    pbs = cvpn_lib.PBS(encoding=tables.encoding[nodes], ranges=ranges, valid=valid,
                       policy_mask=policy_mask)
    prediction = network.apply({"params": net_params}, pbs)
    return leaf_models.LeafOutput(prediction.values, prediction.logits)

  return leaf_models.LeafModel(apply, params, game=game)
