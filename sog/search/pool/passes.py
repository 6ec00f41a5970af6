"""What GT-CFR's passes and walks read of a pool's nodes: its frontier, and regret matching over the
actions a node allows."""

from __future__ import annotations

import chex
import jax.numpy as jnp

from sog.games import public_game
from sog.search import cfr
from sog.search.pool import beliefs


def frontier(tree: beliefs.BeliefTree) -> chex.Array:
  """[P] bool: nodes in the tree, not terminal, not expanded."""
  return tree.used & ~tree.expanded & (tree.kind != public_game.TERMINAL)


def matching(sums: chex.Array, allowed: chex.Array) -> chex.Array:
  """Regret matching over ``allowed`` [..., A], zero rows where nothing is allowed (terminals, free
  slots)."""
  some = allowed.any(-1, keepdims=True)
  return jnp.where(some, cfr.regret_matching(sums, allowed | ~some), 0.0)
