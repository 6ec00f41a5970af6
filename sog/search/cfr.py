"""Public-tree CFR+ in JAX: regret-matching+, linear averaging, simultaneous or alternating updates.

One iteration walks the public tree level by level (see :mod:`sog.games.propagation`): both players'
ranges go down, counterfactual values come up, and the updating player's regrets and average policy
change at its nodes. With ``alternating`` updates player 0 is updated first and player 1 then sees
player 0's new policy, as in OpenSpiel's CFR+; with ``simultaneous`` updates both are updated from
the same pass, as in GT-CFR. Many iterations run in one ``lax.fori_loop`` / ``lax.scan``.

Regrets here are per unit of own range (the library's value convention), a positive rescaling of
OpenSpiel's per infostate, so the policies are the same iteration by iteration.

An instantaneous regret Q(s, a) - v(s) that is zero in exact arithmetic (an action the policy
plays purely, actions whose values tie) comes out a rounding error above or below zero, and
regret-matching+ turns a positive one into a pure policy: which one a sum's order gives would decide
the policy. :func:`regret_gains` counts a difference within :data:`REGRET_TIE_EPS` float64 epsilons
(relative to |Q| + |v|) as zero, so that engines that sum in different orders agree in float64; in
float32 only exact ties are that small, and nothing changes.

Depth-limited solving (CFR-D): a tree cut by :meth:`~sog.games.tree.PublicTree.subtree` has leaves;
a leaf function maps the ranges [L, 2, S] of all L leaves (breadth-first order) to their
counterfactual values [L, 2, S], called once per pass on the whole batch.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
import itertools
from typing import Any
from typing import Literal

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import propagation
from sog.games import tree as tree_lib

#: An instantaneous regret within this many float64 epsilons of zero (relative to |Q| + |v|) is a
#: tie: 2.3e-13 relative, float64 rounding of an exact zero (no float32 difference is that small).
REGRET_TIE_EPS = 1024

Updates = Literal["alternating", "simultaneous"]
UPDATES = ("alternating", "simultaneous")
LeafFn = Callable[[chex.Array], chex.Array]  # ranges [L, 2, S] -> values [L, 2, S]
Levels = tuple[tree_lib.Level, ...]


@chex.dataclass(frozen=True)
class CFRState:
  """Cumulative regrets and linearly weighted policy sums [M, S, A] over the M inner (non-terminal)
  nodes, level by level (each level's inner nodes come first in it)."""

  regrets: chex.Array
  policy_sums: chex.Array
  iteration: chex.Array  # completed iterations (int32 scalar)


def to_device(levels: Levels, dtype=jnp.float32) -> Levels:
  """Level tables (one tree's, or stacked ones) as JAX arrays, float tables in ``dtype`` (converted
  on the host: a conversion on the device compiles a program per table shape)."""

  def convert(x: np.ndarray) -> jax.Array:
    target = dtype if np.issubdtype(x.dtype, np.floating) else x.dtype
    return jax.device_put(np.asarray(x, jax.dtypes.canonicalize_dtype(target)))

  return jax.tree_util.tree_map(convert, tuple(levels))


def device_levels(tree: tree_lib.PublicTree, dtype=jnp.float32) -> Levels:
  """The tree's level tables as JAX arrays (float tables in ``dtype``)."""
  return to_device(tree.levels, dtype)


def init_state(levels: Levels) -> CFRState:
  zeros = jnp.zeros(flat_legal(levels).shape, levels[0].payoff.dtype)
  return CFRState(regrets=zeros, policy_sums=zeros, iteration=jnp.zeros((), jnp.int32))


def split(levels: Levels, flat: chex.Array) -> list[chex.Array]:
  """Cuts an array over the inner nodes (level by level) into per-level pieces (static slices)."""
  offsets = np.cumsum([0] + [level.inner for level in levels])
  return [flat[lo:hi] for lo, hi in itertools.pairwise(offsets)]


def flat_legal(levels: Levels) -> chex.Array:
  """[M, S, A]: the legal actions at the inner nodes, level by level."""
  return jnp.concatenate([level.legal[: level.inner] for level in levels])


def _acting(levels: Levels, player: int) -> chex.Array:
  """[M, S, A]: where ``player`` acts at a valid infostate with a legal action (inner nodes)."""
  return jnp.concatenate(
    [
      ((level.kind == player)[:, None] & level.valid[:, player])[: level.inner, :, None]
      & level.legal[: level.inner]
      for level in levels
    ]
  )


def regret_matching(regrets: chex.Array, legal: chex.Array) -> chex.Array:
  """pi(a) proportional to the positive regret; uniform over legal actions when none is positive."""
  positive = jnp.where(legal, jnp.maximum(regrets, 0.0), 0.0)
  total = positive.sum(-1, keepdims=True)
  uniform = legal / legal.sum(-1, keepdims=True)
  return jnp.where(total > 0, positive / jnp.where(total > 0, total, 1.0), uniform)


def per_level_policy(levels: Levels, flat_policy: chex.Array) -> list[chex.Array | None]:
  """A policy [M, S, A] over the inner nodes as :mod:`propagation` takes it: one piece per level
  (None for a level where no player acts)."""
  return [
    p if level.actors else None for p, level in zip(split(levels, flat_policy), levels, strict=True)
  ]


def current_policy(levels: Levels, state: CFRState) -> chex.Array:
  """The regret-matching+ policy [M, S, A] at the inner nodes."""
  return regret_matching(state.regrets, flat_legal(levels))


def average_policy(levels: Levels, state: CFRState) -> chex.Array:
  """The linearly weighted average policy [M, S, A] at the inner nodes (uniform where a row was
  never reached)."""
  return regret_matching(state.policy_sums, flat_legal(levels))


LeafValuesFn = Callable[[list[chex.Array]], tuple[list[chex.Array | None], Any]]
"""Per-level ranges -> (per-level leaf values, None where a level has no leaves; anything else)."""
Entry = Sequence[tuple[chex.Array, chex.Array] | None] | None  # see propagation.reach_down


class LeafLayout:
  """Where a fixed tree's depth-limit leaves sit: per-level indices and the batch order (BFS)."""

  def __init__(self, tree: tree_lib.PublicTree):
    starts = tree.level_starts
    self.per_level = [
      np.flatnonzero(tree.is_leaf[starts[d] : starts[d + 1]]) for d in range(tree.num_levels)
    ]
    self.nodes = np.flatnonzero(tree.is_leaf)  # tree node indices, in batch order

  @property
  def count(self) -> int:
    return int(self.nodes.size)

  def gather(self, per_level: Sequence[chex.Array]) -> chex.Array:
    return jnp.concatenate([x[i] for x, i in zip(per_level, self.per_level, strict=True) if i.size])

  def scatter(self, batch: chex.Array, like: Sequence[chex.Array]) -> list[chex.Array | None]:
    out, offset = [], 0
    for x, i in zip(like, self.per_level, strict=True):
      if i.size:
        out.append(jnp.zeros_like(x).at[i].set(batch[offset : offset + i.size]))
        offset += i.size
      else:
        out.append(None)
    return out

  def values_fn(self, leaf_fn: LeafFn | None) -> LeafValuesFn | None:
    """The leaves' values in one batched call of ``leaf_fn`` (None if the tree has no leaves)."""
    if not self.count:
      return None
    if leaf_fn is None:
      raise ValueError("the tree has depth-limit leaves: a leaf function is required")
    return lambda ranges: (self.scatter(leaf_fn(self.gather(ranges)), ranges), None)


def evaluate_pass(
  levels: Levels,
  policy: chex.Array,
  root_ranges: chex.Array,
  leaf_values: LeafValuesFn | None = None,
  entry: Entry = None,
  best_response_values: bool = False,
):
  """Ranges down and values up for a policy [M, S, A], leaves valued by ``leaf_values``.

  Returns per-level ranges, values and action values, and what ``leaf_values`` returned besides its
  values (None without leaves). With ``best_response_values``, also each player's best-response
  counterfactual values against the other's policy (per level; the same leaf values at the leaves,
  from the same call), as a fifth output.
  """
  per_level = per_level_policy(levels, policy)
  ranges = propagation.reach_down(levels, per_level, root_ranges, jnp, entry)
  values_at_leaves, extra = (None, None) if leaf_values is None else leaf_values(ranges)
  values, q_values = propagation.values_up(levels, per_level, ranges, jnp, values_at_leaves)
  if not best_response_values:
    return ranges, values, q_values, extra
  best, _ = propagation.values_up(
    levels, per_level, ranges, jnp, values_at_leaves, best_response=(True, True)
  )
  return ranges, values, q_values, extra, best


def regret_gains(q: chex.Array, v: chex.Array) -> chex.Array:
  """Q(s, a) - v(s), zero where it is within :data:`REGRET_TIE_EPS` float64 epsilons of zero
  (relative to |Q| + |v|): the rounding of an exact tie."""
  gains = q - v
  tolerance = REGRET_TIE_EPS * np.finfo(np.float64).eps * (jnp.abs(q) + jnp.abs(v))
  return jnp.where(jnp.abs(gains) <= tolerance, 0.0, gains)


def instant_regrets(levels: Levels, values, q_values, player: int) -> chex.Array:
  """[M, S, A]: Q_i(s, a) - V_i(s) at ``player``'s nodes (zero elsewhere) from one pass's values
  (:func:`regret_gains`)."""
  return jnp.concatenate(
    [
      regret_gains(q[:, player], v[: level.inner, player][..., None])
      if q is not None and player in level.actors
      else jnp.zeros((level.inner, *level.legal.shape[1:]), v.dtype)
      for q, v, level in zip(q_values, values, levels, strict=True)
    ]
  )


def own_ranges(levels: Levels, ranges, player: int) -> chex.Array:
  """[M, S, 1]: ``player``'s ranges at the inner nodes (the average policy's weights)."""
  return jnp.concatenate(
    [r[: level.inner, player] for r, level in zip(ranges, levels, strict=True)]
  )[..., None]


def update_player(
  levels: Levels,
  state: CFRState,
  acting: chex.Array,
  policy: chex.Array,
  ranges,
  values,
  q_values,
  player: int,
  weight: chex.Array,
) -> CFRState:
  """Regret-matching+ and linear averaging for ``player`` where ``acting`` [M, S, A] allows."""
  instant = instant_regrets(levels, values, q_values, player)
  own = own_ranges(levels, ranges, player)
  return state.replace(
    regrets=jnp.where(acting, jnp.maximum(state.regrets + instant, 0.0), state.regrets),
    policy_sums=jnp.where(acting, state.policy_sums + weight * own * policy, state.policy_sums),
  )


PlayerUpdate = Callable[..., CFRState]
"""(levels, state, acting [M, S, A], policy, ranges, values, q_values, player, weight t) -> state:
how one player's regrets and average grow from a pass; :func:`update_player` is CFR+'s."""


def acting_masks(levels: Levels) -> chex.Array:
  """[2, M, S, A]: where each player acts at a valid infostate with a legal action (inner nodes)."""
  return jnp.stack([_acting(levels, p) for p in (0, 1)])


def iteration(
  levels: Levels,
  state: CFRState,
  root_ranges: chex.Array,
  updates: Updates,
  leaf_values: LeafValuesFn | None = None,
  acting: chex.Array | None = None,
  entry: Entry = None,
  update: PlayerUpdate = update_player,
) -> tuple[CFRState, chex.Array]:
  """One CFR+ iteration (another member of the CFR family with another ``update``); returns the new
  state and the root values [2, S] of the current policies."""
  if acting is None:
    acting = acting_masks(levels)
  weight = (state.iteration + 1).astype(root_ranges.dtype)  # linear averaging: iteration t weighs t
  groups = ((0,), (1,)) if updates == "alternating" else ((0, 1),)
  root_values = None
  for group in groups:
    policy = current_policy(levels, state)
    ranges, values, q_values, _ = evaluate_pass(levels, policy, root_ranges, leaf_values, entry)
    if root_values is None:
      root_values = values[0][0]
    for player in group:
      state = update(
        levels, state, acting[player], policy, ranges, values, q_values, player, weight
      )
  return state.replace(iteration=state.iteration + 1), root_values


def run(
  levels: Levels,
  state: CFRState,
  root_ranges: chex.Array,
  iterations: int,
  updates: Updates,
  leaf_values: LeafValuesFn | None = None,
  record_root_values: bool = False,
  entry: Entry = None,
  update: PlayerUpdate = update_player,
):
  """``iterations`` CFR+ iterations (or ``update``'s member of the family) fused in one loop;
  optionally the root values of each."""
  acting = acting_masks(levels)  # loop invariant

  def step(s):
    return iteration(levels, s, root_ranges, updates, leaf_values, acting, entry, update)

  if record_root_values:
    return jax.lax.scan(lambda s, _: step(s), state, None, length=iterations)
  return jax.lax.fori_loop(0, iterations, lambda _, s: step(s)[0], state), None


def average_root_values(
  levels: Levels, state: CFRState, root_ranges: chex.Array, leaf_values: LeafValuesFn | None = None
) -> chex.Array:
  """Root counterfactual values [2, S] of the average policy (leaves valued by ``leaf_values``)."""
  _, values, _, _ = evaluate_pass(levels, average_policy(levels, state), root_ranges, leaf_values)
  return values[0][0]


def check_updates(updates: str) -> Updates:
  if updates not in UPDATES:
    raise ValueError(f"updates must be one of {UPDATES}, got {updates!r}")
  return updates  # type: ignore[return-value]
