"""Public-tree CFR+ in JAX: regret-matching+, linear averaging, simultaneous or alternating updates.

One iteration walks the public tree level by level (see :mod:`sog.games.propagation`): both players'
ranges go down, counterfactual values come up, and the updating player's regrets and average policy
change at its nodes. With ``alternating`` updates player 0 is updated first and player 1 then sees
player 0's new policy, as in OpenSpiel's CFR+; with ``simultaneous`` updates both are updated from the
same pass, as in GT-CFR. Many iterations run in one ``lax.fori_loop`` / ``lax.scan``.

Regrets here are per unit of own range (the library's value convention), a positive rescaling of
OpenSpiel's per infostate, so the policies are the same iteration by iteration.

Depth-limited solving (CFR-D): a tree cut by :meth:`~sog.games.tree.PublicTree.subtree` has leaves; a
leaf function maps the ranges [L, 2, S] of all L leaves (breadth-first order) to their counterfactual
values [L, 2, S], called once per pass on the whole batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import propagation
from sog.games import tree as tree_lib

Updates = Literal["alternating", "simultaneous"]
UPDATES = ("alternating", "simultaneous")
LeafFn = Callable[[chex.Array], chex.Array]  # ranges [L, 2, S] -> values [L, 2, S]
Levels = tuple[tree_lib.Level, ...]


@chex.dataclass(frozen=True)
class CFRState:
  """Cumulative regrets and linearly weighted policy sums, one [n, S, A] array per level."""

  regrets: tuple[chex.Array, ...]
  policy_sums: tuple[chex.Array, ...]
  iteration: chex.Array  # completed iterations (int32 scalar)


def device_levels(tree: tree_lib.PublicTree, dtype=jnp.float32) -> Levels:
  """The tree's level tables as JAX arrays (float tables in ``dtype``)."""

  def convert(x: np.ndarray) -> jax.Array:
    return jnp.asarray(x, dtype if np.issubdtype(x.dtype, np.floating) else None)

  return tuple(jax.tree_util.tree_map(convert, level) for level in tree.levels)


def init_state(levels: Levels) -> CFRState:
  zeros = tuple(jnp.zeros(level.legal.shape, level.payoff.dtype) for level in levels)
  return CFRState(regrets=zeros, policy_sums=zeros, iteration=jnp.zeros((), jnp.int32))


def regret_matching(regrets: chex.Array, legal: chex.Array) -> chex.Array:
  """pi(a) proportional to the positive regret; uniform over legal actions when none is positive."""
  positive = jnp.where(legal, jnp.maximum(regrets, 0.0), 0.0)
  total = positive.sum(-1, keepdims=True)
  uniform = legal / legal.sum(-1, keepdims=True)
  return jnp.where(total > 0, positive / jnp.where(total > 0, total, 1.0), uniform)


def current_policy(levels: Levels, state: CFRState) -> list[chex.Array | None]:
  """Regret-matching+ policy per level (None at levels where nobody acts)."""
  return [regret_matching(r, level.legal) if level.actors else None
          for r, level in zip(state.regrets, levels)]


def average_policy(levels: Levels, state: CFRState) -> list[chex.Array]:
  """The linearly weighted average policy (uniform where a row was never reached)."""
  return [regret_matching(s, level.legal) for s, level in zip(state.policy_sums, levels)]


class LeafLayout:
  """Where the depth-limit leaves sit: static per-level indices, and the batch order (BFS)."""

  def __init__(self, tree: tree_lib.PublicTree):
    starts = tree.level_starts
    self.per_level = [np.flatnonzero(tree.is_leaf[starts[d]:starts[d + 1]])
                      for d in range(tree.num_levels)]
    self.nodes = np.flatnonzero(tree.is_leaf)  # tree node indices, in batch order

  @property
  def count(self) -> int:
    return int(self.nodes.size)

  def gather(self, per_level: Sequence[chex.Array]) -> chex.Array:
    return jnp.concatenate([x[i] for x, i in zip(per_level, self.per_level) if i.size])

  def scatter(self, batch: chex.Array, like: Sequence[chex.Array]) -> list[chex.Array | None]:
    out, offset = [], 0
    for x, i in zip(like, self.per_level):
      if i.size:
        out.append(jnp.zeros_like(x).at[i].set(batch[offset:offset + i.size]))
        offset += i.size
      else:
        out.append(None)
    return out


def evaluate_pass(levels: Levels, policy: Sequence[chex.Array], root_ranges: chex.Array,
                  leaves: LeafLayout | None = None, leaf_fn: LeafFn | None = None):
  """Ranges down and values up for ``policy``; leaf values from ``leaf_fn`` in one batch."""
  ranges = propagation.reach_down(levels, policy, root_ranges, jnp)
  leaf_values = None
  if leaves is not None and leaves.count:
    if leaf_fn is None:
      raise ValueError("the tree has depth-limit leaves: a leaf function is required")
    leaf_values = leaves.scatter(leaf_fn(leaves.gather(ranges)), ranges)
  values, q_values = propagation.values_up(levels, policy, ranges, jnp, leaf_values)
  return ranges, values, q_values


def _update_player(levels: Levels, state: CFRState, policy, ranges, values, q_values, player: int,
                   weight: chex.Array) -> tuple[tuple, tuple]:
  regrets, sums = list(state.regrets), list(state.policy_sums)
  for d, level in enumerate(levels):
    if player not in level.actors or q_values[d] is None:
      continue
    rows = (level.kind == player)[:, None] & level.valid[:, player]
    acting = rows[..., None] & level.legal
    instant = q_values[d][:, player] - values[d][:, player][..., None]
    regrets[d] = jnp.where(acting, jnp.maximum(regrets[d] + instant, 0.0), regrets[d])
    own = ranges[d][:, player][..., None]
    sums[d] = jnp.where(acting, sums[d] + weight * own * policy[d], sums[d])
  return tuple(regrets), tuple(sums)


def iteration(levels: Levels, state: CFRState, root_ranges: chex.Array, updates: Updates,
              leaves: LeafLayout | None = None,
              leaf_fn: LeafFn | None = None) -> tuple[CFRState, chex.Array]:
  """One CFR+ iteration; returns the new state and the root values [2, S] of the current policies."""
  weight = (state.iteration + 1).astype(root_ranges.dtype)  # linear averaging: iteration t weighs t
  players = (0, 1) if updates == "alternating" else ((0, 1),)
  root_values = None
  for group in players:
    policy = current_policy(levels, state)
    ranges, values, q_values = evaluate_pass(levels, policy, root_ranges, leaves, leaf_fn)
    if root_values is None:
      root_values = values[0][0]
    for player in np.atleast_1d(group):
      regrets, sums = _update_player(levels, state, policy, ranges, values, q_values, int(player),
                                     weight)
      state = state.replace(regrets=regrets, policy_sums=sums)
  return state.replace(iteration=state.iteration + 1), root_values


def run(levels: Levels, state: CFRState, root_ranges: chex.Array, iterations: int, updates: Updates,
        leaves: LeafLayout | None = None, leaf_fn: LeafFn | None = None,
        record_root_values: bool = False):
  """``iterations`` CFR+ iterations fused in one loop; optionally the root values of each."""
  step = lambda s: iteration(levels, s, root_ranges, updates, leaves, leaf_fn)  # noqa: E731
  if record_root_values:
    return jax.lax.scan(lambda s, _: step(s), state, None, length=iterations)
  return jax.lax.fori_loop(0, iterations, lambda _, s: step(s)[0], state), None


def average_root_values(levels: Levels, state: CFRState, root_ranges: chex.Array,
                        leaves: LeafLayout | None = None,
                        leaf_fn: LeafFn | None = None) -> chex.Array:
  """Root counterfactual values [2, S] of the average policy (leaves valued by ``leaf_fn``)."""
  _, values, _ = evaluate_pass(levels, average_policy(levels, state), root_ranges, leaves, leaf_fn)
  return values[0][0]


def check_updates(updates: str) -> Updates:
  if updates not in UPDATES:
    raise ValueError(f"updates must be one of {UPDATES}, got {updates!r}")
  return updates  # type: ignore[return-value]
