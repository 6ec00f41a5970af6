"""CFR+ on the node pool: a pass (reaches down, values up) over the grown tree only, and one update.

Perfect information makes a counterfactual value the opponent's reach times the player's expected
utility: v_i(h) = pi_{-i}(h) u_i(h). A pass computes the reaches pi [P, 2] top-down and the
utilities u [P, 2] bottom-up, each in ``height`` vectorised sweeps over the pool's slots: terminals
give their utility, frontier leaves the leaf model's values, an interior node sum_a sigma(h, a)
u(child(h, a)) over its added actions. The instant regret of the mover i is pi_{-i}(h) (u_i(child) -
u_i(h)), the library's regrets per unit of own range (:mod:`sog.search.cfr`).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import cfr
from sog.search.pool import types


def frontier(tree: types.Tree) -> chex.Array:
  """[P] bool: nodes in the tree, not terminal, not expanded."""
  return tree.used & ~tree.expanded & (tree.kind != public_game.TERMINAL)


def available(tree: types.Tree) -> chex.Array:
  """[P, A]: the actions CFR may play: those added at interior nodes (every legal one elsewhere)."""
  return tree.legal & (tree.added | ~tree.expanded[:, None])


def matching(sums: chex.Array, allowed: chex.Array) -> chex.Array:
  """Regret matching over ``allowed`` [P, A], zero rows where nothing is allowed (terminals)."""
  some = allowed.any(-1, keepdims=True)
  return jnp.where(some, cfr.regret_matching(sums, allowed | ~some), 0.0)


def reach_down(tree: types.Tree, policy: chex.Array, root_reach: chex.Array) -> chex.Array:
  """[P, 2] reach probabilities of ``policy`` [P, A] from the root's ``root_reach`` [2]."""
  parent = jnp.maximum(tree.parent, 0)
  moved = policy[parent, jnp.maximum(tree.action, 0)]  # [P]
  factor = jnp.where(tree.kind[parent][:, None] == jnp.arange(2), moved[:, None], 1.0)
  is_root = (jnp.arange(tree.capacity) == 0)[:, None]
  sweep = lambda _, r: jnp.where(is_root, root_reach, r[parent] * factor)  # noqa: E731
  reach = jax.lax.fori_loop(0, tree.height, sweep, jnp.where(is_root, root_reach, 0.0))
  return jnp.where(tree.used[:, None], reach, 0.0)


def utilities_up(tree: types.Tree, policy: chex.Array) -> chex.Array:
  """[P, 2] both players' expected utilities under ``policy`` (leaves valued by the leaf model)."""
  terminal = tree.kind == public_game.TERMINAL
  base = jnp.where(
    terminal[:, None], tree.utility[:, None] * jnp.array([1.0, -1.0]), tree.leaf_values
  )
  base = jnp.where((tree.used & ~tree.expanded)[:, None], base, 0.0)
  # Each node adds sigma(parent, its action) times its utilities into its parent: P rows a sweep,
  # not P x A (the root and the free slots send theirs nowhere).
  parent = jnp.where(tree.used & (tree.parent >= 0), tree.parent, tree.capacity)
  weight = policy[jnp.maximum(tree.parent, 0), jnp.maximum(tree.action, 0)][:, None]
  interior = (tree.used & tree.expanded)[:, None]

  def sweep(_, u):
    return jnp.where(interior, jnp.zeros_like(u).at[parent].add(weight * u, mode="drop"), base)

  return jax.lax.fori_loop(0, tree.height, sweep, base)


def action_utilities(tree: types.Tree, utilities: chex.Array) -> chex.Array:
  """[P, A] the mover's utility of each action's child (its own utility where the child is not in
  the tree)."""
  mover = jnp.clip(tree.kind, 0, 1)
  own = jnp.take_along_axis(utilities, mover[:, None], 1)  # [P, 1]
  child = utilities[jnp.maximum(tree.children, 0), :]  # [P, A, 2]
  child_own = jnp.where(mover[:, None] == 1, child[..., 1], child[..., 0])
  return jnp.where(tree.children >= 0, child_own, own)


def update(
  tree: types.Tree,
  policy: chex.Array,
  reach: chex.Array,
  utilities: chex.Array,
  player: chex.Array,
  weight: chex.Array,
) -> types.Tree:
  """Regret-matching+ and linear averaging (weight [P, 1] or scalar) for ``player`` at its interior
  nodes, on their added actions, from one pass."""
  mover = jnp.clip(tree.kind, 0, 1)
  own = jnp.take_along_axis(utilities, mover[:, None], 1)
  opponent_reach = jnp.take_along_axis(reach, 1 - mover[:, None], 1)
  own_reach = jnp.take_along_axis(reach, mover[:, None], 1)
  instant = opponent_reach * (action_utilities(tree, utilities) - own)
  acting = available(tree) & (tree.used & tree.expanded & (tree.kind == player))[:, None]
  return tree.replace(
    regrets=jnp.where(acting, jnp.maximum(tree.regrets + instant, 0.0), tree.regrets),
    policy_sums=jnp.where(acting, tree.policy_sums + weight * own_reach * policy, tree.policy_sums),
  )


def normalised_action_values(
  tree: types.Tree, reach: chex.Array, utilities: chex.Array, utility_scale: float
) -> chex.Array:
  """[P, A] PUCT's Q: the mover's action utilities over the utility scale (0 where the opponent's
  reach is 0, as counterfactual values per unit of opponent mass give)."""
  mover = jnp.clip(tree.kind, 0, 1)
  opponent_reach = jnp.take_along_axis(reach, 1 - mover[:, None], 1)
  return jnp.where(opponent_reach > 0, action_utilities(tree, utilities) / utility_scale, 0.0)
