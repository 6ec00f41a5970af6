"""The query solver (SoG, Algorithm 2): it turns leaf queries into value and policy targets.

It takes a batch of queries (PBSs beta = (public state, r0, r1)) from the query buffer, runs a GT-CFR
search from each with the current network (one vmapped batch, each search a plain one rooted at its
query), and makes one example per query: its root counterfactual values for both players (value
targets at every valid infostate) and its root policy for the actor (policy target). Each of the
searches' own sampled leaf queries goes back to the query buffer with probability q_recursive, so
values are bootstrapped through ever deeper searches (SoG's recursive queries).
"""

from __future__ import annotations

import functools

import chex
import jax
import numpy as np

from sog.games import registry
from sog.search import gtcfr
from sog.search import leaf_models
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


class QuerySolver:
  """Answers batches of up to ``config.solver_batch`` queries."""

  def __init__(self, game: registry.Game, leaf_model: leaf_models.LeafModel,
               search_config: gtcfr.GTCFRConfig, config: config_lib.SelfPlayConfig):
    self.tree, self.config = game.tree, config
    searcher = gtcfr.GTCFR(game, leaf_model, search_config)
    self.tables = searcher.tables  # a jit argument, not a constant: big tables compile slowly

    def solve_all(tables, params, nodes, ranges, key):
      search_one = functools.partial(gtcfr.search, tables, leaf_model.apply, config=search_config,
                                     capacity=searcher.capacity, k=searcher.k)
      starts = jax.vmap(lambda n, r: gtcfr.root_start(tables, r, n))(nodes, ranges)
      rngs = jax.random.split(key, nodes.shape[0])
      results = jax.vmap(lambda rng, start: search_one(params=params, rng=rng, start=start))(
          rngs, starts)
      return results.root_values, results.root_policy, results.queries

    self._solve = jax.jit(solve_all)

  def solve(self, params, queries: buffers.Queries, key: chex.PRNGKey,
            rng: np.random.Generator) -> tuple[buffers.Examples, buffers.Queries]:
    """Examples for ``queries`` (at most ``solver_batch`` of them; the batch is padded to that size
    so that one compilation serves every call) and the recursive queries to queue."""
    count, batch = queries.size, self.config.solver_batch
    if not 0 < count <= batch:
      raise ValueError(f"the solver takes 1 to {batch} queries at a time, got {count}")
    pad = np.concatenate([np.arange(count), np.zeros(batch - count, int)])
    values, policy, sample = jax.device_get(self._solve(self.tables, params, queries.nodes[pad],
                                                        queries.ranges[pad], key))
    examples = buffers.search_examples(self.tree, queries.nodes, queries.ranges,
                                       np.asarray(policy[:count]), np.asarray(values[:count]))
    return examples, buffers.hand_on(sample.nodes[:count], sample.ranges[:count],
                                     sample.keys[:count], self.config.q_recursive, rng)
