"""Ranges down and counterfactual values up a public tree, level by level.

Written once for both array back ends: ``xp=numpy`` (float64, exact evaluation) and ``xp=jax.numpy``
(inside jit, for CFR and search). Every step is a gather over a whole level, so the only Python loop
is over the tree's depth, unrolled at trace time.

Per level, ranges and values are [n, 2, S] (node, player, infostate) and a policy is [n, S, A], the
acting player's action probabilities at each node. ``weigh_actions`` applies the policy as
c[n, i, s, a] = pi(a | s) where player i acts and 1 elsewhere: a player's range moves down through
its own actions weighted by the policy and through everyone else's unweighted, and its value comes
up the same way. Static facts of a level (who acts in it, whether it has terminals or children) skip
work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sog.games import tree as tree_lib

Array = Any


def weigh_actions(level: tree_lib.Level, policy: Array | None, x: Array, xp) -> Array:
  """x[n, i, s, a] * c[n, i, s, a] with c = pi(a | s) where player i acts and 1 elsewhere."""
  if not level.actors:
    return x
  acts = level.kind[:, None] == xp.arange(2)[None, :]  # [n, 2]
  return x * xp.where(acts[:, :, None, None], policy[:, None], 1.0)


def reach_down(
  levels: Sequence[tree_lib.Level],
  policy: Sequence[Array | None],
  root_ranges: Array,
  xp,
  entry: Sequence[tuple[Array, Array] | None] | None = None,
) -> list[Array]:
  """Both players' ranges [n, 2, S] at every level, from root ranges [2, S] and a policy per level.

  A level's policy may cover all its nodes or only its ``inner`` ones (the only ones with children).
  ``entry`` optionally gives, per level, (mask [n], ranges [n, 2, S]): masked nodes take those
  ranges instead of their parents' (several disjoint subgames solved in one pass over a larger
  tree).
  """
  ranges = [(root_ranges * levels[0].valid[0])[None]]
  if entry is not None and entry[0] is not None:
    ranges[0] = xp.where(entry[0][0][:, None, None], entry[0][1], ranges[0])
  for d in range(1, len(levels)):
    parent_level = levels[d - 1]
    k = parent_level.inner
    previous = ranges[d - 1][:k, ..., None]
    if parent_level.actors:
      extended = weigh_actions(parent_level.slice(0, k), policy[d - 1][:k], previous, xp)
    else:  # only the dummy action 0 is read
      extended = xp.broadcast_to(previous, (*previous.shape[:-1], parent_level.legal.shape[-1]))
    gathered = extended.reshape(-1)[levels[d].down_index] * levels[d].down_weight
    ranges.append(gathered.sum(-1))
    if entry is not None and entry[d] is not None:
      ranges[d] = xp.where(entry[d][0][:, None, None], entry[d][1], ranges[d])
  return ranges


def terminal_values(level: tree_lib.Level, ranges: Array, xp) -> Array:
  """v_0(s0) = sum_s1 U[s0, s1] r_1(s1) and v_1(s1) = -sum_s0 U[s0, s1] r_0(s0), as [n, 2, S]."""
  return payoff_values(level.payoff, ranges, xp)


def payoff_values(payoff: Array, ranges: Array, xp) -> Array:
  """Both players' counterfactual values [n, 2, S] at terminals of payoffs U = W u_0 [n, S0, S1]
  (each player's own infostates, S0, S1 <= S; [n, S, S] in the tables), given ranges [n, 2, S]."""
  (S0, S1), S = payoff.shape[1:], ranges.shape[-1]
  v0 = xp.einsum("nab,nb->na", payoff, ranges[:, 1, :S1])
  v1 = -xp.einsum("nab,na->nb", payoff, ranges[:, 0, :S0])
  return xp.stack([xp.pad(v0, [(0, 0), (0, S - S0)]), xp.pad(v1, [(0, 0), (0, S - S1)])], axis=1)


def action_values(level: tree_lib.Level, next_values: Array, xp) -> Array:
  """Q[n, i, s, a]: values of the children (s, a) leads to (all children for non-actors)."""
  rows = next_values[level.child_index]  # [n, A, K, 2, S], whole rows
  if not level.same_infostates:
    rows = xp.take_along_axis(rows, level.up_infostate, axis=-1)
  return (rows * level.up_weight).sum(2).transpose(0, 2, 3, 1)


def values_up(
  levels: Sequence[tree_lib.Level],
  policy: Sequence[Array],
  ranges: Sequence[Array],
  xp,
  leaf_values: Sequence[Array | None] | None = None,
  best_response: tuple[bool, bool] = (False, False),
) -> tuple[list[Array], list[Array]]:
  """Counterfactual values [n, 2, S] and action values [inner, 2, S, A] at every level.

  Args:
    levels, policy, ranges: the tree, a policy per level and the ranges from :func:`reach_down`.
    leaf_values: per level, values [n, 2, S] of its depth-limit leaves (None for a level without); a
      leaf's value replaces whatever its subtree in the tables would give (a search's frontier).
    best_response: per player, whether it plays a best response (max over legal actions) at its own
      nodes instead of the policy; its values then are best-response counterfactual values.
  """
  depth = len(levels)
  values: list[Array] = [None] * depth
  q_values: list[Array] = [None] * depth  # [inner, 2, S, A]: only the level's inner nodes
  for d in reversed(range(depth)):
    level, k = levels[d], levels[d].inner
    parts = []
    if k:
      inner = level.slice(0, k)
      value = (
        terminal_values(inner, ranges[d][:k], xp)
        if level.inner_terminals
        else xp.zeros_like(ranges[d][:k])
      )
      if d + 1 < depth:
        q = action_values(inner, values[d + 1], xp)
        on_policy = weigh_actions(inner, None if policy[d] is None else policy[d][:k], q, xp).sum(
          -1
        )
        if any(best_response):
          best = xp.where(inner.legal[:, None], q, -xp.inf).max(-1)
          own = (inner.kind[:, None] == xp.arange(2)[None, :]) & xp.asarray(best_response)[None, :]
          on_policy = xp.where(own[:, :, None], best, on_policy)
        value = value + on_policy
        q_values[d] = q
      parts.append(value)
    if k < level.size:
      parts.append(terminal_values(level.slice(k, level.size), ranges[d][k:], xp))
    value = parts[0] if len(parts) == 1 else xp.concatenate(parts)
    if leaf_values is not None and leaf_values[d] is not None:
      value = xp.where(level.is_leaf[:, None, None], leaf_values[d], value)
    values[d] = value
  return values, q_values


def split_levels(tree: tree_lib.PublicTree, per_node: Array) -> list[Array]:
  """Cuts an array over the tree's nodes into per-level pieces."""
  starts = tree.level_starts
  return [per_node[starts[d] : starts[d + 1]] for d in range(tree.num_levels)]
