"""Liar's Dice with one die each, as OpenSpiel's ``liars_dice`` with ``numdice=1``.

Faces 1..F (private states 0..F-1); the highest face F is wild. Bids are OpenSpiel's actions
0..2F-1, bid b claiming at least b // F + 1 dice showing face b % F + 1; each bid must exceed the
last; action 2F calls "liar". If the last bid holds, the caller loses (-1) and the bidder wins (+1);
otherwise the reverse. A public state is the sequence of bids; a player's infostate is their die;
public child k is action k.
"""

from __future__ import annotations

import chex
import jax.numpy as jnp
import numpy as np

from sog.games import public_game

VALID_FACES = (4, 5, 6)


class LiarsDice(public_game.PublicGame):
  def __init__(self, faces: int = 6):
    if faces not in VALID_FACES:
      raise ValueError(f"liars_dice: faces must be one of {VALID_FACES}, got {faces!r}")
    self.faces = faces
    self.name = f"liars_dice(faces={faces})"
    self.num_infostates = (faces, faces)
    self.num_bids = 2 * faces
    self.liar = self.num_bids
    self.num_actions = self.max_children = self.num_bids + 1
    self.max_moves = self.num_bids + 1  # every bid in turn, then "liar"
    self.encoding_size = 2 * self.num_bids + 1

  def deal(self) -> np.ndarray:
    return np.full((self.faces, self.faces), 1.0 / self.faces**2)

  def root(self) -> chex.Array:
    """The bids so far ([2F + 1] int32, -1 after their end)."""
    return jnp.full(self.num_actions, -1, jnp.int32)

  def _last(self, state: chex.Array, back: int = 1) -> chex.Array:
    """The ``back``-th last action (-1 if there is none)."""
    index = (state >= 0).sum() - back
    return jnp.where(index >= 0, state[jnp.maximum(index, 0)], -1)

  def kind(self, state: chex.Array) -> chex.Array:
    over = self._last(state) == self.liar
    return jnp.where(over, public_game.TERMINAL, (state >= 0).sum() % 2).astype(jnp.int32)

  def legal(self, state: chex.Array) -> chex.Array:
    actions = jnp.arange(self.num_actions)
    last = self._last(state)
    bids = (actions > last) & (actions < self.num_bids)
    legal = bids | ((actions == self.liar) & (last >= 0))
    acting = self.kind(state) < public_game.CHANCE
    return jnp.broadcast_to(legal & acting, (self.faces, self.num_actions))

  def transitions(self, state: chex.Array) -> public_game.Transitions:
    return public_game.action_children(self, self.legal(state))

  def child(self, state: chex.Array, k: chex.Array) -> chex.Array:
    return state.at[(state >= 0).sum()].set(k, mode="drop")

  def utility(self, state: chex.Array) -> chex.Array:
    bid = self._last(state, 2)
    quantity, face = bid // self.faces + 1, bid % self.faces
    dice = jnp.arange(self.faces)
    shows = ((dice == face) | (dice == self.faces - 1)).astype(jnp.int32)  # the top face is wild
    count = shows[:, None] + shows[None, :]
    caller = ((state >= 0).sum() - 1) % 2
    caller_wins = count < quantity
    return jnp.where((caller == 0) == caller_wins, 1.0, -1.0)

  def encode(self, state: chex.Array) -> chex.Array:
    bids = jnp.arange(self.num_bids)
    made = (state[:, None] == bids[None, :]).any(0).astype(jnp.float32)
    last_bid = jnp.where(self._last(state) == self.liar, self._last(state, 2), self._last(state))
    last = (bids == last_bid).astype(jnp.float32)
    mover = ((state >= 0).sum() % 2).astype(jnp.float32)
    return jnp.concatenate([made, last, mover[None]])

  def action_name(self, action: int) -> str:
    if action == self.liar:
      return "liar"
    return f"{action // self.faces + 1}-{action % self.faces + 1}"
