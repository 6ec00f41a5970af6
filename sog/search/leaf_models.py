"""What values a search's frontier: the leaf models GT-CFR queries, in one batch per CFR pass.

A leaf model maps a batch of L public belief states of the search tables (node indices and ranges, with
a mask for the batch's padding) to counterfactual values [L, 2, S] and policy logits [L, 2, S, A] (the
prior PUCT uses). Three are provided here: zeros, the exact oracle (a full subgame solve at each leaf's
current ranges) and, in :mod:`sog.nets.leaf`, the CVPN.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp

from sog.search import cfr
from sog.search import tables as tables_lib


class LeafOutput(NamedTuple):
  """A leaf model's answer. ``policy_sums`` is only given by models that play below the leaves (the
  exact oracle): the realisation weights [M, S, A] of their strategy at the tables' inner nodes (own
  range at the node times the action probability), which GT-CFR averages like its own policy."""

  values: chex.Array  # [L, 2, S] counterfactual values (the library's units)
  logits: chex.Array  # [L, 2, S, A] policy logits (any value where an action is illegal)
  policy_sums: chex.Array | None = None


class LeafModel(NamedTuple):
  """``apply(params, tables, nodes [L], ranges [L, 2, S], mask [L]) -> LeafOutput``.

  ``params`` (network weights, or None) is an argument of the compiled search, never a constant in it.
  Rows where ``mask`` is False are padding: their outputs are ignored.
  """

  apply: Callable[[Any, tables_lib.SearchTables, chex.Array, chex.Array, chex.Array], LeafOutput]
  params: Any = None


def _uniform_logits(tables: tables_lib.SearchTables, nodes: chex.Array) -> chex.Array:
  legal = tables.legal[nodes]
  return jnp.broadcast_to(jnp.where(legal, 0.0, -jnp.inf)[:, None], (nodes.shape[0], 2,
                                                                        *legal.shape[1:]))


def zero_leaf_model() -> LeafModel:
  """Every leaf is worth 0 to both players; the prior is uniform."""

  def apply(params, tables, nodes, ranges, mask):
    del params, mask
    return LeafOutput(jnp.zeros_like(ranges), _uniform_logits(tables, nodes))

  return LeafModel(apply)


def trembled(ranges: chex.Array, valid: chex.Array, tremble: float) -> chex.Array:
  """ranges + tremble * uniform over each player's valid infostates (ranges are at most 1).

  Solving a subgame at trembled ranges makes every player's strategy there a best response to a reach
  that includes every opponent infostate. Where the opponent's true range is 0 (or nearly), an
  untrembled solve returns an arbitrary strategy (or one exploiting a sliver of a range), against which
  a trunk's regrets for entering the subgame are wrong; see
  :func:`sog.search.solver.exact_leaf_oracle`.
  """
  valid = valid.astype(ranges.dtype)
  return ranges + tremble * valid / jnp.maximum(valid.sum(-1, keepdims=True), 1.0)


def solve_at_nodes(tables: tables_lib.SearchTables, nodes: chex.Array, ranges: chex.Array,
                   mask: chex.Array, iterations: int, tremble: float):
  """Solves the disjoint subgames below ``nodes`` at ``ranges`` together, by one CFR+ run over the
  whole tables (alternating updates) in which each node's ranges enter the tree at that node.

  No node may lie below another. Returns the average policy [M, S, A] at the tables' inner nodes, and
  its per-level ranges and values at the true (untrembled) ranges.
  """
  n = tables.num_nodes
  inside = jnp.zeros(n, bool).at[nodes].max(mask)
  entry_ranges = jnp.where(mask[:, None, None], ranges, 0.0)
  placed = jnp.zeros((n, *ranges.shape[1:]), ranges.dtype).at[nodes].add(entry_ranges)
  shaken = jnp.zeros_like(placed).at[nodes].add(
      jnp.where(mask[:, None, None], trembled(ranges, tables.valid[nodes], tremble), 0.0))
  levels = tables.levels
  zero_root = jnp.zeros(ranges.shape[1:], ranges.dtype)
  entry = list(zip(tables.split(inside), tables.split(shaken)))
  state, _ = cfr.run(levels, cfr.init_state(levels), zero_root, iterations, "alternating",
                     entry=entry)
  policy = cfr.average_policy(levels, state)
  ranges, values, _, _ = cfr.evaluate_pass(levels, policy, zero_root,
                                           entry=list(zip(tables.split(inside),
                                                          tables.split(placed))))
  return policy, ranges, values


def realisation_weights(tables: tables_lib.SearchTables, policy: chex.Array,
                        ranges: list[chex.Array]) -> chex.Array:
  """[M, S, A]: the actor's range at each inner node times its policy (zero where no player acts)."""
  own = jnp.concatenate([r[:level.inner] for r, level in zip(ranges, tables.levels)])
  kind = tables.to_inner(tables.kind)
  actor_range = jnp.where((kind == 1)[:, None], own[:, 1], own[:, 0])
  return jnp.where((kind < 2)[:, None, None], actor_range[..., None] * policy, 0.0)


def exact_leaf_model(iterations: int = 200, tremble: float = 1e-3) -> LeafModel:
  """The exact oracle: each leaf's full subgame solved by ``iterations`` of CFR+ at its current ranges
  (trembled by ``tremble``, valued at the true ranges); uniform prior.

  All leaves are solved in one CFR+ run over the search tables (their subgames are disjoint), so one
  oracle call costs ``iterations`` double passes over the root's subgame, however many leaves there
  are. Slow: for tests and benchmarks of soundness. It also returns the realisation weights of its
  leaf strategies, so a search can average them into a strategy for the whole subgame (CFR-D's
  sound composition, see :meth:`sog.search.gtcfr.GTCFR.completed_policy`).
  """
  if iterations < 1:
    raise ValueError(f"oracle iterations must be >= 1, got {iterations}")
  if tremble < 0:
    raise ValueError(f"tremble must be >= 0, got {tremble}")

  def apply(params, tables, nodes, ranges, mask):
    del params

    def solve(_):
      policy, node_ranges, values = solve_at_nodes(tables, nodes, ranges, mask, iterations, tremble)
      return (jnp.concatenate(values)[nodes],
              realisation_weights(tables, policy, node_ranges))

    def nothing(_):
      return jnp.zeros_like(ranges), jnp.zeros(tables.to_inner(tables.legal).shape, ranges.dtype)

    values, policy_sums = jax.lax.cond(mask.any(), solve, nothing, None)
    return LeafOutput(values, _uniform_logits(tables, nodes), policy_sums)

  return LeafModel(apply)
