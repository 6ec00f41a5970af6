"""The leaf queries a protocol run asks its leaf model, sampled per search and labelled by where
they sit: what a network is asked when SoG's protocol measures it.

Every GT-CFR search keeps a uniform sample of its frontier queries (a public belief state: a public
state and both players' ranges at a CFR pass; ``GTCFRConfig.query_samples`` of them, from all its
update passes). A :class:`QueryRecorder` passed to :func:`sog.protocol.compose` collects them from
every search of every seed, moved to the game's nodes and labelled:

* ``below_focus``: the leaf lies below s_pub, the public state the search decides at (the frontier
  the search grows); otherwise it is an *off-branch* leaf, a child of the re-solving branch s_prev
  -> s_pub that the search keeps as a frontier leaf throughout (it only grows below s_pub);
* ``first_search``: the search had no predecessor and started from the game's root beliefs (each
  player's first decision with the protocol's "own" predecessor);
* the acting player at the leaf and each player's range mass there follow from ``nodes`` and
  ``ranges``.

:mod:`sog.selfplay.diagnostics` values them exactly, to tell which of a network's errors the
protocol pays for (``scripts/diagnose_leaf.py``).
"""

from __future__ import annotations

import dataclasses
import pathlib
import types

import jax
import numpy as np

from sog.games import tree as tree_lib
from sog.search.pool import belief_paths
from sog.search.pool import belief_resolver


@dataclasses.dataclass(frozen=True)
class ProtocolQueries:
  """Q sampled leaf queries of a protocol run.

  Attributes:
    seeds: [Q] the protocol seed of the search that asked.
    searched: [Q] the game node the search decided at (s_pub).
    nodes: [Q] the game node of the leaf.
    ranges: [Q, 2, S] both players' ranges at the leaf in the pass that asked.
    below_focus: [Q] bool, the leaf lies below s_pub (else it is off the re-solving branch).
    first_search: [Q] bool, the search started from the game's root beliefs (no predecessor).
  """

  seeds: np.ndarray
  searched: np.ndarray
  nodes: np.ndarray
  ranges: np.ndarray
  below_focus: np.ndarray
  first_search: np.ndarray

  @property
  def size(self) -> int:
    return int(self.nodes.shape[0])

  def subset(self, mask: np.ndarray) -> ProtocolQueries:
    return ProtocolQueries(
      **{f.name: getattr(self, f.name)[mask] for f in dataclasses.fields(self)}
    )

  def save(self, path: str | pathlib.Path) -> None:
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

  @classmethod
  def load(cls, path: str | pathlib.Path) -> ProtocolQueries:
    """The queries :meth:`save` wrote (``ValueError`` for a file that holds other arrays)."""
    with np.load(path) as saved:
      names = {f.name for f in dataclasses.fields(cls)}
      if set(saved.files) != names:
        raise ValueError(
          f"{path} is not a file of protocol queries: it holds {sorted(saved.files)}"
        )
      return cls(**{name: saved[name] for name in names})

  @classmethod
  def concatenate(cls, parts: list[ProtocolQueries]) -> ProtocolQueries:
    if not parts:
      raise ValueError("no protocol queries to concatenate")
    return cls(
      **{
        f.name: np.concatenate([getattr(part, f.name) for part in parts])
        for f in dataclasses.fields(cls)
      }
    )


class QueryRecorder:
  """Collects the sampled leaf queries of every search :func:`~sog.protocol.compose` runs; give it
  as ``compose(..., on_resolved=recorder)``, then read :attr:`queries`. The searches name their
  leaves by slots of their own pools: ``tree``, the game's enumerated tree the protocol composes
  on, moves them to its nodes."""

  def __init__(self, tree: tree_lib.PublicTree):
    self._tree = tree
    self._parts: list[ProtocolQueries] = []

  def __call__(
    self, searches: list[tuple[int, int, bool]], resolved: belief_resolver.BeliefResolved
  ) -> None:
    """Records a chunk: ``searches[row]`` is (seed, game node searched, has a predecessor) of each
    of ``resolved``'s jobs, in row order."""
    sample = resolved.results.queries
    valid = np.isfinite(np.asarray(sample.keys))
    ranges = np.asarray(sample.ranges, np.float64)
    located = self._locate(resolved, valid)
    for row, (seed, searched, has_predecessor) in enumerate(searches):
      nodes, below = located[row]
      count = nodes.size
      self._parts.append(
        ProtocolQueries(
          seeds=np.full(count, seed, np.int64),
          searched=np.full(count, searched, np.int64),
          nodes=nodes,
          ranges=ranges[row, valid[row]],
          below_focus=below,
          first_search=np.full(count, not has_predecessor),
        )
      )

  def _locate(self, resolved: belief_resolver.BeliefResolved, valid: np.ndarray):
    """Per row: the game nodes of its valid queries (their slots' paths from the game's root) and
    whether each lies at or below s_pub (the search grows only there, so deeper than s_pub or s_pub
    itself)."""
    results = resolved.results
    parent, slot, depth, focus, asked, root_paths = jax.device_get(
      (
        results.tree.parent,
        results.tree.slot,
        results.tree.depth,
        results.focus,
        results.queries.nodes,
        resolved.planned.root_path,
      )
    )
    located = []
    for row in range(len(resolved.jobs)):
      pool = types.SimpleNamespace(parent=parent[row], slot=slot[row])  # what slot_paths reads
      slots = asked[row][valid[row]]
      paths = belief_paths.slot_paths(pool, slots, root_paths[row], self._tree.max_moves)
      below = (depth[row, slots] > depth[row, focus[row]]) | (slots == focus[row])
      located.append((self._tree.nodes_of_padded_paths(paths), below))
    return located

  @property
  def queries(self) -> ProtocolQueries:
    return ProtocolQueries.concatenate(self._parts)
