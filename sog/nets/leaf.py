"""A CFR leaf function backed by a CVPN: the values of a depth-limited tree's leaves in one batch."""

from __future__ import annotations

import numpy as np

from sog.games import tree as tree_lib
from sog.nets import cvpn as cvpn_lib
from sog.search import cfr


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
