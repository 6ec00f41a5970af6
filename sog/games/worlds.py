"""World states of a :class:`~sog.games.public_game.PublicGame`, played forward from its functions
with nothing enumerated: the deal, a step by the actor's action or by chance given the world state,
and player 0's utility at the end. What a self-play game does between its searches.

A world is the public state (the game's pytree) and both players' infostates. The draws are the
search engines' (:func:`sog.games.worlds.draw_world` at the deal,
:func:`sog.games.worlds.draw_index` over the chance outcomes in the game's order), so a game played
here from a key is the game the table search's self-play, the engine before the pools, played from
it (tests/fixtures/table_selfplay.npz). Traceable, one world at a time (``vmap`` for a batch).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game


def draw_index(weights, rng):
  """An index drawn with probability proportional to ``weights`` [K] (nonnegative, not all zero) by
  the inverse of their cumulative sum at one uniform draw: the outcome depends on the order of the
  positive weights only, not on zeros between them, so engines that lay a node's chance outcomes
  out differently draw the same one from the same key. Traceable."""
  cumulative = jnp.cumsum(weights)
  u = jax.random.uniform(rng, dtype=cumulative.dtype) * cumulative[-1]
  last = weights.shape[0] - 1 - jnp.argmax((weights > 0)[::-1])  # (should u round up to the sum)
  index = jnp.minimum((cumulative <= u).sum(), last)
  return jnp.where(cumulative[-1] > 0, index, 0).astype(jnp.int32)  # (0 where all are zero)


def draw_world(weight, ranges, rng):
  """A world state (s0, s1) drawn with probability proportional to r_0(s0) r_1(s1) W(s0, s1), from
  pair weights W [S, S] and ``ranges`` [2, S] (by W alone where the ranges give it no mass), over
  the flat index s0 * S + s1. Traceable."""
  joint = ranges[0][:, None] * ranges[1][None, :] * weight
  joint = jnp.where(joint.sum() > 0, joint, weight)
  world = jax.random.categorical(rng, jnp.log(joint.ravel()))
  num_infostates = joint.shape[0]
  return (world // num_infostates).astype(jnp.int32), (world % num_infostates).astype(jnp.int32)


@chex.dataclass(frozen=True)
class World:
  """A world state: the public ``state`` (a pytree of the game's) and ``infostates`` [2] int32, the
  private state each player holds."""

  state: chex.ArrayTree
  infostates: chex.Array


def deal(game: public_game.PublicGame, rng: chex.PRNGKey) -> World:
  """The game's root with both private states drawn from the deal."""
  s0, s1 = draw_world(
    jnp.asarray(public_game.root_weight(game)), jnp.asarray(public_game.prior_ranges(game)), rng
  )
  return World(state=game.root(), infostates=jnp.stack([s0, s1]))


def step(
  game: public_game.PublicGame, world: World, action: chex.Array, rng: chex.PRNGKey
) -> tuple[chex.Array, World]:
  """The child slot k (of :meth:`~sog.games.public_game.PublicGame.transitions`) that ``world``
  reaches by the actor's ``action`` (at a chance node: an outcome drawn with probability
  P(k | s0, s1), ``action`` ignored), and the world there."""
  state, infostates = world.state, world.infostates
  kind = game.kind(state)
  row = game.world_row(state, infostates)
  actor = jnp.clip(kind, 0, 1)
  if game.max_chance_outcomes:
    chance_slot = draw_index(jnp.where(row.outcomes, row.likelihood, 0.0), rng)
  else:
    chance_slot = jnp.int32(0)
  is_chance = kind == public_game.CHANCE
  slot = jnp.where(is_chance, chance_slot, row.child[action]).astype(jnp.int32)
  moved = ~is_chance & (jnp.arange(2) == actor)
  next_infostates = jnp.where(moved, row.next_infostate[action], infostates)
  return slot, World(state=game.child(state, slot), infostates=next_infostates)


def utility(game: public_game.PublicGame, world: World) -> chex.Array:
  """Player 0's utility u_0(s0, s1) at a terminal world (player 1 gets its negation)."""
  return game.utility(world.state)[world.infostates[0], world.infostates[1]]
