"""Solving full games and subgames rooted at any public belief state with public-tree CFR+.

``solve(tree, iterations)`` runs CFR+ on a whole (sub)tree;
``solve_subgame(game, node, ranges, ...)`` solves the subgame at beta = (public state, r0, r1),
optionally depth-limited: the leaves are then valued by a
:class:`~sog.search.leaf_models.LeafModel`, the interface GT-CFR's frontier uses too
(``exact_leaf_model`` for CFR-D with a perfect value oracle, ``sog.nets.cvpn_leaf_model`` for the
CVPN), called once per pass on all leaves as public belief states of the game's subgame below the
tree's root.
"""

from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import propagation
from sog.games import public_game
from sog.games import registry
from sog.games import tree as tree_lib
from sog.search import cfr
from sog.search import leaf_models
from sog.search import tables as tables_lib


@dataclasses.dataclass(frozen=True)
class SolveResult:
  """What a solve returns (all NumPy float64).

  Attributes:
    average_policy: [N, S, A] the average policy over the solved (sub)tree's nodes.
    root_values: [2, S] root counterfactual values of the average policy (per unit of own range).
    root_values_history: [T, 2, S] root values of each iteration's current policy, if recorded.
    iterations: CFR+ iterations run.
  """

  average_policy: np.ndarray
  root_values: np.ndarray
  root_values_history: np.ndarray | None
  iterations: int


class Solver:
  """CFR+ on one public (sub)tree, compiled once and run in chunks of iterations.

  Args:
    tree: the public tree (a depth-limited one needs ``leaf``).
    updates: ``"alternating"`` (OpenSpiel's CFR+, best for full games) or ``"simultaneous"``
      (GT-CFR).
    leaf: the leaf model valuing the tree's L depth-limit leaves, [L, 2, S] from their ranges, each
      call from its initial state (a warm-started model runs cold here).
  """

  def __init__(
    self,
    tree: tree_lib.PublicTree,
    updates: str = "alternating",
    leaf: leaf_models.LeafModel | None = None,
    dtype=jnp.float32,
  ):
    self.tree = tree
    self.updates = cfr.check_updates(updates)
    self.leaves = cfr.LeafLayout(tree)
    if self.leaves.count and leaf is None:
      raise ValueError(f"the tree has {self.leaves.count} depth-limit leaves: pass a leaf model")
    if leaf is not None:
      leaf_models.check_model_game(leaf, tree.name, "Solver")
    self.leaf = leaf
    self._leaf_params = None
    if self.leaves.count:
      below = _leaf_subgame(tree)
      self._leaf_params = (leaf.params, below.tables, below.leaves)
    self.levels = cfr.device_levels(tree, dtype)
    self.dtype = dtype
    # The iteration count is traced (one compilation serves every chunk size) unless per-iteration
    # root values are recorded, which needs a static scan length.
    self._run = jax.jit(self._loop)
    self._run_recorded = jax.jit(self._recorded_loop, static_argnames=("iterations",))
    self._root_values = jax.jit(self._average_root_values)

  def init(self) -> cfr.CFRState:
    return cfr.init_state(self.levels)

  def compile(self, root_ranges: jax.Array) -> float:
    """Compiles the iteration loop ahead of time; returns the seconds it took."""
    start = time.perf_counter()
    self._run = self._run.lower(
      self.levels, self.init(), root_ranges, jnp.int32(1), self._leaf_params
    ).compile()
    return time.perf_counter() - start

  def _leaf_values(self, leaf_params) -> cfr.LeafValuesFn | None:
    if leaf_params is None:
      return self.leaves.values_fn(None)

    def leaf_fn(ranges):
      params, tables, nodes = leaf_params
      mask, state = jnp.ones(nodes.shape, bool), self.leaf.init(tables, None)
      return self.leaf.apply(params, tables, nodes, ranges, mask, state).values

    return self.leaves.values_fn(leaf_fn)

  def _loop(self, levels, state, root_ranges, iterations, leaf_params):
    return cfr.run(
      levels, state, root_ranges, iterations, self.updates, self._leaf_values(leaf_params)
    )

  def _recorded_loop(self, levels, state, root_ranges, leaf_params, iterations):
    return cfr.run(
      levels,
      state,
      root_ranges,
      iterations,
      self.updates,
      self._leaf_values(leaf_params),
      record_root_values=True,
    )

  def _average_root_values(self, levels, state, root_ranges, leaf_params):
    return cfr.average_root_values(levels, state, root_ranges, self._leaf_values(leaf_params))

  def root_ranges(self, ranges: np.ndarray | None) -> jax.Array:
    ranges = (
      self.tree.root_ranges if ranges is None else best_response.check_ranges(self.tree, ranges)
    )
    return jnp.asarray(ranges, self.dtype)

  def run(
    self,
    state: cfr.CFRState,
    root_ranges: jax.Array,
    iterations: int,
    record_root_values: bool = False,
  ):
    """Runs ``iterations`` more iterations; returns (state, per-iteration root values or None)."""
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    if record_root_values:
      return self._run_recorded(
        self.levels, state, root_ranges, self._leaf_params, iterations=iterations
      )
    return self._run(self.levels, state, root_ranges, jnp.int32(iterations), self._leaf_params)

  def average_policy(self, state: cfr.CFRState) -> np.ndarray:
    """The average policy as one float64 array [N, S, A] over the tree's nodes."""
    return tree_policy(self.tree, cfr.average_policy(self.levels, state))

  def root_values(self, state: cfr.CFRState, root_ranges: jax.Array) -> np.ndarray:
    return np.asarray(
      self._root_values(self.levels, state, root_ranges, self._leaf_params), np.float64
    )


def tree_policy(tree: tree_lib.PublicTree, inner_policy: jax.Array) -> np.ndarray:
  """A policy [M, S, A] over the tree's inner nodes (level by level, as :mod:`cfr` keeps them) as
  one float64 array [N, S, A] over all its nodes, rows renormalised, terminal rows uniform."""
  inner_nodes = np.concatenate(
    [
      start + np.arange(level.inner)
      for start, level in zip(tree.level_starts[:-1], tree.levels, strict=True)
    ]
  )
  policy = policy_lib.uniform_policy(tree)
  inner = np.asarray(inner_policy, np.float64)
  policy[inner_nodes] = inner / inner.sum(-1, keepdims=True)
  return policy


def solve(
  game_or_tree: registry.Game | tree_lib.PublicTree,
  iterations: int,
  root_ranges: np.ndarray | None = None,
  updates: str = "alternating",
  leaf: leaf_models.LeafModel | None = None,
  record_root_values: bool = False,
) -> SolveResult:
  """Runs CFR+ for ``iterations`` on a (sub)tree from ``root_ranges`` (default: the priors)."""
  tree = game_or_tree.tree if isinstance(game_or_tree, registry.Game) else game_or_tree
  solver = Solver(tree, updates, leaf)
  ranges = solver.root_ranges(root_ranges)
  state, history = solver.run(solver.init(), ranges, iterations, record_root_values)
  return SolveResult(
    average_policy=solver.average_policy(state),
    root_values=solver.root_values(state, ranges),
    root_values_history=None if history is None else np.asarray(history, np.float64),
    iterations=iterations,
  )


def subgame_tree(
  game: registry.Game, node: int, max_depth: int | None = None
) -> tree_lib.PublicTree:
  """The subtree of ``game`` at public state ``node`` (cut ``max_depth`` levels down if given)."""
  if game.tree.kind[node] == public_game.TERMINAL:
    raise ValueError(f"public state {node} is terminal: there is no subgame to solve")
  return game.tree.subtree(node, max_depth)


def solve_subgame(
  game: registry.Game,
  node: int,
  ranges: np.ndarray,
  iterations: int,
  max_depth: int | None = None,
  leaf: leaf_models.LeafModel | None = None,
  updates: str = "simultaneous",
  record_root_values: bool = False,
) -> SolveResult:
  """Solves the subgame at the public belief state (``node``, ranges [2, S])."""
  return solve(
    subgame_tree(game, node, max_depth), iterations, ranges, updates, leaf, record_root_values
  )


def stack_levels(
  trees: list[tree_lib.PublicTree], reference: list[tree_lib.PublicTree] | None = None
) -> cfr.Levels:
  """The level tables of several trees, padded to common sizes and stacked on a leading axis.

  Padding nodes are inert: terminal, no valid infostate, zero payoff and edge weights, appended
  after each level's real nodes so that real indices keep their meaning. Sizes and a level's static
  facts (the union) come from ``reference`` (default: ``trees``), a superset of ``trees``: batches
  stacked against one reference share their shapes, hence one compilation.
  """
  reference = trees if reference is None else reference
  stacked = []
  for d in range(max(t.num_levels for t in reference)):
    present = [t.levels[d] for t in reference if d < t.num_levels]
    size = max(level.size for level in present)
    arrays = {
      name: np.stack(
        [_padded(t.levels[d] if d < t.num_levels else None, present[0], name, size) for t in trees]
      )
      for name in _ARRAY_FIELDS
    }
    stacked.append(
      tree_lib.Level(
        **arrays,
        actors=tuple(sorted({p for level in present for p in level.actors})),
        inner=size,
        inner_terminals=True,
        same_infostates=all(level.same_infostates for level in present),
      )
    )
  return tuple(stacked)


_ARRAY_FIELDS = (
  "kind",
  "valid",
  "legal",
  "payoff",
  "is_leaf",
  "down_index",
  "down_weight",
  "child_index",
  "up_infostate",
  "up_weight",
)


def _padded(
  level: tree_lib.Level | None, template: tree_lib.Level, name: str, size: int
) -> np.ndarray:
  base = getattr(template, name)
  filler = np.zeros((size - (0 if level is None else level.size), *base.shape[1:]), base.dtype)
  if name == "kind":
    filler[:] = public_game.TERMINAL
  elif name == "legal":
    filler[:] = True
  return filler if level is None else np.concatenate([getattr(level, name), filler])


class _LeafSubgame(NamedTuple):
  """The game's full subgame below a depth-limited tree's root, where its leaves are valued (by a
  leaf model, or by the solves that complete a policy)."""

  tree: tree_lib.PublicTree
  tables: tables_lib.SearchTables
  position: np.ndarray  # [game nodes] each game node's node in ``tree`` (-1 outside it)
  leaves: jax.Array  # [L] int32, the limited tree's leaves (breadth-first) as nodes of ``tree``


def _leaf_subgame(limited_tree: tree_lib.PublicTree) -> _LeafSubgame:
  game_tree = registry.load(limited_tree.name).tree
  full = game_tree.subtree(int(limited_tree.game_node[0]))
  position = np.full(game_tree.num_nodes, -1)
  position[full.game_node] = np.arange(full.num_nodes)
  leaves = jnp.asarray(position[limited_tree.game_node[limited_tree.is_leaf]], jnp.int32)
  return _LeafSubgame(full, tables_lib.make_tables(full), position, leaves)


_solve_at_nodes = jax.jit(leaf_models.solve_at_nodes, static_argnums=(4, 5))


def complete_policy(
  limited_tree: tree_lib.PublicTree,
  trunk_policy: np.ndarray,
  root_ranges: np.ndarray,
  iterations: int,
  tremble: float = 1e-3,
) -> tuple[tree_lib.PublicTree, np.ndarray]:
  """Completes a depth-limited solution into a policy on the whole subgame, for exact evaluation.

  Inside ``limited_tree`` the policy is ``trunk_policy``; below every leaf it is a CFR+ solve
  (``iterations``, trembled as :func:`~sog.search.leaf_models.exact_leaf_model`) of that leaf's
  subgame at the leaf's ranges under ``trunk_policy``, all leaves in one run. Returns the full
  subgame tree and the policy [N, S, A] on it.
  """
  full, tables, position, leaves = _leaf_subgame(limited_tree)
  ranges = propagation.reach_down(
    limited_tree.levels,
    propagation.split_levels(limited_tree, trunk_policy),
    best_response.check_ranges(limited_tree, root_ranges),
    np,
  )
  leaf_ranges = np.concatenate(
    [r[np.flatnonzero(level.is_leaf)] for r, level in zip(ranges, limited_tree.levels, strict=True)]
  )
  below, _, _ = _solve_at_nodes(
    tables,
    leaves,
    jnp.asarray(leaf_ranges, jnp.float32),
    jnp.ones(leaves.shape, bool),
    iterations,
    tremble,
  )
  below = np.asarray(below, np.float64)
  policy = policy_lib.uniform_policy(full)
  policy[np.asarray(tables.inner_nodes)] = below / below.sum(-1, keepdims=True)
  trunk = ~limited_tree.is_leaf
  policy[position[limited_tree.game_node[trunk]]] = trunk_policy[trunk]
  return full, policy
