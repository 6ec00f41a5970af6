"""World states on a :class:`~sog.search.pool.beliefs.BeliefTree`: drawing one from both players'
ranges at a node, and stepping one down the tree by an action or a chance outcome (what a search's
expansion walk and a self-play game do). Traceable, one world state at a time (``vmap`` for more).
"""

from __future__ import annotations

import chex
import jax.numpy as jnp

from sog.games import public_game
from sog.games import worlds as game_worlds
from sog.search.pool import beliefs


def sample_world(
  tree: beliefs.BeliefTree, node: chex.Array, ranges: chex.Array, rng: chex.PRNGKey
) -> tuple[chex.Array, chex.Array]:
  """A world state (s0, s1) at ``node`` drawn with probability proportional to r_0(s0) r_1(s1)
  W(s0, s1) from ``ranges`` [2, S] (any possible world state, by W, if the ranges do not reach the
  node), by :func:`sog.games.worlds.draw_world`."""
  return game_worlds.draw_world(tree.pair_weight(node), ranges, rng)


def chance_probabilities(
  tree: beliefs.BeliefTree, node: chex.Array, s0: chex.Array, s1: chex.Array
) -> chex.Array:
  """[K] P(k | s0, s1) of the chance outcome in each child slot of ``node`` given the world state:
  P(k) W_k(s0, s1) / W(s0, s1), zero where the slot has no child in the tree."""
  children = tree.children[node]
  safe = jnp.maximum(children, 0)
  # (s0 < S0 and s1 < S1 in a world state, so W's unpadded [P, S0, S1] holds them)
  weight = jnp.where(children >= 0, tree.probability[safe] * tree.weight[safe, s0, s1], 0.0)
  return weight / jnp.where(weight.sum() > 0, weight.sum(), 1.0)


def step_world(
  tree: beliefs.BeliefTree,
  node: chex.Array,
  s0: chex.Array,
  s1: chex.Array,
  action: chex.Array,
  rng: chex.PRNGKey,
) -> tuple[chex.Array, chex.Array, chex.Array]:
  """The child (its slot in the pool, -1 if it is not in the tree) that world state (s0, s1)
  reaches from ``node`` by the actor's ``action`` (at a chance node: an outcome drawn given the
  world state, in the order of the child slots k, by :func:`sog.games.worlds.draw_index`;
  ``action`` is ignored), and both infostates there."""
  kind = tree.kind[node]
  children = tree.children[node]  # [K]
  safe = jnp.maximum(children, 0)
  actor = jnp.clip(kind, 0, 1)
  own = jnp.where(actor == 0, s0, s1)
  opponent = jnp.where(actor == 0, s1, s0)
  # A player: the one child its (infostate, action) reaches that admits the opponent's infostate.
  fits = (children >= 0) & tree.edges[safe, own, action] & tree.passes[safe, 1 - actor, opponent]
  player_child = jnp.where(fits.any(), children[jnp.argmax(fits)], -1)
  own_next = tree.next_infostate[node, own, action]
  probabilities = chance_probabilities(tree, node, s0, s1)
  chance_child = children[game_worlds.draw_index(probabilities, rng)]
  is_chance = kind == public_game.CHANCE
  child = jnp.where(is_chance, chance_child, player_child)
  next0 = jnp.where(~is_chance & (actor == 0), own_next, s0)
  next1 = jnp.where(~is_chance & (actor == 1), own_next, s1)
  return child, next0, next1
