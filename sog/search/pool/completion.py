"""A pool search's policy completed below its frontier, for exact evaluation of what it solved.

A search's average policy covers the public states it expanded. To evaluate it exactly on a game
small enough to enumerate, :func:`completed_policy` fills in the rest of the search root's subgame:
below every frontier leaf, a CFR+ solve of the leaf's subgame at the leaf's final ranges (trembled
as the exact oracle's, :func:`sog.search.leaf_models.solve_at_nodes`, all leaves in one run over the
enumerated tables). This is the "resolve" completion: not a safe re-solve (a solve at fixed ranges
may pick an equilibrium of the leaf's subgame that the opponent can exploit), so the completed
policy stays exploitable while the frontier holds leaves the search rarely reaches, and it reaches
CFR+'s level once the tree holds the whole subgame (SoG's Theorem 1 with an exact oracle).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import tree as tree_lib
from sog.search import leaf_models
from sog.search import tables as tables_lib
from sog.search.pool import belief_state
from sog.search.pool import beliefs

_solve_at_nodes = jax.jit(leaf_models.solve_at_nodes, static_argnums=(4, 5))


def completed_policy(
  tree: tree_lib.PublicTree,
  result: belief_state.BeliefSearchResult,
  iterations: int = 1000,
  tremble: float = 1e-3,
) -> np.ndarray:
  """The search's policy over its root's whole subgame ([N, S, A] float64 over ``tree``'s nodes):
  its average policy at the public states it expanded and, below each frontier leaf, a solve of
  ``iterations`` CFR+ iterations at the leaf's final ranges.

  ``tree`` is the enumerated tree rooted where the search's pool is (the game's tree for
  :meth:`~sog.search.pool.GTCFR.search`, ``game.tree.subtree(node)`` for a search from
  ``node``); ``result`` one search's result (not a batch's).
  """
  if iterations < 1:
    raise ValueError(f"completed_policy: iterations must be >= 1, got {iterations}")
  if np.ndim(result.focus) != 0:
    raise ValueError("completed_policy completes one search: index the batch's result first")
  pool = jax.device_get(result.tree)
  n = int(pool.num_nodes)
  nodes = beliefs.tree_nodes(pool, tree)
  expanded = np.asarray(pool.expanded[:n], bool)
  kind = np.asarray(pool.kind[:n])
  leaves = np.flatnonzero(~expanded & (kind != public_game.TERMINAL))
  ranges = np.asarray(result.ranges)
  tables = tables_lib.make_tables(tree, ranges.dtype)  # the search's precision
  uniform = policy_lib.uniform_policy(tree)
  policy = uniform.copy()
  if leaves.size:
    rows = np.zeros(pool.parent.shape[0], np.int64)  # padded to the pool's capacity: one
    rows[: leaves.size] = leaves  # compilation serves every search of a searcher
    below, _, _ = _solve_at_nodes(
      tables,
      jnp.asarray(nodes[rows]),
      jnp.asarray(ranges[rows]),
      jnp.arange(rows.size) < leaves.size,
      iterations,
      tremble,
    )
    policy[np.asarray(tables.inner_nodes)] = np.asarray(below, np.float64)
  interior = np.flatnonzero(expanded & (kind < public_game.CHANCE))
  policy[nodes[interior]] = np.asarray(result.average_policy, np.float64)[interior]
  sums = policy.sum(-1, keepdims=True)
  return np.where(sums > 0, policy / np.where(sums > 0, sums, 1.0), uniform)


def exploitability(
  tree: tree_lib.PublicTree,
  result: belief_state.BeliefSearchResult,
  iterations: int = 1000,
  root_ranges: np.ndarray | None = None,
) -> float:
  """Exact exploitability (float64) of :func:`completed_policy` in ``tree`` from ``root_ranges``
  (default: the tree's priors, so the game's exploitability for a search from the game's root)."""
  return best_response.evaluate(
    tree, completed_policy(tree, result, iterations), root_ranges
  ).exploitability
