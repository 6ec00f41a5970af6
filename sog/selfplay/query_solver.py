"""The query solver (SoG, Algorithm 2): it turns leaf queries into value and policy targets.

It takes a batch of queries (PBSs beta = (public state, r0, r1)) from the query buffer, runs a
GT-CFR search from each with the current network (a plain search rooted at the query, in the compact
tables of the query's subgame), and makes one example per query: its root counterfactual values for
both players (value targets at every valid infostate; at an infostate the query's range does not
reach, the best response's value, or with ``unreached_targets="average"`` the average policy's) and
its root policy for the actor (policy target). Each of the searches' own sampled leaf
queries goes back to the query buffer with probability q_recursive, so values are bootstrapped
through ever deeper searches (SoG's recursive queries).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.search import gtcfr
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


class QuerySolver:
  """Answers batches of up to ``config.solver_batch`` queries with ``searcher``'s searches.

  Each search runs on the compact tables of its query's subgame (:mod:`sog.search.subgames`): the
  queries of a batch are grouped by their depth (one tables shape and one compilation per depth) and
  each group runs as vmapped chunks of ``chunk`` searches (padded by repeating a query).
  """

  def __init__(self, searcher: gtcfr.GTCFR, config: config_lib.SelfPlayConfig, chunk: int = 1):
    self.tree, self.config, self.chunk = searcher.tree, config, chunk
    self.searcher = searcher
    self._starts = jax.jit(jax.vmap(functools.partial(gtcfr.root_start, node=0)))

  def solve(
    self, params, queries: buffers.Queries, key: chex.PRNGKey, rng: np.random.Generator
  ) -> tuple[buffers.Examples, buffers.Queries]:
    """Examples for ``queries`` (1 to ``solver_batch``) and the recursive queries to queue."""
    count = queries.size
    if not 0 < count <= self.config.solver_batch:
      raise ValueError(
        f"the solver takes 1 to {self.config.solver_batch} queries at a time, got {count}"
      )
    subgames = [self.searcher.subgames(n) for n in queries.nodes]
    values = np.zeros(queries.ranges.shape, np.float32)
    policy = np.zeros((count, *self.tree.legal.shape[1:]), np.float32)
    sample = []
    starts = lambda tables, jobs: self._starts(tables, jnp.asarray(queries.ranges[jobs]))  # noqa: E731
    for jobs, results in self.searcher.search_grouped(
      subgames, starts, jax.random.split(key, count), self.chunk, params
    ):
      results = jax.device_get(results)
      asked = results.queries
      for row, i in enumerate(jobs):
        values[i], policy[i] = results.focus_values[row], results.focus_policy[row]
        if self.config.unreached_targets == "best_response":
          unreached = queries.ranges[i] <= 0
          best = results.best_response_values[row, results.focus[row]]
          values[i] = np.where(unreached, best, values[i])
        sample.append(
          (i, subgames[i].game_nodes[asked.nodes[row]], asked.ranges[row], asked.keys[row])
        )
    sample.sort(key=lambda row: row[0])
    examples = buffers.search_examples(self.tree, queries.nodes, queries.ranges, policy, values)
    nodes, ranges, sample_keys = (np.stack([row[k] for row in sample]) for k in (1, 2, 3))
    return examples, buffers.hand_on(nodes, ranges, sample_keys, self.config.q_recursive, rng)
