"""Kuhn poker with OpenSpiel's rules: cards J, Q, K (0, 1, 2), ante 1, one bet of 1, player 0 first.

Actions are OpenSpiel's (0 = pass, 1 = bet); a public state is the betting sequence ([3] int32, -1
after its end) and a player's infostate is their card. Public child k is the action k.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp
import numpy as np

from sog.games import public_game

PASS, BET = 0, 1
_NUM_CARDS = 3
_MAX_SEQUENCE = 3


class KuhnPoker(public_game.PublicGame):
  name = "kuhn_poker"
  num_infostates = (_NUM_CARDS, _NUM_CARDS)
  num_actions = 2
  max_children = 2
  encoding_size = 2 * _MAX_SEQUENCE
  utility_scale = 2.0  # a called bet
  max_moves = 3  # check, bet, call

  def deal(self) -> np.ndarray:
    deal = np.ones((_NUM_CARDS, _NUM_CARDS)) - np.eye(_NUM_CARDS)
    return deal / deal.sum()

  def root(self) -> chex.Array:
    return jnp.full(_MAX_SEQUENCE, -1, jnp.int32)

  def kind(self, state: chex.Array) -> chex.Array:
    length = (state >= 0).sum()
    # Over after two actions unless they were pass, bet (player 0 must answer); always after three.
    over = (length == 3) | ((length == 2) & ~((state[0] == PASS) & (state[1] == BET)))
    return jnp.where(over, public_game.TERMINAL, length % 2).astype(jnp.int32)

  def legal(self, state: chex.Array) -> chex.Array:
    acting = self.kind(state) < public_game.CHANCE
    return jnp.broadcast_to(acting, (_NUM_CARDS, self.num_actions))

  def transitions(self, state: chex.Array) -> public_game.Transitions:
    return public_game.action_children(self, self.legal(state))

  def child(self, state: chex.Array, k: chex.Array) -> chex.Array:
    return state.at[(state >= 0).sum()].set(k, mode="drop")

  def utility(self, state: chex.Array) -> chex.Array:
    length = (state >= 0).sum()
    bet = (state == BET).any()
    last = state[jnp.maximum(length - 1, 0)]
    # A bet that was not called: the bettor takes the ante (the last passer's opponent).
    folded = jnp.where(length % 2 == 0, 1.0, -1.0)
    stake = jnp.where(bet, 2.0, 1.0)
    cards = jnp.arange(_NUM_CARDS)
    showdown = jnp.where(cards[:, None] > cards[None, :], stake, -stake)
    return jnp.where((last == PASS) & bet, folded, showdown)

  def encode(self, state: chex.Array) -> chex.Array:
    code = (state[:, None] == jnp.arange(self.num_actions)[None, :]).astype(jnp.float32)
    return code.ravel()

  def action_name(self, action: int) -> str:
    return ("pass", "bet")[action]
