"""Continual re-solving (SoG, "Modified continual re-solving"): where a search starts from a
summary.

After a search, a player keeps a :class:`Summary`: the tree's public states, and there both players'
ranges and counterfactual values under the search's average policy. At the player's next decision,
at public state s_pub, :func:`plan` makes the next search's :class:`~sog.search.types.Start`:

  * s_prev is the public state of the summary's tree closest to s_pub (its deepest ancestor there,
    s_pub itself if the tree holds it);
  * the initial tree is the single branch from s_prev down to s_pub, with every other child of the
    branch's nodes a frontier leaf; simulations start at s_pub, so the tree grows only below it, and
    the player acts with the re-solved average policy at s_pub;
  * the root ranges are the summary's at s_prev. Safe re-solving keeps the player's own range and
    puts the gadget (:mod:`sog.search.gadget`) on the opponent's: at each opponent infostate,
    Terminate pays the summary's counterfactual value there, Follow enters the subgame, and the
    opponent's range is alpha * (Follow probability) * p_o + (1 - alpha) * (its range in the
    summary), p_o the chance weight of the infostate at s_prev (so both terms are ranges in the same
    units). Unsafe re-solving keeps both ranges of the summary and no gadget.

The first decision of a game starts from :func:`initial_summary` (the game's root and its prior
beliefs, no gadget): a search from the root down the branch to the current state.

Every function here is pure and traceable, so a batch of plans runs under ``vmap``.
"""

from __future__ import annotations

import dataclasses

import chex
import jax.numpy as jnp

from sog.search import gadget as gadget_lib
from sog.search import tables as tables_lib
from sog.search import types

TERMINATE_VALUES = ("average", "best_response")


@dataclasses.dataclass(frozen=True)
class ResolvingConfig:
  """How a re-solving search starts.

  Attributes:
    safe: put the gadget on the opponent's range (SoG); False: unsafe re-solving, the opponent's
      range of the earlier search taken as given.
    alpha: the gadget's weight in the opponent's range, alpha * f * p_o + (1 - alpha) * r_prev (SoG
      and DeepStack use 0.5; 1 is the plain gadget with its safety guarantee).
    terminate_values: which of the earlier search's opponent values Terminate pays: "best_response"
      (the default: the opponent's counterfactual best-response values against the searcher's
      average policy, as in Burch et al.'s re-solving and DeepStack, the values the gadget's safety
      bound is stated in) or "average" (its values under both players' average policies, which
      undervalue opponent infostates the search barely reached). The frontier is valued by the
      leaf model either way; docs/results/leduc_protocol.md compares the two.
  """

  safe: bool = True
  alpha: float = 0.5
  terminate_values: str = "best_response"

  def __post_init__(self):
    if not isinstance(self.safe, bool):
      raise ValueError(f"re-solving: safe must be a bool, got {self.safe!r}")
    if not 0.0 <= self.alpha <= 1.0:
      raise ValueError(f"re-solving: alpha must be in [0, 1], got {self.alpha}")
    if self.terminate_values not in TERMINATE_VALUES:
      raise ValueError(
        f"re-solving: terminate_values must be one of {TERMINATE_VALUES}, got "
        f"{self.terminate_values!r}"
      )


@chex.dataclass(frozen=True)
class Summary:
  """What a player keeps from its last search (per-node arrays over the search tables' N nodes).

  Attributes:
    in_tree: [N] bool, the public states of the search's tree.
    ranges: [N, 2, S] both players' ranges there under the search's average policy.
    values: [N, 2, S] both players' counterfactual values there.
    resolvable: scalar bool; False for the game's start (no earlier search: no gadget).
  """

  in_tree: chex.Array
  ranges: chex.Array
  values: chex.Array
  resolvable: chex.Array


def initial_summary(tables: tables_lib.SearchTables, root_ranges: chex.Array) -> Summary:
  """The summary before any search: the tables' root, ``root_ranges`` [2, S] (the game's priors)."""
  n, S = tables.num_nodes, tables.valid.shape[-1]
  dtype = tables.levels[0].payoff.dtype
  ranges = jnp.zeros((n, 2, S), dtype).at[0].set(jnp.asarray(root_ranges, dtype) * tables.valid[0])
  return Summary(
    in_tree=jnp.arange(n) == 0,
    ranges=ranges,
    values=jnp.zeros((n, 2, S), dtype),
    resolvable=jnp.bool_(False),
  )


def summarise(result: types.SearchResult, config: ResolvingConfig = ResolvingConfig()) -> Summary:
  """The summary a player keeps from a search (its values by ``config.terminate_values``)."""
  values = (
    result.best_response_values if config.terminate_values == "best_response" else result.values
  )
  return Summary(
    in_tree=result.in_tree,
    ranges=result.ranges,
    values=values,
    resolvable=jnp.ones_like(result.in_tree[0]),
  )


def closest_known(
  tables: tables_lib.SearchTables, in_tree: chex.Array, node: chex.Array
) -> chex.Array:
  """s_prev: the deepest ancestor of ``node`` (itself included) in ``in_tree`` (-1 if none)."""
  path = tables.ancestors[node]
  known = (path >= 0) & in_tree[jnp.maximum(path, 0)]
  deepest = jnp.max(jnp.where(known, jnp.arange(path.shape[0]), -1))
  return jnp.where(deepest >= 0, path[jnp.maximum(deepest, 0)], -1)


def plan(
  tables: tables_lib.SearchTables,
  summary: Summary,
  node: chex.Array,
  config: ResolvingConfig = ResolvingConfig(),
) -> types.Start:
  """The start of the re-solving search for the player acting at ``node`` (s_pub).

  ``node`` must be a decision node whose ancestors include a public state of the summary's tree (the
  game's root for :func:`initial_summary`; the summarised search's focus or any state below it for a
  search's summary): :class:`~sog.search.agent.SoGAgent` checks this before it plans.
  """
  node = jnp.asarray(node, jnp.int32)
  root = closest_known(tables, summary.in_tree, node)
  path = tables.ancestors[node]
  root_depth = (tables.ancestors[root] >= 0).sum() - 1
  on_branch = (path >= 0) & (jnp.arange(path.shape[0]) >= root_depth)
  branch = jnp.zeros(tables.num_nodes, bool).at[jnp.maximum(path, 0)].max(on_branch)
  player = jnp.clip(tables.kind[node], 0, 1).astype(jnp.int32)
  opponent = 1 - player
  ranges = summary.ranges[root]
  gadget = gadget_lib.Gadget(
    enabled=summary.resolvable & config.safe,
    player=opponent,
    terminate_values=summary.values[root, opponent],
    previous_range=ranges[opponent],
    prior=tables.prior_weight[root, opponent].astype(ranges.dtype),
    alpha=jnp.asarray(config.alpha, ranges.dtype),
  )
  return types.Start(root=root, focus=node, branch=branch, ranges=ranges, gadget=gadget)
