"""Which search a re-solve continues (SoG's continual re-solving, "Modified continual re-solving"):
a player's decision continues the search at its last decision above (``"own"``, what the agent and
self-play do) or at the last decision of either player above (``"nearest"``, a protocol option),
and how long a branch from the continued search's tree down to the decision can be.
"""

from __future__ import annotations

import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib

#: (defined with the trees, where the games' conformance checks read them too)
PREDECESSORS = tree_lib.PREDECESSORS
previous_decisions = tree_lib.previous_decisions


def branch_depth(tree: tree_lib.PublicTree, predecessor: str = "own") -> int:
  """The longest branch a protocol's re-solving search on the belief pool plans, from s_prev down
  to the decision it searches (what :class:`~sog.search.pool.GTCFR`'s ``branch_depth`` must
  hold): a first search starts at the game's root; a later one at the deepest public state of its
  predecessor's tree on the way, at least a child of the predecessor (each search expands its
  focus)."""
  previous = previous_decisions(tree, predecessor)
  decisions = np.flatnonzero(tree.kind < public_game.CHANCE)
  above = np.where(previous[decisions] >= 0, tree.depth[previous[decisions]] + 1, 0)
  return int(max(0, (tree.depth[decisions] - above).max(initial=0)))
