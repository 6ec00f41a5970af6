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
    child_weight = _slot_weight(game, game.transitions(state), kind, weight, legal, slot)
    keep = lambda new, old: jax.tree.map(lambda n, o: jnp.where(k >= 0, n, o), new, old)  # noqa: E731
    return (keep(game.child(state, slot), state), keep(child_weight, weight)), None

  root = (game.root(), jnp.asarray(public_game.root_weight(game), dtype))
  (state, weight), _ = jax.lax.scan(down, root, jnp.asarray(path, jnp.int32))
  return state, weight


def _slot_weight(
  game: public_game.PublicGame,
  transitions: public_game.Transitions,
  kind: chex.Array,
  weight: chex.Array,
  legal: chex.Array,
  slot: chex.Array,
) -> chex.Array:
  """The pair weight [S, S] of the child in ``slot`` alone: what the pool's expansion
  (``sog.search.pool.beliefs._children``) gives that slot, in O(S A O) rather than O(K S A O) (a
  large board's K S A O does not fit in memory); ``tests/test_belief_pool.py`` holds the two equal
  bit for bit."""
  S = legal.shape[0]
  actor = jnp.clip(kind, 0, 1)
  oriented = jnp.where(actor == 0, weight, weight.T)  # [actor s, opponent o]
  actor_valid, opponent_valid = oriented.sum(1) > 0, oriented.sum(0) > 0
  slots = jnp.broadcast_to(transitions.child, (*legal.shape, S))  # [S, A, O]
  reachable = actor_valid[:, None, None] & legal[..., None] & opponent_valid[None, None, :]
  hits = reachable & (slots == slot)
  edges, admitted = hits.any(-1), hits.any((0, 1))  # [S, A], [O]
  # Row s' of W in the child: the largest of the rows of the sources (s, a) that land on s'.
  arriving = jnp.where(edges[..., None], oriented[:, None, :], 0.0)  # [S, A, O]
  rows = jnp.zeros_like(weight).at[transitions.next_infostate].max(arriving)
  rows = rows * admitted[None, :]
  player_weight = jnp.where(actor == 0, rows, rows.T)
  chance_weight = jnp.zeros_like(weight)
  if game.max_chance_outcomes:
    probability = transitions.probability
    outcome = jnp.minimum(slot, probability.shape[0] - 1)
    p = jnp.where(slot < probability.shape[0], probability[outcome], 0.0)
    chance_weight = jnp.where(
      p > 0, weight * transitions.likelihood[outcome] / jnp.where(p > 0, p, 1.0), 0.0
    )
  child_weight = jnp.where(kind < public_game.CHANCE, player_weight, chance_weight)
  return child_weight.astype(weight.dtype)


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
