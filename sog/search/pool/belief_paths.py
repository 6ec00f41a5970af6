"""Public states named by their paths of child slots from the game's root: the state and pair
weights a path reaches, computed along the path alone (where a search, a query solver or PIMC
starts without a grown pool), and the padded arrays that carry paths under ``jit``."""

from __future__ import annotations

from collections.abc import Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.search.pool import belief_children
from sog.search.pool import beliefs


def along(
  game: public_game.PublicGame, path: chex.Array, dtype=jnp.float32
) -> tuple[chex.ArrayTree, chex.Array]:
  """The public state that ``path`` [L] int32 (child slots from the game's root, -1 past the end)
  reaches, and its pair weight W [S, S], as a pool grows them
  (:func:`sog.search.pool.beliefs.add_children`), computing only the nodes on the path and, at
  each, only the child on it. Traceable."""

  def down(carry, k):
    state, weight = carry
    kind = jnp.asarray(game.kind(state), jnp.int32)
    legal = beliefs.actor_legal(game, state, kind, weight)
    slot = jnp.maximum(k, 0)
    transitions = game.transitions(state)
    _, _, child_weight, _ = belief_children.slot_children(
      game, transitions, kind, weight, legal, slot[None]
    )
    child_weight = beliefs.padded_pairs(child_weight[0], weight.shape[-1])
    keep = lambda new, old: jax.tree.map(lambda n, o: jnp.where(k >= 0, n, o), new, old)  # noqa: E731
    return (keep(game.child(state, slot), state), keep(child_weight, weight)), None

  root = (game.root(), jnp.asarray(public_game.root_weight(game), dtype))
  (state, weight), _ = jax.lax.scan(down, root, jnp.asarray(path, jnp.int32))
  return state, weight


def padded_path(moves: Sequence[int], length: int) -> np.ndarray:
  """[length] int32: the child slots ``moves`` (from the game's root), -1 past the end
  (``ValueError`` for more than ``length`` moves)."""
  moves = np.asarray(moves, np.int32).reshape(-1)
  if moves.size > length:
    raise ValueError(f"a path of {moves.size} public moves is longer than {length}")
  return np.pad(moves, (0, length - moves.size), constant_values=-1)


def slot_paths(
  tree: beliefs.BeliefTree, slots: Sequence[int], root_path: np.ndarray, length: int
) -> np.ndarray:
  """[len(slots), length] int32: the child slots from the game's root to ``slots`` of one search's
  host ``tree`` (its root at ``root_path`` from the game's root, -1 past the end), -1 past the
  end."""
  parent, slot = np.asarray(tree.parent), np.asarray(tree.slot)
  root = [int(k) for k in root_path if k >= 0]
  out = np.empty((len(slots), length), np.int32)
  for row, at in enumerate(slots):
    tail, at = [], int(at)
    while parent[at] >= 0:
      tail.append(int(slot[at]))
      at = int(parent[at])
    out[row] = padded_path(root + tail[::-1], length)
  return out
