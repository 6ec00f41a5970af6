"""Which search a re-solve continues (SoG's continual re-solving, "Modified continual re-solving"):
a player's decision continues the search at its last decision above (``"own"``, what the agent and
self-play do) or at the last decision of either player above (``"nearest"``, a protocol option),
and how long a branch from the continued search's tree down to the decision can be.
"""

from __future__ import annotations

import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib

PREDECESSORS = ("own", "nearest")


def previous_decisions(tree: tree_lib.PublicTree, predecessor: str = "own") -> np.ndarray:
  """[N] int: for a decision node, the search a re-solve there continues (-1: none, a root search):
  the nearest strict ancestor where the same player acts (``"own"``: the searching player's last
  decision) or where either player acts (``"nearest"``)."""
  if predecessor not in PREDECESSORS:
    raise ValueError(f"predecessor must be one of {PREDECESSORS}, got {predecessor!r}")
  last = np.full(
    (tree.num_nodes, 2), -1, np.int64
  )  # per node: each player's last decision at/above
  nearest = np.full(tree.num_nodes, -1, np.int64)  # per node: the last decision at/above
  previous = np.full(tree.num_nodes, -1, np.int64)
  for n in range(tree.num_nodes):  # parents come first (breadth-first)
    above = last[tree.parent[n]] if tree.parent[n] >= 0 else np.full(2, -1)
    nearest_above = nearest[tree.parent[n]] if tree.parent[n] >= 0 else -1
    last[n], nearest[n] = above, nearest_above
    if tree.kind[n] in (public_game.PLAYER_0, public_game.PLAYER_1):
      previous[n] = above[tree.kind[n]] if predecessor == "own" else nearest_above
      last[n, tree.kind[n]] = nearest[n] = n
  return previous


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
