"""ReBeL's play as one policy over the whole public tree, evaluated exactly.

ReBeL plays a game as a chain of subgames: solve the subgame at the current PBS, play pi^t of a
random iteration t in its ``depth`` levels, root the next subgame at the leaf reached, with the
beliefs pi^t reaches it with (Brown et al. 2020, section 6). Done at every public state at once, for
one seed, this gives one policy over the whole tree: the root's subgame fixes the policy in the
first slab of levels, each leaf's subgame the next slab below it, and so on; every public state's
policy comes from exactly one subgame (ReBeL's own evaluation, ``recursive_eval`` in its code,
builds the same policy). Its exploitability is computed exactly, per seed, as for SoG
(:mod:`sog.protocol.composed`).

ReBeL's table 2 reports instead the exploitability of the average of many such policies (each
player's own reach weighing its seeds' policies): :func:`sog.eval.policy.mixture`
(``rebel.mixture_policy``). It is at most the per-seed mean (exploitability is convex), so both are
reported.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from sog.baselines.rebel import config as config_lib
from sog.baselines.rebel import search
from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import registry
from sog.games import tree as tree_lib
from sog.protocol import composed
from sog.search import leaf_models
from sog.search import subgames as subgames_lib


def beliefs(ranges: np.ndarray, valid: np.ndarray) -> np.ndarray:
  """Each player's range [.., 2, S] normalised over its valid infostates; uniform where it has no
  mass (ReBeL's Bayes update with its 1e-80 floor, in the limit): the PBS a subgame is rooted at."""
  valid = valid.astype(ranges.dtype)
  mass = ranges.sum(-1, keepdims=True)
  uniform = valid / np.maximum(valid.sum(-1, keepdims=True), 1.0)
  return np.where(mass > 0, ranges / np.where(mass > 0, mass, 1.0), uniform)


def slab_game_nodes(subgame: subgames_lib.Subgame, depth: int) -> np.ndarray:
  """[M] the game node of each inner row of a solve's slab in ``subgame`` (-1 at padding), the rows
  of :attr:`SubgameSolution.policy`."""
  tables = subgame.tables
  return subgame.game_nodes[np.asarray(tables.inner_nodes)[: search.slab_rows(tables, depth)]]


def leaf_beliefs(
  tree: tree_lib.PublicTree,
  subgame: subgames_lib.Subgame,
  leaf_ranges: np.ndarray,
  node: int,
  depth: int,
) -> np.ndarray:
  """The beliefs [2, S] the next subgame at game node ``node`` (on the slab's cut) is rooted with,
  from a solve's ``leaf_ranges`` [n, 2, S] (:attr:`SubgameSolution.leaf_ranges`)."""
  cut = subgame.local[node] - subgame.tables.level_starts[depth]
  return beliefs(np.asarray(leaf_ranges[cut], np.float64), tree.valid[node])


class ReBeL:
  """ReBeL's subgame solves on a game's whole tree, compiled once per root depth.

  Args:
    game_or_tree: the game (or its whole public tree).
    leaf_model: values the depth-limit leaves (a PBS value network, or the exact oracle).
    config: depth, iterations, updates and play (:class:`ReBeLConfig`).
  """

  def __init__(
    self,
    game_or_tree: registry.Game | tree_lib.PublicTree,
    leaf_model: leaf_models.LeafModel,
    config: config_lib.ReBeLConfig = config_lib.ReBeLConfig(),
  ):
    tree = game_or_tree.tree if isinstance(game_or_tree, registry.Game) else game_or_tree
    if tree.game_node[0] != 0 or tree.parent[0] != -1:
      raise ValueError("ReBeL plays a game's whole tree: build it from the game")
    leaf_models.check_model_game(leaf_model, tree.name, "ReBeL")
    self.tree, self.leaf_model, self.config = tree, leaf_model, config
    self.subgames = subgames_lib.Subgames(tree)
    solve = functools.partial(search.solve, model=leaf_model, config=config)
    self._solve = jax.jit(jax.vmap(solve, in_axes=(0, None, 0, 0)))

  @property
  def root_beliefs(self) -> np.ndarray:
    """[2, S] the beliefs of a game's first subgame: the priors."""
    return beliefs(self.tree.root_ranges, self.tree.valid[0])

  def solve(
    self, roots: Sequence[int], ranges: np.ndarray, rngs: jax.Array, params=None
  ) -> tuple[list[subgames_lib.Subgame], search.SubgameSolution]:
    """Solves the subgames at game nodes ``roots`` (all at one depth) from ``ranges`` [B, 2, S] with
    ``rngs`` [B]; returns their tables and the batched solutions (NumPy)."""
    subgames = [self.subgames(root) for root in roots]
    if len({s.depth for s in subgames}) != 1:
      raise ValueError(
        f"one batch solves roots of one depth, got depths {sorted({s.depth for s in subgames})}"
      )
    tables = jax.tree.map(lambda *x: jnp.stack(x), *[s.tables for s in subgames])
    params = self.leaf_model.params if params is None else params
    solution = self._solve(tables, params, jnp.asarray(ranges, jnp.float32), rngs)
    return subgames, jax.device_get(solution)

  def compose(
    self,
    seeds: Sequence[int],
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
    params=None,
  ) -> composed.Composition:
    """The policy ReBeL plays at every public state, per seed (slab by slab from the root, each
    subgame's draws from ``fold_in(PRNGKey(seed), root)``), and its exact exploitability."""
    tree, depth = self.tree, self.config.depth
    seeds, policies = composed.uniform_policies(tree, seeds, batch_size)
    started = time.perf_counter()
    jobs = [(k, 0, self.root_beliefs) for k in range(len(seeds))]
    roots = (tree.depth % depth == 0) & (tree.kind != public_game.TERMINAL)
    total, done = int(roots.sum()) * len(seeds), 0
    while jobs:
      following = []
      for lo in range(0, len(jobs), batch_size):
        chunk = jobs[lo : lo + batch_size]
        padded = chunk + [(chunk[0][0], chunk[0][1], np.zeros_like(chunk[0][2]))] * (
          batch_size - len(chunk)
        )  # one batch shape: one compilation per depth
        subgames, solution = self.solve(
          [n for _, n, _ in padded],
          np.stack([r for _, _, r in padded]),
          composed.search_keys([seeds[k] for k, _, _ in padded], [n for _, n, _ in padded]),
          params,
        )
        for row, (k, _, _) in enumerate(chunk):
          following += self._place(policies[k], subgames[row], solution, row, k)
        done += len(chunk)
        if progress is not None:
          progress(done, total)
      jobs = following
    exploitability = np.array([best_response.evaluate(tree, p).exploitability for p in policies])
    return composed.Composition(
      seeds=seeds,
      exploitability=exploitability,
      policies=policies,
      searches=done,
      seconds=time.perf_counter() - started,
    )

  def _place(
    self,
    policy: np.ndarray,
    subgame: subgames_lib.Subgame,
    solution: search.SubgameSolution,
    row: int,
    k: int,
  ) -> list:
    """Writes one solve's played policy into ``policy`` (the slab's decision nodes) and returns the
    next jobs: the cut's non-terminal nodes with their beliefs."""
    tree, depth = self.tree, self.config.depth
    game = slab_game_nodes(subgame, depth)
    real = game >= 0
    decide = np.zeros_like(real)
    decide[real] = (tree.depth[game[real]] - subgame.depth < depth) & (
      tree.kind[game[real]] < public_game.CHANCE
    )
    policy[game[decide]] = policy_lib.normalised(
      np.asarray(solution.policy[row][decide], np.float64), tree.legal[game[decide]]
    )
    tables = subgame.tables
    if depth + 1 >= len(tables.levels):
      return []
    cut = subgame.game_nodes[tables.level_starts[depth] : tables.level_starts[depth + 1]]
    leaves = cut[(cut >= 0) & (tree.kind[np.maximum(cut, 0)] != public_game.TERMINAL)]
    return [
      (k, int(node), leaf_beliefs(tree, subgame, solution.leaf_ranges[row], node, depth))
      for node in leaves
    ]
