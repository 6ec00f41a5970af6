"""The public children of a node of the belief pool (:mod:`sog.search.pool.beliefs`), computed from
its world states: which child slots a valid world reaches, and for the slots an expansion steps,
the actor's (s, a) that reach each, the opponent infostates it admits and its pair weight W, by
scattering the node's worlds [S0, A, S1] into those slots. Nothing is laid out over all K child
slots, so a board with thousands of them (Scotland Yard's 1,991) expands as a small game does."""

from __future__ import annotations

import chex
import jax.numpy as jnp

from sog.games import public_game


def _chance_weights(
  game: public_game.PublicGame, transitions: public_game.Transitions, weight: chex.Array
) -> chex.Array:
  """Below a chance node: each outcome k's W(s0, s1) P(k | s0, s1) / P(k) [C, S0, S1] (zero where
  P(k) = 0), in W's dtype (which children exist and who can hold what there read the W kept)."""
  S0, S1 = game.num_infostates
  probability = transitions.probability
  safe = jnp.where(probability > 0, probability, 1.0)
  return jnp.where(
    (probability > 0)[:, None, None],
    weight[None, :S0, :S1] * transitions.likelihood[:, :S0, :S1] / safe[:, None, None],
    0.0,
  ).astype(weight.dtype)


def _worlds(game: public_game.PublicGame, transitions: public_game.Transitions, weight, legal):
  """Below a player node, for each actor i (static): W oriented [actor s, opponent o], each world
  (s, a, o)'s child slot [S_i, A, S_j] and whether it reaches it (s and o valid, a legal at s),
  over the players' own infostate counts (S_i, S_j) rather than the padded S: a side with one
  infostate (Scotland Yard's detectives) keeps these arrays small."""
  out = []
  for actor in (0, 1):
    own, other = game.num_infostates[actor], game.num_infostates[1 - actor]
    oriented = (weight if actor == 0 else weight.T)[:own, :other]
    actor_valid, opponent_valid = oriented.sum(1) > 0, oriented.sum(0) > 0
    child = transitions.child[:own, :, : min(other, transitions.child.shape[-1])]
    slots = jnp.broadcast_to(child, (own, legal.shape[1], other))
    reachable = actor_valid[:, None, None] & legal[:own, :, None] & opponent_valid[None, None, :]
    out.append((oriented, slots, reachable))
  return out


def reached_slots(
  game: public_game.PublicGame,
  transitions: public_game.Transitions,
  kind: chex.Array,
  weight: chex.Array,
  legal: chex.Array,
  added: chex.Array,
) -> chex.Array:
  """[K] bool: the child slots a valid world state reaches from a node (its ``transitions``, kind,
  pair weight and actor's ``legal``): through one of the ``added`` [A] actions below a player, as
  an outcome of positive probability below chance. O(S0 A S1 + C S0 S1), never O(K ...)."""
  K = game.max_children
  by_actor = []
  for _, slots, reachable in _worlds(game, transitions, weight, legal):
    through_added = jnp.where(reachable & added[None, :, None], slots, K)
    by_actor.append(jnp.zeros(K + 1, bool).at[through_added].set(True)[:K])
  by_player = jnp.where(kind == public_game.PLAYER_0, *by_actor)
  if not game.max_chance_outcomes:
    return jnp.where(kind < public_game.CHANCE, by_player, False)
  outcomes = _chance_weights(game, transitions, weight).any((1, 2))
  by_chance = transitions.present & jnp.pad(outcomes, (0, K - outcomes.shape[0]))
  return jnp.where(kind < public_game.CHANCE, by_player, by_chance)


def _player_slots(game, transitions, weight, legal, picked):
  """Below a player node, for each actor (static): :func:`slot_children`'s edges [M, S, A],
  admitted opponent infostates [M, S] and pair weights [M, S0, S1] of the slots ``picked``."""
  K, M, (S, A) = game.max_children, picked.shape[0], legal.shape
  rows_picked = jnp.arange(M, dtype=jnp.int32)
  row_of_slot = jnp.full(K, M, jnp.int32).at[picked].set(rows_picked, mode="drop")
  out = []
  for actor, (oriented, slots, reachable) in enumerate(_worlds(game, transitions, weight, legal)):
    own, other = oriented.shape
    # each reaching world's row among the picked slots (M: none of them)
    row = jnp.where(reachable, row_of_slot[jnp.clip(slots, 0, K - 1)], M)  # [S_i, A, S_j]
    s, a, o = jnp.indices(reachable.shape, sparse=True)
    edges = jnp.zeros((M + 1, S, A), bool).at[row, s, a].set(True)[:M]
    admitted = jnp.zeros((M + 1, S), bool).at[row, o].set(True)[:M]
    # W in the child: at (s', o) the largest weight of the worlds (s, o) whose action lands on s'
    # (sources merged into one s' agree on their row)
    lands = transitions.next_infostate[:own, :, None]
    arriving = jnp.where(reachable, oriented[:, None, :], 0.0)
    rows = jnp.zeros((M + 1, own, other), weight.dtype).at[row, lands, o].max(arriving)[:M]
    out.append((edges, admitted, rows if actor == 0 else rows.transpose(0, 2, 1)))
  return out


def slot_children(
  game: public_game.PublicGame,
  transitions: public_game.Transitions,
  kind: chex.Array,
  weight: chex.Array,
  legal: chex.Array,
  picked: chex.Array,
):
  """The children in the child slots ``picked`` [M] int32 of a node (its ``transitions``, kind,
  pair weight and actor's ``legal``; a slot >= K names none): below a player, the actor's (s, a)
  that reach each [M, S, A] and the opponent infostates it admits [M, S]; its pair weight
  [M, S0, S1] (indexed [s0, s1], over each player's own infostates); below chance, P(k) [M] (1
  below a player). Computed by scattering the node's worlds into the M slots,
  O(S0 A S1 + M S A + M S0 S1 + C S0 S1): a large board's K slots are never laid out."""
  M = picked.shape[0]
  first = kind == public_game.PLAYER_0
  edges, admitted, player_weight = (
    jnp.where(first, mine, theirs)
    for mine, theirs in zip(*_player_slots(game, transitions, weight, legal, picked), strict=True)
  )
  C = game.max_chance_outcomes
  if not C:
    return edges, admitted, player_weight, jnp.ones(M, weight.dtype)
  outcome, is_outcome = jnp.minimum(picked, C - 1), picked < C
  chance_weight = _chance_weights(game, transitions, weight)[outcome]
  chance_weight = jnp.where(is_outcome[:, None, None], chance_weight, 0.0)
  probability = jnp.where(is_outcome, transitions.probability[outcome], 0.0)
  is_player = kind < public_game.CHANCE
  return (
    edges,
    admitted,
    jnp.where(is_player, player_weight, chance_weight).astype(weight.dtype),
    jnp.where(is_player, 1.0, probability).astype(weight.dtype),
  )
