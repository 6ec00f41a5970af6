"""Batches of re-solving searches on the belief pool: what the protocol, the agent and self-play do
at a decision, with nothing enumerated.

A request is a player's :class:`~sog.search.pool.belief_resolving.BeliefSummary` (of its last
search, or the game's start), the public state s_pub it now decides at, named by its path of child
slots from the game's root, and the acting player. :class:`BeliefResolver` plans each request's
start (:func:`~sog.search.pool.belief_resolving.plan`, vmapped over a chunk), refuses unsound plans
(:func:`~sog.search.pool.belief_resolving.check`) and runs the chunk's searches as one vmapped batch
(:meth:`~sog.search.pool.GTCFR.search_from_batch`), yielding one :class:`BeliefResolved` at a
time. Every chunk has the same shape (a short one is padded with copies of its last request), so
one compilation serves every decision of a game. Summaries are kept on the host cut to the slots
their trees use (:func:`trimmed`) and put back in the searcher's pool to plan (:func:`padded`).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.search import resolving
from sog.search.pool import belief_paths
from sog.search.pool import belief_resolving
from sog.search.pool import belief_rows
from sog.search.pool import belief_state
from sog.search.pool.belief_searcher import GTCFR

#: (the player's summary, the path of child slots from the game's root to s_pub, the acting player)
Request = tuple[belief_resolving.BeliefSummary, Sequence[int], int]


def chunked(jobs: Sequence[int], size: int) -> Iterator[tuple[list[int], list[int]]]:
  """``jobs`` in chunks of ``size``: each chunk's jobs and its rows, the jobs with a short chunk
  padded by repeating its last (every chunk one shape, so one compilation serves them all)."""
  for begin in range(0, len(jobs), size):
    part = list(jobs[begin : begin + size])
    yield part, part + [part[-1]] * (size - len(part))


@dataclasses.dataclass(frozen=True)
class BeliefResolved:
  """One chunk of re-solving searches on the pool.

  Attributes:
    jobs: the requests answered, in row order (the results may have padding rows after them).
    results: the searches' results [chunk, ...] (slots of each search's own pool).
    planned: the chunk's plans [chunk, ...] (where each search's root lies).
    summaries_in: the summaries the chunk planned from [chunk, ...].
  """

  jobs: list[int]
  results: belief_state.BeliefSearchResult
  planned: belief_resolving.Planned
  summaries_in: belief_resolving.BeliefSummary
  config: resolving.ResolvingConfig = resolving.ResolvingConfig()

  def summaries(self) -> list[belief_resolving.BeliefSummary]:
    """The summary each job's player keeps from its search (host arrays, one per job, holding only
    the slots its tree uses: :func:`trimmed`)."""
    summarise = functools.partial(belief_resolving.summarise, config=self.config)
    summaries = jax.device_get(jax.vmap(summarise)(self.results, self.summaries_in, self.planned))
    return [
      trimmed(jax.tree.map(lambda x, row=row: x[row], summaries)) for row in range(len(self.jobs))
    ]


#: The tree's arrays over its rows (R first) rather than its slots.
_ROW_AXIS = ("row_node", "row_infostate", "row_child")


def _per_slot(
  summary: belief_resolving.BeliefSummary, change, change_rows
) -> belief_resolving.BeliefSummary:
  """``summary`` with ``change`` applied to every array that has the pool's slot axis first, and
  ``change_rows`` to the tree's arrays over its rows."""
  tree = summary.tree
  kept = {name: getattr(tree, name) for name in ("num_nodes", "height", "num_rows")}
  kept.update({name: change_rows(getattr(tree, name)) for name in _ROW_AXIS})
  tree = jax.tree.map(change, tree.replace(**dict.fromkeys(kept))).replace(**kept)
  return summary.replace(tree=tree, ranges=change(summary.ranges), values=change(summary.values))


def trimmed(summary: belief_resolving.BeliefSummary) -> belief_resolving.BeliefSummary:
  """A host summary cut to the slots and rows its tree uses (a search grows far fewer public states
  than its pool holds): what a player keeps between decisions."""
  used, rows = int(summary.tree.num_nodes), int(summary.tree.num_rows)
  return _per_slot(summary, lambda x: np.asarray(x)[:used], lambda x: np.asarray(x)[:rows])


def padded(
  summary: belief_resolving.BeliefSummary, capacity: int
) -> belief_resolving.BeliefSummary:
  """A trimmed summary back in a pool of ``capacity`` slots and its rows (the free slots and rows
  zero: a plan reads only the slots the tree uses, and none of its rows)."""

  def pad(size):
    def to(x):
      x = np.asarray(x)
      return np.pad(x, [(0, size - x.shape[0])] + [(0, 0)] * (x.ndim - 1))

    return to

  rows = belief_rows.row_capacity(capacity, summary.tree.legal.shape[-2])
  return _per_slot(summary, pad(capacity), pad(rows))


def pruned(
  summary: belief_resolving.BeliefSummary, paths: Sequence[Sequence[int]]
) -> belief_resolving.BeliefSummary:
  """A trimmed host summary cut to the public states that plans for ``paths`` (child slots from the
  game's root, each through the summary's root) read: the nodes of its tree on those paths, from its
  root down (:func:`~sog.search.pool.belief_resolving.plan` follows a path down the tree's children
  and reads nothing off it, and no row). Plans for these paths from the pruned summary are the
  plans from the whole one; where a player's next decisions are known (the protocol), this is what
  it keeps: its nodes renumbered, and no rows."""
  tree = summary.tree
  children, depth = np.asarray(tree.children), int(belief_resolving.path_depth(summary.root_path))
  used = int(tree.num_nodes)
  keep = np.zeros(used, bool)
  keep[0] = True
  for path in paths:
    node = 0
    for slot in list(path)[depth:]:
      node = int(children[node, slot]) if 0 <= slot < children.shape[1] else -1
      if node < 0:
        break
      keep[node] = True
  nodes = np.flatnonzero(keep)  # parents before children: a slot is added after its parent's
  renumber = np.full(used + 1, -1, np.int32)  # old slot -> new, the last entry for -1
  renumber[nodes] = np.arange(nodes.size, dtype=np.int32)
  cut = _per_slot(summary, lambda x: np.asarray(x)[nodes], lambda x: np.asarray(x)[:0])
  return cut.replace(
    tree=cut.tree.replace(
      parent=renumber[cut.tree.parent],
      children=renumber[cut.tree.children],
      num_nodes=np.int32(nodes.size),
      row_count=np.zeros(nodes.size, np.int32),
      num_rows=np.int32(0),
    )
  )


class BeliefResolver:
  """Re-solves decisions with ``searcher`` by ``config``'s re-solving, for paths of at most
  ``path_length`` public moves from the game's root (static: a summary keeps the path to its root
  at that length). A plan's branch, from s_prev down to s_pub, must fit the searcher's
  ``branch_depth``."""

  def __init__(
    self,
    searcher: GTCFR,
    path_length: int,
    config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
  ):
    if not isinstance(path_length, int) or path_length < 1:
      raise ValueError(
        f"BeliefResolver: path_length (the most public moves from the game's root to a decision) "
        f"must be an int >= 1, got {path_length!r}"
      )
    self.searcher, self.path_length, self.config = searcher, path_length, config
    plan = functools.partial(
      belief_resolving.plan, branch_depth=searcher.branch_depth, config=config
    )
    self._plan = jax.jit(jax.vmap(plan))

  def initial_summary(self) -> belief_resolving.BeliefSummary:
    """A player's summary before its first decision: the game's root at the deal's priors (host
    arrays, :func:`trimmed` as the summaries of the searcher's results)."""
    game = self.searcher.game
    marginals = jnp.asarray(public_game.prior_ranges(game), self.searcher.dtype)
    return trimmed(
      jax.device_get(
        belief_resolving.initial_summary(self.searcher.empty, marginals, self.path_length)
      )
    )

  def path(self, moves: Sequence[int]) -> np.ndarray:
    """[path_length] int32: the child slots ``moves`` from the game's root, -1 past the end
    (``ValueError`` for a path longer than ``path_length``)."""
    moves = np.asarray(moves, np.int32).reshape(-1)
    if moves.size > self.path_length:
      raise ValueError(
        f"a path of {moves.size} public moves is longer than the resolver's path_length="
        f"{self.path_length}"
      )
    return belief_paths.padded_path(moves, self.path_length)

  def resolve(
    self,
    requests: Sequence[Request],
    rngs: chex.PRNGKey,
    chunk: int = 1,
    params=None,
  ) -> Iterator[BeliefResolved]:
    """The re-solving searches of ``requests`` (summary, path, player), with ``rngs`` [J], as
    vmapped chunks of ``chunk`` searches; ``params`` replace the leaf model's."""
    if chunk < 1:
      raise ValueError(f"chunk must be >= 1, got {chunk}")
    paths = np.stack([self.path(path) for _, path, _ in requests]) if requests else None
    players = np.array([int(player) for _, _, player in requests], np.int32)
    capacity = self.searcher.capacity
    for jobs, rows in chunked(range(len(requests)), chunk):
      summaries = jax.tree.map(
        lambda *xs: np.stack(xs), *[padded(requests[j][0], capacity) for j in rows]
      )
      planned = self._plan(summaries, jnp.asarray(paths[rows]), jnp.asarray(players[rows]))
      belief_resolving.check(planned, self.searcher.branch_depth)
      results = self.searcher.search_from_batch(rngs[np.asarray(rows)], planned.start, params)
      yield BeliefResolved(
        jobs=jobs, results=results, planned=planned, summaries_in=summaries, config=self.config
      )
