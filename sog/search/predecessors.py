"""How long a re-solve's branch can be (SoG's continual re-solving, "Modified continual
re-solving"): from the tree of the search it continues, at the player's own last decision above
(``"own"``, what the agent and self-play do) or either player's (``"nearest"``, a protocol option;
:func:`sog.games.tree.previous_decisions` finds it), down to the decision.
"""

from __future__ import annotations

import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib


def branch_depth(tree: tree_lib.PublicTree, predecessor: str = "own") -> int:
  """The longest branch a protocol's re-solving search on the belief pool plans, from s_prev down
  to the decision it searches (what :class:`~sog.search.pool.GTCFR`'s ``branch_depth`` must
  hold): a first search starts at the game's root; a later one at the deepest public state of its
  predecessor's tree on the way, at least a child of the predecessor (each search expands its
  focus)."""
  previous = tree_lib.previous_decisions(tree, predecessor)
  decisions = np.flatnonzero(tree.kind < public_game.CHANCE)
  above = np.where(previous[decisions] >= 0, tree.depth[previous[decisions]] + 1, 0)
  return int(max(0, (tree.depth[decisions] - above).max(initial=0)))
