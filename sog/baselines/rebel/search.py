"""ReBeL's subgame solve (Brown et al. 2020, section 4 and algorithm 1) as one pure function.

A subgame is rooted at a public belief state beta_r = (public state, ranges [2, S]) and holds the
``depth`` levels of public states below it; the non-terminal states at the cut are its depth-limit
leaves. CFR-D runs T iterations of CFR+ on it: at every pass the leaves get the leaf model's values
at the ranges the current policy pi^t reaches them with (the PBS value network's, or the exact
oracle's).

The solve runs on the tables of the root's whole subgame (:class:`sog.search.subgames.Subgames`: one
shape per root depth, so roots at one depth run as one ``vmap``), cut to the slab's levels: the leaf
model then values the cut's nodes in the same tables GT-CFR's frontier would use.
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp

from sog.baselines.rebel import config as config_lib
from sog.games import public_game
from sog.search import cfr
from sog.search import leaf_models
from sog.search import tables as tables_lib


@chex.dataclass(frozen=True)
class SubgameSolution:
  """What one subgame solve returns; policies are over the slab's inner rows (the tables' first
  ``slab_rows`` inner rows, level by level), ranges and values in the library's units.

  Attributes:
    policy: [M, S, A] the policy played in the slab: pi^t of the sampled iteration t, or the
      average.
    average_policy: [M, S, A] the linearly weighted average of the T iterations' policies.
    iteration: the t played (1..T; 0 when the average is played).
    leaf_ranges: [n, 2, S] the ranges of the cut level's nodes under the played policy (the next
      subgames' roots; zero rows at terminals and padding).
    root_values: [2, S] the root's counterfactual values under each iteration's policies pi^t,
      leaves valued at pi^t's ranges, averaged with weight t: ReBeL's value target for the root's
      PBS (section 4, CFR-D), the values of the average policy in the limit.
  """

  policy: chex.Array
  average_policy: chex.Array
  iteration: chex.Array
  leaf_ranges: chex.Array
  root_values: chex.Array


def slab_levels(tables: tables_lib.SearchTables, depth: int) -> cfr.Levels:
  """The tables' first ``depth`` + 1 levels, the non-terminal real nodes of the last one marked as
  depth-limit leaves (all levels, without leaves, when the subgame ends sooner)."""
  if depth + 1 >= len(tables.levels):
    return tables.levels
  levels = tables.levels[: depth + 1]
  cut = levels[-1]
  real = tables.split(tables.game_node >= 0)[depth]
  return (*levels[:-1], cut.replace(is_leaf=real & (cut.kind != public_game.TERMINAL)))


def slab_rows(tables: tables_lib.SearchTables, depth: int) -> int:
  """M: the inner rows of :func:`slab_levels` (a static count)."""
  return sum(level.inner for level in slab_levels(tables, depth))


def sample_iteration(rng: chex.PRNGKey, iterations: int) -> chex.Array:
  """t in 1..T with P(t) = t / (T (T + 1) / 2): the weight iteration t has in CFR+'s linear average,
  so that playing pi^t for a drawn t plays, in expectation, the average policy (ReBeL, section
  6)."""
  t = jnp.arange(1, iterations + 1, dtype=jnp.float32)
  return jax.random.categorical(rng, jnp.log(t)).astype(jnp.int32) + 1


def _leaf_values(
  tables: tables_lib.SearchTables, levels: cfr.Levels, model: leaf_models.LeafModel, params: Any
) -> cfr.LeafValuesFn | None:
  """The leaf model's values at the cut level's leaves, one call per pass on all its rows (the
  terminals and padding masked out), from the model's initial state every time."""
  if len(levels) == len(tables.levels):  # the subgame ends within the slab
    return None
  cut = levels[-1]
  nodes = tables.level_starts[len(levels) - 1] + jnp.arange(cut.size, dtype=jnp.int32)

  def leaf_values(ranges):
    out = model.apply(params, tables, nodes, ranges[-1], cut.is_leaf, model.init(tables, None))
    values = jnp.where(cut.is_leaf[:, None, None], out.values, 0.0)
    return [None] * (len(levels) - 1) + [values], None

  return leaf_values


def solve(
  tables: tables_lib.SearchTables,
  params: Any,
  root_ranges: chex.Array,
  rng: chex.PRNGKey,
  model: leaf_models.LeafModel,
  config: config_lib.ReBeLConfig,
) -> SubgameSolution:
  """Solves the slab of ``config.depth`` levels below the tables' root at ``root_ranges`` [2, S] by
  T iterations of CFR-D, keeping pi^t of an iteration t drawn by :func:`sample_iteration`."""
  levels = slab_levels(tables, config.depth)
  leaf_values = _leaf_values(tables, levels, model, params)
  root_ranges = root_ranges.astype(levels[0].payoff.dtype)
  sampled = sample_iteration(rng, config.iterations)
  acting = cfr.acting_masks(levels)

  def body(i, carry):
    state, played, value_sum = carry
    played = jnp.where(i + 1 == sampled, cfr.current_policy(levels, state), played)
    state, values = cfr.iteration(levels, state, root_ranges, config.updates, leaf_values, acting)
    return state, played, value_sum + (i + 1) * values

  initial = cfr.init_state(levels)
  state, played, value_sum = jax.lax.fori_loop(
    0,
    config.iterations,
    body,
    (initial, jnp.zeros_like(initial.regrets), jnp.zeros_like(root_ranges)),
  )
  average = cfr.average_policy(levels, state)
  if config.play == "average":
    played, sampled = average, jnp.int32(0)
  ranges = cfr.evaluate_pass(levels, played, root_ranges)[0]
  return SubgameSolution(
    policy=played,
    average_policy=average,
    iteration=sampled,
    leaf_ranges=ranges[-1],
    root_values=value_sum / (config.iterations * (config.iterations + 1) / 2),
  )
