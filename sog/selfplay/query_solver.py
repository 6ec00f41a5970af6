"""The query solver (SoG, Algorithm 2): it turns leaf queries into value and policy targets.

It takes a batch of queries (PBSs beta = (public state, r0, r1)) from the query buffer, runs a
GT-CFR search on the belief pool from each with the current network (a plain search rooted at the
query's public state, at its pair weights and ranges), and makes one example per query: its root
counterfactual values for both players (value targets at every valid infostate; at an infostate the
query's range does not reach, the best response's value, or with ``unreached_targets="average"``
the average policy's) and its root policy for the actor (policy target). Each of the searches' own
sampled leaf queries goes back to the query buffer with probability q_recursive, so values are
bootstrapped through ever deeper searches (SoG's recursive queries).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import registry
from sog.search.pool import belief_paths
from sog.search.pool import belief_search
from sog.search.pool import beliefs
from sog.search.pool import sized
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


class QuerySolver:
  """Answers batches of up to ``config.solver_batch`` queries of ``game`` with the searches of
  ``pools`` (:func:`sog.selfplay.actor.pools_for`): the queries needing one pool size (their
  subgames, :mod:`sog.search.pool.sized`) as vmapped chunks of ``chunk`` searches (a short chunk
  padded by repeating a query; one compilation per pool size). A query's public state and pair
  weights are grown from its path (:func:`sog.search.pool.belief_paths.along`). In a
  perfect-information game its ranges are 1 (the actors and the solver ask states:
  :func:`~sog.selfplay.buffers.searched`), so its search is the plain search from its state."""

  def __init__(
    self,
    game: registry.Game,
    pools: sized.SizedPools,
    config: config_lib.SelfPlayConfig,
    chunk: int = 1,
  ):
    self.config, self.chunk, self.pools = config, chunk, pools
    self.path_length = pools.path_length
    rules, searcher = game.public_game, pools.searcher
    self.perfect_information = public_game.is_perfect_information(rules)

    def start(path, ranges):
      state, weight = belief_paths.along(rules, path, searcher.dtype)
      valid = beliefs.valid_infostates(weight[None])[0]
      plain = belief_search.root_start(rules, ranges * valid, searcher.dtype, searcher.branch_depth)
      return plain.replace(state=state, weight=weight)

    self._starts = jax.jit(jax.vmap(start))

  def solve(
    self, params, queries: buffers.Queries, key: chex.PRNGKey, rng: np.random.Generator
  ) -> tuple[buffers.Examples, buffers.Queries]:
    """Examples for ``queries`` (1 to ``solver_batch``) and the recursive queries to queue."""
    count = queries.size
    if not 0 < count <= self.config.solver_batch:
      raise ValueError(
        f"the solver takes 1 to {self.config.solver_batch} queries at a time, got {count}"
      )
    values = np.zeros(queries.ranges.shape, np.float32)
    policy, facts, sample = [None] * count, [None] * count, [None] * count
    rngs = jax.random.split(key, count)
    for jobs, rows, searcher in self.pools.chunks(queries.paths, self.chunk):
      starts = self._starts(jnp.asarray(queries.paths[rows]), jnp.asarray(queries.ranges[rows]))
      results = jax.device_get(searcher.search_from_batch(rngs[rows], starts, params))
      for row, i in enumerate(jobs):
        values[i] = buffers.root_values(
          results, row, queries.ranges[i], self.config.unreached_targets
        )
        policy[i] = results.focus_policy[row]
        facts[i], sample[i] = buffers.searched(
          results, row, queries.paths[i], self.path_length, self.perfect_information
        )
    examples = buffers.search_examples(
      buffers.PublicFacts.stack(facts), queries.ranges, np.stack(policy), values
    )
    paths, ranges, keys = (np.stack([row[k] for row in sample]) for k in range(3))
    return examples, buffers.hand_on(paths, ranges, keys, self.config.q_recursive, rng)
