"""The host side of GT-CFR: a searcher compiled once per leaf model and config, routing searches to
the whole tree's tables or to compact subgame tables, batched or not, a batch split over the host's
local devices."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import registry
from sog.games import tree as tree_lib
from sog.search import devices as devices_lib
from sog.search import leaf_calls
from sog.search import leaf_models
from sog.search import subgames as subgames_lib
from sog.search import tables as tables_lib
from sog.search import types
from sog.search.gtcfr import completion
from sog.search.gtcfr import core


class GTCFR:
  """GT-CFR searches in ``tree`` with one leaf model and config, compiled once.

  ``search(rng, root_ranges)`` runs one search from the tree's root; ``search_batch(rngs,
  root_ranges)`` a batch of independent ones under ``vmap`` (each with its own rng and root ranges).
  ``search_from(rng, start)`` and ``search_from_batch(rngs, starts)`` run searches from any
  :class:`Start` in the tree: the re-solving searches of :mod:`sog.search.resolving`. The config is
  checked against the game (capacity, k) here, before anything is traced.

  A batch of searches is split over ``devices`` (default: all local devices) along its batch axis,
  the tables shared by the batch and the leaf model's parameters replicated; a batch whose size the
  device count does not divide is padded with copies of its last search, dropped from the results.
  The searches are independent, so each one's result is the one a single device computes; only
  the size of each pass's leaf-model call follows the batch (its largest frontier), and with it
  ``leaf_calls``. The tables are in ``dtype`` (float64 needs ``jax.enable_x64``: the precision in
  which the same seeds give the same searches as on the belief pool).
  """

  def __init__(
    self,
    game_or_tree: registry.Game | tree_lib.PublicTree,
    leaf_model: leaf_models.LeafModel,
    config: types.GTCFRConfig = types.GTCFRConfig(),
    devices: Sequence[jax.Device] | None = None,
    dtype=jnp.float32,
  ):
    tree = game_or_tree.tree if isinstance(game_or_tree, registry.Game) else game_or_tree
    if tree.kind[0] == public_game.TERMINAL:
      raise ValueError("the search root is terminal: there is nothing to search")
    leaf_models.check_model_game(leaf_model, tree.name, "GTCFR")
    self.tree, self.leaf_model, self.config = tree, leaf_model, config
    default_k = 1 if tables_lib.has_perfect_information(tree) else None
    self.k = default_k if config.expansion_k is None else config.expansion_k
    needed = tables_lib.frontier_capacity(
      tree,
      config.phases * config.simulations_in_phase,
      self.k,
      branches=True,
      chance_with_parent=config.open_chance == "with_parent",
    )
    if config.leaf_capacity is not None and config.leaf_capacity < needed:
      raise ValueError(
        f"leaf_capacity={config.leaf_capacity} is too small for s="
        f"{config.simulations} on {tree.name}: the frontier can reach {needed} "
        "leaves; use a larger capacity or None"
      )
    self.capacity = needed if config.leaf_capacity is None else config.leaf_capacity
    self.dtype = jnp.dtype(dtype)
    self.tables = tables_lib.make_tables(tree, self.dtype)
    self._search = jax.jit(self._search_fn(leaf_calls.leaf_batches(self.capacity)))
    self._batch = jax.jit(self._batched(self._search_fn, self.capacity, in_axes=(None, None, 0, 0)))
    self._root_starts = jax.jit(jax.vmap(types.root_start, in_axes=(None, 0)))
    self._in_subgames = {}  # (capacity, batched) -> compiled search
    self.mesh = devices_lib.mesh(devices)

  @property
  def leaf_batches(self) -> leaf_calls.LeafBatches:
    """The leaf-model batch sizes of one search in the game's tables (what ``core.run`` and
    ``core.finish`` take)."""
    return leaf_calls.leaf_batches(self.capacity)

  @functools.cached_property
  def subgames(self) -> subgames_lib.Subgames:
    """Compact tables for searches rooted below the tree's root (:mod:`sog.search.subgames`)."""
    return subgames_lib.Subgames(self.tree, self.capacity, self.dtype)

  def root_ranges(self, ranges: np.ndarray | None) -> jax.Array:
    ranges = (
      self.tree.root_ranges if ranges is None else best_response.check_ranges(self.tree, ranges)
    )
    return jnp.asarray(ranges, self.dtype)

  def search(
    self, rng: chex.PRNGKey, root_ranges: np.ndarray | None = None, params=None
  ) -> types.SearchResult:
    """One search from the tree's root at ``root_ranges`` (default: the tree's priors)."""
    return self.search_from(
      rng, types.root_start(self.tables, self.root_ranges(root_ranges)), params
    )

  def search_batch(
    self, rngs: chex.PRNGKey, root_ranges: np.ndarray | None = None, params=None
  ) -> types.SearchResult:
    """Searches for a batch of rngs [B] (and root ranges [B, 2, S], default the tree's priors)."""
    count = rngs.shape[0]
    if root_ranges is None:
      ranges = jnp.broadcast_to(self.root_ranges(None), (count, *self.tree.root_ranges.shape))
    else:
      root_ranges = np.asarray(root_ranges)
      if root_ranges.ndim != 3 or root_ranges.shape[0] != count:
        raise ValueError(f"batched root ranges must be [{count}, 2, S], got {root_ranges.shape}")
      ranges = jnp.stack([self.root_ranges(r) for r in root_ranges])
    return self.search_from_batch(rngs, self._root_starts(self.tables, ranges), params)

  def search_from(self, rng: chex.PRNGKey, start: types.Start, params=None) -> types.SearchResult:
    """One search from ``start`` (a root, a branch down to the focus, ranges and a gadget)."""
    params = self.leaf_model.params if params is None else params
    return self._search(self.tables, params, rng, start)

  def search_from_batch(
    self, rngs: chex.PRNGKey, starts: types.Start, params=None
  ) -> types.SearchResult:
    """Searches from a batch of starts (every array with a leading axis [B], as ``rngs``)."""
    params = self.leaf_model.params if params is None else params
    if starts.root.shape != rngs.shape[:1]:
      raise ValueError(f"got {rngs.shape[0]} rngs for starts of batch shape {starts.root.shape}")
    return devices_lib.over_devices(self.mesh, self._batch, (self.tables, params), (rngs, starts))

  def search_in_subgames(
    self,
    tables: tables_lib.SearchTables,
    capacity: int,
    rngs: chex.PRNGKey,
    starts: types.Start,
    params=None,
  ) -> types.SearchResult:
    """Searches from a batch of starts, each in its own tables: ``tables`` are subgame tables of one
    shape (:attr:`subgames` of one depth) stacked on a leading axis [B], ``capacity`` their frontier
    bound, ``starts`` in their nodes. One compilation per shape."""
    params = self.leaf_model.params if params is None else params
    if starts.root.shape != rngs.shape[:1] or tables.kind.shape[0] != rngs.shape[0]:
      raise ValueError(
        f"got {rngs.shape[0]} rngs for starts of batch shape {starts.root.shape} "
        f"and tables of batch shape {tables.kind.shape[:1]}"
      )
    if rngs.shape[0] == 1:  # one search: no vmap
      key = (capacity, False)
      if key not in self._in_subgames:
        self._in_subgames[key] = jax.jit(self._search_fn(leaf_calls.leaf_batches(capacity)))
      first = lambda x: x[0]  # noqa: E731
      result = self._in_subgames[key](
        jax.tree.map(first, tables), params, rngs[0], jax.tree.map(first, starts)
      )
      return jax.tree.map(lambda x: x[None], result)
    key = (capacity, True)
    if key not in self._in_subgames:
      search = self._batched(self._search_fn, capacity, in_axes=(0, None, 0, 0))
      self._in_subgames[key] = jax.jit(
        lambda params, tables, rngs, starts: search(tables, params, rngs, starts)
      )
    return devices_lib.over_devices(
      self.mesh, self._in_subgames[key], (params,), (tables, rngs, starts)
    )

  @staticmethod
  def _batched(search_fn: Callable, capacity: int, in_axes: tuple) -> Callable:
    """``search_fn``'s search vmapped over a batch whose passes size their leaf-model calls by
    the batch's largest frontier."""
    axis = leaf_calls.SEARCH_AXIS
    batches = leaf_calls.leaf_batches(capacity, axis)
    return jax.vmap(search_fn(batches), in_axes=in_axes, axis_name=axis)

  def search_grouped(
    self,
    subgames: Sequence[subgames_lib.Subgame],
    make_starts: Callable[[tables_lib.SearchTables, list[int]], types.Start],
    rngs: chex.PRNGKey,
    chunk: int,
    params=None,
  ) -> Iterator[tuple[list[int], types.SearchResult]]:
    """Searches for jobs 0..J-1, job j in ``subgames[j]``: grouped by subgame depth (one shape each)
    and run as vmapped chunks of ``chunk`` searches (padded by repeating the chunk's last job).

    ``make_starts(tables, jobs)`` gives the starts of a chunk (the jobs' tables stacked, [chunk,
    ...]); ``rngs`` [J] are the jobs' keys. Yields each chunk's jobs and its results ([chunk, ...],
    the padding rows last).
    """
    if chunk < 1:
      raise ValueError(f"chunk must be >= 1, got {chunk}")
    for depth in sorted({subgame.depth for subgame in subgames}):
      group = [j for j, subgame in enumerate(subgames) if subgame.depth == depth]
      for lo in range(0, len(group), chunk):
        jobs = group[lo : lo + chunk]
        padded = jobs + [jobs[-1]] * (chunk - len(jobs))
        tables = jax.tree.map(lambda *xs: np.stack(xs), *[subgames[j].tables for j in padded])
        starts = make_starts(tables, padded)
        yield (
          jobs,
          self.search_in_subgames(
            tables, subgames[jobs[0]].capacity, rngs[np.asarray(padded)], starts, params
          ),
        )

  def _search_fn(self, batches: leaf_calls.LeafBatches):
    """search(tables, params, rng, start) with this searcher's leaf model, config and k."""
    model = self.leaf_model
    one = functools.partial(
      core.search,
      apply=model.apply,
      config=self.config,
      batches=batches,
      k=self.k,
    )
    return lambda tables, params, rng, start: one(
      tables, params=params, rng=rng, start=start, leaf_state=model.init(tables, start)
    )

  def completed_policy(
    self,
    result: types.SearchResult,
    iterations: int = 1000,
    method: str = "resolve",
    tremble: float = 1e-3,
  ) -> np.ndarray:
    """The search's policy completed over its whole subgame, for exact evaluation ([N, S, A]
    float64).

    ``method="resolve"``: the average policy at the tree's interior nodes and, below every frontier
    leaf, a CFR+ solve (``iterations``, trembled as the exact oracle) of the leaf's subgame at its
    final ranges. This is not safe (a re-solve at fixed ranges may pick an opponent-exploitable
    equilibrium of the leaf subgame), so it can be exploitable while the frontier holds leaves the
    search rarely reaches.

    ``method="average"`` (needs a leaf model that plays below the leaves, the exact oracle): the
    average over the search's iterations of the whole-subgame strategy each iteration played, its
    own policy in the tree and the oracle's below the frontier. This is the strategy GT-CFR's
    soundness theorem (as CFR-D's) bounds, so its exploitability falls with the regret.
    """
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    if method == "resolve":
      inner = np.asarray(
        completion.resolve_below_frontier(self.tables, result, self.capacity, iterations, tremble),
        np.float64,
      )
    elif method == "average":
      sums = np.asarray(result.policy_sums, np.float64) + np.asarray(
        result.leaf_policy_sums, np.float64
      )
      legal = np.asarray(self.tables.to_inner(self.tables.legal))
      inner = np.where(sums.sum(-1, keepdims=True) > 0, sums, legal)
    else:
      raise ValueError(f"method must be 'resolve' or 'average', got {method!r}")
    policy = policy_lib.uniform_policy(self.tree)
    policy[np.asarray(self.tables.inner_nodes)] = inner / inner.sum(-1, keepdims=True)
    return policy

  def exploitability(
    self,
    result: types.SearchResult,
    iterations: int = 1000,
    method: str = "resolve",
    root_ranges: np.ndarray | None = None,
  ) -> float:
    """Exact exploitability (float64) of :meth:`completed_policy` in the subgame from
    ``root_ranges`` (default: the tree's priors, so the game's exploitability when the root is the
    game's root)."""
    return best_response.evaluate(
      self.tree, self.completed_policy(result, iterations, method), root_ranges
    ).exploitability
