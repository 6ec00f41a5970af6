"""The CVPN as a leaf evaluator: for depth-limited solves of a fixed tree (a ``LeafFunction``) and for
GT-CFR's growing tree (a ``LeafModel``, which also gives PUCT its prior)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sog.games import tree as tree_lib
from sog.nets import cvpn as cvpn_lib
from sog.search import cfr
from sog.search import leaf_models


def cvpn_leaf_function(network: cvpn_lib.CVPN, params, tree: tree_lib.PublicTree) -> cfr.LeafFunction:
  """``LeafFunction`` valuing ``tree``'s leaves (breadth-first) with ``network`` at ``params``.

  The leaves' encodings and masks travel with the parameters, so the solve compiles them as inputs.
  """
  leaves = np.flatnonzero(tree.is_leaf)
  if leaves.size == 0:
    raise ValueError("the tree has no depth-limit leaves")
  template = cvpn_lib.pbs_at(tree, leaves, np.zeros((leaves.size, 2, tree.max_infostates)))

  def apply(leaf_params, ranges):
    net_params, pbs = leaf_params
    return network.apply({"params": net_params}, pbs.replace(ranges=ranges)).values

  return cfr.LeafFunction(apply, (params, template))


def cvpn_leaf_model(network: cvpn_lib.CVPN, params) -> leaf_models.LeafModel:
  """The CVPN as a GT-CFR leaf model: values and policy logits at any nodes of the search tables."""

  def apply(net_params, tables, nodes, ranges, mask):
    del mask  # padding rows are evaluated like any other and ignored by the search
    acts = tables.kind[nodes][:, None] == jnp.arange(2)[None, :]
    valid = tables.valid[nodes]
    policy_mask = (acts[:, :, None] & valid)[..., None] & tables.legal[nodes][:, None]
    pbs = cvpn_lib.PBS(encoding=tables.encoding[nodes], ranges=ranges, valid=valid,
                       policy_mask=policy_mask)
    prediction = network.apply({"params": net_params}, pbs)
    return leaf_models.LeafOutput(prediction.values, prediction.logits)

  return leaf_models.LeafModel(apply, params)
