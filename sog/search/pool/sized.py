"""Searches in pools sized to their subgames, where the game's public tree is enumerated.

A search on the belief pool pays for its pool's slots (the passes' level order, the action values
zeroed each update, the redraw checks), whatever it grows. Where the game is enumerated, the public
states below a search's focus are known, so it can run in the smallest pool of
:data:`SMALLEST_POOL` x :data:`POOL_GROWTH`^j slots (or its searcher's own) that holds every
expansion of that subgame (:func:`~sog.search.pool.belief_search.subgame_capacity`): the search it
would run in the searcher's pool, at the cost of the pool it can fill, with one compilation per pool
size. Where it is not, every search runs in the searcher's pool. A vmapped chunk of ``chunk``
searches is planned for the smallest pool: a larger pool's chunk holds proportionally fewer rows
(:meth:`SizedPools.rows`, at least one), so every chunk holds about as many slots, and a few
searches near the root are not padded to a chunk of the largest pool. :class:`SizedPools` holds the
searchers; :class:`SizedResolver` batches re-solves by their pool size (what the protocol and
self-play's actors run). Searches are named by their focus's path of child slots from the game's
root, so nothing here needs the tree beyond the sizes.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
import dataclasses

import chex
import numpy as np

from sog.games import public_game
from sog.games import tree as tree_lib
from sog.search import resolving
from sog.search.pool import belief_resolver
from sog.search.pool import belief_resolving
from sog.search.pool import belief_search
from sog.search.pool.belief_searcher import GTCFR

#: The smallest pool searches are compiled for, and the factor between one size and the next up to
#: the searcher's (each size is a compiled program held in memory; docs/results/pool.md compares 2
#: and 4).
SMALLEST_POOL, POOL_GROWTH = 64, 4


def pool_size(need: int, bound: int) -> int:
  """The smallest of :data:`SMALLEST_POOL` x :data:`POOL_GROWTH`^j slots holding ``need``, at most
  ``bound``."""
  size = SMALLEST_POOL
  while size < need:
    size *= POOL_GROWTH
  return min(size, bound)


class SizedPools:
  """``searcher`` (a :class:`~sog.search.pool.GTCFR`) and its copies in smaller pools: with
  the game's enumerated ``tree``, one per size a public state's subgame needs, at least
  ``path_length + 1`` slots where a re-solve plans from a summary cut to one path of that many
  moves (:func:`~sog.search.pool.belief_resolver.pruned`); without, the searcher alone."""

  def __init__(
    self,
    searcher: GTCFR,
    path_length: int,
    tree: tree_lib.PublicTree | None = None,
  ):
    self.searcher, self.tree, self.path_length = searcher, tree, path_length
    self.capacity = None  # [N] slots for a search focused on each node of the tree
    if tree is not None:
      room = belief_search.subgame_capacity(
        searcher.game, searcher.config, 0, searcher.branch_depth
      )
      needs = np.maximum(room + tree.subgame_sizes(), path_length + 1)
      sizes = {int(need): pool_size(int(need), searcher.capacity) for need in np.unique(needs)}
      self.capacity = np.array([sizes[int(need)] for need in needs])
    # the smallest pool a search uses (none starts at a terminal)
    self.smallest = (
      searcher.capacity
      if tree is None
      else int(self.capacity[tree.kind != public_game.TERMINAL].min())
    )
    self._searchers = {searcher.capacity: searcher}

  def rows(self, capacity: int, chunk: int) -> int:
    """The rows of a vmapped chunk in the pool of ``capacity`` slots, where a chunk of the smallest
    pool has ``chunk``: as many slots as that chunk, at least one row (``ValueError`` for a chunk
    below 1)."""
    if chunk < 1:
      raise ValueError(f"chunk must be >= 1, got {chunk}")
    return max(1, min(chunk, chunk * self.smallest // capacity))

  def searcher_for(self, capacity: int) -> GTCFR:
    """The searcher with a pool of ``capacity`` slots (built, and compiled, on first use)."""
    if capacity not in self._searchers:
      base = self.searcher
      self._searchers[capacity] = GTCFR(
        base.game,
        base.leaf_model,
        base.config,
        base.dtype,
        capacity=capacity,
        branch_depth=base.branch_depth,
        devices=list(base.mesh.devices.flat),
      )
    return self._searchers[capacity]

  def capacity_at(self, path: Sequence[int]) -> int:
    """The pool size of a search focused on the public state at ``path`` (child slots from the
    game's root, -1 past its end)."""
    if self.tree is None:
      return self.searcher.capacity
    return int(self.capacity[self.tree.nodes_of_padded_paths(np.asarray([path]))[0]])

  def by_pool(self, paths: Sequence[Sequence[int]]) -> list[tuple[int, list[int]]]:
    """The jobs (indices of ``paths``, the searches' focuses) grouped by pool size, smallest
    first."""
    groups: dict[int, list[int]] = {}
    for job, path in enumerate(paths):
      groups.setdefault(self.capacity_at(path), []).append(job)
    return sorted(groups.items())

  def chunks(
    self, paths: Sequence[Sequence[int]], chunk: int
  ) -> Iterator[tuple[list[int], np.ndarray, GTCFR]]:
    """The searches focused on ``paths`` as vmapped chunks of one pool size, ``chunk`` rows in the
    smallest pool (:meth:`rows` in the others): per chunk, its jobs (indices of ``paths``), its
    rows (the jobs, a short chunk padded by repeating its last) and the searcher of that pool
    size."""
    for capacity, jobs in self.by_pool(paths):
      size = self.rows(capacity, chunk)
      for part, rows in belief_resolver.chunked(jobs, size):
        yield part, np.asarray(rows), self.searcher_for(capacity)


class SizedResolver:
  """Re-solves (:class:`~sog.search.pool.belief_resolver.BeliefResolver`) in the pools of
  ``pools``: each request's summary cut to its path (the plan reads nothing else), each batch of
  requests needing one pool size run together."""

  def __init__(
    self,
    pools: SizedPools,
    config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
  ):
    self.pools, self.path_length, self.config = pools, pools.path_length, config
    self._resolvers: dict[int, belief_resolver.BeliefResolver] = {}

  def resolver(self, capacity: int) -> belief_resolver.BeliefResolver:
    if capacity not in self._resolvers:
      self._resolvers[capacity] = belief_resolver.BeliefResolver(
        self.pools.searcher_for(capacity), self.path_length, self.config
      )
    return self._resolvers[capacity]

  def initial_summary(self) -> belief_resolving.BeliefSummary:
    return self.resolver(self.pools.searcher.capacity).initial_summary()

  def resolve(
    self,
    requests: Sequence[belief_resolver.Request],
    rngs: chex.PRNGKey,
    chunk: int = 1,
    params=None,
  ) -> Iterator[belief_resolver.BeliefResolved]:
    """The re-solves of ``requests`` (summary, path, player) with ``rngs`` [J]:
    :meth:`BeliefResolver.resolve <sog.search.pool.belief_resolver.BeliefResolver.resolve>` per
    pool size, ``chunk`` rows in the smallest pool (:meth:`SizedPools.rows` in the others;
    ``jobs`` index ``requests``)."""
    for capacity, jobs in self.pools.by_pool([request[1] for request in requests]):
      asked = [
        (belief_resolver.pruned(requests[j][0], [requests[j][1]]), *requests[j][1:]) for j in jobs
      ]
      rows = self.pools.rows(capacity, chunk)
      for resolved in self.resolver(capacity).resolve(asked, rngs[np.asarray(jobs)], rows, params):
        yield dataclasses.replace(resolved, jobs=[jobs[row] for row in resolved.jobs])
