"""Batches of re-solving searches, each in its re-solving root's subgame: what the protocol and the
agent do at a decision on the table engine (self-play re-solves on the belief pool:
:mod:`sog.search.pool.belief_resolver`).

A request is a player's :class:`~sog.search.subgames.PlacedSummary` (of its last search) and the
game node it now decides at. :class:`Resolver` finds each request's s_prev and subgame
(:meth:`sog.search.Subgames.resolving_subgame`), plans its start there
(:func:`sog.search.resolving.plan`, vmapped over a chunk) and runs the searches grouped by subgame
depth (:meth:`sog.search.GTCFR.search_grouped`), yielding one :class:`Resolved` chunk at a time.
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

from sog.search import gtcfr
from sog.search import resolving
from sog.search import subgames as subgames_lib


@dataclasses.dataclass(frozen=True)
class Resolved:
  """One chunk of re-solving searches.

  Attributes:
    jobs: the requests answered, in row order (the results may have padding rows after them).
    results: the searches' results [chunk, ...], in each one's subgame tables.
    subgames: the subgame each job searched in.
    focus: [len(jobs)] int, each job's decision node in its subgame's tables.
  """

  jobs: list[int]
  results: gtcfr.SearchResult
  subgames: list[subgames_lib.Subgame]
  focus: np.ndarray
  config: resolving.ResolvingConfig = resolving.ResolvingConfig()

  def summaries(self) -> list[subgames_lib.PlacedSummary]:
    """The summary each job's player keeps from its search, placed on its subgame's nodes."""
    summarise = functools.partial(resolving.summarise, config=self.config)
    summaries = jax.device_get(jax.vmap(summarise)(self.results))
    return [
      subgames_lib.PlacedSummary(
        jax.tree.map(lambda x, row=row: x[row], summaries), subgame.game_nodes
      )
      for row, subgame in enumerate(self.subgames)
    ]


class Resolver:
  """Re-solves decisions with ``searcher`` (on a game's whole tree) by ``config``'s re-solving."""

  def __init__(
    self, searcher: gtcfr.GTCFR, config: resolving.ResolvingConfig = resolving.ResolvingConfig()
  ):
    self.searcher, self.config = searcher, config
    self._plan = jax.jit(jax.vmap(functools.partial(resolving.plan, config=config)))

  def initial_summary(self) -> subgames_lib.PlacedSummary:
    """A player's summary before its first decision: the game's root at its prior beliefs."""
    return self.searcher.subgames.initial_summary(self.searcher.root_ranges(None))

  def resolve(
    self,
    requests: Sequence[tuple[subgames_lib.PlacedSummary, int]],
    rngs: chex.PRNGKey,
    chunk: int = 1,
    params=None,
  ) -> Iterator[Resolved]:
    """The re-solving searches of ``requests`` (summary, game node), with ``rngs`` [J], as vmapped
    chunks of ``chunk`` searches grouped by subgame depth; ``params`` replace the leaf model's."""
    where = [
      self.searcher.subgames.resolving_subgame(summary, int(node)) for summary, node in requests
    ]
    focus = np.array(
      [subgame.local[int(node)] for (subgame, _), (_, node) in zip(where, requests, strict=True)],
      np.int32,
    )

    def starts(tables, jobs):
      summaries = jax.tree.map(lambda *xs: np.stack(xs), *[where[j][1] for j in jobs])
      return self._plan(tables, summaries, jnp.asarray(focus[jobs]))

    for jobs, results in self.searcher.search_grouped(
      [subgame for subgame, _ in where], starts, rngs, chunk, params
    ):
      yield Resolved(
        jobs=jobs,
        results=results,
        subgames=[where[j][0] for j in jobs],
        focus=focus[jobs],
        config=self.config,
      )
